"""CLI: ``appliance serve``, ``appliance cert`` (HTTPS for other devices), ``appliance recordings``, ``appliance replay`` (a voice session; features add their own
recordings through ``Parsers.replayers``), ``appliance bench voice``, ``appliance bench soak``."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path

from appliance import config
from appliance.bench.replay import replay
from appliance.bench.voice import run_bench
from appliance.config import add_config_arg
from appliance.errors import ApplianceError
from appliance.voice import recordings, tls
from appliance.voice.server import serve_forever
from appliance.voice.transports import serve_single


def register(parsers) -> None:
    p = parsers.top.add_parser("serve", help="serve the voice page (WebRTC), a WebSocket, or the local mic/speaker")
    add_config_arg(p)
    p.add_argument("--transport", choices=["webrtc", "websocket", "local"], help="override transport.kind")
    p.add_argument("--port", type=int, help="override server.port")
    p.add_argument(
        "--no-record",
        action="store_true",
        help="store nothing of the sessions (the page's switch decides per call over WebRTC)",
    )
    p.set_defaults(func=_serve, serve_modes=parsers.serve_modes)

    p = parsers.top.add_parser(
        "cert", help="make an HTTPS certificate for a LAN name or address (server.tls_cert, server.tls_key)"
    )
    p.add_argument("--host", required=True, help="the name or address other devices open, e.g. appliance.lan")
    p.add_argument("--dir", required=True, help="folder for cert.pem, key.pem and ca.pem (made if missing)")
    p.add_argument("--days", type=int, default=tls.CERT_DAYS, help=f"validity (default {tls.CERT_DAYS}, at most 398)")
    p.set_defaults(func=_cert)

    rec = parsers.top.add_parser(
        "recordings", help="list, delete or prune the recordings in recording.dir"
    ).add_subparsers(dest="recordings_command", required=True, metavar="SUBCOMMAND")
    p = rec.add_parser("list", help="every recording, oldest first: id, last modified, size, whether it holds audio")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_recordings_list)
    p = rec.add_parser("delete", help="delete one recording by its id")
    add_config_arg(p)
    p.add_argument("id", help="a recording's id (its name in `appliance recordings list`)")
    p.set_defaults(func=_recordings_delete)
    p = rec.add_parser("prune", help="delete the recordings older than recording.retention_days (or --days)")
    add_config_arg(p)
    p.add_argument("--days", type=int, help="override recording.retention_days (0: delete nothing)")
    p.set_defaults(func=_recordings_prune)

    p = parsers.top.add_parser(
        "replay",
        help="feed a recorded session's input audio through the current pipeline "
        "(or re-run a recorded Werewolf game or form call and show where it diverges)",
    )
    add_config_arg(p)
    p.add_argument("folder", help="a session recording folder (with input.wav), a WAV file, or a feature's recording")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--timing",
        choices=("asked", "recorded"),
        default="asked",
        help="a form recording: each utterance answers the agent's next wait for one (asked), or is heard "
        "at its recorded time",
    )
    p.set_defaults(func=_replay, replayers=parsers.replayers)

    p = parsers.bench.add_parser("voice", help="v2v and barge-in latency, ours vs stock pipecat, at headless Chromium")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--turns", type=int, default=20, help="utterances per pipeline (10–20)")
    p.add_argument("--skip-stock", action="store_true", help="measure ours only")
    p.add_argument(
        "--sessions", type=int, default=2, help="also N pages talking at once to our pipeline (sessions_N; 1: none)"
    )
    p.set_defaults(func=_bench)

    p = parsers.bench.add_parser(
        "soak", help="many sessions and bad offers against one server: RSS, fds, threads, Chromium at start and end"
    )
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--sessions", type=int, default=50, help="sessions, alternating plain and form (default 50)")
    p.add_argument("--bad-offers", type=int, default=200, help="garbage and abandoned offers (default 200)")
    p.set_defaults(func=_soak)


def _load(args) -> config.Config:
    overrides: dict = {}
    if getattr(args, "transport", None):
        overrides["transport"] = {"kind": args.transport}
    if getattr(args, "port", None) is not None:
        overrides["server"] = {"port": args.port}
    return config.load(args.config, overrides)


def _serve(args) -> int:
    cfg = _load(args)
    if args.no_record:
        cfg = cfg.without_recording()
    if cfg.transport.kind == "webrtc":
        features = [importlib.import_module(name).install for name in args.serve_modes]
        asyncio.run(serve_forever(cfg, features))
    else:
        asyncio.run(serve_single(cfg))
    return 0


def _cert(args) -> int:
    try:
        files = tls.make_certificate(args.host, Path(args.dir).expanduser(), args.days)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(tls.how_to_use(files, args.host))
    return 0


def _recordings_dir(args) -> Path:
    return Path(_load(args).recording.dir).expanduser()


def _recordings_list(args) -> int:
    found = recordings.list_recordings(_recordings_dir(args))
    if args.json:
        print(json.dumps({"recordings": [r.as_json() for r in found]}))
    else:
        for r in found:
            j = r.as_json()
            print(f"{j['id']:48} {j['modified']}  {r.size_bytes / 1e6:8.1f} MB  {'audio' if r.audio else ''}")
    return 0


def _recordings_delete(args) -> int:
    try:
        recordings.delete(_recordings_dir(args), args.id)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"deleted {args.id}")
    return 0


def _recordings_prune(args) -> int:
    cfg = _load(args)
    days = cfg.recording.retention_days if args.days is None else args.days
    if days < 0:
        print("error: --days must be 0 or more", file=sys.stderr)
        return 2
    gone = recordings.prune(Path(cfg.recording.dir).expanduser(), days)
    print(f"deleted {len(gone)} recording(s) older than {days} days" if days else "--days 0: nothing deleted")
    return 0


def _replay(args) -> int:
    if not Path(args.folder).exists():
        raise ApplianceError(f"{args.folder}: no such recording folder or WAV file")
    for is_recording, run in args.replayers:  # a feature's own recording (a Werewolf game)
        if is_recording(args.folder):
            return run(args)
    result = asyncio.run(replay(_load(args), args.folder))
    if args.json:
        print(json.dumps(result))
    else:
        for t in result["turns"]:
            print(f"{t.get('transcript', '')!r}: {t}")
    return 0


def _bench(args) -> int:
    result = asyncio.run(run_bench(_load(args), turns=args.turns, stock=not args.skip_stock, sessions=args.sessions))
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    if "error" in result:
        print(f"appliance bench voice: {result['error']}", file=sys.stderr)
        return 1
    return 0


def _soak(args) -> int:
    from appliance.bench.soak import run_soak

    try:
        result = asyncio.run(run_soak(args.config, sessions=args.sessions, bad_offers=args.bad_offers))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0 if all(result["targets"].values()) else 1
