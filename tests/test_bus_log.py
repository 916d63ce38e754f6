"""The JSONL write-ahead log: replay equals the original, torn tails, and resuming durable groups."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from bus_helpers import take, work

from appliance.bus import Envelope, InProcBus, LogError, read_envelopes, replay
from appliance.bus.log import iter_log

REPO = Path(__file__).resolve().parent.parent


def replies_by_request(path: Path) -> dict[str, set[str]]:
    """reply_to -> the distinct ids of ``ack`` envelopes answering it, from a log."""
    out: dict[str, set[str]] = defaultdict(set)
    for env in read_envelopes(path):
        if env.type == "ack":
            out[env.reply_to].add(env.id)
    return out


async def test_log_replay_equals_the_original_sequence(tmp_path):
    path = tmp_path / "session.jsonl"
    published = []
    async with InProcBus(path) as bus:
        for n in range(50):
            env = work(n, sender=("phone", "computer", "P2")[n % 3], recipient=("computer", "phone", "*")[n % 3])
            if n % 10 == 9:
                env = env.reply("ack", sender="computer" if env.recipient == "*" else None)
            await bus.publish(env)
            published.append(env)
        term = Envelope.new("terminate", {"reason": "end"}, sender="operator", recipient="*")
        await bus.publish(term)
        published.append(term)
    assert read_envelopes(path) == published

    async with InProcBus(tmp_path / "replayed.jsonl") as bus2:
        sub2 = bus2.subscribe(maxsize=100)
        assert await replay(path, bus2) == 51
        received = await take(sub2, 51)
    assert sorted(received, key=lambda e: e.id) == sorted(published, key=lambda e: e.id)
    assert [e for e in received if e.type != "terminate"] == [e for e in published if e.type != "terminate"]
    assert read_envelopes(tmp_path / "replayed.jsonl") == published


async def test_each_envelope_reaches_the_file_before_delivery(tmp_path):
    path = tmp_path / "wal.jsonl"
    async with InProcBus(path, log_fsync_ms=100) as bus:
        sub = bus.subscribe()
        env = work(1)
        await bus.publish(env)
        assert read_envelopes(path) == [env]  # written (not buffered) even before anyone reads it
        assert (await take(sub, 1)) == [env]
    async with InProcBus(tmp_path / "sync.jsonl", log_fsync_ms=0) as bus:
        await bus.publish(env)
    assert read_envelopes(tmp_path / "sync.jsonl") == [env]


def test_torn_last_line_is_skipped_and_a_corrupt_line_is_an_error(tmp_path, caplog):
    a, b = work(1), work(2)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(a.to_json() + b"\n" + b.to_json()[:40])
    assert read_envelopes(torn) == [a]
    assert "torn last line" in caplog.text
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(a.to_json() + b"\n" + b'{"id": 1}\n' + b.to_json() + b"\n")
    with pytest.raises(LogError, match=r"bad.jsonl:2: envelope"):
        read_envelopes(bad)
    with pytest.raises(LogError, match="No such file"):
        read_envelopes(tmp_path / "missing.jsonl")


async def test_ack_with_effects_is_one_write(tmp_path):
    path = tmp_path / "bus.jsonl"
    async with InProcBus(path) as bus:
        sub = bus.subscribe("agent", group="agent")
        req = work(1)
        await bus.publish(req)
        got = (await take(sub, 1))[0]
        reply = got.reply("ack")
        await sub.ack(got, publish=[reply])
        await sub.ack(got)  # twice: a no-op
        with pytest.raises(Exception, match="not awaiting acknowledgement"):
            await sub.ack(got, publish=[got.reply("ack")])  # effects again: refused loudly
    lines = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert [ln.get("_bus") or ln["type"] for ln in lines] == ["group", "status_update", "ack", "ack"]
    assert lines[2]["id"] == reply.id and lines[3] == {"_bus": "ack", "group": "agent", "id": req.id}


async def test_resume_redelivers_only_unacknowledged_and_ignores_republished_ids(tmp_path):
    path = tmp_path / "bus.jsonl"
    async with InProcBus(path) as bus:
        sub = bus.subscribe("agent", group="agent")
        sent = [work(n) for n in range(10)]
        await bus.publish_many(sent)
        first = await take(sub, 4)  # 0..2 acknowledged by asking for the next; 3 is in hand
        assert [e.payload.message for e in first] == ["0", "1", "2", "3"]
        # the bus stops with 3 in hand (never acknowledged) and 4..9 queued
    async with InProcBus(path, resume=True) as bus:
        sub = bus.subscribe("agent", group="agent")
        rest = await take(sub, 7)
        assert [e.id for e in rest] == [e.id for e in sent[3:]]
        await sub.close()  # the last one counts as handled
        await bus.publish_many(sent)  # the same ids again: already handled, ignored
        again = bus.subscribe("agent", group="agent")
        assert len(again.lanes) == 0
        await bus.publish(work(10))
        assert [e.payload.message for e in await take(again, 1)] == ["10"]


async def test_exception_in_handler_leaves_the_envelope_for_redelivery():
    async with InProcBus() as bus:
        await bus.subscribe("agent", group="agent").close()  # the group exists from here on
        await bus.publish_many([work(0), work(1)])
        with pytest.raises(RuntimeError):
            async with bus.subscribe("agent", group="agent") as sub:
                async for env in sub:
                    raise RuntimeError(f"handler failed on {env.payload.message}")
        sub = bus.subscribe("agent", group="agent")
        assert [e.payload.message for e in await take(sub, 2)] == ["0", "1"]


CRASHING_AGENT = r"""
import asyncio, sys
from appliance.bus import Envelope, InProcBus

async def main(path):
    async with InProcBus(path) as bus:
        sub = bus.subscribe("agent", group="agent")
        await bus.publish_many([Envelope.new("status_update", {"state": "working", "message": str(n)},
                                             sender="phone", recipient="agent") for n in range(20)])
        handled = 0
        async for env in sub:
            if handled == 7:
                print("holding", env.id, flush=True)
                await asyncio.sleep(3600)
            await sub.ack(env, publish=[env.reply("ack")])
            handled += 1

asyncio.run(main(sys.argv[1]))
"""


async def test_agent_killed_mid_task_resumes_from_the_log_exactly_once(tmp_path):
    path = tmp_path / "bus.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-c", CRASHING_AGENT, str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 60)
        assert line.startswith("holding"), child.stderr.read()
        held = line.split()[1]
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        child.stderr.close()
    sent = [r for r in iter_log(path) if isinstance(r, Envelope) and r.type == "status_update"]
    assert len(sent) == 20 and len(replies_by_request(path)) == 7

    async with InProcBus(path, resume=True) as bus:
        sub = bus.subscribe("agent", group="agent")
        rest = []
        async with asyncio.timeout(10):
            async for env in sub:
                rest.append(env)
                await sub.ack(env, publish=[env.reply("ack")])
                if len(rest) == 13:
                    break
        assert rest[0].id == held
        assert [e.id for e in rest] == [e.id for e in sent[7:]]
        assert await replay(path, bus) > 20  # everything again, same ids: nothing is handled twice
        assert len(sub.lanes) == 0
    replies = replies_by_request(path)
    assert set(replies) == {e.id for e in sent}
    assert all(len(ids) == 1 for ids in replies.values())

    async with InProcBus(path, resume=True) as bus:  # a third start has nothing left to do
        assert len(bus.subscribe("agent", group="agent").lanes) == 0
