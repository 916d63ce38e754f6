"""The in-process bus: routing, order, fan-out, bounds and overflow, urgency, request/reply."""

from __future__ import annotations

import asyncio
import random

import pytest
from bus_helpers import take

from appliance.bus import (
    BusClosedError,
    BusError,
    BusOverflowError,
    BusTimeoutError,
    Envelope,
    EnvelopeError,
    InProcBus,
    read_envelopes,
)


def seq(sender: str, n: int, recipient: str = "computer") -> Envelope:
    return Envelope.new("status_update", {"state": "working", "message": str(n)}, sender=sender, recipient=recipient)


def stop(reason: str = "operator", recipient: str = "computer") -> Envelope:
    return Envelope.new("terminate", {"reason": reason}, sender="operator", recipient=recipient)


def nothing_waiting(sub) -> bool:
    return len(sub.lanes) == 0


async def test_per_sender_order_with_concurrent_publishers(tmp_path):
    async with InProcBus(tmp_path / "bus.jsonl") as bus:
        sub = bus.subscribe("computer", maxsize=16)  # small: publishers block and interleave
        rng = random.Random(7)

        async def publisher(name: str) -> None:
            for n in range(300):
                await bus.publish(seq(name, n))
                if rng.random() < 0.3:
                    await asyncio.sleep(0)

        consumer = asyncio.create_task(take(sub, 900))
        await asyncio.gather(*(publisher(s) for s in ("phone", "judge", "P1")))
        got = await consumer
    by_sender: dict[str, list[int]] = {}
    for env in got:
        by_sender.setdefault(env.sender, []).append(int(env.payload.message))
    assert by_sender == {s: list(range(300)) for s in ("phone", "judge", "P1")}
    senders = [e.sender for e in got]
    assert senders != sorted(senders, key=["phone", "judge", "P1"].index)  # they really interleaved


async def test_fan_out_routing_by_recipient_broadcast_and_type():
    async with InProcBus() as bus:
        everything = bus.subscribe()
        computer_a = bus.subscribe("computer")
        computer_b = bus.subscribe("computer")
        phone_status = bus.subscribe("phone", types=["status_update"])
        envs = [
            seq("phone", 0, "computer"),
            seq("computer", 1, "phone"),
            Envelope.new("field_filled", {"field": "f", "value_read_back": "v"}, sender="computer", recipient="phone"),
            Envelope.new("task_completed", {"summary": "done"}, sender="operator", recipient="*"),
        ]
        await bus.publish_many(envs)
        assert await take(everything, 4) == envs
        assert await take(computer_a, 2) == [envs[0], envs[3]]
        assert await take(computer_b, 2) == [envs[0], envs[3]]
        assert await take(phone_status, 1) == [envs[1]]
        assert all(nothing_waiting(s) for s in (everything, computer_a, computer_b, phone_status))


async def test_subscription_sees_only_what_is_published_after_it():
    async with InProcBus() as bus:
        await bus.publish(seq("phone", 0))
        sub = bus.subscribe("computer")
        await bus.publish(seq("phone", 1))
        got = await take(sub, 1)
        assert got[0].payload.message == "1" and nothing_waiting(sub)


async def test_overflow_block_makes_the_publisher_wait_until_the_consumer_takes():
    async with InProcBus() as bus:
        sub = bus.subscribe("computer", maxsize=3, overflow="block")
        for n in range(3):
            await bus.publish(seq("phone", n))
        fourth = asyncio.create_task(bus.publish(seq("phone", 3)))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not fourth.done()  # blocked: the queue holds 3
        assert len(sub.lanes) == 3
        first = await take(sub, 1)
        await asyncio.wait_for(fourth, 5)
        rest = await take(sub, 3)
        assert [int(e.payload.message) for e in first + rest] == [0, 1, 2, 3]


