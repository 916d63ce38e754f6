"""CLI: ``appliance bench asr``."""

from __future__ import annotations

import json
from pathlib import Path

from appliance import config
from appliance.config import add_config_arg


def register(parsers) -> None:
    p = parsers.bench.add_parser("asr", help="word error rate and latency of each ASR engine on generated speech")
    add_config_arg(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--engines",
        default="whisper,moonshine",
        help="comma-separated variants, each ENGINE[:MODEL][:beamN] (asr.engine, asr.model, asr.beam_size), e.g. "
        "whisper,whisper:tiny.en:beam5,whisper:base,whisper:base:beam5,moonshine (default: whisper,moonshine)",
    )
    p.add_argument("--clips", type=Path, help="folder for the rendered clips (default: a temp folder, reused)")
    p.set_defaults(func=_bench)


def _bench(args) -> int:
    from appliance.bench.asr import run_bench

    cfg = config.load(args.config)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    result = run_bench(cfg, engines, args.clips)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0
