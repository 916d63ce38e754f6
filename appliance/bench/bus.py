"""``appliance bench bus``: throughput, latency and delivery under faults, each backend
against a bare baseline measured in the same run and process.

Result shape (``run``)::

    {"inproc": {"envelopes_per_s": int, "p99_ms": float, "p99_ms_at_1000_per_s": float,
                "baseline": {"envelopes_per_s": int, "p99_ms": float}, "ratio": float,
                "queue_only_envelopes_per_s": int},
     "redis":  {"envelopes_per_s": int, "p99_ms": float, "p99_ms_at_1000_per_s": float,
                "baseline": {"envelopes_per_s": int, "p99_ms": float}, "ratio": float,
                "trim": {"entries": int, "maxlen": int, "removed": int, "ms": float}},
     "lost": int, "duplicated": int,
     "restart": {"lost": int, "duplicated": int, "handled_twice": int, "resent": int}}

* **Throughput runs**: one publisher task and one subscriber task in one process.
  ``envelopes_per_s`` = envelopes ÷ (last handled − first published); it includes building
  each envelope (``Envelope.new``). ``p99_ms`` is the 99th percentile of publish→handled
  latency (``perf_counter`` just before ``publish`` → the subscriber has it in hand) in that
  same run. In-process: the default configuration (JSONL write-ahead log, fsync every
  100 ms), one ``publish`` per envelope, the subscription's default bound. Redis: as
  :func:`appliance.bus.open_bus` builds it (the publisher's JSONL log, ``bus.redis_maxlen``
  trimming) and a durable group member (acknowledgements included); the publisher sends
  batches of ``REDIS_BATCH`` with ``publish_many`` (one pipeline each) and keeps at most
  ``REDIS_WINDOW`` envelopes in flight — a closed loop, so the latency is not just the
  backlog of a publisher that outruns the consumer.
* **Baselines** do only the per-envelope work the bus contract requires, with the same
  envelopes, batches and window, and are run alternately with ours (``rounds`` times each,
  medians reported), so both see the same machine in the same seconds; ``ratio`` = ours ÷
  baseline envelopes/s. In-process: ``Envelope.new`` + ``model_dump_json()``, append and
  flush to a JSONL file (fsync every 100 ms in a worker thread), ``asyncio.Queue``
  (``queue_only_envelopes_per_s``: the queue and ``Envelope.new`` alone, for information).
  Redis: the same bytes, pipelined ``XADD``, ``XREADGROUP``, ``json.loads`` for the id, then
  per envelope ``SET NX`` (the done mark) + ``XACK``, pipelined per read.
* **Paced runs**: one envelope every 1 ms for ``paced_s`` seconds; ``p99_ms_at_1000_per_s``.
* **Trim**: after the Redis throughput run (every entry acknowledged), one trim of that
  stream to ``TRIM_MAXLEN`` entries, timed.
* **Consumer-kill run** (Redis): two ``echo_worker`` processes share a group; each answers
  every envelope with an ``ack`` committed atomically with its acknowledgement. One is
  killed with SIGKILL once it has handled a fifth of the stream while the publisher is still
  publishing; the other takes over what it left pending. ``lost`` = envelopes never
  answered, ``duplicated`` = envelopes answered more than once.
* **Restart run** (Redis with an AOF, ``appendfsync everysec``): one ``echo_worker``; the
  server is SIGKILLed mid-stream with its AOF cut back to its size 0.5 s earlier (what a
  power cut can lose; SIGKILL alone loses nothing acknowledged) and restarted. ``lost`` /
  ``duplicated`` as above, ``handled_twice`` from the worker's own record, ``resent`` =
  envelopes the publisher and the worker re-sent from their logs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis.asyncio as aioredis

from appliance.bus.envelope import Envelope
from appliance.bus.inproc import InProcBus
from appliance.bus.redis_server import RedisServer
from appliance.bus.redis_streams import RedisBus
from appliance.config import BusConfig
from appliance.protocol import StatusUpdate
from appliance.protocol.registry import Payload, register_type

log = logging.getLogger(__name__)

REDIS_BATCH = 64
REDIS_WINDOW = 512
KILL_CLAIM_IDLE_MS = 500
FSYNC_MS = 100  # the default bus.log_fsync_ms, for ours and the in-process baseline
TRIM_MAXLEN = 1000
YIELD_DEPTH = 32  # InProcBus's default: the baseline's publisher yields as ours does
DEDUP_TTL_MS = 86_400_000  # RedisBus's default done-mark lifetime


class Ping(Payload):
    seq: int


register_type("bench.ping", Ping)


def _p99_ms(lat_ns: list[int]) -> float:
    s = sorted(lat_ns)
    return round(s[min(len(s) - 1, int(len(s) * 0.99))] / 1e6, 3)


def _ping(seq: int) -> Envelope:
    return Envelope.new(Ping(seq=seq), sender="bench-publisher", recipient="bench")


class _Meter:
    """Send times and publish→handled latencies (ns) of ``n`` pings, and how many were handled."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.sent = [0] * n
        self.lat = [0] * n
        self.handled = 0
        self.progress = asyncio.Event()

    async def collect(self, sub) -> int:  # noqa: ANN001
        """Take the ``n`` pings from ``sub``; return when the last one arrived (ns)."""
        async for env in sub:
            seq = env.payload.seq
            self.lat[seq] = time.perf_counter_ns() - self.sent[seq]
            self.handled += 1
            self.progress.set()
            if self.handled == self.n:
                break
        return time.perf_counter_ns()

    def p99_ms(self) -> float:
        return _p99_ms(self.lat)


