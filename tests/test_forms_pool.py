"""The computer agents' worker pool (issue 29) on a real redis-server: tasks offered on the
``form_tasks`` stream, workers as members of one consumer group holding one task per slot,
admission within ``forms.pool_wait_s``, a killed worker's task taken over, and a real form
filled by ``appliance worker computer`` (its own process, real Chromium) while this process
hosts the phone agent with the simulated person typing."""

from __future__ import annotations

import asyncio
import contextlib
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
from appliance.forms.session import run_session, session_bus
from appliance.phone_agent.line import QueueLine
from appliance.phone_agent.sayings import REOPENING
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


async def _worker_process(path: Path, log) -> asyncio.subprocess.Process:
    """``appliance worker computer --config path`` (stderr to ``log``), once it says it started."""
    proc = await asyncio.create_subprocess_exec(
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
    started = json.loads(await proc.stdout.readline())
    assert started["event"] == "worker_started", started
    return proc


async def test_a_worker_killed_mid_form_leaves_it_to_another_that_finishes_it_asking_nothing_again(
    forms_cfg, forms_runtime, demo_site, redis_url, tmp_path
):
    """Two ``appliance worker computer`` processes (real Chromium, the session's LLM as their
    endpoint); this process hosts the phone agent, the simulated person typing. The worker that
    takes the call's task is SIGKILLed once two values are on the page; the other takes the task
    over after ``forms.claim_idle_ms``, puts those values back and finishes the form: no value
    the person gave before the kill is asked again, they hear one sentence about it, and the
    page gets one submission, judged right."""
    form, profile = "flight", load_profile("david")
    url = demo_site.urls[form]
    spec = spec_for_url(url)
    claim_idle_ms = 5000
    cfg = config.load(
        overrides={
            "bus": {"backend": "redis", "redis_url": redis_url, "log_dir": str(tmp_path / "bus")},
            "forms": {"computer": "pool", "pool_wait_s": 60.0, "claim_idle_ms": claim_idle_ms},
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
                "forms": {"claim_idle_ms": claim_idle_ms},
                "recording": {"dir": str(tmp_path / "rec")},
                "browser": {"network": "loopback"},
            }
        )
    )
    log = (tmp_path / "workers.log").open("wb")
    workers = []
    person = SimulatedPerson(spec.person(profile), forms_runtime.llm("person"), lambda *a, **k: None)
    await person.warm()
    events: list[tuple[float, str, dict]] = []
    try:
        async with asyncio.timeout(GUARD_S):
            workers = [await _worker_process(path, log) for _ in range(2)]
            task_id = await _offer(cfg, url, wait_s=cfg.forms.pool_wait_s)
            call = asyncio.create_task(
                run_session(
                    cfg,
                    url,
                    llms=forms_runtime.llm,
                    line=TypistLine(person, lambda *a, **k: None),
                    emit=lambda event, **f: events.append((time.monotonic(), event, f)),
                    task_id=task_id,
                    agent="phone",
                    taken_within_s=cfg.forms.pool_wait_s,
                )
            )
            taken_by, filled, given = None, [], set()
            async with session_bus(cfg, task_id, None, joined=True) as bus, bus.subscribe() as tap:
                async for env in tap:
                    if env.type == "task_taken":
                        taken_by = env.payload.worker
                    elif env.type == "info_collected" and env.payload.confirmed:
                        given.add(env.payload.field)
                    elif env.type == "field_filled":
                        filled.append(env.payload.field)
                    if len(filled) == 2 or call.done():
                        break
            [doomed] = [w for w in workers if taken_by.endswith(f":{w.pid}")]
            doomed.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            await doomed.wait()
            result = await call
            heir = next(w for w in workers if w is not doomed)
            heir.send_signal(signal.SIGTERM)  # drains: holds nothing now, so it exits at once
            out, _ = await heir.communicate()
    finally:
        for w in workers:
            if w.returncode is None:
                w.kill()
                await w.wait()
        log.close()
    worker_log = (tmp_path / "workers.log").read_text()[-3000:]
    assert result.status == "submitted", (result.detail, worker_log)
    assert heir.returncode == 0
    heir_events = [json.loads(line) for line in out.decode().splitlines()]
    assert [e["task_id"] for e in heir_events if e["event"] == "task_started"] == [task_id]
    # the values given before the kill were not asked for again; the person heard it once
    asked_after = {
        f["field"] for t, ev, f in events if ev == "decision" and f["what"] == "field_asked" and t > killed_at
    }
    assert given and not asked_after & given, (given, asked_after)
    assert [f["text"] for _, ev, f in events if ev == "say"].count(REOPENING) == 1
    [sub] = demo_site.submissions_of(form)  # one submission, right
    assert all(r.ok for r in evaluate(spec, profile, sub.data)), sub.data
    assert (heir_events[-1]["event"], await _pending(redis_url)) == ("worker_stopped", 0)


