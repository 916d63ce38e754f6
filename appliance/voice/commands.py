"""CLI: ``appliance serve``, ``appliance replay``, ``appliance bench voice``."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys

from appliance import config
from appliance.config import add_config_arg
from appliance.voice.bench import run_bench
from appliance.voice.replay import replay
from appliance.voice.server import serve_forever
from appliance.voice.transports import serve_single


def register(parsers) -> None:
    p = parsers.top.add_parser("serve", help="serve the voice page (WebRTC), a WebSocket, or the local mic/speaker")
    add_config_arg(p)
    p.add_argument("--transport", choices=["webrtc", "websocket", "local"], help="override transport.kind")
    p.add_argument("--port", type=int, help="override server.port")
    p.set_defaults(func=_serve, serve_modes=parsers.serve_modes)

    p = parsers.top.add_parser("replay", help="feed a recorded session's input audio through the current pipeline")
    add_config_arg(p)
    p.add_argument("folder", help="a session recording folder (with input.wav), or a WAV file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_replay)

    p = parsers.bench.add_parser("voice", help="v2v and barge-in latency, ours vs stock pipecat, at headless Chromium")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--turns", type=int, default=10, help="utterances per pipeline (≥ 10)")
    p.add_argument("--skip-stock", action="store_true", help="measure ours only")
    p.set_defaults(func=_bench)


def _load(args) -> config.Config:
    overrides: dict = {}
    if getattr(args, "transport", None):
        overrides["transport"] = {"kind": args.transport}
    if getattr(args, "port", None) is not None:
        overrides["server"] = {"port": args.port}
    return config.load(args.config, overrides)


def _serve(args) -> int:
    cfg = _load(args)
    if cfg.transport.kind == "webrtc":
        features = [importlib.import_module(name).install for name in args.serve_modes]
        asyncio.run(serve_forever(cfg, features))
    else:
        asyncio.run(serve_single(cfg))
    return 0


def _replay(args) -> int:
    result = asyncio.run(replay(_load(args), args.folder))
    if args.json:
        print(json.dumps(result))
    else:
        for t in result["turns"]:
            print(f"{t.get('transcript', '')!r}: {t}")
    return 0


def _bench(args) -> int:
    result = asyncio.run(run_bench(_load(args), turns=args.turns, stock=not args.skip_stock))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    if "error" in result:
        print(f"appliance bench voice: {result['error']}", file=sys.stderr)
        return 1
    return 0
