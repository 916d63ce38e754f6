"""One form-filling session: the computer agent and the phone agent on one bus.

Launch paths:

* **fixed** — both agents start together;
* **autonomous** — only the computer agent starts; the phone agent starts when (and if)
  the computer agent's LLM calls ``initiate_phone_call_agent``, with its own context: the
  call's purpose and ``required_info``, nothing else of the computer agent's.

Both agents run in this process, or (fixed launch, ``bus.backend: redis``) each in its own
process: ``run_session(agent="computer" | "phone", task_id=…)`` hosts one, and the two
meet on the Redis stream ``form-<task id>`` (``appliance form --agent … --task-id …``).
They share nothing but that stream: the phone agent learns the fields from the computer
agent's ``need_info``, the person's typed values go out as ``info_collected``, and the
computer side ends the call with ``terminate`` if it has not ended :data:`WRAP_UP_S` after
the form.

Every browser action the computer agent performs (fill, click, select, key) is counted
(:attr:`SessionResult.actions`).

The bus is the configured one (``bus.backend``): in-process, its log is the session's
``bus.jsonl`` when recording (else ``<bus.log_dir>/form-<task id>.jsonl``); on Redis, the
session's envelopes go to the stream ``form-<task id>``. Every envelope is also kept in
memory (:attr:`SessionResult.envelopes`), and every decision both agents log goes to the
session's event log.

The person reaches a running session through a :class:`PageSide`: the live
:class:`~appliance.computer_agent.preview.Preview` of the agent's browser, a value the person
typed on the page or the terminal (:mod:`appliance.forms.typed`: ``info_collected{confirmed:
true}`` from ``page`` or ``terminal``) and a submit from the page during a review
(``submit_authorized`` from ``page``). When the computer agent is on a pool worker, the page's
preview is a :class:`~appliance.forms.remote.RemotePreview` and the worker's session relays its
pictures and takes the person's clicks and keys (:func:`~appliance.forms.remote.relay_preview`,
started here for a session hosting only the computer agent with a page side).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.bus import Bus, Envelope, open_bus
from appliance.computer_agent import takeover
from appliance.computer_agent.agent import ComputerAgent, Outcome
from appliance.computer_agent.browser import Har
from appliance.computer_agent.preview import Preview
from appliance.config import Config
from appliance.errors import ApplianceError
from appliance.forms import pool, remote
from appliance.forms.remote import RemotePreview
from appliance.forms.typed import TypedValues
from appliance.llm.base import LLM
from appliance.phone_agent.agent import PhoneAgent
from appliance.phone_agent.line import Line
from appliance.phone_agent.outcome import PhoneOutcome
from appliance.protocol import (
    Emit,
    FieldSpec,
    InfoCollected,
    InitiatePhoneCallAgent,
    NeedInfo,
    Payload,
    StatusUpdate,
    SubmitAuthorized,
    TaskCompleted,
    TaskTaken,
    Terminate,
)
from appliance.voice.session import recording_notice

log = logging.getLogger(__name__)

WRAP_UP_S = 60.0  # how long the phone agent may take to finish the call once the form is done


@dataclass
class SessionResult:
    """A finished session: both agents' outcomes (None: it never started, or ran in another
    process), how the phone agent was started (``fixed`` / ``initiate_phone_call_agent`` /
    None), every envelope in publish order, wall time and the recording folder."""

    computer: Outcome | None
    phone: PhoneOutcome | None
    phone_started_by: str | None
    envelopes: list[Envelope] = field(default_factory=list)
    duration_s: float = 0.0
    folder: Path | None = None
    busy: bool = False  # a pooled task no worker took in time: the person was told, nothing ran

    @property
    def status(self) -> str:
        """How the task ended: the computer agent's status where it ran here, else the phone
        agent's (``busy``: no pool worker took it)."""
        out = self.computer or self.phone
        return "busy" if self.busy or out is None else out.status

    @property
    def detail(self) -> str:
        out = self.computer or self.phone
        return pool.BUSY if self.busy or out is None else out.detail

    @property
    def actions(self) -> int:
        """Browser actions the computer agent performed (fill, click, select, key)."""
        return sum(self.computer.actions.values()) if self.computer else 0

    @property
    def explained_failures(self) -> int:
        """Times the person was told a step failed and why."""
        return self.phone.explained_failures if self.phone else 0


