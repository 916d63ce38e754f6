"""One form-filling session: the computer agent and the phone agent on one bus.

Launch paths (issue 4):

* **fixed** — both agents start together;
* **autonomous** — only the computer agent starts; the phone agent starts when (and if)
  the computer agent's LLM calls ``initiate_phone_call_agent``, with its own context: the
  call's purpose and ``required_info``, nothing else of the computer agent's.

Every envelope is kept (the session's ``bus.jsonl`` when recording, and in memory for the
report), and every decision both agents log goes to the session's event log.
:func:`report` turns a finished session into the ``simulate form`` JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from appliance.bus import Envelope, InProcBus
from appliance.protocol import FieldSpec
from appliance.computer_agent.agent import ComputerAgent, Outcome
from appliance.config import Config
from appliance.demo.spec import FormSpec, evaluate
from appliance.llm.client import LLM
from appliance.phone_agent.agent import Line, PhoneAgent, PhoneOutcome
from appliance.demo.profile import Profile

log = logging.getLogger(__name__)

#: llama-server slots: one per distinct prompt prefix in a form session (OFFLINE.md §2).
SLOT_COMPUTER, SLOT_PHONE, SLOT_PERSON = 0, 1, 2
WRAP_UP_S = 60.0  # how long the phone agent may take to finish the call once the form is done


def form_config(cfg: Config) -> Config:
    """``cfg`` for a process that runs form sessions: one LLM slot per agent prompt (and the
    simulated person's) and ``forms.llm_threads`` LLM threads."""
    llm = cfg.llm.model_copy(update={"parallel_slots": max(cfg.llm.parallel_slots, SLOT_PERSON + 1),
                                     "threads": cfg.forms.llm_threads})
    return cfg.model_copy(update={"llm": llm})


@dataclass
class SessionResult:
    """A finished session: both agents' outcomes (``phone`` None if it never started),
    how the phone agent was started (``fixed`` / ``initiate_phone_call_agent`` / None),
    every envelope in publish order, wall time and the recording folder."""

    computer: Outcome
    phone: PhoneOutcome | None
    phone_started_by: str | None
    envelopes: list[Envelope] = field(default_factory=list)
    duration_s: float = 0.0
    folder: Path | None = None


async def run_session(cfg: Config, url: str, *, llm: LLM, line: Line, emit: Callable[..., Any],
                      autonomous: bool = False, purpose: str = "your web form", task: str = "",
                      folder: Path | None = None, stop: asyncio.Event | None = None) -> SessionResult:
    """Run one form task to its end (submitted, declined, failed or past its deadline).

    ``llm`` is the shared endpoint; each agent pins its own slot. ``line`` is the phone
    agent's audio side. Setting ``stop`` (e.g. Cancel on the person's page) publishes
    ``terminate``: both agents stop, the browser is closed. Returns when both agents have
    stopped.
    """
    t0 = time.monotonic()
    task_id = str(uuid.uuid4())
    seen: list[Envelope] = []
    started: dict[str, Any] = {"task": None, "by": None}
    async with InProcBus(folder / "bus.jsonl" if folder else None, log_fsync_ms=cfg.bus.log_fsync_ms) as bus:
        tap = bus.subscribe()
        computer = ComputerAgent(cfg.forms, bus, llm.with_slot(SLOT_COMPUTER), url, task_id=task_id, emit=emit,
                                 autonomous=autonomous, task=task, browser=cfg.browser)

        def phone_agent(purpose_: str, fields: tuple[FieldSpec, ...] = ()) -> PhoneAgent:
            return PhoneAgent(bus, line, llm.with_slot(SLOT_PHONE), task_id=task_id, purpose=purpose_, emit=emit,
                              fields=fields, date_order=cfg.forms.date_order,
                              answer_timeout_s=cfg.forms.answer_timeout_s)

        async with asyncio.TaskGroup() as tg:
            async def watch() -> None:
                async for env in tap:
                    seen.append(env)
                    if env.type == "initiate_phone_call_agent" and started["task"] is None:
                        p = env.payload
                        emit("phone_agent_started", by="initiate_phone_call_agent", purpose=p.purpose,
                             fields=[f.name for f in p.required_info])
                        started.update(task=tg.create_task(phone_agent(p.purpose, p.required_info).run()),
                                       by="initiate_phone_call_agent")

            async def cancel_on_stop() -> None:
                await stop.wait()
                await bus.publish(Envelope.new("terminate", {"reason": "cancelled"}, sender="session", recipient="*"))

            tg.create_task(watch())
            canceller = tg.create_task(cancel_on_stop()) if stop is not None else None
            if not autonomous:
                started.update(task=tg.create_task(phone_agent(purpose).run()), by="fixed")
            computer_out = await tg.create_task(computer.run())
            phone_task: asyncio.Task | None = started["task"]
            if phone_task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(phone_task), WRAP_UP_S)
                except TimeoutError:
                    await bus.publish(Envelope.new("terminate", {"reason": "the call did not end after the form"},
                                                   sender="session", recipient="*"))
                    await phone_task
            if canceller is not None:
                canceller.cancel()
            await tap.close()
    return SessionResult(computer_out, phone_task.result() if phone_task else None, started["by"], seen,
                         time.monotonic() - t0, folder)


