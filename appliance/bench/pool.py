"""``appliance bench pool`` (issue 29): the computer agents' worker pool on this machine.

Three runs, each of ``tasks`` form tasks offered together on
:data:`~appliance.forms.pool.TASKS_STREAM` of one throw-away redis-server on 127.0.0.1
(:class:`~appliance.bus.redis_server.RedisServer`, emptied before each run), after a warm-up
round that is not counted (N tasks on N workers: a cold LLM prefills each prompt in full,
~5 s for the simulated person's on one thread, and only the first run would pay for it):

* ``"N"`` (``--workers N``): N worker processes, ``appliance worker computer --max-tasks 1``;
* ``"1"``: one worker process: the tasks queue, so every call waits ``forms.pool_wait_s`` for
  its turn, :data:`POOL_WAIT_S` here (the default 10 s would turn queued calls away);
* ``"failover"``: N workers; the first to start its second task (its first, when there are no
  more tasks than workers) is SIGKILLed with its Chromium (its whole process group) once
  :data:`KILL_AFTER_FILLED` of that task's fields are filled; idle ``forms.claim_idle_ms``
  (:data:`CLAIM_IDLE_MS` here), the task goes to the next worker with a free slot. Should that
  task end first, the worker's next task is the one.

Task k is the bundled demo page ``FORMS[k % len(FORMS)]``, David's profile, on a demo site of
its own (its own port): what that site recorded is that task's submissions, so two tasks on
one form stay apart. The phone sides run in this process, each with its simulated person
typing (:class:`~appliance.simulate.form_run.TypistLine`, as ``bench form --person text``); the
workers reach this process's embedded LLM as an ``openai_compatible`` endpoint. One LLM serves
everyone; its ``llm.parallel_slots`` is raised to a slot per form prompt plus one per worker (a
worker's requests are not pinned: llama-server gives each the idle slot with the longest common
prefix). Every LLM request goes through :class:`LLMMeter`, which records when each was in flight.

Output (:func:`summarise`)::

    {"tasks": n, "accepted": n, "task_s": {"p50", "p95"}, "throughput_per_min": {"1", "N"},
     "throughput_ratio", "submissions_per_task": {TASK_ID: n}, "lost": n,
     "failover": {"claimed", "accepted", "asked_again"}, "llm_busy_share", "runs": {...}}

``tasks``, ``accepted``, ``lost`` and ``submissions_per_task`` cover the three runs (3 × ``tasks``
offered). A task's time runs from its first ``task_started`` (a worker's stdout) to the later of
its last ``task_finished`` and its phone side's end; ``task_s`` is over the tasks of runs "N" and
"1". ``throughput_per_min``: the run's finished tasks ÷ the time from the first one's start to the
last one's end; ``throughput_ratio``: "N" ÷ "1". ``accepted``: the page recorded a submission and
its last one holds every expected value (:func:`~appliance.demo.spec.evaluate`). ``lost``: offered
but never finished by any worker (no ``task_finished``: neither done nor failed). ``failover``:
``claimed`` (a worker other than the killed one took the task: a ``task_taken`` of its on the
task's stream), ``accepted``, ``asked_again`` (the details the person was asked for both before and
after the kill, as the person took each question: its ``person`` events of kind ``ask``); all null
when no worker was killed. ``llm_busy_share``: in run "1", where one task runs at a time, the time
at least one LLM request was in flight ÷ the run's time (first start to last end): the share of a
task's time the shared LLM is busy, so N workers on it run at most 1 ÷ that share times as fast.
``runs``: each run's own figures and tasks.

Run it in a loopback-only network namespace::

    unshare -n sh -c 'ip link set lo up && exec .venv/bin/appliance bench pool --json'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import aiohttp
import numpy as np
import redis.asyncio as aioredis
from aiohttp import web

from appliance import config
from appliance.bus import open_bus
from appliance.bus.redis_server import RedisServer
from appliance.config import FORM_SLOTS, Config
from appliance.demo.profile import Profile, load_profile
from appliance.demo.site import DemoSite
from appliance.demo.spec import FormSpec, evaluate, spec_for_url
from appliance.forms import pool
from appliance.forms.session import SessionResult, run_session
from appliance.llm.runtime import LLMRuntime
from appliance.protocol import FieldFilled, TaskTaken
from appliance.simulate.form_run import TypistLine, person_task
from appliance.simulate.person import SimulatedPerson

#: the bundled pages the tasks cycle over: David fills each with the text person, and none
#: scripts a wrong first answer, so a detail asked twice is a real re-ask
FORMS = ("shadow-iframe", "city-autocomplete", "injected-contact", "contact-reveal", "aria-widgets")
PROFILE = "david"
#: forms.pool_wait_s for the bench's calls (s): with one worker the last call waits for all the others
POOL_WAIT_S = 1800.0
#: forms.claim_idle_ms for the bench (ms): a killed worker's task may be taken over after this long
CLAIM_IDLE_MS = 5000
#: the killed worker dies once this many fields of its task are filled
KILL_AFTER_FILLED = 2
#: a worker must say ``worker_started`` this soon (s)
WORKER_START_S = 60.0
#: a run's calls must end within this, plus RUN_GUARD_PER_TASK_S a task (s): a hung run is cut, its tasks lost
RUN_GUARD_S = 300.0
RUN_GUARD_PER_TASK_S = 180.0
#: after the calls end, how long the workers get to say ``task_finished`` (s)
FINISH_GRACE_S = 60.0
POLL_S = 0.1


# ---- figures ------------------------------------------------------------------------------------


def busy_s(spans: list[tuple[float, float]], t0: float, t1: float) -> float:
    """Seconds of [``t0``, ``t1``] covered by at least one of ``spans`` ((start, end) seconds)."""
    total, reach = 0.0, t0
    for a, b in sorted(spans):
        a, b = max(a, reach), min(b, t1)
        if b > a:
            total += b - a
        reach = max(reach, b)
    return total


def _window(tasks: list[dict]) -> tuple[float, float] | None:
    """(first start, last end) of the finished ``tasks``, or None for none."""
    done = [t for t in tasks if t["finished"] and t["start_s"] is not None and t["end_s"] is not None]
    return (min(t["start_s"] for t in done), max(t["end_s"] for t in done)) if done else None


def _throughput(tasks: list[dict]) -> float | None:
    """Finished tasks per minute over the run's window (None: none finished)."""
    w = _window(tasks)
    if w is None or w[1] <= w[0]:
        return None
    return round(60 * sum(t["finished"] for t in tasks) / (w[1] - w[0]), 2)


