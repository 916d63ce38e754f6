"""CLI for form filling by voice.

* ``appliance demo`` — serve the demo forms on 127.0.0.1 and print their URLs.
* ``appliance form --url URL [--autonomous]`` — fill a form with the person on this
  terminal (the assistant's words are printed, the person's answers typed); the voice page
  wires the same session to the microphone and speaker.
* ``appliance simulate form --url URL --profile P [--json]`` — a simulated person joins the
  appliance's form mode over WebRTC and is interviewed in real time (``--url demo:flight``
  serves the bundled demo itself).
* ``appliance bench form [--json]`` — the simulated person over every demo form.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading

from appliance import config

#: bench form: demo form → the profile that fills it
BENCH_RUNS = (("flight", "david"), ("register", "david"), ("flight-injected", "emma"))


def _add_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="operator YAML merged over configs/default.yaml")


def register(parsers) -> None:
    p = parsers.top.add_parser("demo", help="serve the bundled demo forms on 127.0.0.1 and print their URLs")
    _add_config(p)
    p.add_argument("--port", type=int, help="override forms.demo_port (0 = any free port)")
    p.set_defaults(func=_demo)

    p = parsers.top.add_parser("form", help="fill the web form at URL with the person on this terminal")
    _add_config(p)
    p.add_argument("--url", required=True, help="the form's first page (demo:NAME serves a bundled demo form)")
    p.add_argument("--autonomous", action="store_true",
                   help="start only the computer agent; it decides whether to call the phone agent")
    p.add_argument("--task", default="", help="the task in words, for the computer agent's decision")
    p.set_defaults(func=_form)

    p = parsers.simulate.add_parser("form", help="a simulated person joins over WebRTC and fills the form by voice")
    _add_config(p)
    p.add_argument("--url", required=True, help="the form's first page (demo:NAME serves a bundled demo form)")
    p.add_argument("--profile", required=True, help="profile name (configs/profiles/NAME.yaml) or YAML path")
    p.add_argument("--autonomous", action="store_true", help="autonomous launch (see appliance form)")
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=_simulate)

    p = parsers.bench.add_parser("form", help="field accuracy, fill lag and waits over the demo forms")
    _add_config(p)
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=_bench)


def _load(args):
    from appliance.forms.session import form_config

    return form_config(config.load(args.config))


def _demo(args) -> int:
    from appliance.demo.site import DemoSite

    cfg = config.load(args.config)
    port = cfg.forms.demo_port if args.port is None else args.port

    async def serve() -> None:
        async with DemoSite(port=port) as site:
            for name, url in site.urls.items():
                print(f"{name}: {url}", flush=True)
            await asyncio.Event().wait()

    asyncio.run(serve())
    return 0


def _demo_site_for(url: str):
    """The bundled demo site for a ``demo:NAME`` URL (an async context giving the site), else
    a context giving None."""
    from appliance.demo.site import DemoSite

    return DemoSite() if url.startswith("demo:") else contextlib.nullcontext()


def _print(obj: dict, one_line: bool) -> None:
    print(json.dumps(obj) if one_line else json.dumps(obj, indent=2), flush=True)


def _runtime(cfg, progress):
    from appliance.voice.pipeline import VoiceRuntime

    return VoiceRuntime(cfg).start(progress)


def _say_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _simulate(args) -> int:
    from appliance.simulate.form_run import resolve_url, simulate_form
    from appliance.simulate.profile import load_profile

    cfg = _load(args)
    profile = load_profile(args.profile)
    runtime = _runtime(cfg, _say_progress)

    async def run() -> dict:
        async with _demo_site_for(args.url) as site:
            url = resolve_url(args.url, site)
            out = await simulate_form(cfg, runtime, url, profile, autonomous=args.autonomous, site=site,
                                      progress=_say_progress)
            return out.report

    try:
        _print(asyncio.run(run()), args.json)
    finally:
        runtime.stop()
    return 0


def _bench(args) -> int:
    from appliance.demo.site import DemoSite
    from appliance.simulate.form_run import simulate_form
    from appliance.simulate.profile import load_profile

    cfg = _load(args)
    runtime = _runtime(cfg, _say_progress)

    async def run() -> dict:
        forms = []
        async with DemoSite() as site:
            for name, profile in BENCH_RUNS:
                _say_progress(f"bench form: {name} with profile {profile}")
                out = await simulate_form(cfg, runtime, site.urls[name], load_profile(profile), site=site,
                                          progress=_say_progress)
                forms.append({"form": name, **out.report})
        return {"forms": forms}

    try:
        _print(asyncio.run(run()), args.json)
    finally:
        runtime.stop()
    return 0


def _form(args) -> int:
    from appliance.forms.llm import LLM
    from appliance.forms.session import run_session
    from appliance.phone_agent.agent import QueueLine
    from appliance.simulate.form_run import resolve_url
    from appliance.voice.llm_server import EmbeddedLLMServer, endpoint
    from appliance.voice.pipeline import open_session

    cfg = _load(args)
    server = None
    if cfg.llm.provider == "embedded":
        server = EmbeddedLLMServer(cfg.llm)
        llm = LLM(server.start(), cfg.llm.model, slot=0)
    else:
        base_url, model, key = endpoint(cfg.llm)
        llm = LLM(base_url, model, api_key=key)

    class TerminalLine(QueueLine):
        """The person on this terminal: the assistant's words printed, answers typed."""

        async def say(self, text: str) -> None:
            print(f"assistant: {text}", flush=True)

    async def run() -> int:
        line = TerminalLine()
        loop = asyncio.get_running_loop()

        def read_stdin() -> None:
            for raw in sys.stdin:
                loop.call_soon_threadsafe(line.heard, raw.strip())

        threading.Thread(target=read_stdin, daemon=True).start()
        session = open_session(cfg, "form")
        try:
            async with _demo_site_for(args.url) as site:
                url = resolve_url(args.url, site)
                result = await run_session(cfg, url, llm=llm, line=line, emit=session.events.emit,
                                           autonomous=args.autonomous, task=args.task, folder=session.folder)
        finally:
            session.events.close()
        print(json.dumps({"status": result.computer.status, "detail": result.computer.detail,
                          "phone_started_by": result.phone_started_by, "recording": str(result.folder)}), flush=True)
        return 0 if result.computer.status == "submitted" else 1

    try:
        return asyncio.run(run())
    finally:
        if server is not None:
            server.stop()
