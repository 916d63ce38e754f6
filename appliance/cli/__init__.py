"""The ``appliance`` console script.

Each feature package contributes its commands through a ``register(parsers)`` function
(see :class:`Parsers`); this module only wires them together and turns the errors a user
can fix (bad config, missing model file) into one clear line and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

# Modules that define ``register(parsers: Parsers)``.
COMMAND_MODULES = (
    "appliance.cli.voice",
    "appliance.cli.asr",
    "appliance.cli.bus",
    "appliance.cli.forms",
    "appliance.cli.werewolf",
    "appliance.cli.simulate",
)

#: Modules whose ``install(server)`` adds a mode to ``appliance serve`` (the page's
#: "Fill a form by voice"); ``appliance werewolf --user human`` serves its own.
SERVE_MODES = ("appliance.forms.mode",)


@dataclass
class Parsers:
    """Sub-parser groups a feature may add to: ``appliance X``, ``appliance bench X``, ``appliance simulate X``.

    Each added parser sets ``func`` (``args -> int | None``) with ``set_defaults``.
    ``serve_modes``: the modules ``appliance serve`` loads its modes from, by name.
    ``replayers``: ``(is_recording(folder), run(args) -> int)`` pairs a feature adds, so
    ``appliance replay FOLDER`` replays its own recordings (the first that claims the folder).
    """

    top: argparse._SubParsersAction
    bench: argparse._SubParsersAction
    simulate: argparse._SubParsersAction
    serve_modes: tuple[str, ...] = SERVE_MODES
    replayers: list[tuple[Callable[[str], bool], Callable[[argparse.Namespace], int]]] = field(default_factory=list)


def _global_options() -> argparse.ArgumentParser:
    """The options every command takes, before its name (``appliance -v serve``)."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="debug logging, every library's included (pipecat, aiortc, llama-server ...)",
    )
    return ap


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="appliance", description="Offline voice and computer-use agent appliance.", parents=[_global_options()]
    )
    top = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = top.add_parser("bench", help="benchmarks that print JSON").add_subparsers(dest="bench", required=True)
    simulate = top.add_parser("simulate", help="simulated users for CI and evaluation").add_subparsers(
        dest="simulate", required=True
    )
    parsers = Parsers(top=top, bench=bench, simulate=simulate)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(parsers)
    return ap


def configure_logging(verbose: bool) -> None:
    """The console (stderr) shows the appliance's own progress (INFO) and every library's
    warnings and errors; ``verbose``: everything at DEBUG. Call it before pipecat is first
    imported: pipecat logs its banner through loguru at import."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not verbose:
        logging.getLogger("appliance").setLevel(logging.INFO)
    from loguru import logger  # pipecat logs through loguru

    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if verbose else "WARNING")


def main(argv: list[str] | None = None) -> int:
    from appliance.errors import ApplianceError

    argv = sys.argv[1:] if argv is None else argv
    configure_logging(_global_options().parse_known_args(argv)[0].verbose)  # before the commands import pipecat
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ApplianceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