class PageSide:
    """The person's side of a running session: ``preview``, the agent's browser live (None:
    no picture, as on a terminal), and what the person does there: a value typed for a field
    (``typed``: the fields the session announced, :class:`~appliance.forms.typed.TypedValues`)
    and a Submit during a review. ``sender``: ``page`` (the voice page) or ``terminal``
    (``appliance form``). Usable once the session has bound its bus (:meth:`bind`).
    """

    def __init__(
        self, preview: Preview | RemotePreview | None = None, *, sender: str = "page", date_order: str = "DMY"
    ) -> None:
        self.preview, self.sender = preview, sender
        self.typed = TypedValues(date_order)
        self.in_review = False  # the filled form waits for the person's review (a "don't submit" task)
        self._bus: Bus | None = None
        self._task_id: str | None = None

    def seen(self, payload: Payload) -> None:
        """An envelope of the session went by: the fields it announces are ones the person may
        type (:attr:`typed`); ``status_update{review}`` opens the review, in which alone the
        person's Submit counts."""
        if isinstance(payload, (NeedInfo, InitiatePhoneCallAgent)):
            self.typed.known(payload.fields if isinstance(payload, NeedInfo) else payload.required_info)
        elif isinstance(payload, StatusUpdate):
            self.in_review = payload.state == "review"

    def bind(self, bus: Bus | None, task_id: str | None = None) -> None:
        """The session's bus (None: the session has ended)."""
        self._bus, self._task_id = bus, task_id

    async def value(self, field: str, value: object, emit: Emit | None = None) -> InfoCollected:
        """The person typed ``value`` for ``field`` (its name or label): the confirmed value it
        makes (:meth:`TypedValues.payload <appliance.forms.typed.TypedValues.payload>`) goes to
        both agents as ``info_collected{confirmed: true}``; returns it.

        Raises:
            RuntimeError: no session is running.
            UnknownField, ValueError: not a field the session announced, or no value for it
                (pydantic.ValidationError: not a field value at all).
        """
        self._running()
        return await self.send_typed(self.typed.payload(field, value), emit)

    async def value_line(self, line: str, emit: Emit | None = None) -> InfoCollected:
        """As :meth:`value`, for a terminal line ``=field value``."""
        self._running()
        return await self.send_typed(self.typed.payload_line(line), emit)

    async def to_computer(self, payload: Payload) -> None:
        """Publish ``payload`` from the person's page to the computer agent (the preview's
        clicks and keys when its browser is on a pool worker: :mod:`appliance.forms.remote`).

        Raises:
            RuntimeError: no session is running.
        """
        await self._publish(payload, "computer", None)

    async def send_typed(self, payload: InfoCollected, emit: Emit | None = None) -> InfoCollected:
        """A value the person typed, as taken, to both agents (a replay sends the recorded ones).

        Raises:
            RuntimeError: no session is running.
        """
        await self._publish(payload, "*", emit)
        return payload

    async def submit(self, emit: Emit | None = None) -> None:
        """The person pressed Submit on their page during the review: ``submit_authorized`` to
        the computer agent. Before the review, the go-ahead is the spoken one after the
        summary (the phone agent's), never a press of the page's button.

        Raises:
            RuntimeError: no session is running, or the form is not waiting for a review.
        """
        self._running()
        if not self.in_review:
            raise RuntimeError("the form is not waiting for your review: the assistant asks before it submits")
        await self._publish(SubmitAuthorized(), "computer", emit)

    def _running(self) -> Bus:
        if self._bus is None:
            raise RuntimeError("no form session is running")
        return self._bus

    async def _publish(self, payload, recipient: str, emit: Emit | None) -> None:
        bus = self._running()
        env = Envelope.new(payload, sender=self.sender, recipient=recipient, task_id=self._task_id)
        if emit is not None:
            emit("bus_out", agent=self.sender, type=env.type, payload=env.payload.model_dump())
        await bus.publish(env)


_TASK_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
AGENTS = ("computer", "phone")
"""The agents a process may host alone (``run_session(agent=…)``)."""