async def _inproc_throughput(n: int, log_dir: Path) -> tuple[int, float]:
    async with InProcBus(log_dir / "throughput.jsonl", log_fsync_ms=FSYNC_MS) as bus:
        meter = _Meter(n)
        consumer = asyncio.create_task(meter.collect(bus.subscribe("bench")))
        t0 = time.perf_counter_ns()
        for seq in range(n):
            env = _ping(seq)
            meter.sent[seq] = time.perf_counter_ns()
            await bus.publish(env)
        t1 = await consumer
    return int(n / ((t1 - t0) / 1e9)), meter.p99_ms()


async def _inproc_baseline(n: int, path: Path, log: bool = True) -> tuple[int, float]:
    """The bare in-process work (module docstring); ``log=False``: the queue alone."""
    queue: asyncio.Queue[Envelope] = asyncio.Queue()
    meter = _Meter(n)
    loop = asyncio.get_running_loop()

    async def consume() -> int:
        while meter.handled < n:
            env = await queue.get()
            meter.lat[env.payload.seq] = time.perf_counter_ns() - meter.sent[env.payload.seq]
            meter.handled += 1
        return time.perf_counter_ns()

    async def fsync_every(f) -> None:  # noqa: ANN001
        while True:
            await asyncio.sleep(FSYNC_MS / 1000)
            await loop.run_in_executor(None, os.fsync, f.fileno())

    with path.open("ab") as f:
        syncer = asyncio.create_task(fsync_every(f)) if log else None
        consumer = asyncio.create_task(consume())
        t0 = time.perf_counter_ns()
        for seq in range(n):
            env = _ping(seq)
            meter.sent[seq] = time.perf_counter_ns()
            if log:
                f.write(env.model_dump_json().encode() + b"\n")
                f.flush()
            queue.put_nowait(env)
            if queue.qsize() >= YIELD_DEPTH:  # as the bus does: never starve the consumer
                await asyncio.sleep(0)
        t1 = await consumer
        if syncer is not None:
            syncer.cancel()
            await asyncio.gather(syncer, return_exceptions=True)
            os.fsync(f.fileno())
    return int(n / ((t1 - t0) / 1e9)), meter.p99_ms()


async def _paced(publish_bus, sub, seconds: float) -> float:  # noqa: ANN001
    meter = _Meter(int(1000 * seconds))
    consumer = asyncio.create_task(meter.collect(sub))
    start = time.perf_counter()
    for seq in range(meter.n):
        delay = start + seq / 1000 - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        env = _ping(seq)
        meter.sent[seq] = time.perf_counter_ns()
        await publish_bus.publish(env)
    await consumer
    return meter.p99_ms()


def _median(runs: list[tuple[int, float]]) -> tuple[int, float]:
    return int(statistics.median(r for r, _ in runs)), round(statistics.median(p for _, p in runs), 3)


