"""Form calls' computer agents as a worker pool on Redis Streams (issue 29, ``forms.computer: pool``).

Layout on the Redis server of ``bus.redis_url``:

* :data:`TASKS_STREAM` — one ``form_task`` envelope per form call (``{url, task?,
  take_by_ms}``; the envelope's ``task_id`` names the call), published by ``appliance serve``
  when the call starts (:func:`offer`). Workers are the members of the consumer group
  :data:`GROUP`; each slot of a worker (one Chromium) is its own member holding at most one
  task (``hold=1``: it takes nothing while busy, so a free worker gets the next task).
* ``form-<task id>`` — the task's own traffic, as for a session split over two processes
  (:func:`~appliance.forms.session.run_session`); a worker that starts the computer agent says
  so first there (``task_taken{worker}``).
* :data:`WORKERS_KEY` — a hash, worker id → its announcement (JSON ``{slots, free, tasks,
  seen_ms}``), rewritten every :data:`ANNOUNCE_S`; ``appliance pool status`` lists the ones
  seen in the last :data:`STALE_S`, with the group's tasks in flight and pending claims.

**Admission.** The serving side waits ``forms.pool_wait_s`` for ``task_taken``
(:func:`wait_taken`); with none, the person hears :data:`BUSY` and the call ends. The task's
``take_by_ms`` is that deadline: a worker that reads it later acknowledges it and does not
start it, so nothing is left behind.

**Draining.** SIGTERM: a worker stops taking tasks, finishes the ones it holds, then exits
(:meth:`Worker.run`'s ``stop``). A worker that dies holding a task leaves it pending in the
group; another member takes it over after ``forms.claim_idle_ms`` (XAUTOCLAIM; see
:mod:`appliance.bus.redis_streams`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import redis.asyncio as aioredis

from appliance.bus import Bus, BusError, Envelope, open_bus
from appliance.config import Config
from appliance.errors import ApplianceError
from appliance.protocol import Emit, FormTask, TaskTaken

log = logging.getLogger(__name__)

#: the stream form calls' tasks are offered on, and the workers' consumer group
TASKS_STREAM = "form_tasks"
GROUP = "computer"  # CONTRACTS: the task stream is form_tasks, consumer group computer
#: the hash of the workers' announcements
WORKERS_KEY = "form_pool:workers"
#: how often a worker announces itself (s), and after how long without one it is left out (s)
ANNOUNCE_S = 2.0
STALE_S = 10.0
#: what the person hears when no worker took their task within ``forms.pool_wait_s`` (issue 29)
BUSY = "All the form helpers are busy; please try again in a minute."


def worker_id() -> str:
    """This process as a worker: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def check_pool(cfg: Config) -> None:
    """A pool runs on Redis: refuse another bus before anything starts.

    Raises:
        ApplianceError: ``bus.backend`` is not ``redis``.
    """
    if cfg.bus.backend != "redis":
        raise ApplianceError(
            "forms.computer: pool needs bus.backend: redis (the workers take tasks from the Redis stream "
            f"{TASKS_STREAM}); this config has bus.backend: {cfg.bus.backend}"
        )


def tasks_bus(cfg: Config) -> Bus:
    """The bus of :data:`TASKS_STREAM` (not started). Read from its first entry: the workers'
    group, made by the first worker, starts there, so a task offered before any worker ran
    is taken too."""
    check_pool(cfg)
    return open_bus(cfg.bus, session=TASKS_STREAM, from_start=True, claim_idle_ms=cfg.forms.claim_idle_ms)


async def offer(bus: Bus, task_id: str, url: str, *, task: str = "", wait_s: float, preview: bool = False) -> None:
    """Publish form call ``task_id``'s computer agent on ``bus`` (:func:`tasks_bus`) for any
    worker, to be taken within ``wait_s`` seconds; ``preview``: the person's page shows the
    browser (the worker relays its pictures: :mod:`appliance.forms.remote`)."""
    take_by = int((time.time() + wait_s) * 1000)
    payload = FormTask(url=url, task=task, take_by_ms=take_by, preview=preview)
    await bus.publish(Envelope.new(payload, sender="server", recipient="computer", task_id=task_id))


async def wait_taken(tap, timeout_s: float, seen: Callable[[Envelope], None] | None = None) -> str | None:
    """The worker that took the task, from ``tap`` (a subscription to the task's stream, read
    from its first entry), or None when no ``task_taken`` came within ``timeout_s``. Every
    envelope read goes to ``seen`` first."""
    try:
        async with asyncio.timeout(timeout_s):
            async for env in tap:
                if seen is not None:
                    seen(env)
                if isinstance(env.payload, TaskTaken):
                    return env.payload.worker
    except TimeoutError:
        return None
    return None


#: runs one task's computer agent to its end: (the task's envelope, this worker's id) → None
RunTask = Callable[[Envelope, str], Awaitable[None]]


