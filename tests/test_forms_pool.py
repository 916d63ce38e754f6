"""The computer agents' worker pool (issue 29) on a real redis-server: tasks offered on the
``form_tasks`` stream, workers as members of one consumer group holding one task per slot,
admission within ``forms.pool_wait_s``, a killed worker's task taken over, and a real form
filled by ``appliance worker computer`` (its own process, real Chromium) while this process
hosts the phone agent with the simulated person typing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from appliance import config
from appliance.bus import Envelope
from appliance.demo.profile import load_profile
from appliance.demo.spec import evaluate, spec_for_url
from appliance.forms import pool
from appliance.forms.session import run_session
from appliance.phone_agent.line import QueueLine
from appliance.protocol.line import SayOutcome
from appliance.simulate.form_run import TypistLine
from appliance.simulate.person import SimulatedPerson

pytestmark = pytest.mark.e2e  # a real redis-server (and Chromium for the last test)

REPO = Path(__file__).resolve().parent.parent
GUARD_S = 300  # a hung run fails here instead of hanging CI (not a speed target)


def _cfg(redis_url: str, tmp_path: Path, **forms) -> config.Config:
    return config.load(
        overrides={
            "bus": {"backend": "redis", "redis_url": redis_url, "log_dir": str(tmp_path / "bus")},
            "forms": {"computer": "pool", **forms},
        }
    )


async def _offer(cfg, url: str = "http://127.0.0.1:1/form", wait_s: float = 60.0) -> str:
    task_id = str(uuid.uuid4())
    async with pool.tasks_bus(cfg) as bus:
        await pool.offer(bus, task_id, url, wait_s=wait_s)
    return task_id


class Said(QueueLine):
    """A line that keeps what the phone side says."""

    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    async def say(self, text: str) -> SayOutcome:
        self.said.append(text)
        return SayOutcome(interrupted=False, heard=text)


async def _pending(redis_url: str) -> int:
    r = aioredis.Redis.from_url(redis_url)
    try:
        return (await r.xpending(pool.TASKS_STREAM, pool.GROUP))["pending"]
    finally:
        await r.aclose()


async def test_tasks_offered_before_any_worker_are_each_run_once_by_whichever_worker_is_free(redis_url, tmp_path):
    cfg = _cfg(redis_url, tmp_path)
    offered = [await _offer(cfg) for _ in range(4)]  # no worker yet
    ran: list[tuple[str, str]] = []
    busy: set[str] = set()

    async def run_task(env: Envelope, worker: str) -> None:
        assert worker not in busy, "a worker with one slot was given a second task"
        busy.add(worker)
        ran.append((worker, env.task_id))
        await asyncio.sleep(0.3)
        busy.discard(worker)

    stop = asyncio.Event()
    workers = [pool.Worker(cfg, run_task, id=f"w{i}") for i in range(2)]
    async with asyncio.timeout(30):
        running = [asyncio.create_task(w.run(stop)) for w in workers]
        while len(ran) < 4:
            await asyncio.sleep(0.05)
        seen = await pool.status(cfg)
        stop.set()
        await asyncio.gather(*running)
    assert sorted(t for _, t in ran) == sorted(offered)  # each task once
    assert {w for w, _ in ran} == {"w0", "w1"}  # both workers took tasks: a busy one takes none
    assert {w["id"] for w in seen["workers"]} == {"w0", "w1"} and all(w["slots"] == 1 for w in seen["workers"])
    assert await _pending(redis_url) == 0  # every task acknowledged
    assert (await pool.status(cfg))["workers"] == []  # a stopped worker is no longer listed


async def test_a_call_no_worker_takes_in_time_is_told_so_and_leaves_nothing_pending(redis_url, tmp_path):
    cfg = _cfg(redis_url, tmp_path, pool_wait_s=1.0)
    task_id = await _offer(cfg, wait_s=cfg.forms.pool_wait_s)
    line, events = Said(), []
    t0 = time.monotonic()
    result = await run_session(
        cfg,
        None,
        llms=lambda name: None,
        line=line,
        emit=lambda event, **f: events.append(event),
        task_id=task_id,
        agent="phone",
        taken_within_s=cfg.forms.pool_wait_s,
    )
    assert result.busy and result.status == "busy" and result.phone is None
    assert line.said == [pool.BUSY]  # plainly told, nothing else said
    assert 1.0 <= time.monotonic() - t0 < 5.0 and "pool_busy" in events
    # a worker that comes later skips the withdrawn task and acknowledges it
    skipped, ran = [], []

    async def run_task(env, worker):
        ran.append(env.task_id)

    stop = asyncio.Event()
    worker = pool.Worker(cfg, run_task, emit=lambda event, **f: skipped.append(f.get("task_id")))
    running = asyncio.create_task(worker.run(stop))
    async with asyncio.timeout(10):
        while task_id not in skipped:
            await asyncio.sleep(0.05)
    stop.set()
    await running
    assert ran == [] and await _pending(redis_url) == 0


WORKER_THAT_HANGS = """
import asyncio, sys
from appliance import config
from appliance.forms import pool