def check_split(cfg: Config, agent: str | None, task_id: str | None, autonomous: bool = False) -> None:
    """Refuse a session that hosts only ``agent`` (the other agent in another process) when
    it cannot work: the two processes meet on the Redis stream ``form-<task_id>``, so
    ``bus.backend`` must be ``redis`` and both must be given the same ``task_id``; the
    autonomous launch (the computer agent decides whether to call) is one-process only.
    ``agent`` None (both agents in this process) is always accepted.

    Raises:
        ApplianceError: the reason, in one line.
    """
    if agent is None:
        return
    if agent not in AGENTS:
        raise ApplianceError(f"no agent {agent!r}: the agents are {', '.join(AGENTS)}")
    if cfg.bus.backend != "redis":
        raise ApplianceError(
            f"the {agent} agent alone needs bus.backend: redis (the other agent's process talks "
            f"to it over Redis Streams); this config has bus.backend: {cfg.bus.backend}"
        )
    if not task_id:
        raise ApplianceError(
            f"the {agent} agent alone needs a task id, the same for both processes "
            "(its bus is the Redis stream form-<task id>)"
        )
    if not _TASK_ID.fullmatch(task_id):
        raise ApplianceError(
            f"task id {task_id!r}: use 1–64 letters, digits, '.', '_' or '-' (it names the Redis stream form-<task id>)"
        )
    if autonomous:
        raise ApplianceError("the autonomous launch runs both agents in one process: drop --autonomous or the agent")


def session_bus(cfg: Config, task_id: str, folder: Path | None, *, joined: bool = False) -> Bus:
    """The bus of form task ``task_id`` (not started), as ``cfg.bus`` says: in-process with its
    log at ``<folder>/bus.jsonl`` (no folder: ``<bus.log_dir>/form-<task_id>.jsonl``), or the
    Redis stream ``form-<task_id>``. ``joined``: the agents run in several processes that join
    the stream when they start: subscriptions read it from its first entry (Redis only).

    Raises:
        ValueError: ``joined`` on the in-process backend.
    """
    return open_bus(
        cfg.bus, session=f"form-{task_id}", log_path=folder / "bus.jsonl" if folder else None, from_start=joined
    )