PAGE = """<!doctype html><html><body style="margin:0">
<input id="name" style="position:absolute;left:20px;top:20px;width:200px;height:30px">
<input id="agree" type="checkbox" style="position:absolute;left:20px;top:80px;width:30px;height:30px">
<div id="tick" style="position:absolute;left:300px;top:20px"></div>
<script>let n = 0; setInterval(() => { document.getElementById('tick').textContent = ++n; }, 20);</script>
</body></html>"""


async def test_the_preview_of_a_browser_on_a_worker_reaches_the_persons_page_and_takes_their_hands(redis_url, tmp_path):
    """A worker's preview relayed over Redis (``form-ID:preview``, at most 5 pictures a second,
    trimmed) to the serving side's RemotePreview; the person's click and key there land on the
    worker's page; a click sent before the relay began (for a page that is gone) does not."""
    from appliance.computer_agent.browser import Browser
    from appliance.computer_agent.preview import Preview
    from appliance.config import BrowserConfig
    from appliance.forms import remote
    from appliance.protocol import PreviewClick

    cfg = _cfg(redis_url, tmp_path)
    task_id = str(uuid.uuid4())
    browser = Browser(BrowserConfig(network="loopback"))
    page = await browser.start()
    try:
        await page.set_content(PAGE)  # a page that repaints 50 times a second
        preview = Preview()
        await preview.attach(page)
        async with session_bus(cfg, task_id, None, joined=True) as bus:
            stale = Envelope.new(PreviewClick(x=35, y=95), sender="page", recipient="computer")
            await bus.publish(stale.model_copy(update={"ts": stale.ts - 60_000}))

            async def send(payload) -> None:
                await bus.publish(Envelope.new(payload, sender="page", recipient="computer"))

            seen = remote.RemotePreview(redis_url, task_id, send)
            relay = asyncio.create_task(remote.relay_preview(preview, bus, redis_url, task_id, lambda *a, **k: None))
            try:
                first = await seen.next_frame(0, timeout_s=5)
                assert first is not None and first.data[:2] == b"\xff\xd8" and first.width > 0
                seqs, t0 = [first.seq], time.monotonic()
                while time.monotonic() - t0 < 2.0:
                    f = await seen.next_frame(seqs[-1], timeout_s=1)
                    if f is not None:
                        seqs.append(f.seq)
                assert 3 <= len(seqs) - 1 <= 2.0 * remote.MAX_FPS + 1, seqs  # live, and at most 5 a second
                r = aioredis.Redis.from_url(redis_url)
                assert await r.xlen(remote.preview_stream(task_id)) <= remote.KEEP
                with pytest.raises(ValueError, match="viewport"):
                    await seen.click(1e9, 5)
                await seen.click(120, 35)  # into the name box, then a key
                await seen.key("Z")
                async with asyncio.timeout(5):
                    while await page.evaluate("document.getElementById('name').value") != "Z":
                        await asyncio.sleep(0.05)
                assert not await page.evaluate("document.getElementById('agree').checked")  # the stale click
                await seen.click(35, 95)
                async with asyncio.timeout(5):
                    while not await page.evaluate("document.getElementById('agree').checked"):
                        await asyncio.sleep(0.05)
            finally:
                relay.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await relay
                await seen.close()
        assert not await r.exists(remote.preview_stream(task_id))  # the relay leaves nothing behind
        await r.aclose()
    finally:
        await browser.close()


async def test_a_task_whose_address_the_worker_may_not_open_ends_the_call_plainly_at_once(redis_url, tmp_path):
    """The worker's browser settings are its own: a task at an address they refuse is taken and
    ended with one plain sentence, not left to time out as "busy"; the worker says why."""
    from fakes import ScriptedLLM

    from appliance.forms.worker import REFUSED, computer_task
    from appliance.phone_agent.sayings import failed

    cfg = _cfg(redis_url, tmp_path)
    strict = cfg.model_copy(update={"browser": cfg.browser.model_copy(update={"network": "loopback"})})
    task_id = await _offer(cfg, "https://example.com/apply", wait_s=30.0)
    events: list[tuple[str, dict]] = []
    stop = asyncio.Event()
    worker = pool.Worker(
        strict,
        computer_task(strict, lambda name: None, lambda *a, **k: None),
        emit=lambda e, **f: events.append((e, f)),
    )
    running = asyncio.create_task(worker.run(stop))
    line = Said()
    t0 = time.monotonic()
    try:
        result = await asyncio.wait_for(
            run_session(
                cfg,
                None,
                llms=lambda name: ScriptedLLM(),
                line=line,
                emit=lambda *a, **k: None,
                task_id=task_id,
                agent="phone",
                taken_within_s=30.0,
            ),
            60,
        )
    finally:
        stop.set()
        await running
    assert result.status == "failed" and line.said[-1] == failed(REFUSED), line.said
    assert time.monotonic() - t0 < 20  # not the 30 s wait for a worker
    [(_, why)] = [(e, f) for e, f in events if e == "task_failed"]
    assert "example.com" in why["error"] and "refused" in why["error"]
    assert await _pending(redis_url) == 0
