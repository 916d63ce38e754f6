"""The Redis Streams backend against a real redis-server on loopback (see conftest.redis_server)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from bus_helpers import take
from bus_helpers import work as _work

from appliance.bus import BusOverflowError, BusTimeoutError, Envelope
from appliance.bus.redis_streams import RedisBus

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.e2e  # a real redis-server


def work(n: int, sender: str = "phone", recipient: str = "worker") -> Envelope:
    return _work(n, sender, recipient)


async def stream_envelopes(url: str, stream: str = "appliance:bus") -> list[Envelope]:
    r = aioredis.Redis.from_url(url)
    try:
        return [Envelope.from_json(f[b"e"]) for _, f in await r.xrange(stream)]
    finally:
        await r.aclose()


async def test_group_delivers_in_per_sender_order_and_acknowledges(redis_url):
    async with RedisBus(redis_url) as bus:
        sub = bus.subscribe("worker", group="workers", maxsize=32)

        async def publisher(name: str) -> None:
            for n in range(100):
                await bus.publish(work(n, sender=name))

        await asyncio.gather(*(publisher(s) for s in ("phone", "judge", "P4")))
        got = await take(sub, 300)
        await sub.close()  # acknowledges the last one and flushes
        by_sender: dict[str, list[int]] = defaultdict(list)
        for env in got:
            by_sender[env.sender].append(int(env.payload.message))
        assert by_sender == {s: list(range(100)) for s in ("phone", "judge", "P4")}
        pending = await bus._r.xpending(bus.stream, "workers")
        assert pending["pending"] == 0
        assert await bus._r.exists(bus._done_key("workers", got[-1].id)) == 1


async def test_fan_out_to_ephemeral_subscribers_and_groups_and_sharing_within_a_group(redis_url):
    async with RedisBus(redis_url) as bus, RedisBus(redis_url) as other_process:
        eph = bus.subscribe("worker")
        audit = other_process.subscribe(group="audit")  # everything, one durable copy
        member_a = bus.subscribe("worker", group="workers", maxsize=5)
        member_b = other_process.subscribe("worker", group="workers", maxsize=5)
        ignored = bus.subscribe("phone")
        sent = [work(n) for n in range(40)]
        await bus.publish_many(sent)
        assert [e.id for e in await take(eph, 40)] == [e.id for e in sent]
        assert [e.id for e in await take(audit, 40)] == [e.id for e in sent]

        seen: list[str] = []

        async def drain(sub) -> None:
            async for env in sub:
                seen.append(env.id)
                await asyncio.sleep(0.001)
                if len(seen) == 40:
                    return

        tasks = [asyncio.create_task(drain(s)) for s in (member_a, member_b)]
        await asyncio.wait_for(asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED), 15)
        for t in tasks:
            t.cancel()
        assert sorted(seen) == sorted(e.id for e in sent)  # each handled by exactly one member
        assert len(ignored.lanes) == 0


async def test_urgent_envelopes_are_read_even_with_a_full_ordinary_queue(redis_url):
    async with RedisBus(redis_url) as bus:
        sub = bus.subscribe("worker", group="workers", maxsize=3)
        await bus.publish_many([work(n) for n in range(10)])
        async with asyncio.timeout(10):
            while len(sub.lanes.normal) < 3:
                await asyncio.sleep(0.01)
        await bus.publish(Envelope.new("terminate", {"reason": "cancel"}, sender="operator", recipient="worker"))
        async with asyncio.timeout(10):
            while not sub.lanes.urgent:  # fetched although the ordinary lane is full
                await asyncio.sleep(0.01)
        assert len(sub.lanes.normal) == 3
        got = await take(sub, 1)
        assert got[0].type == "terminate"
        assert [e.payload.message for e in await take(sub, 10)] == [str(n) for n in range(10)]


async def test_request_reply_across_processes_and_timeout(redis_url):
    async with RedisBus(redis_url) as phone, RedisBus(redis_url) as computer:
        agent_sub = computer.subscribe("computer", group="computer")

        async def agent() -> None:
            async for env in agent_sub:
                if env.payload.goal == "answer":
                    await agent_sub.ack(env, publish=[env.reply("status_update", {"state": "working"})])

        task = asyncio.create_task(agent())
        ask = Envelope.new("task_assigned", {"goal": "answer"}, sender="phone", recipient="computer")
        reply = await phone.request(ask, timeout_s=10)
        assert reply.reply_to == ask.id and reply.sender == "computer"
        with pytest.raises(BusTimeoutError):
            await phone.request(
                Envelope.new("task_assigned", {"goal": "no"}, sender="phone", recipient="computer"), timeout_s=0.2
            )
        task.cancel()


async def test_a_process_that_joins_a_task_stream_late_reads_it_from_its_first_entry(redis_url):
    async with RedisBus(redis_url, stream="form-t1", from_start=True) as first:
        await first.publish(work(1, recipient="phone"))
        await first.publish(Envelope.new("terminate", {"reason": "done"}, sender="computer", recipient="*"))
        await first.publish(work(2, recipient="computer"))  # not for the phone
        async with (
            RedisBus(redis_url, stream="form-t1", from_start=True) as late,
            RedisBus(redis_url, stream="form-t1") as now,
        ):
            joined, from_now = late.subscribe("phone"), now.subscribe("phone")
            got = await take(joined, 2)
            assert [e.type for e in got] == ["terminate", "status_update"]  # urgent first, then in order
            assert got[1].payload.message == "1"
            await first.publish(work(3, recipient="phone"))
            assert [e.payload.message for e in await take(joined, 1) + await take(from_now, 1)] == ["3", "3"]


async def test_the_same_envelope_published_twice_is_handled_once(redis_url):
    async with RedisBus(redis_url) as bus:
        sub = bus.subscribe("worker", group="workers")
        env = work(1)
        await bus.publish(env)
        first = await take(sub, 1)
        await sub.ack(first[0])
        await bus.publish(env)  # e.g. a publisher retrying after a lost connection
        await bus.publish(work(2))
        nxt = await take(sub, 1)
        assert nxt[0].payload.message == "2"
        assert len(sub.lanes) == 0


async def test_invalid_stream_entries_are_dead_lettered_not_delivered(redis_url):
    async with RedisBus(redis_url) as bus:
        sub = bus.subscribe("worker", group="workers")
        await bus._r.xadd(bus.stream, {b"e": b'{"type": "nonsense"}'})
        await bus._r.xadd(bus.stream, {b"x": b"1"})
        await bus.publish(work(1))
        assert [e.payload.message for e in await take(sub, 1)] == ["1"]
        async with asyncio.timeout(10):
            while await bus._r.xlen(bus._dead_key) < 2:
                await asyncio.sleep(0.02)
        dead = await bus._r.xrange(bus._dead_key)
        reasons = sorted(fields[b"reason"] for _, fields in dead)
        assert b"Field required" in reasons[0] and reasons[1] == b"missing field b'e'"


async def test_overflow_error_fails_the_slow_subscriber_loudly(redis_url):
    async with RedisBus(redis_url) as bus:
        sub = bus.subscribe("worker", maxsize=2, overflow="error")
        await bus.publish_many([work(n) for n in range(5)])
        with pytest.raises(BusOverflowError, match="is full"):
            await take(sub, 5)


async def test_closing_a_member_hands_what_it_fetched_to_another_at_once(redis_url):
    async with RedisBus(redis_url, claim_idle_ms=60_000) as bus:  # no idle-based takeover here
        a = bus.subscribe("worker", group="workers", maxsize=50)
        await bus.publish_many([work(n) for n in range(20)])
        assert (await take(a, 1))[0].payload.message == "0"
        async with asyncio.timeout(10):
            while len(a.lanes) < 19:
                await asyncio.sleep(0.01)
        await a.close()  # 0 is handled; 1..19 were fetched but not handled
        b = bus.subscribe("worker", group="workers")
        assert [e.payload.message for e in await take(b, 19)] == [str(n) for n in range(1, 20)]


async def test_a_slow_but_live_handler_keeps_its_envelope(redis_url):
    async with RedisBus(redis_url, claim_idle_ms=300) as bus_a, RedisBus(redis_url, claim_idle_ms=300) as bus_b:
        a = bus_a.subscribe("worker", group="workers")
        b = bus_b.subscribe("worker", group="workers")
        await bus_a.publish(work(1))
        async with asyncio.timeout(10):
            while not (a.lanes or b.lanes):
                await asyncio.sleep(0.01)
        holder, other = (a, b) if a.lanes else (b, a)
        env = (await take(holder, 1))[0]
        await asyncio.sleep(1.2)  # four times claim_idle_ms "handling" it
        await holder.ack(env, publish=[env.reply("ack", sender="worker")])
        await asyncio.sleep(0.6)
        assert len(other.lanes) == 0
        replies = [e for e in await stream_envelopes(redis_url) if e.type == "ack"]
        assert [r.reply_to for r in replies] == [env.id]


async def test_consumer_killed_mid_stream_is_redelivered_and_handled_exactly_once(redis_url):
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance.bus.echo_worker",
            redis_url,
            "--group",
            "workers",
            "--consumer",
            "doomed",
            "--hold-after",
            "5",
            "--maxsize",
            "100",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert (await asyncio.wait_for(asyncio.to_thread(worker.stdout.readline), 60)).strip() == "ready"
        async with RedisBus(redis_url, claim_idle_ms=300) as bus:
            sent = [work(n) for n in range(30)]
            await bus.publish_many(sent)
            lines = []
            while not lines or not lines[-1].startswith("holding"):
                line = await asyncio.wait_for(asyncio.to_thread(worker.stdout.readline), 30)
                assert line, worker.stderr.read()
                lines.append(line.strip())
            held = lines[-1].split()[1]
            assert [ln.split()[1] for ln in lines[:-1]] == [e.id for e in sent[:5]]
            pending = await bus._r.xpending_range(bus.stream, "workers", "-", "+", 1000, consumername="doomed")
            entries = {e[0]: e[1] for e in await bus._r.xrange(bus.stream)}
            held_by_doomed = {Envelope.from_json(entries[p["message_id"]][b"e"]).id for p in pending}
            assert held_by_doomed >= {e.id for e in sent[5:]}  # it had fetched the rest too

            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()

            survivor = bus.subscribe("worker", group="workers", consumer="survivor")
            handled = []
            async with asyncio.timeout(30):
                async for env in survivor:
                    await survivor.ack(env, publish=[env.reply("ack", sender="survivor")])
                    handled.append(env.id)
                    if len(handled) == 25:
                        break
            assert handled[0] == held
            assert handled == [e.id for e in sent[5:]]
            await survivor.close()
            await asyncio.sleep(0.5)  # longer than claim_idle_ms: nothing else may come back
            assert len(survivor.lanes) == 0
            pending = await bus._r.xpending_range(bus.stream, "workers", "-", "+", 1000)
            entries = {e[0]: e[1] for e in await bus._r.xrange(bus.stream)}
            # at most replies (not for this group) fetched by a member and not yet skipped: nothing of ours
            assert all(Envelope.from_json(entries[p["message_id"]][b"e"]).type == "ack" for p in pending)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        worker.stdout.close()
        worker.stderr.close()
    answers: dict[str, list[str]] = defaultdict(list)
    for env in await stream_envelopes(redis_url):
        if env.type == "ack":
            answers[env.reply_to].append(env.sender)
    assert answers == {e.id: ["doomed"] for e in sent[:5]} | {e.id: ["survivor"] for e in sent[5:]}


async def test_a_mark_swapped_in_by_many_processes_at_once_comes_back_changed_to_exactly_one(redis_url):
    """The submit guard's ground (issue 29): of the buses that swap the same value in at once,
    one gets back what was there before; every other gets its own value back."""
    buses = [RedisBus(redis_url, stream="form-guard") for _ in range(4)]
    for bus in buses:
        await bus.start()
    try:
        assert await buses[0].read_mark("submit") is None
        got = await asyncio.gather(*(bus.swap_mark("submit", "e7 pressed") for bus in buses))
        assert got.count(None) == 1 and await buses[1].read_mark("submit") == "e7 pressed"
        async with RedisBus(redis_url, stream="form-other") as other:  # marks belong to their stream
            assert await other.read_mark("submit") is None
    finally:
        for bus in buses:
            await bus.stop()
