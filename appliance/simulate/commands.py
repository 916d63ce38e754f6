"""CLI for simulated persons.

* ``appliance simulate form --url URL --profile P [--json]`` — a simulated person joins the
  appliance's form mode over WebRTC and is interviewed in real time (``--url demo:flight``
  serves the bundled demo itself).
* ``appliance bench form [--json] [--forms F,…] [--profiles P,…] [--person audio|text]`` —
  the simulated person over the demo forms; prints ``{"runs": [...], "summary": {...}}``
  (CONTRACTS.md "bench form JSON"; the summary is over the audio runs). Without selectors:
  the old profiles on the bundled forms (:data:`BENCH_RUNS`), then each hard profile on the
  flight form. With them: every selected form with every selected profile (``--forms``
  alone: the old profiles; ``--profiles`` alone: the flight form).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from collections.abc import Awaitable, Callable

from appliance import config
from appliance.config import add_config_arg
from appliance.demo.profile import PROFILES_DIR, load_profile
from appliance.demo.site import DemoSite, resolve_url, site_for
from appliance.simulate.form_run import simulate_form, simulate_form_text
from appliance.voice.runtime import VoiceRuntime

#: bench form: demo form → the (old, ASR-friendly) profile that fills it
BENCH_RUNS = (("flight", "david"), ("register", "david"), ("flight-injected", "emma"))
#: profiles whose names tiny.en knows; every other bundled profile is a hard one (issue 12)
OLD_PROFILES = ("david", "emma")


def hard_profiles() -> list[str]:
    """The bundled profiles tiny.en gets wrong: every one but :data:`OLD_PROFILES`."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml") if p.stem not in OLD_PROFILES)


def bench_plan(forms: list[str] | None, profiles: list[str] | None) -> list[tuple[str, str]]:
    """(form, profile) runs for the selectors (see the module docstring)."""
    if not forms and not profiles:
        return [*BENCH_RUNS, *(("flight", p) for p in hard_profiles())]
    return [(f, p) for f in (forms or ["flight"]) for p in (profiles or list(OLD_PROFILES))]


def bench_summary(runs: list[dict]) -> dict:
    """``{"seconds_per_field": {"median", "max"}, "field_accuracy_min", "person", "runs"}`` over
    the audio runs (the text runs when there are none)."""
    person = "audio" if any(r["person"] == "audio" for r in runs) else "text"
    mine = [r for r in runs if r["person"] == person]
    spf = [r["seconds_per_field"] for r in mine if r["seconds_per_field"] is not None]
    acc = [r["field_accuracy"] for r in mine if r["field_accuracy"] is not None]
    return {"seconds_per_field": {"median": round(statistics.median(spf), 2) if spf else None,
                                  "max": max(spf) if spf else None},
            "field_accuracy_min": min(acc) if acc else None, "person": person, "runs": len(mine)}


def register(parsers) -> None:
    p = parsers.simulate.add_parser("form", help="a simulated person joins over WebRTC and fills the form by voice")
    add_config_arg(p)
    p.add_argument("--url", required=True, help="the form's first page (demo:NAME serves a bundled demo form)")
    p.add_argument("--profile", required=True, help="profile name (appliance/demo/profiles/NAME.yaml) or YAML path")
    p.add_argument("--autonomous", action="store_true", help="autonomous launch (see appliance form)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=_simulate)

    p = parsers.bench.add_parser("form", help="field accuracy, time per field, fill lag and waits over the demo forms")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.add_argument("--forms", help="comma-separated demo forms (flight, register, flight-injected)")
    p.add_argument("--profiles", help="comma-separated profiles (names in appliance/demo/profiles/)")
    p.add_argument("--person", choices=("audio", "text"), default="audio",
                   help="audio: the simulated person over WebRTC (default); text: a scripted typist, no audio")
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


def _split(arg: str | None) -> list[str] | None:
    return [x.strip() for x in arg.split(",") if x.strip()] if arg else None


def _bench(args) -> int:
    plan = bench_plan(_split(args.forms), _split(args.profiles))
    profiles = {name: load_profile(name) for _, name in plan}  # a bad name fails before any model loads

    async def run(cfg, runtime) -> dict:
        runs = []
        async with DemoSite() as site:
            for form, name in plan:
                _progress(f"bench form: {form} with profile {name} ({args.person} person)")
                if form not in site.urls:
                    raise SystemExit(f"bench form: no demo form {form!r}; known: {', '.join(site.urls)}")
                simulate = simulate_form if args.person == "audio" else simulate_form_text
                out = await simulate(cfg, runtime, site.urls[form], profiles[name], site=site, progress=_progress)
                runs.append({"form": form, "profile": name, "person": args.person, **out.report})
        return {"runs": runs, "summary": bench_summary(runs)}

    return _with_runtime(args, run)