def _figures(ours: list[tuple[int, float]], base: list[tuple[int, float]]) -> dict:
    (rate, p99), (b_rate, b_p99) = _median(ours), _median(base)
    return {
        "envelopes_per_s": rate,
        "p99_ms": p99,
        "baseline": {"envelopes_per_s": b_rate, "p99_ms": b_p99},
        "ratio": round(rate / b_rate, 3),
    }


async def _inproc(n: int, paced_s: float, rounds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="appliance-bench-bus-") as d:
        ours, base, queue_only = [], [], []
        for r in range(rounds):  # alternate, so both see the same machine in the same seconds
            base.append(await _inproc_baseline(n, Path(d) / f"baseline-{r}.jsonl"))
            ours.append(await _inproc_throughput(n, Path(d) / str(r)))
            queue_only.append(await _inproc_baseline(n, Path(d) / "unused", log=False))
        async with InProcBus(Path(d) / "paced.jsonl", log_fsync_ms=FSYNC_MS) as bus:
            p99_paced = await _paced(bus, bus.subscribe("bench"), paced_s)
    return {
        **_figures(ours, base),
        "p99_ms_at_1000_per_s": p99_paced,
        "queue_only_envelopes_per_s": _median(queue_only)[0],
    }


def _redis_bus(url: str, stream: str, log_dir: Path, name: str) -> RedisBus:
    """A RedisBus as ``open_bus`` makes one by default: its own publisher log, trimming on."""
    cfg = BusConfig()
    return RedisBus(
        url,
        stream=stream,
        maxlen=cfg.redis_maxlen,
        max_deliveries=cfg.max_deliveries,
        log_path=log_dir / f"{name}.jsonl",
        log_fsync_ms=cfg.log_fsync_ms,
    )


async def _publish_windowed(meter: "_Meter", n: int, send: Callable[[list[Envelope]], Awaitable[None]]) -> None:
    """Publish ``n`` pings in batches of ``REDIS_BATCH`` with ``send``, never more than
    ``REDIS_WINDOW`` ahead of what the consumer handled; stamps each one's send time."""
    for first in range(0, n, REDIS_BATCH):
        while first - meter.handled >= REDIS_WINDOW:
            meter.progress.clear()
            await meter.progress.wait()
        batch = [_ping(seq) for seq in range(first, min(n, first + REDIS_BATCH))]
        now = time.perf_counter_ns()
        for env in batch:
            meter.sent[env.payload.seq] = now
        await send(batch)


async def _redis_throughput(url: str, n: int, stream: str, log_dir: Path) -> tuple[int, float]:
    async with (
        _redis_bus(url, stream, log_dir, f"{stream}-pub") as pub,
        _redis_bus(url, stream, log_dir, f"{stream}-cons") as cons,
    ):
        meter = _Meter(n)
        consumer = asyncio.create_task(meter.collect(cons.subscribe("bench", group="bench", maxsize=REDIS_WINDOW)))
        t0 = time.perf_counter_ns()
        await _publish_windowed(meter, n, pub.publish_many)
        t1 = await consumer
    return int(n / ((t1 - t0) / 1e9)), meter.p99_ms()


async def _redis_baseline(url: str, n: int, stream: str) -> tuple[int, float]:
    """The bare Redis work (module docstring), same batches and window as ours."""
    r = aioredis.Redis.from_url(url)
    reader = aioredis.Redis.from_url(url)
    try:
        await r.xgroup_create(stream, "bench", id="$", mkstream=True)
        meter = _Meter(n)

        async def consume() -> int:
            while meter.handled < n:
                res = await reader.xreadgroup("bench", "c", {stream: ">"}, count=REDIS_WINDOW, block=1000)
                pipe = reader.pipeline(transaction=False)
                for _, entries in res or ():
                    for entry_id, fields in entries:
                        obj = json.loads(fields[b"e"])
                        seq = obj["payload"]["seq"]
                        meter.lat[seq] = time.perf_counter_ns() - meter.sent[seq]
                        meter.handled += 1
                        pipe.set(f"{stream}:done:bench:{obj['id']}", b"1", nx=True, px=DEDUP_TTL_MS)
                        pipe.xack(stream, "bench", entry_id)
                meter.progress.set()
                await pipe.execute()
            return time.perf_counter_ns()

        async def xadd(batch: list[Envelope]) -> None:
            pipe = r.pipeline(transaction=False)
            for env in batch:
                pipe.xadd(stream, {b"e": env.to_json()})
            await pipe.execute()

        consumer = asyncio.create_task(consume())
        t0 = time.perf_counter_ns()
        await _publish_windowed(meter, n, xadd)
        t1 = await consumer
    finally:
        await r.aclose()
        await reader.aclose()
    return int(n / ((t1 - t0) / 1e9)), meter.p99_ms()