@dataclass
class Worker:
    """Up to ``max_tasks`` tasks at a time from :data:`TASKS_STREAM` (one Chromium each), each
    run by ``run_task`` (which publishes ``task_taken`` on the task's stream first: see
    :func:`~appliance.forms.session.run_session`'s ``taken_by``). ``emit``: its events
    (``worker_started`` once it is on the bus, ``task_started``, ``task_finished``,
    ``task_skipped``, ``task_failed``)."""

    cfg: Config
    run_task: RunTask
    max_tasks: int = 1
    emit: Emit = lambda event, **fields: None
    id: str = field(default_factory=worker_id)
    running: dict[str, float] = field(default_factory=dict)  # task id → start (monotonic s)

    async def run(self, stop: asyncio.Event) -> None:
        """Take and run tasks until ``stop`` is set, then finish the ones running.

        Raises:
            ApplianceError: the bus is not Redis. BusError: Redis cannot be reached.
        """
        r = aioredis.from_url(self.cfg.bus.redis_url)  # the announcements' connection
        async with tasks_bus(self.cfg) as bus:
            self.emit("worker_started", worker=self.id, max_tasks=self.max_tasks, redis=self.cfg.bus.redis_url)
            announcer = asyncio.create_task(self._announce(r))
            try:
                async with asyncio.TaskGroup() as tg:
                    for k in range(self.max_tasks):
                        tg.create_task(self._slot(bus, k, stop))
            finally:
                announcer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await announcer
                with contextlib.suppress(OSError, aioredis.RedisError):  # a lost server: its entry goes stale
                    await r.hdel(WORKERS_KEY, self.id)
                await r.aclose()

    async def _slot(self, bus: Bus, k: int, stop: asyncio.Event) -> None:
        """One Chromium's worth: a member of :data:`GROUP` that holds one task at a time."""
        sub = bus.subscribe("computer", "form_task", group=GROUP, consumer=f"{self.id}/{k}", hold=1, maxsize=1)
        async with sub:  # cancelled mid-task: the task is handed back unacknowledged, for another member
            while (env := await _next_or_stop(sub, stop)) is not None:
                if not isinstance(env.payload, FormTask) or env.task_id is None:
                    log.warning("%s: %s %s is not a form task with a task id; acknowledged", self.id, env.type, env.id)
                elif env.payload.take_by_ms < time.time() * 1000:
                    self.emit("task_skipped", worker=self.id, task_id=env.task_id, why="withdrawn: not taken in time")
                else:
                    await self._run(env)
                await sub.ack(env)

    async def _run(self, env: Envelope) -> None:
        task_id = env.task_id or ""
        self.running[task_id] = time.monotonic()
        self.emit("task_started", worker=self.id, task_id=task_id, url=env.payload.url)
        try:
            await self.run_task(env, self.id)
        except (ApplianceError, BusError) as e:  # its page refused, its bus lost: this task, not the worker
            self.emit("task_failed", worker=self.id, task_id=task_id, error=str(e)[:300])
        finally:
            took = time.monotonic() - self.running.pop(task_id)
            self.emit("task_finished", worker=self.id, task_id=task_id, duration_s=round(took, 1))

    def announcement(self) -> dict:
        """What :meth:`_announce` writes: slots, free slots, tasks in flight, when (Unix ms)."""
        return {
            "slots": self.max_tasks,
            "free": self.max_tasks - len(self.running),
            "tasks": sorted(self.running),
            "seen_ms": int(time.time() * 1000),
        }

    async def _announce(self, r: aioredis.Redis) -> None:
        while True:
            with contextlib.suppress(OSError, aioredis.RedisError):  # a lost server: the bus reports it
                await r.hset(WORKERS_KEY, self.id, json.dumps(self.announcement()))
            await asyncio.sleep(ANNOUNCE_S)


async def _next_or_stop(sub, stop: asyncio.Event) -> Envelope | None:
    """The subscription's next envelope, or None once ``stop`` is set first."""
    nxt = asyncio.ensure_future(anext(sub))
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({nxt, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if nxt.done():
        return nxt.result()
    nxt.cancel()
    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
        await nxt
    return None


async def status(cfg: Config) -> dict:
    """``appliance pool status``: ``{"workers": [{id, slots, free, tasks, seen_s}], "in_flight":
    n, "pending": [{task_id?, consumer, idle_ms, deliveries}], "waiting": n}`` — workers seen in
    the last :data:`STALE_S`; tasks held by a member (pending in :data:`GROUP`), those idle
    past ``forms.claim_idle_ms`` being claims waiting for a free member; tasks not yet read.

    Raises:
        ApplianceError: the bus is not Redis. BusError: Redis cannot be reached.
    """
    check_pool(cfg)
    r = aioredis.from_url(cfg.bus.redis_url)
    now = time.time() * 1000
    try:
        workers = []
        for wid, raw in sorted((await r.hgetall(WORKERS_KEY)).items()):
            a = json.loads(raw)
            seen_ms = a.pop("seen_ms")
            if now - seen_ms <= STALE_S * 1000:
                workers.append({"id": wid.decode(), **a, "seen_s": round((now - seen_ms) / 1000, 1)})
        pending, waiting = [], 0
        if await r.exists(TASKS_STREAM):
            groups = {g["name"].decode(): g for g in await r.xinfo_groups(TASKS_STREAM)}
            if GROUP in groups:
                waiting = groups[GROUP].get("lag") or 0
                for p in await r.xpending_range(TASKS_STREAM, GROUP, "-", "+", 1000):
                    pending.append(
                        {
                            "consumer": p["consumer"].decode(),
                            "idle_ms": p["time_since_delivered"],
                            "deliveries": p["times_delivered"],
                            "claimable": p["time_since_delivered"] >= cfg.forms.claim_idle_ms,
                        }
                    )
            else:
                waiting = await r.xlen(TASKS_STREAM)
    except (OSError, aioredis.RedisError) as e:
        raise BusError(f"redis at {cfg.bus.redis_url}: {e}") from None
    finally:
        await r.aclose()
    return {"workers": workers, "in_flight": len(pending), "pending": pending, "waiting": waiting}