def _busy_share(run: dict) -> float | None:
    w = _window(run["tasks"])
    if w is None or w[1] <= w[0]:
        return None
    return round(busy_s(run["llm_spans"], *w) / (w[1] - w[0]), 3)


def _task_s(t: dict) -> float | None:
    return round(t["end_s"] - t["start_s"], 1) if t["start_s"] is not None and t["end_s"] is not None else None


def _pct(xs: list[float]) -> dict:
    if not xs:
        return {"p50": None, "p95": None}
    return {"p50": round(float(np.percentile(xs, 50)), 1), "p95": round(float(np.percentile(xs, 95)), 1)}


def _failover(run: dict) -> tuple[dict, dict | None]:
    """The summary's ``failover`` and the run's ``kill`` details (None: no worker was killed)."""
    kill = run.get("kill")
    if kill is None:
        return {"claimed": None, "accepted": None, "asked_again": None}, None
    [task] = [t for t in run["tasks"] if t["task_id"] == kill["task_id"]]
    before = {topic for ts, topic in task["asked"] if ts < kill["at_s"]}
    again = sorted({topic for ts, topic in task["asked"] if ts >= kill["at_s"] and topic in before})
    out = {
        "claimed": any(w != kill["worker"] for w in task["takers"]),
        "accepted": task["accepted"],
        "asked_again": len(again),
    }
    return out, {**kill, "asked_again_fields": again}