async def run_session(
    cfg: Config,
    url: str | None,
    *,
    llms: Callable[[str], LLM],
    line: Line | None,
    emit: Emit,
    autonomous: bool = False,
    purpose: str = "your web form",
    task: str = "",
    folder: Path | None = None,
    stop: asyncio.Event | None = None,
    page_side: PageSide | None = None,
    task_id: str | None = None,
    agent: str | None = None,
    taken_by: str | None = None,
    taken_within_s: float | None = None,
    har: Har | None = None,
) -> SessionResult:
    """Run one form task to its end (submitted, declined, reviewed, failed or past its deadline).

    ``llms``: slot name → client (``runtime.llm``); the agents use ``"computer"`` and
    ``"phone"`` (``cfg`` sized with :meth:`~appliance.config.Config.for_forms`). ``line`` is the phone
    agent's audio side. Setting ``stop`` (e.g. Cancel on the person's page) publishes
    ``terminate``: both agents stop, the browser is closed. ``page_side``: the person's
    page or terminal (preview, typed values, submit), bound to the session's bus while it
    runs and told the fields announced on it; ``task``: the person's words (fill it but
    don't submit → review). Before the first question the person is told whether the call is
    recorded (``folder``). ``task_id``: the task's id (default: a new UUID).

    ``agent``: host only this agent (``computer``: ``url`` needed, ``line`` unused; ``phone``:
    ``url`` unused); the other runs in another process with the same ``task_id`` on the Redis
    stream, which each reads from its first entry, so either may start first
    (:func:`check_split`). When the computer agent has finished, the call gets
    :data:`WRAP_UP_S` to end (its ``task_completed``, or a ``terminate``), else ``terminate``
    ends it, wherever the phone agent runs.

    A pooled task (:mod:`appliance.forms.pool`): the worker hosting the computer agent passes
    its id as ``taken_by`` (``task_taken`` goes on the stream first; what the stream held before
    it is the task's history: an earlier ``task_taken`` there makes this a task taken over from
    a worker that died, :mod:`~appliance.computer_agent.takeover`); the side hosting the phone
    agent passes ``taken_within_s``: with no ``task_taken`` that soon the person hears
    :data:`~appliance.forms.pool.BUSY` and nothing else runs (``SessionResult.busy``).

    ``har``: the computer agent's pages served from a recorded HAR (a replay:
    :mod:`appliance.forms.replay`); by default they are recorded into ``folder/page.har`` when
    the session is recorded.

    Returns when the agents this process hosts have stopped (``SessionResult.computer``
    None: the computer agent ran elsewhere; ``phone`` None: it never started here).

    Raises:
        ApplianceError: a split session that cannot work (:func:`check_split`).
        BusError: the bus cannot be reached.
    """
    check_split(cfg, agent, task_id, autonomous)
    hosts = AGENTS if agent is None else (agent,)
    t0 = time.monotonic()
    task_id = task_id or str(uuid.uuid4())
    seen: list[Envelope] = []
    started: dict[str, Any] = {"task": None, "by": None}
    call_ended = asyncio.Event()  # the bus says the call is over: the phone's task_completed, or a terminate
    async with session_bus(cfg, task_id, folder, joined=agent is not None) as bus:
        tap = bus.subscribe()
        inherited = None
        if taken_by is not None:
            mine = Envelope.new(TaskTaken(worker=taken_by), sender="computer", recipient="*")
            await bus.publish(mine)
            async for env in tap:  # the stream from its start up to our task_taken: the task's history
                seen.append(env)
                if env.id == mine.id:
                    break
            inherited = takeover.of(seen[:-1])
        if taken_within_s is not None:
            worker = await pool.wait_taken(tap, taken_within_s, seen.append)
            if worker is not None:
                emit("task_taken", worker=worker, wait_s=taken_within_s)
            else:
                emit("pool_busy", wait_s=taken_within_s)
                if line is not None:
                    await line.say(pool.BUSY)
                await tap.close()
                return SessionResult(None, None, None, seen, time.monotonic() - t0, folder, busy=True)
        computer = None
        if "computer" in hosts:
            computer = ComputerAgent(
                cfg.forms,
                bus,
                llms("computer"),
                url,
                task_id=task_id,
                emit=emit,
                autonomous=autonomous,
                task=task,
                browser_cfg=cfg.browser,
                preview=page_side.preview if page_side else None,
                takeover=inherited,
                har=har or (Har(folder / "page.har", "record") if folder is not None else None),
            )
        if page_side is not None:
            page_side.bind(bus, task_id)

        def phone_agent(purpose_: str, fields: tuple[FieldSpec, ...] = ()) -> PhoneAgent:
            return PhoneAgent(
                bus,
                line,
                llms("phone"),
                task_id=task_id,
                purpose=purpose_,
                emit=emit,
                fields=fields,
                date_order=cfg.forms.date_order,
                answer_timeout_s=cfg.forms.answer_timeout_s,
                consent=recording_notice(folder is not None),
                submit_grace_s=cfg.forms.submit_grace_ms / 1000,
                spell_below_prob=cfg.forms.spell_below_prob,
                task=task,
            )

        async with asyncio.TaskGroup() as tg:

            async def watch() -> None:
                async for env in tap:
                    seen.append(env)
                    p = env.payload
                    if page_side is not None:
                        page_side.seen(p)
                    if isinstance(p, Terminate) or (isinstance(p, TaskCompleted) and env.sender == "phone"):
                        call_ended.set()
                    if isinstance(p, InitiatePhoneCallAgent) and started["task"] is None and "phone" in hosts:
                        emit(
                            "phone_agent_started",
                            by="initiate_phone_call_agent",
                            purpose=p.purpose,
                            fields=[f.name for f in p.required_info],
                        )
                        started.update(
                            task=tg.create_task(phone_agent(p.purpose, p.required_info).run()),
                            by="initiate_phone_call_agent",
                        )

            async def cancel_on_stop() -> None:
                await stop.wait()
                await bus.publish(Envelope.new(Terminate(reason="cancelled"), sender="session", recipient="*"))

            tg.create_task(watch())
            canceller = tg.create_task(cancel_on_stop()) if stop is not None else None
            relay = None  # the person's page is in another process: the preview goes over Redis
            if agent == "computer" and page_side is not None and isinstance(page_side.preview, Preview):
                relay = tg.create_task(remote.relay_preview(page_side.preview, bus, cfg.bus.redis_url, task_id, emit))
            if not autonomous and "phone" in hosts:
                started.update(task=tg.create_task(phone_agent(purpose).run()), by="fixed")
            computer_out = await tg.create_task(computer.run()) if computer is not None else None
            phone_task: asyncio.Task | None = started["task"]
            if computer is not None and (phone_task is not None or "phone" not in hosts):
                try:
                    await asyncio.wait_for(asyncio.shield(phone_task) if phone_task else call_ended.wait(), WRAP_UP_S)
                except TimeoutError:
                    await bus.publish(
                        Envelope.new(
                            Terminate(reason="the call did not end after the form"), sender="session", recipient="*"
                        )
                    )
            if phone_task is not None:
                await phone_task
            for task in (canceller, relay):
                if task is not None:
                    task.cancel()
            if page_side is not None:
                page_side.bind(None)
            await tap.close()
    return SessionResult(
        computer_out, phone_task.result() if phone_task else None, started["by"], seen, time.monotonic() - t0, folder
    )
