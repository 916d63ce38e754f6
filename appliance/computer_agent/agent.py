"""The computer agent: perceive → name new fields (LLM) → fill what arrives → verify → advance.

One task = one URL in one headless Chromium. The loop, each turn (woken by a bus
message, by the field-naming task, or every ``forms.poll_ms``):

1. **Perceive** the page (:func:`page.perceive`, one ``evaluate``). A new *page state*
   (URL path + set of live fields) starts a background naming task for the fields not
   seen before (:mod:`mapper`); each named field is announced with ``need_info`` as soon
   as its name streams out. Errors the page shows for values the agent put in (server-side
   validation after Next, the browser's own checks) become ``fill_error{field, reason}``.
2. **Take messages** at this safe point, never in the middle of an action:
   ``info_collected`` is filled at once (confirmed or not) and read back → ``field_filled``
   (confirmed values) / ``format_invalid{expected, got}`` / ``fill_error{reason}``;
   ``submit_authorized`` arms the final submit; ``interrupt`` disarms it; ``terminate``
   stops everything (browser closed, all its processes gone).
3. **Advance** when every live field is named, answered, confirmed and valid: a step
   button (Next/Continue) is pressed freely; any other submit button counts as the *final*
   submit and is pressed only after ``submit_authorized`` — until then the agent says it is
   ready with ``status_update{state: "auth-required"}``.

What the agent knows about each field is the pure :mod:`~appliance.computer_agent.fieldbook`;
this loop reads the page, acts on it and sends what the field book says to send.

The LLM is never between a confirmed value and its fill (what keeps ``fill_lag_ms`` low):
it only names fields, once per page state, and (autonomous launch) decides whether to
call the phone agent. Page text is data: it reaches the LLM only as field labels (and, for
the launch decision, as an excerpt marked as data), and no LLM answer can press a button.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from appliance.bus import Bus, Envelope, now_ms
from appliance.bus.inbox import AgentInbox, Terminated
from appliance.computer_agent import fieldbook as fb, mapper, page as pg
from appliance.computer_agent.browser import Browser
from appliance.computer_agent.decide import decide
from appliance.config import BrowserConfig, FormsConfig
from appliance.llm.client import LLM, LLMError
from appliance.protocol import (Emit, FieldSpec, FillError, FormatInvalid, InfoCollected, InitiatePhoneCallAgent,
                                Interrupt, NeedInfo, Payload, StatusUpdate, SubmitAuthorized, Submitted,
                                TaskCompleted)

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """How a task ended: ``status`` is ``submitted``, ``not_submitted`` (the person declined
    or the task was completed without submitting), ``terminated`` or ``failed``; ``detail``
    says why or what the page confirmed."""

    status: str
    detail: str = ""
    submitted_at_ms: int | None = None


@dataclass
class _State:
    signature: tuple = ()
    since: float = field(default_factory=time.monotonic)


class ComputerAgent:
    """Drives one form task; ``await run()`` returns an :class:`Outcome`.

    Args:
        cfg: ``forms`` config (Chromium path, timeouts, deadlines).
        bus: a started bus; the agent subscribes as ``agent_id``.
        llm: the endpoint (with its own slot) for naming fields and the launch decision.
        url: the form's first page.
        task_id: carried on every envelope.
        emit: ``emit(event, **fields)`` for the session's event log (decisions, actions).
        autonomous: decide with the LLM whether to call the phone agent (``initiate_phone_call_agent``)
            instead of announcing fields with ``need_info`` straight away.
        task: the task in words (autonomous decision prompt).
        browser_cfg: the ``browser`` section (Chromium path, network); none given: loopback only.
        browser: the browser to drive (tests pass a stand-in); by default a headless Chromium
            as ``browser_cfg`` says.
    """

    def __init__(self, cfg: FormsConfig, bus: Bus, llm: LLM, url: str, *, task_id: str, emit: Emit,
                 autonomous: bool = False, task: str = "", agent_id: str = "computer", phone_id: str = "phone",
                 map_max_tokens: int | None = None, browser_cfg: BrowserConfig | None = None,
                 browser: Browser | None = None):
        self.cfg, self.bus, self.llm, self.url = cfg, bus, llm, url
        self.task_id, self.emit, self.autonomous = task_id, emit, autonomous
        self.task = task or f"Fill in the web form at {url} for the person and submit it once they allow it."
        self.id, self.phone_id = agent_id, phone_id
        self.max_tokens = map_max_tokens or cfg.map_max_tokens
        self.browser = browser or Browser(browser_cfg or BrowserConfig(network="loopback"))
        self.book = fb.FieldBook()
        self._wake = asyncio.Event()
        self._inbox = AgentInbox(self.id, emit, self._wake)
        self._state = _State()
        self._naming: asyncio.Task | None = None
        self._phone_started = not autonomous
        self._authorized = False
        self._ready_sent = False
        self._outcome: Outcome | None = None

    # ---- lifecycle ---------------------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Run the task to its end. Never raises for page or LLM trouble (→ ``failed``);
        cancelling the task closes the browser too."""
        sub = self.bus.subscribe(self.id)
        self.emit("agent_started", agent=self.id, url=self.url, autonomous=self.autonomous)
        try:
            async with asyncio.timeout(self.cfg.task_deadline_s), asyncio.TaskGroup() as tg:
                reader = tg.create_task(self._inbox.read(sub))
                await self._loop()
                reader.cancel()
        except* Terminated:
            self._outcome = Outcome("terminated", "terminate received")
        except* TimeoutError:
            self._outcome = Outcome("failed", f"task deadline of {self.cfg.task_deadline_s:g} s passed")
            await self._status("failed", self._outcome.detail)
        except* Exception as eg:  # a bug or a browser crash: end the task, say why, keep the log
            err = eg.exceptions[0]
            log.exception("computer agent failed", exc_info=err)
            self._outcome = Outcome("failed", f"{type(err).__name__}: {err}")
            await self._status("failed", self._outcome.detail)
        finally:
            if self._naming is not None:
                self._naming.cancel()
            t0 = time.monotonic()
            await self.browser.close()
            await sub.close()
            self.emit("browser_closed", agent=self.id, close_ms=round((time.monotonic() - t0) * 1000),
                      chromium_left=len(self.browser.processes()))
        out = self._outcome or Outcome("failed", "stopped")
        self.emit("agent_finished", agent=self.id, status=out.status, detail=out.detail)
        return out

    async def _loop(self) -> None:
        warm = asyncio.create_task(self.llm.warm(mapper.SYSTEM))  # overlaps the browser start and page load
        try:
            await self._drive()
        finally:
            warm.cancel()

    async def _drive(self) -> None:
        page = await self.browser.start()
        page.set_default_timeout(self.cfg.action_timeout_ms)
        if not await self._goto(page):
            return
        while self._outcome is None:
            view = await self._perceive(page)
            await self._on_view(view)
            await self._publish_announcements()
            await self._take_messages(page, view)
            if self._outcome is None and not self._wake.is_set():
                await self._advance(page, view)
            if self._outcome is None:
                await self._wait()

    async def _perceive(self, page) -> pg.PageView:
        """Read the page; a read that races a navigation is retried once it has loaded."""
        from playwright.async_api import Error as PlaywrightError

        for _ in range(20):
            try:
                return await pg.perceive(page)
            except PlaywrightError as e:  # "Execution context was destroyed": the page is changing
                log.debug("perceive retry: %s", str(e).splitlines()[0])
                await page.wait_for_load_state("load", timeout=self.cfg.page_load_timeout_ms)
        return await pg.perceive(page)

    async def _wait(self) -> None:
        if time.monotonic() - self._state.since > self.cfg.step_deadline_s:
            self._outcome = Outcome("failed", f"no progress on this page for {self.cfg.step_deadline_s:g} s")
            await self._status("failed", self._outcome.detail)
            return
        try:
            await asyncio.wait_for(self._wake.wait(), self.cfg.poll_ms / 1000)
        except TimeoutError:
            pass
        self._wake.clear()

    async def _goto(self, page) -> bool:
        """Load the task's URL; one retry. False (and ``failed``) when it does not load."""
        from playwright.async_api import Error as PlaywrightError

        for attempt in (1, 2):
            try:
                await page.goto(self.url, timeout=self.cfg.page_load_timeout_ms)
                self.emit("page_loaded", agent=self.id, url=page.url, attempt=attempt)
                return True
            except PlaywrightError as e:
                reason = str(e).splitlines()[0]
                self.emit("page_load_failed", agent=self.id, url=self.url, attempt=attempt, reason=reason)
        await self._send(FillError(field="page", reason=f"the form at {self.url} did not load: {reason}"))
        self._outcome = Outcome("failed", f"page did not load: {reason}")
        await self._status("failed", self._outcome.detail)
        return False

    # ---- perceive ----------------------------------------------------------------------------------

    async def _on_view(self, view: pg.PageView) -> None:
        if view.signature != self._state.signature:
            self._state = _State(view.signature)
            self._ready_sent = False
            self.emit("page_state", agent=self.id, url=view.url, title=view.title,
                      fields=[f.ident for f in view.live_fields])
        unnamed = fb.unnamed(self.book, view.live_fields)
        if unnamed and (self._naming is None or self._naming.done()):
            self.book = fb.start_naming(self.book, unnamed)
            self._naming = asyncio.create_task(self._name(view, list(unnamed)))
            await self._status("working", f"reading the page: {len(unnamed)} new field(s)")
        # after a button press, the page's verdict (e.g. server-side validation): errors for our values
        self.book, errors = fb.see(self.book, view)
        for err in errors:
            await self._send(err)

    async def _name(self, view: pg.PageView, fields: list[pg.FieldView]) -> None:
        """Background task: name ``fields`` (page names at once, the LLM's as they stream) and
        announce them in page order as soon as every field before them is named."""
        t0 = time.monotonic()
        named: dict[int, FieldSpec] = {}
        specs: list[FieldSpec] = []  # announced, in page order

        def on_name(i: int, name: str, source: str) -> None:
            f = fields[i]
            self.book, named[i] = fb.name(self.book, f, name)
            self.emit("field_named", agent=self.id, ident=f.ident, label=f.label, name=named[i].name, source=source,
                      ms=round((time.monotonic() - t0) * 1000))
            while len(specs) in named:
                specs.append(named[len(specs)])
                if self._phone_started:
                    self.book = fb.queue_announcement(self.book, specs[-1])
            self._wake.set()

        await mapper.name_fields(self.llm, fields, self.max_tokens, on_name)
        self.book = fb.done_naming(self.book)
        if not self._phone_started:
            await self._launch(view, fields, specs)
        self._wake.set()

    async def _launch(self, view: pg.PageView, fields: list[pg.FieldView], specs: list[FieldSpec]) -> None:
        """Autonomous launch: the LLM decides whether to call the phone agent."""
        try:
            d = await decide(self.llm, self.task, {}, view, fields)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="launch", error=str(e))
            self._outcome = Outcome("failed", f"launch decision failed: {e}")
            await self._status("failed", self._outcome.detail)
            return
        self.emit("decision", agent=self.id, what="launch", tool=d.tool, argument=d.argument)
        if d.tool == "initiate_phone_call_agent":
            self._phone_started = True
            await self._send(InitiatePhoneCallAgent(purpose=d.argument, required_info=tuple(specs)))
        else:
            self._outcome = Outcome("not_submitted", f"the agent finished without a call: {d.argument}")
            await self._status("completed", self._outcome.detail)

    async def _publish_announcements(self) -> None:
        self.book, specs = fb.take_announcements(self.book)
        if specs:
            await self._send(NeedInfo(fields=specs))

    # ---- act on messages ---------------------------------------------------------------------------

    async def _take_messages(self, page, view: pg.PageView) -> None:
        while self._inbox.items and self._outcome is None:
            env = self._inbox.items.pop(0)
            match env.payload:
                case InfoCollected():
                    await self._on_info(page, view, env)
                case SubmitAuthorized():
                    self._authorized = True
                    self.emit("decision", agent=self.id, what="submit_authorized_received")
                case Interrupt(reason=reason):
                    self._authorized = False
                    self.emit("decision", agent=self.id, what="authorisation_withdrawn", reason=reason)
                case TaskCompleted(summary=summary):
                    self._outcome = Outcome("not_submitted", summary or "the phone agent completed the task")
                case StatusUpdate(state="canceled" | "rejected" as state, message=message):
                    self._outcome = Outcome("not_submitted", message or f"the phone agent reported {state}")
                case _:
                    pass  # anything else (need_info echoes, acks, broadcasts) is not for this agent to act on

    async def _on_info(self, page, view: pg.PageView, env: Envelope) -> None:
        p = env.payload
        if fb.get(self.book, p.field) is None:
            await self._send(FillError(field=p.field, reason="the form has no such field"))
            return
        self.book = fb.collect(self.book, p, env.ts)
        self._ready_sent = False
        live = {f.ident: f for f in view.live_fields}
        f = live.get(fb.entry(self.book, p.field).view.ident)
        if f is None:
            self.emit("fill_deferred", agent=self.id, field=p.field, why="not on the page now")
            return
        await self._fill(page, p.field, f)

    async def _fill(self, page, name: str, f: pg.FieldView) -> None:
        e = fb.entry(self.book, name)
        value = e.value
        if value is None:
            return
        t0 = time.monotonic()
        if e.skipped:
            got, msg = "", ""
        else:
            try:
                got, msg = await pg.fill(page, f, value, self.cfg.action_timeout_ms)
            except pg.FillProblem as problem:
                self.emit("fill", agent=self.id, field=name, value=value, problem=problem.kind, reason=problem.reason)
                self.book, reply = fb.refused(self.book, name, problem)
                await self._send(reply)
                return
        read_ms = now_ms()
        self._wake.set()  # re-read the page now: filling may reveal fields
        self.book, reply = fb.read_back(self.book, name, f, got, msg)
        match reply:
            case FormatInvalid():
                self.emit("fill", agent=self.id, field=name, value=value, read_back=got, invalid=msg)
            case FillError():
                self.emit("fill", agent=self.id, field=name, value=value, read_back=got, mismatch=True)
            case _:
                lag = read_ms - e.confirmed_ts if e.confirmed_ts else None
                self.emit("fill", agent=self.id, field=name, value=value, read_back=got, confirmed=e.confirmed,
                          fill_ms=round((time.monotonic() - t0) * 1000), fill_lag_ms=lag)
        if reply is not None:
            await self._send(reply)

    # ---- advance -----------------------------------------------------------------------------------

    async def _advance(self, page, view: pg.PageView) -> None:
        if self._naming is not None and not self._naming.done():
            return
        pending = False
        for f in view.live_fields:
            name = fb.name_of(self.book, f)
            if name is None:
                return  # not named yet
            if fb.needs_fill(self.book, name, f):
                await self._fill(page, name, f)
            pending = fb.pending(self.book, name, f) or pending
        if pending or self.book.announce:
            return
        buttons = [b for b in view.buttons if b.role != "avoid"]
        step = next((b for b in buttons if b.role == "step"), None)
        final = next((b for b in buttons if b.role == "final"), None)
        if step is not None:
            self.emit("decision", agent=self.id, what="press_step_button", button=step.text)
            await self._status("working", f"all fields on this page are filled; pressing {step.text!r}")
            await self._press(page, step)
        elif final is not None and self._authorized:
            self.emit("decision", agent=self.id, what="press_final_submit", button=final.text)
            await self._status("working", f"submitting the form ({final.text!r})")
            submitted_at = now_ms()
            await self._press(page, final)
            after = await self._perceive(page)
            if any(f.error for f in after.live_fields) or after.signature == view.signature:
                self._authorized = False  # corrections needed: ask for a fresh authorisation
                self.emit("decision", agent=self.id, what="submit_rejected_by_page")
                return
            confirmation = after.text[:300]
            self._outcome = Outcome("submitted", confirmation, submitted_at)
            await self._send(Submitted(confirmation=confirmation))
            await self._status("completed", "the form was submitted")
        elif final is not None and not self._ready_sent:
            self._ready_sent = True
            self.emit("decision", agent=self.id, what="await_authorisation", button=final.text)
            await self._status("auth-required", f"ready to submit ({final.text}). {fb.summary(self.book)}")
        elif final is None and step is None and not self._ready_sent:
            self._ready_sent = True
            self.emit("decision", agent=self.id, what="no_button", buttons=[b.text for b in view.buttons])

    async def _press(self, page, button: pg.ButtonView) -> None:
        from playwright.async_api import Error as PlaywrightError

        loc = pg.locate(page, button)
        self.book = fb.pressed(self.book)
        try:
            # click() waits for a navigation it starts to commit; then wait for the new page's load
            await loc.click(timeout=self.cfg.page_load_timeout_ms)
            await page.wait_for_load_state("load", timeout=self.cfg.page_load_timeout_ms)
        except PlaywrightError as e:
            self.emit("press_failed", agent=self.id, button=button.text, reason=str(e).splitlines()[0])
        self._wake.set()

    # ---- bus ---------------------------------------------------------------------------------------

    async def _send(self, payload: Payload) -> None:
        env = Envelope.new(payload, sender=self.id, recipient=self.phone_id, task_id=self.task_id)
        self.emit("bus_out", agent=self.id, type=env.type, payload=env.payload.model_dump())
        await self.bus.publish(env)

    async def _status(self, state: str, message: str) -> None:
        await self._send(StatusUpdate(state=state, message=message))