async def _trim_figure(url: str, stream: str) -> dict:
    async with RedisBus(url, stream=stream, maxlen=TRIM_MAXLEN) as bus:
        entries = await bus._r.xlen(stream)
        t0 = time.perf_counter()
        removed = await bus.trim()
        ms = (time.perf_counter() - t0) * 1000
    return {"entries": entries, "maxlen": TRIM_MAXLEN, "removed": removed, "ms": round(ms, 2)}


async def _redis(url: str, n: int, paced_s: float, rounds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="appliance-bench-bus-") as d:
        ours, base = [], []
        for r in range(rounds):
            base.append(await _redis_baseline(url, n, f"bench:baseline:{r}"))
            ours.append(await _redis_throughput(url, n, f"bench:throughput:{r}", Path(d)))
        trim = await _trim_figure(url, f"bench:throughput:{rounds - 1}")
        async with (
            _redis_bus(url, "bench:paced", Path(d), "paced-pub") as pub,
            _redis_bus(url, "bench:paced", Path(d), "paced-cons") as cons,
        ):
            p99_paced = await _paced(pub, cons.subscribe("bench", group="bench"), paced_s)
    return {**_figures(ours, base), "p99_ms_at_1000_per_s": p99_paced, "trim": trim}


async def _kill_run(url: str, n: int) -> tuple[int, int]:
    stream = "bench:kill"

    async def worker(name: str) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "appliance.bus.echo_worker",
            url,
            "--stream",
            stream,
            "--group",
            "kill",
            "--consumer",
            name,
            "--claim-idle-ms",
            str(KILL_CLAIM_IDLE_MS),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if line.strip() != b"ready":
            raise RuntimeError(f"echo worker {name} did not start: {line!r}")
        return proc

    doomed, survivor = await worker("doomed"), await worker("survivor")
    try:
        async with RedisBus(url, stream=stream) as bus:
            answers = bus.subscribe("bench-publisher", types="ack", maxsize=n + 1)
            # a built-in type: the workers are separate processes that know only those
            sent = [
                Envelope.new(
                    StatusUpdate(state="working", message=str(seq)), sender="bench-publisher", recipient="worker"
                )
                for seq in range(n)
            ]

            async def publish() -> None:
                for i in range(0, n, 50):
                    await bus.publish_many(sent[i : i + 50])
                    await asyncio.sleep(0.01)

            publisher = asyncio.create_task(publish())
            # kill the doomed worker once it has handled a fifth of the envelopes, or once it has
            # gone quiet after the last publish (the survivor may have taken most of them)
            handled = 0
            async with asyncio.timeout(60):
                while handled < n // 5:
                    try:
                        line = await asyncio.wait_for(doomed.stdout.readline(), 2)
                    except TimeoutError:
                        if publisher.done():
                            break
                        continue
                    if not line:
                        raise RuntimeError("the doomed echo worker ended early")
                    handled += line.startswith(b"handled")
            doomed.send_signal(signal.SIGKILL)
            await doomed.wait()
            log.info("killed the doomed worker after %d handled; publisher done: %s", handled, publisher.done())
            await publisher

            counts: Counter[str] = Counter()
            ids = {e.id for e in sent}
            try:
                async with asyncio.timeout(60):
                    async for env in answers:
                        counts[env.reply_to] += 1
                        if len(ids.intersection(counts)) == n:
                            break
            except TimeoutError:
                pass
            # a duplicate would come after a takeover: wait for three more takeover periods
            await asyncio.sleep(3 * KILL_CLAIM_IDLE_MS / 1000)
            while (env := answers.lanes.take()) is not None:
                counts[env.reply_to] += 1
    finally:
        for proc in (doomed, survivor):
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    lost = sum(1 for i in ids if counts[i] == 0)
    duplicated = sum(1 for i in ids if counts[i] > 1)
    return lost, duplicated