def _run_figures(run: dict) -> dict:
    """One run's own figures; each task's ``started_s`` is after the run's first start."""
    w = _window(run["tasks"])
    return {
        "workers": run["workers"],
        "tasks": len(run["tasks"]),
        "accepted": sum(t["accepted"] for t in run["tasks"]),
        "wall_s": round(w[1] - w[0], 1) if w else None,
        "throughput_per_min": _throughput(run["tasks"]),
        "llm_busy_share": _busy_share(run),
        "by_task": [
            {
                "task_id": t["task_id"],
                "form": t["form"],
                "takers": t["takers"],
                "status": t["status"],
                "started_s": round(t["start_s"] - w[0], 1) if w and t["start_s"] is not None else None,
                "task_s": _task_s(t),
                "finished": t["finished"],
                "accepted": t["accepted"],
                "submissions": t["submissions"],
            }
            for t in run["tasks"]
        ],
    }


def summarise(runs: dict[str, dict], workers: int) -> dict:
    """The bench's JSON (module docstring) from its three runs: ``runs[str(workers)]``,
    ``runs["1"]`` and ``runs["failover"]``, each ``{"workers": n, "tasks": [TASK], "llm_spans":
    [(start, end)], "kill": KILL | None}`` (``kill`` only in ``"failover"``), where TASK is
    ``{"task_id", "form", "start_s", "end_s", "finished", "accepted", "submissions", "status",
    "takers": [worker id of each task_taken, in order], "asked": [(time, detail)]}`` and KILL is
    ``{"worker", "task_id", "at_s", "filled"}``; every time in seconds on one clock, a start or
    end None when it never came.
    """
    every = [t for r in runs.values() for t in r["tasks"]]
    timed = [
        s
        for name in (str(workers), "1")
        for t in runs[name]["tasks"]
        if t["finished"] and (s := _task_s(t)) is not None
    ]
    many, one = _throughput(runs[str(workers)]["tasks"]), _throughput(runs["1"]["tasks"])
    failover, kill = _failover(runs["failover"])
    details = {name: _run_figures(run) for name, run in runs.items()}
    details["failover"]["kill"] = kill
    return {
        "tasks": len(every),
        "accepted": sum(t["accepted"] for t in every),
        "task_s": _pct(timed),
        "throughput_per_min": {"1": one, str(workers): many},
        "throughput_ratio": round(many / one, 2) if many and one else None,
        "submissions_per_task": {t["task_id"]: t["submissions"] for t in every},
        "lost": sum(not t["finished"] for t in every),
        "failover": failover,
        "llm_busy_share": _busy_share(runs["1"]),
        "runs": details,
    }


# ---- the LLM, metered ---------------------------------------------------------------------------


