"""CLI for simulated persons.

* ``appliance simulate form --url URL --profile P [--json]`` — a simulated person joins the
  appliance's form mode over WebRTC and is interviewed in real time (``--url demo:flight``
  serves the bundled demo itself).
* ``appliance bench form [--json]`` — the simulated person over every demo form.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable

from appliance import config
from appliance.config import add_config_arg
from appliance.demo.profile import load_profile
from appliance.demo.site import DemoSite, resolve_url, site_for
from appliance.simulate.form_run import simulate_form
from appliance.voice.runtime import VoiceRuntime

#: bench form: demo form → the profile that fills it
BENCH_RUNS = (("flight", "david"), ("register", "david"), ("flight-injected", "emma"))


def register(parsers) -> None:
    p = parsers.simulate.add_parser("form", help="a simulated person joins over WebRTC and fills the form by voice")
    add_config_arg(p)
    p.add_argument("--url", required=True, help="the form's first page (demo:NAME serves a bundled demo form)")
    p.add_argument("--profile", required=True, help="profile name (appliance/demo/profiles/NAME.yaml) or YAML path")
    p.add_argument("--autonomous", action="store_true", help="autonomous launch (see appliance form)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=_simulate)

    p = parsers.bench.add_parser("form", help="field accuracy, fill lag and waits over the demo forms")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=_bench)


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

    async def run(cfg, runtime) -> dict:
        async with site_for(args.url) as site:
            url = cfg.browser.check_url(resolve_url(args.url, site))
            out = await simulate_form(cfg, runtime, url, profile, autonomous=args.autonomous, site=site,
                                      progress=_progress)
            return out.report

    return _with_runtime(args, run)


def _bench(args) -> int:
    async def run(cfg, runtime) -> dict:
        forms = []
        async with DemoSite() as site:
            for name, profile in BENCH_RUNS:
                _progress(f"bench form: {name} with profile {profile}")
                out = await simulate_form(cfg, runtime, site.urls[name], load_profile(profile), site=site,
                                          progress=_progress)
                forms.append({"form": name, **out.report})
        return {"forms": forms}

    return _with_runtime(args, run)
