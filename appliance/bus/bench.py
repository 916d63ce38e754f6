"""``appliance bench bus``: throughput, latency and delivery under a consumer kill.

Result shape (``run``)::

    {"inproc": {"envelopes_per_s": int, "p99_ms": float, "p99_ms_at_1000_per_s": float},
     "redis":  {"envelopes_per_s": int, "p99_ms": float, "p99_ms_at_1000_per_s": float},
     "lost": int, "duplicated": int}

* **Throughput runs**: one publisher task and one subscriber task in one process.
  ``envelopes_per_s`` = envelopes ÷ (last handled − first published); it includes building
  each envelope (``Envelope.new``). ``p99_ms`` is the 99th percentile of publish→handled
  latency (``perf_counter`` just before ``publish`` → the subscriber has it in hand) in that
  same run. In-process: the default configuration (JSONL write-ahead log, fsync every
  100 ms), one ``publish`` per envelope, the subscription's default bound. Redis: a durable
  group member (acknowledgements included); the publisher sends batches of
  ``REDIS_BATCH`` with ``publish_many`` (one pipeline each) and keeps at most
  ``REDIS_WINDOW`` envelopes in flight — a closed loop, so the latency is not just the
  backlog of a publisher that outruns the consumer.
* **Paced runs**: one envelope every 1 ms for ``paced_s`` seconds; ``p99_ms_at_1000_per_s``.
* **Consumer-kill run** (Redis): two ``echo_worker`` processes share a group; each answers
  every envelope with an ``ack`` committed atomically with its acknowledgement. One is
  killed with SIGKILL once it has handled a fifth of the stream while the publisher is still
  publishing; the other takes over what it left pending. ``lost`` = envelopes never
  answered, ``duplicated`` = envelopes answered more than once.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from appliance.bus.envelope import Envelope
from appliance.bus.inproc import InProcBus
from appliance.bus.redis_server import RedisServer
from appliance.bus.redis_streams import RedisBus
from appliance.protocol import StatusUpdate
from appliance.protocol.registry import Payload, register_type

log = logging.getLogger(__name__)

REDIS_BATCH = 64
REDIS_WINDOW = 512
KILL_CLAIM_IDLE_MS = 500


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
    async with InProcBus(log_dir / "throughput.jsonl") as bus:
        meter = _Meter(n)
        consumer = asyncio.create_task(meter.collect(bus.subscribe("bench")))
        t0 = time.perf_counter_ns()
        for seq in range(n):
            env = _ping(seq)
            meter.sent[seq] = time.perf_counter_ns()
            await bus.publish(env)
        t1 = await consumer
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


async def _inproc(n: int, paced_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="appliance-bench-bus-") as d:
        rate, p99 = await _inproc_throughput(n, Path(d))
        async with InProcBus(Path(d) / "paced.jsonl") as bus:
            p99_paced = await _paced(bus, bus.subscribe("bench"), paced_s)
    return {"envelopes_per_s": rate, "p99_ms": p99, "p99_ms_at_1000_per_s": p99_paced}


async def _redis(url: str, n: int, paced_s: float) -> dict:
    async with RedisBus(url, stream="bench:throughput") as pub, RedisBus(url, stream="bench:throughput") as cons:
        meter = _Meter(n)
        consumer = asyncio.create_task(meter.collect(cons.subscribe("bench", group="bench", maxsize=REDIS_WINDOW)))
        t0 = time.perf_counter_ns()
        for first in range(0, n, REDIS_BATCH):
            while first - meter.handled >= REDIS_WINDOW:
                meter.progress.clear()
                await meter.progress.wait()
            batch = [_ping(seq) for seq in range(first, min(n, first + REDIS_BATCH))]
            now = time.perf_counter_ns()
            for env in batch:
                meter.sent[env.payload.seq] = now
            await pub.publish_many(batch)
        t1 = await consumer
        rate, p99 = int(n / ((t1 - t0) / 1e9)), meter.p99_ms()
    async with RedisBus(url, stream="bench:paced") as pub, RedisBus(url, stream="bench:paced") as cons:
        p99_paced = await _paced(pub, cons.subscribe("bench", group="bench"), paced_s)
    return {"envelopes_per_s": rate, "p99_ms": p99, "p99_ms_at_1000_per_s": p99_paced}


async def _kill_run(url: str, n: int) -> tuple[int, int]:
    stream = "bench:kill"

    async def worker(name: str) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "appliance.bus.echo_worker", url, "--stream", stream, "--group", "kill",
            "--consumer", name, "--claim-idle-ms", str(KILL_CLAIM_IDLE_MS),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if line.strip() != b"ready":
            raise RuntimeError(f"echo worker {name} did not start: {line!r}")
        return proc

    doomed, survivor = await worker("doomed"), await worker("survivor")
    try:
        async with RedisBus(url, stream=stream) as bus:
            answers = bus.subscribe("bench-publisher", types="ack", maxsize=n + 1)
            # a built-in type: the workers are separate processes that know only those
            sent = [Envelope.new(StatusUpdate(state="working", message=str(seq)), sender="bench-publisher",
                                 recipient="worker") for seq in range(n)]

            async def publish() -> None:
                for i in range(0, n, 50):
                    await bus.publish_many(sent[i:i + 50])
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


def run(inproc_n: int = 100_000, redis_n: int = 20_000, paced_s: float = 2.0, kill_n: int = 3_000) -> dict:
    """Run every part of the benchmark and return the result (shape in the module docstring).

    Raises:
        RuntimeError: redis-server is missing or an echo worker failed to start.
    """
    result: dict = {"inproc": asyncio.run(_inproc(inproc_n, paced_s))}
    with RedisServer() as server:
        result["redis"] = asyncio.run(_redis(server.url, redis_n, paced_s))
        result["lost"], result["duplicated"] = asyncio.run(_kill_run(server.url, kill_n))
    return result