class LLMMeter:
    """An HTTP proxy on 127.0.0.1 in front of the LLM server at ``upstream`` (its OpenAI base
    URL, ``http://HOST:PORT/v1``) that records each request's (start, end) on ``time.monotonic()``
    in ``spans``; the answer is streamed through as it comes. ``start()`` → its own base URL."""

    def __init__(self, upstream: str):
        u = urllib.parse.urlsplit(upstream)
        self.upstream = f"{u.scheme}://{u.netloc}"
        self.path = u.path
        self.spans: list[tuple[float, float]] = []
        self.base_url = ""
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        self._http = aiohttp.ClientSession(  # a connection per request: none goes stale between requests
            connector=aiohttp.TCPConnector(force_close=True), timeout=aiohttp.ClientTimeout(total=None)
        )
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}{self.path}"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._http is not None:
            await self._http.close()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        t0 = time.monotonic()
        headers = {k: v for k, v in request.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
        try:
            async with self._http.request(
                request.method, self.upstream + request.path_qs, data=await request.read(), headers=headers
            ) as up:
                out = web.StreamResponse(status=up.status)
                if "Content-Type" in up.headers:
                    out.headers["Content-Type"] = up.headers["Content-Type"]
                await out.prepare(request)
                try:
                    async for chunk in up.content.iter_any():
                        await out.write(chunk)
                    await out.write_eof()
                except ConnectionResetError:  # the caller went away (a killed worker): its request ends here
                    pass
                return out
        finally:
            self.spans.append((t0, time.monotonic()))


# ---- the workers --------------------------------------------------------------------------------


@dataclass
class WorkerProc:
    """One ``appliance worker computer --max-tasks 1`` process (its own process group: its
    Chromium dies with it) and its stdout events as they came: (``time.monotonic()``, event)."""

    proc: asyncio.subprocess.Process
    log: Path
    events: list[tuple[float, dict]] = field(default_factory=list)
    id: str = ""
    _reader: asyncio.Task | None = None

    @classmethod
    async def start(cls, config_path: Path, log: Path) -> "WorkerProc":
        """Start one and wait for its ``worker_started``.

        Raises:
            RuntimeError: it exited or said nothing within :data:`WORKER_START_S` (its log's tail).
        """
        with log.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "appliance.cli",
                "worker",
                "computer",
                "--config",
                str(config_path),
                "--max-tasks",
                "1",
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                start_new_session=True,
            )
        w = cls(proc, log)
        w._reader = asyncio.create_task(w._read())
        try:
            async with asyncio.timeout(WORKER_START_S):
                while not w.id:
                    if proc.returncode is not None:
                        raise RuntimeError(f"worker exited ({proc.returncode}): {w.tail()}")
                    await asyncio.sleep(POLL_S)
        except TimeoutError:
            w.kill()
            raise RuntimeError(f"worker said nothing in {WORKER_START_S:.0f} s: {w.tail()}") from None
        return w

    async def _read(self) -> None:
        async for raw in self.proc.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                event = {"event": "stdout", "text": raw.decode(errors="replace").rstrip()}
            self.events.append((time.monotonic(), event))
            if event.get("event") == "worker_started":
                self.id = event["worker"]

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""

    def times(self, event: str, task_id: str) -> list[float]:
        """When each ``event`` about ``task_id`` came."""
        return [t for t, e in self.events if e.get("event") == event and e.get("task_id") == task_id]

    def started(self) -> list[str]:
        """The task ids it started, in order."""
        return [e["task_id"] for _, e in self.events if e.get("event") == "task_started"]

    def kill(self) -> None:
        """SIGKILL it and its children (its Chromium), as a machine that dies."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    async def stop(self) -> None:
        """SIGTERM (it drains: finishes what it holds, then exits); killed after 30 s."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.kill()
        self.kill()  # whatever it left behind in its group
        await self.proc.wait()
        if self._reader is not None:
            await self._reader


def worker_config(cfg: Config, llm_url: str, folder: Path) -> dict:
    """The workers' config file (as JSON, which YAML reads): ``cfg``'s bus, forms and browser,
    the LLM at ``llm_url`` as an ``openai_compatible`` endpoint, recordings under ``folder``."""
    return {
        "llm": {"provider": "openai_compatible", "base_url": llm_url, "model": cfg.llm.model},
        "bus": cfg.bus.model_dump(mode="json"),
        "forms": cfg.forms.model_dump(mode="json"),
        "browser": cfg.browser.model_dump(mode="json"),
        "recording": {"dir": str(folder / "worker-recordings")},
    }


# ---- one run ------------------------------------------------------------------------------------


@dataclass
class _Task:
    """One task of a run: its page, the person, and what was seen of it."""

    task_id: str
    form: str
    site: DemoSite
    spec: FormSpec
    person: SimulatedPerson | None = None
    asked: list[tuple[float, str]] = field(default_factory=list)
    result: SessionResult | None = None
    phone_end_s: float | None = None

    @property
    def url(self) -> str:
        return self.site.urls[self.form]

    def heard(self, event: str, **fields) -> None:
        """The person's events: each detail it took a question to ask for, with when."""
        if event == "person" and fields.get("kind") == "ask" and fields.get("topic") not in ("none", "submit"):
            self.asked.append((time.monotonic(), fields["topic"]))

    def record(self, workers: list[WorkerProc], profile: Profile) -> dict:
        """The task as :func:`summarise` reads it."""
        starts = [t for w in workers for t in w.times("task_started", self.task_id)]
        ends = [t for w in workers for t in w.times("task_finished", self.task_id)]
        subs = self.site.submissions
        last_end = [x for x in (max(ends, default=None), self.phone_end_s) if x is not None]
        envs = self.result.envelopes if self.result else []
        return {
            "task_id": self.task_id,
            "form": self.form,
            "start_s": min(starts, default=None),
            "end_s": max(last_end, default=None),
            "finished": bool(ends),
            "accepted": bool(subs) and all(r.ok for r in evaluate(self.spec, profile, subs[-1].data)),
            "submissions": len(subs),
            "status": self.result.status if self.result else None,
            "takers": [e.payload.worker for e in envs if isinstance(e.payload, TaskTaken)],
            "asked": self.asked,
        }