def fetch_submissions(url: str) -> list[dict] | None:
    """What a demo site recorded (``GET <origin>/api/submissions``), or None when the site
    does not offer it (not a demo site)."""
    origin = "/".join(url.split("/")[:3])
    try:
        with urllib.request.urlopen(origin + "/api/submissions", timeout=5) as r:
            return json.load(r)["submissions"]
    except (OSError, ValueError, KeyError):
        return None


def report(result: SessionResult, spec: FormSpec | None, profile: Profile | None,
           submissions: list[dict] | None) -> dict:
    """The ``simulate form --json`` object (issue 4):

    ``fields`` [{field, expected, filled, ok}] and ``field_accuracy`` (from the demo spec,
    else [] and null); ``submitted``; ``authorised_before_submit`` (every submission the
    site recorded came after a ``submit_authorized``); ``fill_lag_ms`` {p50, max} (each
    ``field_filled`` − the ``info_collected{confirmed}`` it answers); ``phone_waits_on_browser``;
    ``duration_s``; ``messages`` (every envelope: ts, sender, recipient, type, payload).
    """
    envs = result.envelopes
    mine = [s for s in (submissions or []) if spec is None or s["form"] == spec.name]
    submitted = bool(mine) if submissions is not None else result.computer.status == "submitted"
    auth_ts = [e.ts for e in envs if e.type == "submit_authorized"]
    sub_ts = [s["ts_ms"] for s in mine] or ([result.computer.submitted_at_ms] if result.computer.submitted_at_ms
                                            else [])
    authorised = all(auth_ts and min(auth_ts) <= t for t in sub_ts)
    lags = _fill_lags(envs)
    fields, accuracy = [], None
    if spec is not None and profile is not None:
        res = evaluate(spec, profile, mine[-1]["data"] if mine else None)
        fields = [{"field": r.field, "expected": r.expected, "filled": r.filled, "ok": r.ok} for r in res]
        accuracy = round(sum(r.ok for r in res) / len(res), 3) if res else None
    return {
        "fields": fields,
        "field_accuracy": accuracy,
        "submitted": submitted,
        "authorised_before_submit": authorised,
        "fill_lag_ms": {"p50": round(statistics.median(lags)) if lags else None, "max": max(lags) if lags else None},
        "phone_waits_on_browser": result.phone.waits_on_browser if result.phone else 0,
        "duration_s": round(result.duration_s, 1),
        "messages": [{"ts": e.ts, "sender": e.sender, "recipient": e.recipient, "type": e.type,
                      "payload": e.payload.model_dump(mode="json")} for e in envs],
    }


def _fill_lags(envs: list[Envelope]) -> list[int]:
    """ms from each confirmed ``info_collected`` to the ``field_filled`` that reads it back."""
    pending: dict[str, int] = {}
    lags = []
    for e in envs:
        if e.type == "info_collected" and e.payload.confirmed:
            pending[e.payload.field] = e.ts
        elif e.type == "field_filled" and e.payload.field in pending:
            lags.append(e.ts - pending.pop(e.payload.field))
    return lags
