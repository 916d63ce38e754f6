"""A consumer process for the Redis consumer-kill test and benchmark.

``python -m appliance.bus.echo_worker URL --group G --consumer NAME [--hold-after N]``
joins durable group ``G`` on the bus at ``URL`` and answers every envelope addressed to
``--recipient`` with an ``ack`` envelope (``reply_to`` = its id, sender = ``NAME``),
published atomically with the acknowledgement — so each envelope's effect appears exactly
once however the worker dies. Prints ``ready`` once subscribed, then ``handled <id>`` per
envelope; with ``--hold-after N`` it prints ``holding <id>`` on envelope N+1 and keeps it
unacknowledged until killed. ``--log PATH``: the bus's publisher log, from which it re-sends
the answers a restarted redis-server lost; it prints ``resent N`` on exit if it re-sent any.
SIGINT stops it (flushing its acknowledgements), also when it was started from a shell's
background job, which starts children with SIGINT ignored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from appliance.bus.redis_streams import RedisBus


async def run(args: argparse.Namespace) -> None:
    bus = RedisBus(args.url, stream=args.stream, claim_idle_ms=args.claim_idle_ms, log_path=args.log)
    async with bus:
        sub = bus.subscribe(args.recipient, group=args.group, consumer=args.consumer, maxsize=args.maxsize)
        print("ready", flush=True)
        handled = 0
        try:
            async for env in sub:
                if args.hold_after is not None and handled == args.hold_after:
                    print("holding", env.id, flush=True)
                    await asyncio.Event().wait()
                await sub.ack(env, publish=[env.reply("ack", sender=args.consumer)])
                handled += 1
                print("handled", env.id, flush=True)
        finally:
            if bus.resent:
                print("resent", bus.resent, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m appliance.bus.echo_worker", description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--stream", default="appliance:bus")
    ap.add_argument("--group", required=True)
    ap.add_argument("--consumer", required=True)
    ap.add_argument("--recipient", default="worker")
    ap.add_argument("--claim-idle-ms", type=int, default=500)
    ap.add_argument("--maxsize", type=int, default=256)
    ap.add_argument("--hold-after", type=int, default=None)
    ap.add_argument("--log", default=None, help="the bus's publisher log (JSONL)")
    args = ap.parse_args()
    # a background job (``cmd &`` in a non-interactive shell, nohup) starts us with SIGINT
    # ignored, and Python then leaves it ignored: the caller's SIGINT would never stop us
    signal.signal(signal.SIGINT, signal.default_int_handler)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
