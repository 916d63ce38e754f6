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

The LLM is never between a confirmed value and its fill (CONTRACTS.md ``fill_lag_ms``):
it only names fields, once per page state, and (autonomous launch) decides whether to
call the phone agent. Page text is data: it reaches the LLM only as field labels (and, for
the launch decision, as an excerpt marked as data), and no LLM answer can press a button.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from appliance.bus import Bus, Envelope, now_ms
from appliance.protocol import FieldSpec
from appliance.bus.inbox import Inbox, Terminated
from appliance.computer_agent import mapper, page as pg
from appliance.computer_agent.browser import Browser
from appliance.computer_agent.decide import decide
from appliance.config import BrowserConfig, FormsConfig
from appliance.llm.client import LLM, LLMError

log = logging.getLogger(__name__)

Emit = Callable[..., Any]
FieldValue = str | bool | tuple[str, ...]


@dataclass
class Outcome:
    """How a task ended: ``status`` is ``submitted``, ``not_submitted`` (the person declined
    or the task was completed without submitting), ``terminated`` or ``failed``; ``detail``
    says why or what the page confirmed."""

    status: str
    detail: str = ""
    submitted_at_ms: int | None = None


@dataclass
class _Field:
    """One field across readings: its announced spec and what the phone agent sent."""

    spec: FieldSpec
    view: pg.FieldView
    value: FieldValue | None = None
    confirmed: bool = False
    confirmed_ts: int | None = None  # ts (ms) of the info_collected{confirmed: true}
    filled: bool = False  # the page holds ``value`` and shows no error for it
    tried: FieldValue | None = None  # the value last put into the page
    reported_error: str = ""  # the last page error sent as fill_error …
    error_for: FieldValue | None = None  # … and the value it was about

    @property
    def done(self) -> bool:
        if not (self.confirmed and self.filled):
            return False
        return not (self.spec.required and self.value in ("", False, (), None))


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
        browser: the ``browser`` section (Chromium path, network); none given: loopback only.
    """

    def __init__(self, cfg: FormsConfig, bus: Bus, llm: LLM, url: str, *, task_id: str, emit: Emit,
                 autonomous: bool = False, task: str = "", agent_id: str = "computer", phone_id: str = "phone",
                 map_max_tokens: int | None = None, browser: BrowserConfig | None = None):
        self.cfg, self.bus, self.llm, self.url = cfg, bus, llm, url
        self.task_id, self.emit, self.autonomous = task_id, emit, autonomous
        self.task = task or f"Fill in the web form at {url} for the person and submit it once they allow it."
        self.id, self.phone_id = agent_id, phone_id
        self.max_tokens = map_max_tokens or cfg.map_max_tokens
        self.browser = Browser(browser or BrowserConfig(network="loopback"))
        self._fields: dict[str, _Field] = {}  # by spec name
        self._by_ident: dict[tuple[str, str], str] = {}  # (ident, label) → spec name
        self._wake = asyncio.Event()
        self._inbox = Inbox(self.id, emit, self._wake)
        self._state = _State()
        self._naming: asyncio.Task | None = None
        self._in_naming: set[tuple[str, str]] = set()
        self._check_errors = False  # a button was pressed: read the page's verdict on the values
        self._announce: list[FieldSpec] = []
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
        await self._send("fill_error", {"field": "page", "reason": f"the form at {self.url} did not load: {reason}"})
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
        unnamed = [f for f in view.live_fields
                   if (f.ident, f.label) not in self._by_ident and (f.ident, f.label) not in self._in_naming]
        if unnamed and (self._naming is None or self._naming.done()):
            self._in_naming = {(f.ident, f.label) for f in unnamed}
            self._naming = asyncio.create_task(self._name(view, unnamed))
            await self._status("working", f"reading the page: {len(unnamed)} new field(s)")
        for f in view.fields:
            name = self._by_ident.get((f.ident, f.label))
            if name is not None:
                self._fields[name].view = f
        if self._check_errors:
            # The page's verdict after a button press (e.g. server-side validation): every
            # error shown for a value we entered goes back to the phone agent once.
            self._check_errors = False
            for f in view.live_fields:
                name = self._by_ident.get((f.ident, f.label))
                st = self._fields.get(name) if name else None
                if st is None or st.value is None or not f.error:
                    continue
                if (f.error, st.value) != (st.reported_error, st.error_for):
                    st.reported_error, st.error_for = f.error, st.value
                    st.filled = st.confirmed = False
                    await self._send("fill_error", {"field": name, "reason": f.error})

    async def _name(self, view: pg.PageView, fields: list[pg.FieldView]) -> None:
        """Background task: name ``fields`` (page names at once, the LLM's as they stream) and
        announce them in page order as soon as every field before them is named."""
        t0 = time.monotonic()
        named: dict[int, FieldSpec] = {}
        specs: list[FieldSpec] = []  # announced, in page order

        def on_name(i: int, name: str, source: str) -> None:
            f = fields[i]
            unique, n = name, 2
            while unique in self._fields:
                unique, n = f"{name}_{n}", n + 1
            named[i] = _spec(unique, f)
            self._fields[unique] = _Field(named[i], f)
            self._by_ident[(f.ident, f.label)] = unique
            self.emit("field_named", agent=self.id, ident=f.ident, label=f.label, name=unique, source=source,
                      ms=round((time.monotonic() - t0) * 1000))
            while len(specs) in named:
                specs.append(named[len(specs)])
                if self._phone_started:
                    self._announce.append(specs[-1])
            self._wake.set()

        await mapper.name_fields(self.llm, fields, self.max_tokens, on_name)
        self._in_naming = set()
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
            await self._send("initiate_phone_call_agent",
                             {"purpose": d.argument, "required_info": [s.model_dump() for s in specs]})
        else:
            self._outcome = Outcome("not_submitted", f"the agent finished without a call: {d.argument}")
            await self._status("completed", self._outcome.detail)

    async def _publish_announcements(self) -> None:
        if self._announce:
            specs, self._announce = self._announce, []
            await self._send("need_info", {"fields": [s.model_dump() for s in specs]})

    # ---- act on messages ---------------------------------------------------------------------------

    async def _take_messages(self, page, view: pg.PageView) -> None:
        while self._inbox.items and self._outcome is None:
            env = self._inbox.items.pop(0)
            p = env.payload
            if env.type == "info_collected":
                await self._on_info(page, view, env)
            elif env.type == "submit_authorized":
                self._authorized = True
                self.emit("decision", agent=self.id, what="submit_authorized_received")
            elif env.type == "interrupt":
                self._authorized = False
                self.emit("decision", agent=self.id, what="authorisation_withdrawn", reason=p.reason)
            elif env.type == "task_completed":
                self._outcome = Outcome("not_submitted", p.summary or "the phone agent completed the task")
            elif env.type == "status_update" and p.state in ("canceled", "rejected"):
                self._outcome = Outcome("not_submitted", p.message or f"the phone agent reported {p.state}")
            # anything else (need_info echoes, acks, broadcasts) is not for this agent to act on

    async def _on_info(self, page, view: pg.PageView, env: Envelope) -> None:
        p = env.payload
        st = self._fields.get(p.field)
        if st is None:
            await self._send("fill_error", {"field": p.field, "reason": "the form has no such field"})
            return
        value = p.value if not isinstance(p.value, list) else tuple(p.value)
        st.value, st.confirmed = value, p.confirmed
        st.confirmed_ts = env.ts if p.confirmed else None
        self._ready_sent = False
        live = {f.ident: f for f in view.live_fields}
        f = live.get(st.view.ident)
        if f is None:
            self.emit("fill_deferred", agent=self.id, field=p.field, why="not on the page now")
            return
        await self._fill(page, st, f)

    async def _fill(self, page, st: _Field, f: pg.FieldView) -> None:
        name, value = st.spec.name, st.value
        if value is None:
            return
        t0 = time.monotonic()
        st.tried = value
        if value in ("", ()) and not st.spec.required:
            got, msg = "", ""  # an optional field the person skipped
        else:
            try:
                got, msg = await pg.fill(page, f, value, self.cfg.action_timeout_ms)
            except pg.FillProblem as e:
                st.filled = False
                self.emit("fill", agent=self.id, field=name, value=value, problem=e.kind, reason=e.reason)
                if e.kind == "format":
                    await self._send("format_invalid", {"field": name, "expected": e.expected, "got": str(value)})
                else:
                    await self._send("fill_error", {"field": name, "reason": e.reason})
                return
        read_ms = now_ms()
        self._wake.set()  # re-read the page now: filling may reveal fields
        if msg:
            st.filled = False
            expected = st.spec.format_hint or msg
            self.emit("fill", agent=self.id, field=name, value=value, read_back=got, invalid=msg)
            await self._send("format_invalid", {"field": name, "expected": expected, "got": str(value)})
            return
        if not _same(f, value, got):
            st.filled = False
            self.emit("fill", agent=self.id, field=name, value=value, read_back=got, mismatch=True)
            await self._send("fill_error", {"field": name,
                                            "reason": f"the page holds {got!r} after entering {value!r}"})
            return
        st.filled = True
        lag = read_ms - st.confirmed_ts if st.confirmed_ts else None
        self.emit("fill", agent=self.id, field=name, value=value, read_back=got, confirmed=st.confirmed,
                  fill_ms=round((time.monotonic() - t0) * 1000), fill_lag_ms=lag)
        if st.confirmed:
            await self._send("field_filled", {"field": name, "value_read_back": got})

    # ---- advance -----------------------------------------------------------------------------------

    async def _advance(self, page, view: pg.PageView) -> None:
        if self._naming is not None and not self._naming.done():
            return
        live = view.live_fields
        pending = []
        for f in live:
            name = self._by_ident.get((f.ident, f.label))
            if name is None:
                return  # not named yet
            st = self._fields[name]
            if st.value is not None and (st.value != st.tried or (st.filled and not _same(f, st.value, f.value))):
                await self._fill(page, st, f)  # arrived while hidden, or a re-rendered page lost it
            if not st.done or (f.error and st.value == st.error_for):
                pending.append(name)
        if pending or self._announce:
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
            await self._send("submitted", {"confirmation": confirmation})
            await self._status("completed", "the form was submitted")
        elif final is not None and not self._ready_sent:
            self._ready_sent = True
            summary = "; ".join(f"{s.spec.label}: {_say(s.value)}" for s in self._fields.values()
                                if s.value not in (None, "", ()))
            self.emit("decision", agent=self.id, what="await_authorisation", button=final.text)
            await self._status("auth-required", f"ready to submit ({final.text}). {summary}")
        elif final is None and step is None and not self._ready_sent:
            self._ready_sent = True
            self.emit("decision", agent=self.id, what="no_button", buttons=[b.text for b in view.buttons])

    async def _press(self, page, button: pg.ButtonView) -> None:
        from playwright.async_api import Error as PlaywrightError

        loc = page.locator(f'[data-ap-ref="{button.ref}"]')
        self._check_errors = True
        try:
            # click() waits for a navigation it starts to commit; then wait for the new page's load
            await loc.click(timeout=self.cfg.page_load_timeout_ms)
            await page.wait_for_load_state("load", timeout=self.cfg.page_load_timeout_ms)
        except PlaywrightError as e:
            self.emit("press_failed", agent=self.id, button=button.text, reason=str(e).splitlines()[0])
        self._wake.set()

    # ---- bus ---------------------------------------------------------------------------------------

    async def _send(self, type_: str, payload: dict) -> None:
        env = Envelope.new(type_, payload, sender=self.id, recipient=self.phone_id, task_id=self.task_id)
        self.emit("bus_out", agent=self.id, type=type_, payload=payload)
        await self.bus.publish(env)

    async def _status(self, state: str, message: str) -> None:
        await self._send("status_update", {"state": state, "message": message})


def _spec(name: str, f: pg.FieldView) -> FieldSpec:
    hint = f.hint
    if not hint and f.kind == "date":
        hint = "a date, YYYY-MM-DD" + (f" from {f.min}" if f.min else "") + (f" until {f.max}" if f.max else "")
    return FieldSpec(name=name, label=f.label or f.key, type=f.kind, required=f.required, pattern=f.pattern,
                     options=tuple(o.label for o in f.options) if f.options else None, format_hint=hint or None)


def _same(f: pg.FieldView, value: FieldValue, got: object) -> bool:
    """Whether the page holds what was entered (options compare by value or label)."""
    if f.kind == "checkbox":
        return got == value
    if f.options:
        wanted = [value] if isinstance(value, str) else list(value)
        held = [got] if isinstance(got, str) else list(got or ())
        opts = [pg.match_option(f.options, w) for w in wanted]
        return None not in opts and sorted(o.value for o in opts) == sorted(held)
    return str(got) == str(value)


def _say(v: FieldValue | None) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, tuple):
        return ", ".join(v)
    return str(v)
