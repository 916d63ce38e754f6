"""The agents' bus: typed envelopes on a shared async bus.

In-process on asyncio by default (with a JSONL write-ahead log), Redis Streams across
processes and hosts. Agents never call each other; they publish and subscribe envelopes::

    async with open_bus(cfg.bus) as bus:
        async with bus.subscribe("computer", group="computer") as sub:
            await bus.publish(Envelope.new(InfoCollected(field="email", value="a@b.c", confirmed=True),
                                           sender="phone", recipient="computer"))
            async for env in sub:
                match env.payload:
                    case InfoCollected(field=name, value=value): ...

Envelope payload types live one floor below, in :mod:`appliance.protocol`.

- :mod:`~appliance.bus.envelope` — the envelope (UUIDv7 id, ms timestamp, typed payload).
- :mod:`~appliance.bus.base` — the API every backend implements, delivery semantics, errors.
- :mod:`~appliance.bus.inproc`, :mod:`~appliance.bus.log` — the in-process bus and its JSONL write-ahead log.
- :mod:`~appliance.bus.redis_streams`, :mod:`~appliance.bus.redis_server` — Redis Streams with
  consumer groups; a throw-away redis-server for tests and the benchmark.
- :mod:`~appliance.bus.inbox` — ``AgentInbox``: an agent's envelopes, taken at safe points.
- :mod:`~appliance.bus.tail`, :mod:`~appliance.bench.bus`, :mod:`~appliance.cli.bus`,
  :mod:`~appliance.bus.echo_worker` — ``appliance bus tail``, ``appliance bench bus``, the kill-test worker.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from appliance.bus.base import Bus, BusClosedError, BusError, BusOverflowError, BusTimeoutError, Overflow, Subscription
from appliance.bus.envelope import Envelope, now_ms, uuid7
from appliance.bus.inproc import InProcBus
from appliance.bus.log import LogError, read_envelopes
from appliance.config import BusConfig
from appliance.protocol.registry import EnvelopeError

__all__ = [
    "Bus",
    "BusClosedError",
    "BusError",
    "BusOverflowError",
    "BusTimeoutError",
    "Envelope",
    "EnvelopeError",
    "InProcBus",
    "LogError",
    "Overflow",
    "Subscription",
    "now_ms",
    "open_bus",
    "read_envelopes",
    "replay",
    "uuid7",
]


def open_bus(
    cfg: BusConfig,
    *,
    session: str | None = None,
    resume: bool = False,
    log_path: Path | None = None,
    from_start: bool = False,
    claim_idle_ms: int | None = None,
) -> Bus:
    """A bus (not yet started) as configured: ``async with open_bus(cfg) as bus: ...``.

    In-process: the log is ``log_path`` when given (e.g. a session's recording folder),
    else ``<cfg.log_dir>/<session>.jsonl``, ``session`` defaulting to ``bus-<UTC
    yyyymmdd-hhmmss>``; pass the same log with ``resume=True`` to resume an agent from it.
    Redis: ``cfg.redis_url``; the stream is the log (``session`` names the stream when
    given, else ``appliance:bus``; ``log_path`` does not apply), trimmed to ``cfg.redis_maxlen`` and
    dead-lettering after ``cfg.max_deliveries``; this process's publisher log, re-sent from
    after a server restart, is ``<cfg.log_dir>/<stream>-<UTC time>-<pid>.jsonl``;
    ``from_start``: subscriptions read the stream from its first entry (a stream that holds
    one task, which agents in several processes join at different times); ``claim_idle_ms``: how
    long an entry a group member holds may stay idle before another member takes it over
    (None: :class:`~appliance.bus.redis_streams.RedisBus`'s default).

    Raises:
        ValueError: ``from_start`` on the in-process backend (it keeps no history to read).
    """
    if cfg.backend == "redis":
        from appliance.bus.redis_streams import RedisBus

        stream = session or "appliance:bus"
        own_log = f"{stream.replace(':', '-')}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{os.getpid()}.jsonl"
        return RedisBus(
            cfg.redis_url,
            stream=stream,
            maxlen=cfg.redis_maxlen,
            max_deliveries=cfg.max_deliveries,
            log_path=Path(cfg.log_dir).expanduser() / own_log,
            log_fsync_ms=cfg.log_fsync_ms,
            from_start=from_start,
            **({} if claim_idle_ms is None else {"claim_idle_ms": claim_idle_ms}),
        )
    if from_start:
        raise ValueError("from_start needs bus.backend: redis (an in-process bus keeps no history to read)")
    if log_path is None:
        name = session or time.strftime("bus-%Y%m%d-%H%M%S", time.gmtime())
        log_path = Path(cfg.log_dir).expanduser() / f"{name}.jsonl"
    return InProcBus(log_path, log_fsync_ms=cfg.log_fsync_ms, resume=resume)


async def replay(path: str | Path, bus: Bus) -> int:
    """Publish every envelope of the log at ``path`` to ``bus`` again, in order, ids unchanged.

    Durable groups that already handled an id ignore it, so replaying into a resumed bus is
    idempotent. Returns the number of envelopes published.

    Raises:
        LogError: the log is unreadable.
    """
    envs = read_envelopes(path)
    await bus.publish_many(envs)
    return len(envs)
