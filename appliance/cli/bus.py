"""CLI: ``appliance bus tail`` and ``appliance bench bus``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from appliance.config import ConfigError


def register(parsers) -> None:  # noqa: ANN001  (appliance.cli.Parsers; imported lazily to avoid a cycle)
    """Add ``appliance bus tail`` and ``appliance bench bus``."""
    bus = parsers.top.add_parser("bus", help="inspect the agents' bus").add_subparsers(
        dest="bus_command", required=True, metavar="SUBCOMMAND"
    )
    tail = bus.add_parser(
        "tail",
        help="pretty-print a bus log file or a live Redis stream",
        description="Pretty-print the envelopes of an in-process bus's JSONL log (default: the newest log in "
        "bus.log_dir) or of a Redis bus's streams.",
    )
    tail.add_argument("logfile", nargs="?", help="a bus log (.jsonl)")
    tail.add_argument("--redis", metavar="URL", help="read a live Redis bus instead, e.g. redis://127.0.0.1:6379/0")
    tail.add_argument("--stream", default="appliance:bus", help="the Redis bus's stream name (default: %(default)s)")
    tail.add_argument("-f", "--follow", action="store_true", help="keep printing new envelopes")
    tail.add_argument("-n", "--lines", type=int, default=None, metavar="N", help="start with the last N only")
    tail.add_argument("--config", help="operator config file (for bus.log_dir)")
    tail.set_defaults(func=_tail)

    bench = parsers.bench.add_parser(
        "bus",
        help="bus throughput and latency against a bare baseline, and delivery under faults",
        description="In-process and Redis throughput with one publisher and one subscriber, each against a bare "
        "baseline doing only the contract's per-envelope work in the same run (and our ratio), p99 "
        "publish→handled latency in that run and in a 1,000 envelope/s paced run, the cost of a trim, "
        "and lost/duplicated envelopes when a Redis consumer is SIGKILLed mid-stream and when "
        "redis-server is. Starts its own redis-servers on 127.0.0.1.",
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("--inproc-n", type=int, default=100_000, help="envelopes in the in-process run")
    bench.add_argument("--redis-n", type=int, default=20_000, help="envelopes in the Redis run")
    bench.add_argument("--paced-s", type=float, default=2.0, help="seconds of the 1,000 envelope/s runs")
    bench.add_argument("--kill-n", type=int, default=3_000, help="envelopes in the consumer-kill run")
    bench.add_argument(
        "--restart-n", type=int, default=3_000, help="envelopes in the redis-server restart run (≥ 2000)"
    )
    bench.add_argument("--rounds", type=int, default=3, help="alternate ours and the bare baseline this many times")
    bench.set_defaults(func=_bench)


def _tail(args: argparse.Namespace) -> int:
    from appliance.bus.tail import tail_file, tail_redis

    color = sys.stdout.isatty()
    try:
        if args.redis:
            tail_redis(args.redis, args.stream, sys.stdout, follow=args.follow, last=args.lines, color=color)
            return 0
        path = Path(args.logfile).expanduser() if args.logfile else _newest_log(args.config)
        tail_file(path, sys.stdout, follow=args.follow, last=args.lines, color=color)
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _newest_log(config_path: str | None) -> Path:
    from appliance import config

    log_dir = Path(config.load(config_path).bus.log_dir).expanduser()
    logs = sorted(log_dir.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    if not logs:
        raise ConfigError(f"bus.log_dir: no bus logs (*.jsonl) in {log_dir}; name a LOGFILE or use --redis")
    return logs[-1]


def _bench(args: argparse.Namespace) -> int:
    from appliance.bench.bus import run

    try:
        result = run(
            inproc_n=args.inproc_n,
            redis_n=args.redis_n,
            paced_s=args.paced_s,
            kill_n=args.kill_n,
            restart_n=args.restart_n,
            rounds=args.rounds,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        for backend in ("inproc", "redis"):
            r, b = result[backend], result[backend]["baseline"]
            print(
                f"{backend:7} {r['envelopes_per_s']:>9,} envelopes/s   p99 {r['p99_ms']:.3f} ms   "
                f"p99 at 1,000/s {r['p99_ms_at_1000_per_s']:.3f} ms   bare baseline {b['envelopes_per_s']:>9,}/s "
                f"p99 {b['p99_ms']:.3f} ms   ratio {r['ratio']:.2f}"
            )
        t, k = result["redis"]["trim"], result["restart"]
        print(f"trim {t['entries']:,} → {t['maxlen']:,}: {t['removed']:,} removed in {t['ms']:.2f} ms")
        print(f"consumer killed mid-stream: lost {result['lost']}, duplicated {result['duplicated']}")
        print(
            f"redis-server killed mid-stream: lost {k['lost']}, duplicated {k['duplicated']}, handled twice "
            f"{k['handled_twice']}, re-sent from the logs {k['resent']}"
        )
    return 0