async def _phone_side(cfg: Config, task: _Task, llms: Callable, words: str) -> None:
    """The call's side of ``task`` (phone agent, simulated person typing) to its end."""
    task.result = await run_session(
        cfg,
        task.url,
        llms=llms,
        line=TypistLine(task.person, task.heard),
        emit=lambda *a, **k: None,
        task=words,
        task_id=task.task_id,
        agent="phone",
        taken_within_s=cfg.forms.pool_wait_s,
    )
    task.phone_end_s = time.monotonic()


async def _filled(cfg: Config, task_id: str, n: int) -> None:
    """Returns once ``n`` fields of ``task_id`` are filled (``field_filled`` on its stream)."""
    async with open_bus(cfg.bus, session=f"form-{task_id}", from_start=True) as bus:
        tap = bus.subscribe()
        seen = 0
        async for env in tap:
            seen += isinstance(env.payload, FieldFilled)
            if seen >= n:
                break
        await tap.close()


async def _kill_one(cfg: Config, workers: list[WorkerProc], nth: int, progress: Callable[[str], None]) -> dict:
    """SIGKILL the first worker to start its ``nth`` task once :data:`KILL_AFTER_FILLED` of
    that task's fields are filled (that task ended first: its next one); runs until then.
    Returns ``{"worker", "task_id", "at_s", "filled"}``."""
    while (victim := next((w for w in workers if len(w.started()) >= nth), None)) is None:
        await asyncio.sleep(POLL_S)
    k = nth - 1
    while True:
        while len(victim.started()) <= k:
            await asyncio.sleep(POLL_S)
        task_id = victim.started()[k]
        filling = asyncio.ensure_future(_filled(cfg, task_id, KILL_AFTER_FILLED))
        while not filling.done() and not victim.times("task_finished", task_id):
            await asyncio.sleep(POLL_S)
        if filling.done() and not victim.times("task_finished", task_id):
            filling.result()
            victim.kill()
            progress(f"bench pool: killed worker {victim.id} during task {task_id} ({KILL_AFTER_FILLED} fields filled)")
            return {"worker": victim.id, "task_id": task_id, "at_s": time.monotonic(), "filled": KILL_AFTER_FILLED}
        filling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await filling
        k += 1


async def _one_run(
    cfg: Config,
    folder: Path,
    llms: Callable,
    meter: LLMMeter,
    name: str,
    n_workers: int,
    tasks: int,
    progress: Callable[[str], None],
    kill: bool = False,
) -> dict:
    """One run (module docstring): ``n_workers`` workers, ``tasks`` tasks offered together,
    one worker killed when ``kill``. Returns it as :func:`summarise` reads it.

    Raises:
        RuntimeError: a worker did not start.
    """
    r = aioredis.from_url(cfg.bus.redis_url)
    try:
        await r.flushall()
    finally:
        await r.aclose()
    profile = load_profile(PROFILE)
    cfg_path = folder / "worker.json"
    cfg_path.write_text(json.dumps(worker_config(cfg, meter.base_url, folder)))
    progress(f"bench pool: run {name}: {n_workers} worker(s), {tasks} tasks")
    workers: list[WorkerProc] = []
    killer: asyncio.Task | None = None
    async with contextlib.AsyncExitStack() as stack:
        try:
            for i in range(n_workers):
                workers.append(await WorkerProc.start(cfg_path, folder / f"worker-{name}-{i}.log"))
            mine: list[_Task] = []
            for k in range(tasks):
                site = await stack.enter_async_context(DemoSite())
                form = FORMS[k % len(FORMS)]
                t = _Task(str(uuid.uuid4()), form, site, spec_for_url(site.urls[form]))
                t.person = SimulatedPerson(t.spec.person(profile), llms("person"), t.heard)
                await t.person.warm()
                mine.append(t)
            async with pool.tasks_bus(cfg) as bus:
                for t in mine:
                    await pool.offer(bus, t.task_id, t.url, task=person_task(t.url, profile), wait_s=POOL_WAIT_S)
            if kill:
                killer = asyncio.create_task(_kill_one(cfg, workers, 2 if tasks > n_workers else 1, progress))
            calls = [asyncio.create_task(_phone_side(cfg, t, llms, person_task(t.url, profile))) for t in mine]
            _, late = await asyncio.wait(calls, timeout=RUN_GUARD_S + RUN_GUARD_PER_TASK_S * tasks)
            for c in late:
                c.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
            for c, t in zip(calls, mine, strict=True):
                if not c.cancelled() and c.exception() is not None:
                    progress(f"bench pool: task {t.task_id} ({t.form}): the call failed: {c.exception()!r}")
            deadline = time.monotonic() + FINISH_GRACE_S
            while time.monotonic() < deadline and not all(
                any(w.times("task_finished", t.task_id) for w in workers) for t in mine
            ):
                await asyncio.sleep(POLL_S)
        finally:
            if killer is not None:
                killer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await killer
            await asyncio.gather(*(w.stop() for w in workers))
        kill_at = killer.result() if killer is not None and not killer.cancelled() else None
        return {
            "workers": n_workers,
            "tasks": [t.record(workers, profile) for t in mine],
            "llm_spans": list(meter.spans),
            "kill": kill_at,
        }