async def main():
    cfg = config.load(sys.argv[1])
    async def run_task(env, worker):
        print("took", env.task_id, flush=True)
        await asyncio.Event().wait()
    await pool.Worker(cfg, run_task, id="doomed").run(asyncio.Event())

asyncio.run(main())
"""


async def test_a_killed_workers_task_is_taken_over_by_another_worker(redis_url, tmp_path):
    cfg = _cfg(redis_url, tmp_path, claim_idle_ms=1000)
    path = tmp_path / "cfg.yaml"
    path.write_text(json.dumps({"bus": cfg.bus.model_dump(), "forms": {"computer": "pool", "claim_idle_ms": 1000}}))
    task_id = await _offer(cfg)
    doomed = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WORKER_THAT_HANGS, str(path), cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    try:
        async with asyncio.timeout(60):
            assert (await doomed.stdout.readline()).decode().split() == ["took", task_id]
    finally:
        doomed.send_signal(signal.SIGKILL)
        await doomed.wait()
    ran: list[str] = []

    async def run_task(env, worker):
        ran.append(env.task_id)

    stop = asyncio.Event()
    running = asyncio.create_task(pool.Worker(cfg, run_task, id="heir").run(stop))
    async with asyncio.timeout(20):
        while not ran:
            await asyncio.sleep(0.05)
    stop.set()
    await running
    assert ran == [task_id] and await _pending(redis_url) == 0


async def test_a_worker_process_fills_a_real_form_for_a_call_hosted_here(
    forms_cfg, forms_runtime, demo_site, redis_url, tmp_path
):
    """``appliance worker computer`` (real Chromium, the session's LLM as its endpoint) takes the
    call's task; this process hosts the phone agent, the simulated person typing its answers."""
    form, profile = "masked-phone", load_profile("david")
    url = demo_site.urls[form]
    spec = spec_for_url(url)
    cfg = config.load(
        overrides={
            "bus": {"backend": "redis", "redis_url": redis_url, "log_dir": str(tmp_path / "bus")},
            "forms": {"computer": "pool", "pool_wait_s": 60.0},
            "recording": {"dir": str(tmp_path / "rec")},
        }
    ).for_forms()
    path = tmp_path / "worker.yaml"
    path.write_text(
        json.dumps(
            {
                "llm": {
                    "provider": "openai_compatible",
                    "base_url": forms_runtime.llm_base_url,
                    "model": forms_cfg.llm.model,
                },
                "bus": cfg.bus.model_dump(),
                "recording": {"dir": str(tmp_path / "rec")},
                "browser": {"network": "loopback"},
            }
        )
    )
    log = (tmp_path / "worker.log").open("wb")
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "appliance.cli",
        "worker",
        "computer",
        "--config",
        str(path),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    person = SimulatedPerson(spec.person(profile), forms_runtime.llm("person"), lambda *a, **k: None)
    await person.warm()
    try:
        async with asyncio.timeout(GUARD_S):
            started = json.loads(await worker.stdout.readline())
            assert started["event"] == "worker_started", started
            task_id = await _offer(cfg, url, wait_s=cfg.forms.pool_wait_s)
            result = await run_session(
                cfg,
                url,
                llms=forms_runtime.llm,
                line=TypistLine(person, lambda *a, **k: None),
                emit=lambda *a, **k: None,
                task_id=task_id,
                agent="phone",
                taken_within_s=cfg.forms.pool_wait_s,
            )
            assert result.status == "submitted", (result.detail, (tmp_path / "worker.log").read_text()[-3000:])
            worker.send_signal(signal.SIGTERM)  # drains: holds nothing now, so it exits at once
            out, _ = await worker.communicate()
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()
        log.close()
    assert worker.returncode == 0
    events = [json.loads(line) for line in out.decode().splitlines()]
    assert [e["task_id"] for e in events if e["event"] == "task_started"] == [task_id]
    [sub] = demo_site.submissions_of(form)
    assert all(r.ok for r in evaluate(spec, profile, sub.data)), sub.data
    assert (events[-1]["event"], await _pending(redis_url)) == ("worker_stopped", 0)
