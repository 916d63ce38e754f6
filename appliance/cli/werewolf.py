"""CLI: ``appliance werewolf --user sim|human --seats N --seed S [--json] [--trace DIR]``,
``appliance bench werewolf --games N --seats N [--user text|audio] --json``, and
``appliance replay FOLDER`` of a Werewolf recording."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from appliance import config
from appliance.config import add_config_arg


def register(parsers) -> None:
    p = parsers.top.add_parser("werewolf", help="play Werewolf: a code judge, AI seats and one user seat by voice")
    add_config_arg(p)
    p.add_argument(
        "--user",
        choices=["sim", "human"],
        default="human",
        help="the user seat: sim = simulated person through real TTS→ASR; human = the page",
    )
    p.add_argument("--seats", type=int, help="6–8 seats, the user seat included (default werewolf.seats)")
    p.add_argument(
        "--seed", type=int, help="deals the roles and the user seat and seeds every LLM call (default: random, printed)"
    )
    p.add_argument(
        "--trace",
        metavar="DIR",
        type=Path,
        help="write every prompt each seat's LLM received (one JSONL per seat) to DIR",
    )
    p.add_argument(
        "--ai-voices",
        action="store_true",
        help="also synthesise the AI seats' speeches in their voices into the recording (sim)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=_werewolf)

    parsers.replayers.append((_is_recording, _replay))

    p = parsers.bench.add_parser(
        "werewolf",
        help="seeded games with the embedded models vs the random baseline and the code policy on every seat: "
        "win rates, the seer's play, speech variety, isolation",
    )
    add_config_arg(p)
    p.add_argument("--games", type=int, default=20, help="seeds 1..N (default 20)")
    p.add_argument("--seeds", type=_seed_range, help="seeds A..B instead of 1..N (e.g. 101..140)")
    p.add_argument(
        "--compare-model",
        metavar="MODEL",
        help="also play the first --compare-games seeds with the seats on MODEL (e.g. qwen2.5-coder-1.5b, "
        "after `python -m appliance.models fetch --with qwen2.5-coder-1.5b`) and print by_model",
    )
    p.add_argument("--compare-games", type=int, default=10, help="games per model for --compare-model (default 10)")
    p.add_argument("--seats", type=int, default=7, help="6–8 seats, the user seat included (default 7)")
    p.add_argument(
        "--user",
        choices=["text", "audio"],
        default="audio",
        help="the simulated user seat speaks through Piper → Whisper (audio) or types its words (text)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_bench)


def _werewolf(args: argparse.Namespace) -> int:
    overrides = {"werewolf": {"seats": args.seats}} if args.seats is not None else None
    cfg = config.load(args.config, overrides)
    if args.user == "human":
        return _serve_human(cfg, args)
    from appliance.simulate.werewolf_user import run_game

    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    result, _, folder = run_game(cfg, seed, trace_dir=args.trace, ai_voices=args.ai_voices)
    out = result.to_json()
    if args.json:
        print(json.dumps(out))
    else:
        print(json.dumps(out, indent=2))
        print(f"seed {seed}; recorded in {folder}")
    return 0 if result.status == "finished" and result.isolation_violations == 0 else 1


def _is_recording(folder: str) -> bool:
    from appliance.werewolf.replay import is_recording  # the game's modules only when a replay is asked for

    return is_recording(folder)


def _replay(args: argparse.Namespace) -> int:
    """``appliance replay FOLDER`` of a Werewolf recording (see :mod:`appliance.werewolf.replay`)."""
    import asyncio

    from appliance.werewolf.replay import replay

    result = asyncio.run(replay(args.folder))
    if args.json:
        print(json.dumps(result))
    elif not result["diverged"]:
        print(
            f"seed {result['seed']}, {result['seats']} seats: the {result['replayed']} envelopes of the re-run "
            f"match the recording"
        )
    else:
        d = result["first_difference"]
        print(
            f"seed {result['seed']}, {result['seats']} seats: the re-run diverges at envelope {d['index']} "
            f"(the first {result['matching']} of {result['recorded']} recorded match)"
        )
        print("  recorded:", json.dumps(d["recorded"]))
        print("  replayed:", json.dumps(d["replayed"]))
    return 1 if result["diverged"] else 0


def _seed_range(text: str) -> range:
    """``A..B`` → seeds A to B (both included).

    Raises:
        argparse.ArgumentTypeError: not two whole numbers ``A..B`` with 1 ≤ A ≤ B."""
    a, sep, b = text.partition("..")
    if not (sep and a.isdigit() and b.isdigit() and 1 <= int(a) <= int(b)):
        raise argparse.ArgumentTypeError(f"seeds must be A..B with 1 <= A <= B, e.g. 101..140; got {text!r}")
    return range(int(a), int(b) + 1)


def _bench(args: argparse.Namespace) -> int:
    from appliance.bench.werewolf import run_bench

    seeds = args.seeds or range(1, args.games + 1)
    result = run_bench(config.load(args.config), seeds, args.seats, args.user, args.compare_model, args.compare_games)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0


def _serve_human(cfg: config.Config, args: argparse.Namespace) -> int:
    """Serve the page with the ``werewolf`` mode: the person plays the user seat by voice.

    ``--seats``/``--seed`` become the page's defaults (``/api/status`` → ``werewolf``).
    One llama-server slot per seat of the largest table the page offers.
    """
    import asyncio

    from appliance.voice.server import serve_forever
    from appliance.werewolf import mode

    if cfg.transport.kind != "webrtc":
        print("error: --user human needs transport.kind: webrtc (the page)", file=sys.stderr)
        return 2
    seats = cfg.werewolf.seats
    cfg = cfg.for_werewolf_page()

    async def install(server):
        await mode.install(server)
        if args.seed is not None:
            server.info["werewolf"]["seed"] = args.seed
        return None

    print(
        f"werewolf: {seats} seats{f', seed {args.seed}' if args.seed is not None else ''}; open the page "
        "and press Start in the Werewolf card",
        flush=True,
    )
    try:
        asyncio.run(serve_forever(cfg, [install]))
    except KeyboardInterrupt:
        pass
    return 0
