"""CLI for simulated persons.

* ``appliance simulate form --url URL --profile P [--json] [--person audio|text]`` — a
  simulated person joins the appliance's form mode over WebRTC and is interviewed in real
  time (``--url demo:flight`` serves the bundled demo itself); ``--person text``: a scripted
  typist instead (no audio: the computer agent alone, as ``bench form --person text``).
* ``appliance bench form [--json] [--forms F,…] [--profiles P,…] [--person audio|text]`` —
  the simulated person over the demo forms (:mod:`appliance.bench.form`).
* ``appliance bench pool [--json] [--workers N] [--tasks N] [--person text]`` — the computer
  agents' worker pool: throughput with N workers and with one, and a worker killed mid-task
  (:mod:`appliance.bench.pool`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from appliance import config
from appliance.bench.form import bench_plan, run_bench
from appliance.bench.pages import load_pages
from appliance.bench.pool import bench_pool
from appliance.config import add_config_arg
from appliance.demo.profile import load_profile
from appliance.demo.site import resolve_url, site_for
from appliance.errors import ApplianceError
from appliance.simulate.form_run import simulate_form, simulate_form_text
from appliance.voice.runtime import VoiceRuntime


def register(parsers) -> None:
    p = parsers.simulate.add_parser("form", help="a simulated person joins over WebRTC and fills the form by voice")
    add_config_arg(p)
    p.add_argument("--url", required=True, help="the form's first page (demo:NAME serves a bundled demo form)")
    p.add_argument("--profile", required=True, help="profile name (appliance/demo/profiles/NAME.yaml) or YAML path")
    p.add_argument("--autonomous", action="store_true", help="autonomous launch (see appliance form)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    _person_arg(p)
    p.set_defaults(func=_simulate)

    p = parsers.bench.add_parser("form", help="field accuracy, time per field, fill lag and waits over the demo forms")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.add_argument(
        "--forms", help="comma-separated demo forms (flight, register, …), or 'all': every bundled demo form"
    )
    p.add_argument("--profiles", help="comma-separated profiles (names in appliance/demo/profiles/)")
    p.add_argument(
        "--pages",
        type=Path,
        help="a folder of form pages you bring, described by its pages.json (CONTRACTS), run with the text person",
    )
    _person_arg(p)
    p.set_defaults(func=_bench)

    p = parsers.bench.add_parser(
        "pool", help="form workers' pool: throughput with N workers and with 1, and a worker killed mid-task"
    )
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.add_argument("--workers", type=int, default=2, help="workers of the pooled runs (default: 2)")
    p.add_argument("--tasks", type=int, default=6, help="form tasks offered together in each run (default: 6)")
    p.add_argument("--person", default="text", help="text: a scripted typist (the only person this bench has)")
    p.set_defaults(func=_bench_pool)


def _person_arg(p) -> None:
    p.add_argument(
        "--person",
        choices=("audio", "text"),
        default="audio",
        help="audio: the simulated person over WebRTC (default); text: a scripted typist, no audio",
    )


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _with_runtime(args, body: Callable[[config.Config, VoiceRuntime], Awaitable[dict]]) -> int:
    """Start the form runtime, run ``body(cfg, runtime)``, print its JSON, stop the runtime.
    Simulations and benchmarks run with ``browser.network: loopback``."""
    cfg = config.load(args.config).for_forms().loopback()
    runtime = VoiceRuntime(cfg).start(_progress)
    try:
        out = asyncio.run(body(cfg, runtime))
    finally:
        runtime.stop()
    print(json.dumps(out) if args.json else json.dumps(out, indent=2), flush=True)
    return 0


def _simulate(args) -> int:
    profile = load_profile(args.profile)
    if args.autonomous and args.person == "text":
        raise ApplianceError("--autonomous needs --person audio: the autonomous launch calls the person by voice")

    async def run(cfg, runtime) -> dict:
        async with site_for(args.url) as site:
            url = cfg.browser.check_url(resolve_url(args.url, site))
            if args.person == "text":
                out = await simulate_form_text(cfg, runtime, url, profile, site=site, progress=_progress)
            else:
                out = await simulate_form(
                    cfg, runtime, url, profile, autonomous=args.autonomous, site=site, progress=_progress
                )
            return out.report

    return _with_runtime(args, run)


def _split(arg: str | None) -> list[str] | None:
    return [x.strip() for x in arg.split(",") if x.strip()] if arg else None


def _bench(args) -> int:
    if args.pages is not None:
        if args.forms or args.profiles or args.person != "text":
            raise ApplianceError("--pages runs the folder's own pages and profiles with --person text")
        load_pages(args.pages)  # a bad pages.json fails before any model loads
        return _with_runtime(args, lambda cfg, runtime: run_bench(cfg, runtime, [], {}, "text", _progress, args.pages))
    plan = bench_plan(_split(args.forms), _split(args.profiles))
    profiles = {name: load_profile(name) for _, name in plan}  # a bad name fails before any model loads
    return _with_runtime(args, lambda cfg, runtime: run_bench(cfg, runtime, plan, profiles, args.person, _progress))


def _bench_pool(args) -> int:
    if args.person != "text":
        raise ApplianceError(
            f"bench pool: --person {args.person}: only the text person (a scripted typist) is supported"
        )
    if args.workers < 2 or args.tasks < 1:
        raise ApplianceError("bench pool: --workers 2 or more (compared with one worker), --tasks 1 or more")
    config.load(args.config)  # a bad file fails before anything starts
    out = bench_pool(args.config, args.workers, args.tasks, _progress)
    print(json.dumps(out) if args.json else json.dumps(out, indent=2), flush=True)
    return 0