async def _runs(
    cfg: Config, runtime: LLMRuntime, folder: Path, workers: int, tasks: int, progress: Callable[[str], None]
) -> dict:
    meter = LLMMeter(runtime.base_url)
    await meter.start()

    def llms(name: str):
        return replace(runtime.llm(name), base_url=meter.base_url)

    try:
        # a warm-up round, not counted: the LLM's prompt caches are warm for every run, not for all but the first
        await _one_run(cfg, folder, llms, meter, "warm-up", workers, workers, progress)
        runs = {}
        for name, n, kill in ((str(workers), workers, False), ("1", 1, False), ("failover", workers, True)):
            meter.spans.clear()
            runs[name] = await _one_run(cfg, folder, llms, meter, name, n, tasks, progress, kill)
        return summarise(runs, workers)
    finally:
        await meter.stop()


def bench_config(path: str | None, redis_url: str, folder: Path, workers: int) -> Config:
    """``path``'s config for the bench: :meth:`~appliance.config.Config.for_forms` and
    loopback, the pool on ``redis_url`` (its logs under ``folder``) with calls that wait
    :data:`POOL_WAIT_S` and tasks taken over after :data:`CLAIM_IDLE_MS`, and an LLM slot per
    form prompt and per worker.

    Raises:
        ConfigError: the file or the derived settings are not valid.
    """
    overrides = {
        "bus": {"backend": "redis", "redis_url": redis_url, "log_dir": str(folder / "bus")},
        "forms": {"computer": "pool", "pool_wait_s": POOL_WAIT_S, "claim_idle_ms": CLAIM_IDLE_MS},
        "recording": {"dir": str(folder / "recordings")},
    }
    slots = max(config.load(path, overrides=overrides).llm.parallel_slots, len(FORM_SLOTS) + workers)
    return config.load(path, overrides={**overrides, "llm": {"parallel_slots": slots}}).for_forms().loopback()


def bench_pool(path: str | None, workers: int, tasks: int, progress: Callable[[str], None]) -> dict:
    """The whole bench (module docstring): redis-server, the LLM, the three runs → :func:`summarise`.

    Raises:
        ConfigError, ModelError, LLMError: the config or the LLM (as :class:`LLMRuntime` says).
        RuntimeError: redis-server or a worker did not start.
    """
    with tempfile.TemporaryDirectory(prefix="appliance-bench-pool-") as tmp, RedisServer() as server:
        folder = Path(tmp)
        cfg = bench_config(path, server.url, folder, workers)
        runtime = LLMRuntime(cfg).start(progress)
        try:
            return asyncio.run(_runs(cfg, runtime, folder, workers, tasks, progress))
        finally:
            runtime.stop()
