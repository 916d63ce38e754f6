"""Faults on the Redis backend, each injected on a real redis-server: a poison envelope,
streams that must be trimmed, and the server killed (SIGKILL, AOF everysec) mid-stream."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from bus_helpers import take, work

from appliance.bus import Envelope
from appliance.bus.redis_server import RedisServer
from appliance.bus.redis_streams import RedisBus

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.e2e  # a real redis-server: not one of the fast tests (CONTRACTS.md)


class Poisoned(Exception):
    """What the failing handler raises."""


async def test_an_envelope_that_keeps_failing_is_dead_lettered_and_the_stream_flows(redis_url):
    async with RedisBus(redis_url, max_deliveries=3, claim_idle_ms=300) as bus:
        poison, *rest = [work(n, recipient="worker") for n in range(6)]
        for attempt in range(3):  # three members in turn each fail on it (close with an exception)
            with pytest.raises(Poisoned):
                async with bus.subscribe("worker", group="workers", maxsize=1) as sub:
                    if attempt == 0:
                        await bus.publish_many([poison, *rest])
                    got = await take(sub, 1)
                    assert got[0].id == poison.id, attempt
                    raise Poisoned
        async with bus.subscribe("worker", group="workers", maxsize=1) as sub:
            assert [e.id for e in await take(sub, 5)] == [e.id for e in rest]  # the stream flows on
        dead = await bus._r.xrange(bus._dead_key)
        assert len(dead) == 1
        fields = dead[0][1]
        assert Envelope.from_json(fields[b"e"]).id == poison.id and fields[b"deliveries"] == b"4"
        assert fields[b"reason"].startswith(
            b"delivered 4 times to group workers without being acknowledged (max_deliveries 3)"
        )
        assert (await bus._r.xpending(bus.stream, "workers"))["pending"] == 0


async def test_envelopes_fetched_but_never_handled_do_not_count_as_deliveries(redis_url):
    async with RedisBus(redis_url, max_deliveries=1) as bus:
        sent = [work(n, recipient="worker") for n in range(5)]
        for _ in range(4):  # each member fetches everything, handles one, closes cleanly
            async with bus.subscribe("worker", group="workers", maxsize=10) as sub:
                if _ == 0:
                    await bus.publish_many(sent)
                await take(sub, 1)
                async with asyncio.timeout(10):
                    while len(sub.lanes) < len(sent) - 1 - _:
                        await asyncio.sleep(0.01)
        assert await bus._r.xlen(bus._dead_key) == 0
        async with bus.subscribe("worker", group="workers") as sub:
            assert await take(sub, 1) == [sent[4]]


async def _stream_ids(r: aioredis.Redis, key: str) -> list[str]:
    return [Envelope.from_json(f[b"e"]).id for _, f in await r.xrange(key)]


async def test_trimming_keeps_every_entry_a_group_has_not_acknowledged(redis_url):
    async with RedisBus(redis_url, maxlen=100) as bus:
        fast = bus.subscribe("worker", group="fast", maxsize=2000)
        slow = bus.subscribe("worker", group="slow", maxsize=5)
        sent = [work(n, recipient="worker") for n in range(1000)]
        await bus.publish_many(sent)
        assert [e.id for e in await take(fast, 1000)] == [e.id for e in sent]
        await fast.ack(sent[-1])
        held = await take(slow, 300)  # the 300th is being handled: pending, not acknowledged
        assert held[-1].id == sent[299].id
        async with asyncio.timeout(10):
            while (await bus._r.xpending(bus.stream, "fast"))["pending"]:
                await asyncio.sleep(0.02)
        await bus.trim()
        kept = await _stream_ids(bus._r, bus.stream)
        assert set(e.id for e in sent[299:]) <= set(kept)
        assert len(kept) <= 1000 - 100  # what both groups had acknowledged went (whole radix nodes of 100)
        # the slow group loses nothing: it gets the rest, in order
        assert [e.id for e in await take(slow, 700)] == [e.id for e in sent[300:]]
        await slow.ack(sent[-1])
        async with asyncio.timeout(10):  # then the background trimmer brings the stream to ~maxlen
            await bus.publish(work(1000, recipient="worker"))
            while await bus._r.xlen(bus.stream) > 100 + 100:  # maxlen + one radix node (whole nodes only)
                await asyncio.sleep(0.1)
        assert await bus._r.xlen(bus.stream) >= 100


def _worker(url: str, log: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance.bus.echo_worker",
            url,
            "--group",
            "workers",
            "--consumer",
            "w1",
            "--log",
            str(log),
            "--maxsize",
            "64",
        ],
        cwd=REPO,
        stdout=out.open("w"),
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("power_cut", [False, True], ids=["sigkill", "sigkill-and-the-last-0.5-s-of-aof-lost"])
async def test_redis_killed_mid_stream_loses_nothing_and_handles_nothing_twice(tmp_path, power_cut):
    """SIGKILL (AOF everysec) loses nothing Redis acknowledged; with the AOF also cut back to
    its size 0.5 s earlier (what a power cut can lose) the publisher and the worker re-send
    from their logs what the restarted server lacks. Either way: nothing lost, nothing
    handled or answered twice."""
    n = 3000
    out = tmp_path / "worker.out"
    with RedisServer(appendonly=True) as server:
        worker = _worker(server.url, tmp_path / "worker.jsonl", out)
        try:
            async with asyncio.timeout(60):
                while not out.read_text().startswith("ready"):
                    await asyncio.sleep(0.05)
            async with RedisBus(server.url, log_path=tmp_path / "publisher.jsonl") as bus:
                sent = [work(i, recipient="worker") for i in range(n)]

                async def publish() -> None:  # about 1,000 envelopes/s, in batches of 20
                    for i in range(0, n, 20):
                        await bus.publish_many(sent[i : i + 20])
                        await asyncio.sleep(0.02)

                publisher = asyncio.create_task(publish())
                await asyncio.sleep(1.0)
                on_disk = server.aof_bytes()
                await asyncio.sleep(0.5)
                await asyncio.to_thread(server.kill, on_disk if power_cut else None)
                await asyncio.sleep(0.5)
                await asyncio.to_thread(server.restart)
                await asyncio.wait_for(publisher, 60)

                def answered() -> Counter:
                    return Counter(e.reply_to for e in stream if e.type == "ack")

                async with asyncio.timeout(60):
                    while True:
                        stream = [Envelope.from_json(f[b"e"]) for _, f in await bus._r.xrange(bus.stream)]
                        if len(answered()) >= n:
                            break
                        await asyncio.sleep(0.2)
                await asyncio.sleep(1.5)  # a duplicate would come after a takeover or a late re-send
                stream = [Envelope.from_json(f[b"e"]) for _, f in await bus._r.xrange(bus.stream)]
                resent = bus.resent
        finally:
            worker.send_signal(signal.SIGINT)
            _, err = await asyncio.to_thread(worker.communicate, timeout=30)
    lines = out.read_text().split()
    handled = Counter(lines[i + 1] for i, w in enumerate(lines) if w == "handled")
    worker_resent = int(lines[lines.index("resent") + 1]) if "resent" in lines else 0
    ids = [e.id for e in sent]
    answers = answered()
    assert [i for i in ids if answers[i] == 0] == [], "lost"
    assert [i for i in ids if answers[i] > 1] == [], "answered twice"
    assert [i for i in ids if handled[i] != 1] == [], "handled twice or never"
    if power_cut:  # the cut lost envelopes and answers; the logs brought them back
        assert resent > 0 and worker_resent > 0, (resent, worker_resent, err[-2000:])
    else:
        assert resent == worker_resent == 0


async def test_open_bus_gives_redis_the_configured_limits_and_a_publisher_log(tmp_path, redis_url):
    from appliance import config
    from appliance.bus import open_bus

    cfg = config.load(
        overrides={
            "bus": {
                "backend": "redis",
                "redis_url": redis_url,
                "log_dir": str(tmp_path),
                "redis_maxlen": 500,
                "max_deliveries": 2,
            }
        }
    )
    bus = open_bus(cfg.bus, session="forms")
    assert (bus.stream, bus.maxlen, bus.max_deliveries) == ("forms", 500, 2)
    assert bus.log_path.parent == tmp_path and bus.log_path.name.startswith("forms-")
    async with bus:
        env = work(1)
        await bus.publish(env)
    from appliance.bus import read_envelopes

    assert [e.id for e in read_envelopes(bus.log_path)] == [env.id]  # `appliance bus tail` reads it too
