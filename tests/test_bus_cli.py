"""The bus factory and commands: open_bus, ``appliance bus tail``, ``appliance bench bus`` (smoke)."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from appliance import config
from appliance.bus import Envelope, InProcBus, open_bus
from appliance.bus.redis_streams import RedisBus
from appliance.bus.tail import tail_file, tail_redis

REPO = Path(__file__).resolve().parent.parent


def info(n: int) -> Envelope:
    return Envelope.new(
        "info_collected",
        {"field": f"f{n}", "value": "x", "confirmed": n % 2 == 0},
        sender="phone",
        recipient="computer",
        task_id="t1",
    )


async def test_open_bus_builds_the_configured_backend(tmp_path):
    cfg = config.load(overrides={"bus": {"log_dir": str(tmp_path), "log_fsync_ms": 0}})
    bus = open_bus(cfg.bus, session="s1")
    assert isinstance(bus, InProcBus) and bus.log_path == tmp_path / "s1.jsonl"
    async with bus:
        await bus.publish(info(1))
    assert (tmp_path / "s1.jsonl").read_bytes().count(b"\n") == 1
    rcfg = config.load(overrides={"bus": {"backend": "redis", "redis_url": "redis://127.0.0.1:9/0"}})
    rbus = open_bus(rcfg.bus)  # built, not connected
    assert isinstance(rbus, RedisBus) and rbus.url == "redis://127.0.0.1:9/0"


@pytest.mark.e2e
async def test_the_redis_bus_open_bus_builds_publishes_to_redis(redis_url):
    rbus = open_bus(config.load(overrides={"bus": {"backend": "redis", "redis_url": redis_url}}).bus)
    sent = info(2)
    async with rbus:
        await rbus.publish(sent)
    client = redis.Redis.from_url(redis_url)
    try:
        entries = client.xrange("appliance:bus")
    finally:
        client.close()
    assert [Envelope.from_json(f[b"e"]) for _, f in entries] == [sent]


async def test_tail_pretty_prints_a_log_and_follows_appends(tmp_path):
    path = tmp_path / "bus.jsonl"
    async with InProcBus(path) as bus:
        sub = bus.subscribe("computer", group="computer")
        first = info(1)
        await bus.publish(first)
        got = await sub.__anext__()
        await sub.ack(got, publish=[got.reply("field_filled", {"field": "f1", "value_read_back": "x"})])
    with path.open("ab") as f:
        f.write(b'{"not": "an envelope"}\n')
    out = io.StringIO()
    tail_file(path, out)
    lines = out.getvalue().splitlines()
    assert "+ group computer" in lines[0]
    assert "phone → computer  info_collected  task=t1" in lines[1] and '"field":"f1"' in lines[1]
    assert "computer → phone  field_filled ↩" + first.id[-12:] in lines[2]
    assert "computer acknowledged " + first.id[-12:] in lines[3]
    assert lines[4].startswith("!! line 5:")

    out, stop = io.StringIO(), threading.Event()
    follower = threading.Thread(
        target=tail_file, args=(path, out), kwargs={"follow": True, "last": 1, "poll_s": 0.01, "stop": stop.is_set}
    )
    follower.start()
    late = Envelope.new("terminate", {"reason": "operator"}, sender="operator", recipient="*")
    with path.open("ab") as f:
        data = late.to_json() + b"\n"
        f.write(data[:30])  # a line arriving in two writes is printed once, whole
        f.flush()
        time.sleep(0.05)
        f.write(data[30:])
    deadline = time.monotonic() + 10
    while "terminate" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    follower.join(5)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("!! line 5:") and "operator → *  terminate" in lines[1] and len(lines) == 2


@pytest.mark.e2e
async def test_tail_reads_a_redis_bus(redis_url):
    async with RedisBus(redis_url) as bus:
        await bus.publish_many([info(1), info(2)])
        await bus.publish(Envelope.new("interrupt", {"reason": "barge-in"}, sender="phone", recipient="computer"))
    out = io.StringIO()
    await asyncio.to_thread(tail_redis, redis_url, "appliance:bus", out)
    lines = out.getvalue().splitlines()
    assert [ln.split("  ")[1] for ln in lines] == ["info_collected", "info_collected", "interrupt"]
    out = io.StringIO()
    await asyncio.to_thread(tail_redis, redis_url, "appliance:bus", out, last=1)
    assert "interrupt" in out.getvalue() and out.getvalue().count("\n") == 1


def test_cli_tail_prints_a_log(tmp_path):
    path = tmp_path / "bus.jsonl"
    path.write_bytes(info(1).to_json() + b"\n")
    tail = subprocess.run(
        [sys.executable, "-m", "appliance.cli", "bus", "tail", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tail.returncode == 0, tail.stderr
    assert "info_collected" in tail.stdout


@pytest.mark.e2e
def test_cli_bench_bus_smoke():
    """Starts its own redis-server."""
    bench = subprocess.run(
        [
            sys.executable,
            "-m",
            "appliance.cli",
            "bench",
            "bus",
            "--json",
            "--inproc-n",
            "2000",
            "--redis-n",
            "1000",
            "--paced-s",
            "0.2",
            "--kill-n",
            "500",
            "--restart-n",
            "2000",
            "--rounds",
            "1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert bench.returncode == 0, bench.stderr
    result = json.loads(bench.stdout)
    assert set(result) == {"inproc", "redis", "lost", "duplicated", "restart"}
    for backend, extra in (("inproc", "queue_only_envelopes_per_s"), ("redis", "trim")):
        assert set(result[backend]) == {"envelopes_per_s", "p99_ms", "p99_ms_at_1000_per_s", "baseline", "ratio", extra}
        assert result[backend]["envelopes_per_s"] > 0 and result[backend]["p99_ms"] > 0
        assert result[backend]["baseline"]["envelopes_per_s"] > 0 and result[backend]["ratio"] > 0
    assert (result["lost"], result["duplicated"]) == (0, 0)
    assert {k: result["restart"][k] for k in ("lost", "duplicated", "handled_twice")} == dict.fromkeys(
        ("lost", "duplicated", "handled_twice"), 0
    )