async def _restart_run(n: int) -> dict:
    stream = "bench:restart"
    with tempfile.TemporaryDirectory(prefix="appliance-bench-restart-") as d, RedisServer(appendonly=True) as server:
        out = Path(d) / "worker.out"
        with out.open("w") as sink:
            worker = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "appliance.bus.echo_worker",
                server.url,
                "--stream",
                stream,
                "--group",
                "restart",
                "--consumer",
                "w1",
                "--log",
                str(Path(d) / "worker.jsonl"),
                stdout=sink,
                stderr=asyncio.subprocess.DEVNULL,
            )
        try:
            async with asyncio.timeout(60):
                while not out.read_text().startswith("ready"):
                    await asyncio.sleep(0.05)
            async with RedisBus(server.url, stream=stream, log_path=Path(d) / "publisher.jsonl") as bus:
                sent = [
                    Envelope.new(
                        "status_update",
                        {"state": "working", "message": str(seq)},
                        sender="bench-publisher",
                        recipient="worker",
                    )
                    for seq in range(n)
                ]

                async def publish() -> None:  # about 1,000 envelopes/s
                    for i in range(0, n, 20):
                        await bus.publish_many(sent[i : i + 20])
                        await asyncio.sleep(0.02)

                publisher = asyncio.create_task(publish())
                await asyncio.sleep(n / 2000 - 0.5)
                on_disk = server.aof_bytes()
                await asyncio.sleep(0.5)
                await asyncio.to_thread(server.kill, on_disk)
                await asyncio.sleep(0.5)
                await asyncio.to_thread(server.restart)
                await publisher
                ids = {e.id for e in sent}
                answers: Counter[str] = Counter()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(60):
                        while len(ids.intersection(answers)) < n:
                            await asyncio.sleep(0.2)
                            answers = Counter(
                                Envelope.from_json(f[b"e"]).reply_to for _, f in await bus._r.xrange(stream)
                            )
                await asyncio.sleep(1.5)  # a duplicate would come after a takeover or a late re-send
                answers = Counter(Envelope.from_json(f[b"e"]).reply_to for _, f in await bus._r.xrange(stream))
                resent = bus.resent
        finally:
            if worker.returncode is None:
                worker.send_signal(signal.SIGINT)
                await worker.wait()
        words = out.read_text().split()
    handled = Counter(words[i + 1] for i, w in enumerate(words) if w == "handled")
    resent += int(words[words.index("resent") + 1]) if "resent" in words else 0
    return {
        "lost": sum(1 for i in ids if answers[i] == 0),
        "duplicated": sum(1 for i in ids if answers[i] > 1),
        "handled_twice": sum(1 for i in ids if handled[i] > 1),
        "resent": resent,
    }


def run(
    inproc_n: int = 100_000,
    redis_n: int = 20_000,
    paced_s: float = 2.0,
    kill_n: int = 3_000,
    restart_n: int = 3_000,
    rounds: int = 3,
) -> dict:
    """Run every part of the benchmark and return the result (shape in the module docstring).

    Raises:
        RuntimeError: redis-server is missing or an echo worker failed to start.
        ValueError: ``rounds`` < 1 or ``restart_n`` < 2,000 (the kill comes 0.5 s before mid-stream).
    """
    if rounds < 1 or restart_n < 2000:
        raise ValueError(f"rounds must be ≥ 1 and restart_n ≥ 2000, got {rounds} and {restart_n}")
    result: dict = {"inproc": asyncio.run(_inproc(inproc_n, paced_s, rounds))}
    with RedisServer() as server:
        result["redis"] = asyncio.run(_redis(server.url, redis_n, paced_s, rounds))
        result["lost"], result["duplicated"] = asyncio.run(_kill_run(server.url, kill_n))
    result["restart"] = asyncio.run(_restart_run(restart_n))
    return result