async def test_overflow_error_fails_loudly_and_delivers_to_no_one(tmp_path):
    async with InProcBus(tmp_path / "bus.jsonl") as bus:
        strict = bus.subscribe("computer", maxsize=2, overflow="error")
        other = bus.subscribe("computer", maxsize=100)
        await bus.publish(seq("phone", 0))
        await bus.publish(seq("phone", 1))
        rejected = seq("phone", 2)
        with pytest.raises(BusOverflowError, match="full") as exc:
            await bus.publish(rejected)
        assert rejected.id in str(exc.value)
        assert len(other.lanes) == 2  # the roomy subscriber did not get it either
        assert [e.payload.message for e in await take(strict, 2)] == ["0", "1"]
        await bus.publish(seq("phone", 3))  # room again
    assert rejected.id not in {e.id for e in read_envelopes(tmp_path / "bus.jsonl")}  # not logged either


async def test_urgent_envelopes_jump_ahead_and_pass_a_full_ordinary_queue():
    async with InProcBus() as bus:
        sub = bus.subscribe("computer", maxsize=4, overflow="error")
        for n in range(4):
            await bus.publish(seq("phone", n))
        with pytest.raises(BusOverflowError):
            await bus.publish(seq("phone", 4))
        await bus.publish(stop("cancel"))  # the ordinary lane is full; the urgent one is not
        await bus.publish(Envelope.new("interrupt", {"reason": "barge-in"}, sender="phone", recipient="computer"))
        got = await take(sub, 6)
        assert [e.type for e in got] == ["terminate", "interrupt"] + ["status_update"] * 4
        assert [e.payload.message for e in got[2:]] == ["0", "1", "2", "3"]


async def test_request_returns_the_reply_and_times_out_without_one():
    async with InProcBus() as bus:

        async def computer_agent():
            async with bus.subscribe("computer", types="task_assigned") as sub:
                async for env in sub:
                    if env.payload.goal == "answer":
                        await bus.publish(env.reply("status_update", {"state": "working"}))

        agent = asyncio.create_task(computer_agent())
        await asyncio.sleep(0)
        ask = Envelope.new("task_assigned", {"goal": "answer"}, sender="phone", recipient="computer")
        reply = await bus.request(ask, timeout_s=5)
        assert reply.reply_to == ask.id and reply.type == "status_update" and reply.recipient == "phone"
        silent = Envelope.new("task_assigned", {"goal": "ignore me"}, sender="phone", recipient="computer")
        with pytest.raises(BusTimeoutError, match=silent.id):
            await bus.request(silent, timeout_s=0.05)
        with pytest.raises(TimeoutError):  # a BusTimeoutError is a TimeoutError too
            await bus.request(
                Envelope.new("task_assigned", {"goal": "x"}, sender="phone", recipient="computer"), timeout_s=0.01
            )
        agent.cancel()


async def test_invalid_publish_is_rejected_before_anything_is_written_or_delivered(tmp_path):
    async with InProcBus(tmp_path / "bus.jsonl") as bus:
        sub = bus.subscribe()
        with pytest.raises(EnvelopeError, match="expected an Envelope"):
            await bus.publish({"type": "ack"})  # type: ignore[arg-type]
        good = seq("phone", 0)
        with pytest.raises(EnvelopeError):
            await bus.publish_many([good, {"type": "ack"}])  # type: ignore[list-item]
        assert nothing_waiting(sub)
        with pytest.raises(ValueError, match="not registered"):
            bus.subscribe(types=["no_such_type"])
        with pytest.raises(ValueError, match="overflow"):
            bus.subscribe(overflow="drop")  # type: ignore[arg-type]
    assert read_envelopes(tmp_path / "bus.jsonl") == []


async def test_stop_ends_iteration_and_closed_bus_refuses_work():
    bus = InProcBus()
    await bus.start()
    sub = bus.subscribe("computer")
    consumer = asyncio.create_task(take(sub, 10))
    await asyncio.sleep(0)
    await bus.stop()
    assert await asyncio.wait_for(consumer, 5) == []
    with pytest.raises(BusClosedError):
        await bus.publish(seq("phone", 0))
    with pytest.raises(BusClosedError):
        bus.subscribe()


async def test_one_live_member_per_group_in_process():
    async with InProcBus() as bus:
        bus.subscribe("computer", group="computer")
        with pytest.raises(BusError, match="live member"):
            bus.subscribe("computer", group="computer")
        with pytest.raises(BusError, match="filter"):
            bus.subscribe("phone", group="computer")
