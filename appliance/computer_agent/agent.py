"""The computer agent: perceive → name new fields (LLM) → fill what arrives → verify → advance.

One task = one URL in one headless Chromium. The loop, each turn (woken by a bus
message, by the field-naming task, or every ``forms.poll_ms``):

1. **Perceive** the page (:func:`page.perceive`, one ``evaluate``). A new *page state*
   (URL path + set of live fields) starts a background naming task for the fields not
   seen before (:mod:`mapper`); each named field is announced with ``need_info`` as soon
   as its name streams out. Errors the page shows for values the agent put in (server-side
   validation after Next or submit, the browser's own checks) become ``fill_error{field,
   reason}`` with the page's own words. Password fields are never named nor filled.
2. **Take messages** at this safe point, never in the middle of an action:
   ``info_collected`` is filled at once (confirmed or not) and read back → ``field_filled``
   (confirmed values) / ``format_invalid{expected, got, candidates}`` / ``fill_error{reason}``;
   ``submit_authorized`` from the phone agent (or, during a review, the person's page) arms
   the final submit; ``interrupt`` disarms it; ``terminate``
   stops everything (browser closed, all its processes gone).
3. **Advance** when every live field is named, answered, confirmed and valid: a step
   button (Next/Continue) is pressed freely; any other submit button counts as the *final*
   submit and is pressed only after ``submit_authorized`` — until then the agent says it is
   ready with ``status_update{state: "auth-required"}``.

**The task** (:mod:`~appliance.computer_agent.task`): when the person asked for the form to
be filled but not submitted, the final submit is never pressed; with every field done the
agent reports ``status_update{review}`` ("filled, waiting for your review") and the task
stays in *review*: the browser and the preview stay up (the call may end) until the
person submits — from the preview, or with ``submit_authorized`` from their page, which
the agent then presses —, cancels (``terminate``), or ``forms.review_timeout_s`` passes.

**After a press** (:mod:`~appliance.computer_agent.verdict`) the agent reads the page until
it answers: ``submitted`` is reported only once the page shows the result (a confirmation
view or a new page), never on the click; refused values are re-asked with the page's own
message; another step is filled like the first.

**Never stuck in silence.** A widget no strategy of its :data:`widgets.LADDERS` can operate
(each try on a fresh reading of the field), no control to go on or send, a press the page
does not answer, an error of the page's that belongs to no field, a captcha or a password:
the agent gives up on that step — a ``gave_up`` event in the recording and a
``step_failed{problem, reason, advice, field?}`` that the phone agent says at once —, once
per page state; a field it gave up on is the person's to set (in the preview or by typing).

The LLM is never between a confirmed value and its fill (what keeps ``fill_lag_ms`` low):
it only names fields, once per page state, and (autonomous launch) decides whether to
call the phone agent. Page text is data: it reaches the LLM only as field labels (and, for
the launch decision, as an excerpt marked as data), and no LLM answer can press a button.
Every browser action is counted by kind (:mod:`~appliance.computer_agent.actions`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from appliance.bus import Bus, Envelope, now_ms
from appliance.bus.inbox import AgentInbox, Terminated
from appliance.computer_agent import fieldbook, mapper, takeover, verdict, widgets
from appliance.computer_agent.actions import Actions
from appliance.computer_agent.browser import Browser, Har
from appliance.computer_agent.decide import decide
from appliance.computer_agent.page import (
    ADD_ITEM_BUTTON,
    ButtonView,
    FieldView,
    FillProblem,
    PageDriver,
    PageView,
    PlaywrightDriver,
)
from appliance.computer_agent.preview import Preview
from appliance.computer_agent.task import read_task
from appliance.config import BrowserConfig, FormsConfig
from appliance.llm.base import LLM, LLMError
from appliance.protocol import (
    AddItem,
    Emit,
    FieldSpec,
    FillError,
    FormatInvalid,
    InfoCollected,
    InitiatePhoneCallAgent,
    Interrupt,
    ItemAddable,
    NeedInfo,
    Payload,
    StatusUpdate,
    StepFailed,
    SubmitAuthorized,
    Submitted,
    TaskCompleted,
)
from appliance.protocol.events import ComputerStatus

log = logging.getLogger(__name__)

#: A page state that is done but offers no control is given up on after this long (s):
#: fields may still be appearing.
SETTLE_S = 1.0
#: Presses of a step button with nothing changed and no new value before the agent gives up.
MAX_STEP_PRESSES = 2
#: How long a button may stay covered (an open popup over it) before the popup is dismissed (ms).
COVERED_WAIT_MS = 1500
#: What a click on an empty part of the page does to an open popup (date pickers close on a
#: mousedown outside them), without pressing anything: the focus leaves the field too.
DISMISS_JS = (
    "() => { if (document.activeElement) document.activeElement.blur();"
    " document.body.dispatchEvent(new MouseEvent('mousedown', {bubbles: true})); }"
)
#: Items the person may ask to add ("add a second passenger") on one page state.
MAX_ADDED_ITEMS = 5
#: New browsers started in one task after Chromium died under it (then the task fails).
MAX_BROWSER_RESTARTS = 2


@dataclass
class Outcome:
    """How a task ended: ``status`` is ``submitted``, ``not_submitted`` (the person declined,
    the review ended without a submit, or the task was completed without submitting),
    ``terminated`` or ``failed``; ``detail`` says why or what the page confirmed;
    ``actions``: browser actions performed, by kind."""

    status: ComputerStatus
    detail: str = ""
    submitted_at_ms: int | None = None
    actions: dict[str, int] = field(default_factory=dict)


@dataclass
class _State:
    signature: tuple = ()
    since: float = field(default_factory=time.monotonic)
    presses: int = 0  # step presses in this state since the last new value
    gave_up: set = field(default_factory=set)  # give-ups already sent in this state (see ComputerAgent._give_up)
    tries: int = 0  # new values and authorisations in this state: a give-up may be said again after one
    skipped: tuple = ()  # the elements perception last skipped in this state (logged when it changes)
    added: int = 0  # items added at the person's request in this state (bounded by MAX_ADDED_ITEMS)


@dataclass
class _Review:
    view: PageView  # the page as the person is to review it
    until: float  # monotonic deadline


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
        task: the task in the person's words: whether to submit (:func:`task.read_task`) and,
            for the autonomous decision, what the call is for.
        browser_cfg: the ``browser`` section (Chromium path, network); none given: loopback only.
        browser: the browser to drive (tests pass a stand-in); by default a headless Chromium
            as ``browser_cfg`` says.
        driver: reads and operates the browser's page (tests pass a stand-in);
            by default Playwright's.
        preview: the person's live picture of the page (attached once the browser starts).
        har: the pages, recorded into a HAR or served from one (:class:`~appliance.computer_agent.browser.Har`;
            with the default browser only).
        takeover: what the agent before this one left on the task's stream (a pool task taken
            over from a worker that died: :mod:`~appliance.computer_agent.takeover`); None: a
            new task.
    """

    def __init__(
        self,
        cfg: FormsConfig,
        bus: Bus,
        llm: LLM,
        url: str,
        *,
        task_id: str,
        emit: Emit,
        autonomous: bool = False,
        task: str = "",
        agent_id: str = "computer",
        phone_id: str = "phone",
        map_max_tokens: int | None = None,
        browser_cfg: BrowserConfig | None = None,
        browser: Browser | None = None,
        driver: PageDriver | None = None,
        preview: Preview | None = None,
        takeover: takeover.Takeover | None = None,
        har: Har | None = None,
    ):
        self.cfg, self.bus, self.llm, self.url = cfg, bus, llm, url
        self.task_id, self.emit, self.autonomous = task_id, emit, autonomous
        self.task = task or f"Fill in the web form at {url} for the person and submit it once they allow it."
        self.intent = read_task(self.task)
        self.id, self.phone_id = agent_id, phone_id
        self.max_tokens = map_max_tokens or cfg.map_max_tokens
        self.browser = browser or Browser(browser_cfg or BrowserConfig(network="loopback"), har=har)
        self.driver = driver or PlaywrightDriver()
        self.preview = preview
        self.actions = Actions()
        self.book = fieldbook.FieldBook()
        self._wake = asyncio.Event()
        self._inbox = AgentInbox(self.id, emit, self._wake)
        self._state = _State()
        self._naming: asyncio.Task | None = None
        self._phone_started = not autonomous
        self._authorized = False
        self._auth_id = ""  # the envelope id of the go-ahead that armed the submit
        self.takeover = takeover
        self._taken_names = frozenset(s.name for s in takeover.fields) if takeover else frozenset()
        self._carried: list[Envelope] = []  # values for taken-over fields whose page is not open yet
        self._unknown_press = False  # the agent before this one pressed the final submit and died before its answer
        self._started_ms = now_ms()  # a go-ahead from before this is for a page that is gone
        self._ready_sent = False
        self._review: _Review | None = None
        self._refusals: dict[str, tuple[str, str]] = {}  # field → (value, refusal) the page last gave
        self._added_for_task = 0  # groups added because the task names more people (TaskIntent.others)
        self._outcome: Outcome | None = None

    # ---- lifecycle ---------------------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Run the task to its end. Never raises for page or LLM trouble (→ ``failed``);
        cancelling the task closes the browser too."""
        sub = self.bus.subscribe(self.id)
        self.emit(
            "agent_started",
            agent=self.id,
            url=self.url,
            autonomous=self.autonomous,
            submit=self.intent.submit,
            task_words=self.intent.why or None,
            task=self.task,
        )
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
        except* Exception as eg:  # a bug or a browser crash: end the task; the person hears one plain sentence
            err = eg.exceptions[0]
            log.exception("computer agent failed", exc_info=err)
            self._outcome = Outcome("failed", f"{type(err).__name__}: {err}")  # the log and the recording only
            self.emit("internal_error", agent=self.id, error=self._outcome.detail)
            await self._status("failed", verdict.INTERNAL_FAILURE)
        finally:
            if self._naming is not None:
                self._naming.cancel()
            if self.preview is not None:
                await self.preview.detach()
            t0 = time.monotonic()
            await self.browser.close()
            await sub.close()
            self.emit(
                "browser_closed",
                agent=self.id,
                close_ms=round((time.monotonic() - t0) * 1000),
                chromium_left=len(self.browser.processes()),
            )
        out = self._outcome or Outcome("failed", "stopped")
        out.actions = dict(self.actions.counts)
        self.emit("agent_finished", agent=self.id, status=out.status, detail=out.detail, actions=out.actions)
        return out

    async def _loop(self) -> None:
        if self.takeover is not None and await self._take_over():
            return
        warm = asyncio.create_task(self.llm.warm(mapper.SYSTEM))  # overlaps the browser start and page load
        try:
            for restarts in range(MAX_BROWSER_RESTARTS + 1):
                try:
                    await self._drive()
                    return
                except Exception:
                    if self.browser.lost is None or restarts == MAX_BROWSER_RESTARTS:
                        raise
                    await self._reopen(self.browser.lost, restarts + 1)
        finally:
            warm.cancel()

    async def _reopen(self, why: str, restart: int) -> None:
        """Chromium died under the task (``why``): the phone agent hears of it
        (``fill_error{field: "page", recovering: true}``: nothing for the person to do), what is
        left of the browser is killed, and the next :meth:`_drive` opens the form in a new one.
        The book keeps every field's name and every value the phone agent sent, with its
        confirmation (:func:`fieldbook.reopened`), so each is put in again without asking the
        person; the authorisation is asked for again, since its page is gone."""
        self.emit(
            "browser_lost",
            agent=self.id,
            reason=why,
            restart=restart,
            values=[e.spec.name for e in self.book.entries if e.value is not None],
        )
        await self._send(FillError(field="page", reason=f"the browser stopped ({why})", recovering=True))
        if self._naming is not None:
            self._naming.cancel()
            await asyncio.wait([self._naming])
            self._naming = None
        if self.preview is not None:
            await self.preview.detach()
        await self.browser.close()
        self.book = fieldbook.reopened(self.book)
        self._state = _State()
        self._authorized = self._ready_sent = False
        self._review = None

    async def _take_over(self) -> bool:
        """Start a task taken over (:attr:`takeover`): True when it is over already (the page
        confirmed the earlier agent's submission). Else the phone agent hears that the form is
        opened again with every value (``fill_error{field: "page", recovering: true}``, one
        sentence to the person); a final submit pressed with no answer read (the task's submit
        mark) is told once the page is open (:meth:`_drive`).

        Raises:
            BusError: the submit mark cannot be read.
        """
        t = self.takeover
        self._unknown_press = t.submitted is None and takeover.pressed_unanswered(
            await self.bus.read_mark(takeover.SUBMIT_MARK)
        )
        self.emit(
            "task_taken_over",
            agent=self.id,
            fields=[s.name for s in t.fields],
            submitted=t.submitted is not None,
            unknown_press=self._unknown_press,
        )
        if t.submitted is not None:
            self._outcome = Outcome("submitted", t.submitted)
            return True
        await self._send(FillError(field="page", reason="the form's worker stopped", recovering=True))
        return False

    async def _drive(self) -> None:
        page = await self.browser.start()
        page.set_default_timeout(self.cfg.action_timeout_ms)
        if self.preview is not None:
            await self.preview.attach(page)
        if not await self._goto(page):
            return
        if self._unknown_press:  # before anything else: what the page at the form's address says now
            self._unknown_press = False
            await self._give_up(verdict.unknown_outcome(await self._perceive(page)))
        while self._outcome is None:
            view = await self._perceive(page)
            await self._on_view(view)
            await self._publish_announcements()
            await self._take_messages(page, view)
            if self._outcome is None and not self._wake.is_set():
                await self._advance(page, view)
            if self._outcome is None:
                await self._wait()

    async def _perceive(self, page) -> PageView:
        """Read the page; a read that races a navigation is retried once it has loaded."""
        from playwright.async_api import Error as PlaywrightError

        for _ in range(20):
            try:
                return await self.driver.perceive(page)
            except PlaywrightError as e:  # "Execution context was destroyed": the page is changing
                log.debug("perceive retry: %s", str(e).splitlines()[0])
                await page.wait_for_load_state("load", timeout=self.cfg.page_load_timeout_ms)
        return await self.driver.perceive(page)

    async def _wait(self) -> None:
        if self._review is None and time.monotonic() - self._state.since > self.cfg.step_deadline_s:
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
        self.emit("gave_up", agent=self.id, problem="page", field=None, reason=reason)
        await self._send(FillError(field="page", reason=f"the form at {self.url} did not load: {reason}"))
        self._outcome = Outcome("failed", f"page did not load: {reason}")
        await self._status("failed", self._outcome.detail)
        return False

    # ---- perceive ----------------------------------------------------------------------------------

    @staticmethod
    def _fields(view: PageView) -> list[FieldView]:
        """The live fields the agent works on: never a password (:func:`verdict.secret`), never a
        box that signs the person up for marketing (:func:`verdict.consent` ``optional``: left
        unticked, not asked)."""
        return [f for f in view.live_fields if not verdict.secret(f) and verdict.consent(f) != "optional"]

    async def _on_view(self, view: PageView) -> None:
        if view.signature != self._state.signature:
            self._state = _State(view.signature)
            self._ready_sent = False
            self.emit(
                "page_state", agent=self.id, url=view.url, title=view.title, fields=[f.ident for f in view.live_fields]
            )
        if view.skipped and view.skipped != self._state.skipped:  # logged once per page state and set
            self._state.skipped = view.skipped
            log.info("perception skipped %d element(s): %s", len(view.skipped), view.skipped[:3])
            self.emit("perception_skipped", agent=self.id, skipped=[{"what": w, "error": e} for w, e in view.skipped])
        obstacle = verdict.obstacle(view)
        if obstacle is not None:
            await self._give_up(verdict.obstacle_step(obstacle))
            if obstacle.sign_in:
                return  # the person signs in first: nothing here is ours to name or fill
        if self.takeover is not None:
            self._inherit(view)
        unnamed = fieldbook.unnamed(self.book, self._fields(view))
        if unnamed and (self._naming is None or self._naming.done()):
            self.book = fieldbook.start_naming(self.book, unnamed)
            self._naming = asyncio.create_task(self._name(view, list(unnamed)))
            await self._status("working", f"reading the page: {len(unnamed)} new field(s)")
        # after a button press, the page's verdict (e.g. server-side validation): errors for our values
        self.book, errors = fieldbook.see(self.book, view)
        for err in errors:
            await self._send(err)

    def _inherit(self, view: PageView) -> None:
        """A task taken over: the page's fields the earlier agent announced get their old names
        (:func:`fieldbook.inherit`); the values that came for them before they were on a page
        are taken again, before any newer message."""
        self.book, taken = fieldbook.inherit(self.book, self._fields(view), self.takeover.fields)
        for s in taken:
            self.emit(
                "field_named",
                agent=self.id,
                ident=fieldbook.entry(self.book, s.name).view.ident,
                label=s.label,
                name=s.name,
                source="taken_over",
                ms=0,
            )
        names = {s.name for s in taken}
        back = [env for env in self._carried if env.payload.field in names]
        if back:
            self._carried = [env for env in self._carried if env not in back]
            self._inbox.items[:0] = back

    async def _name(self, view: PageView, fields: list[FieldView]) -> None:
        """Background task: name ``fields`` (page names at once, the LLM's as they stream) and
        announce them in page order as soon as every field before them is named."""
        t0 = time.monotonic()
        named: dict[int, FieldSpec] = {}
        specs: list[FieldSpec] = []  # announced, in page order

        def on_name(i: int, name: str, source: str) -> None:
            f = fields[i]
            self.book, named[i] = fieldbook.name(self.book, f, name, instead=mapper.slug(f.label) if f.label else "")
            self.emit(
                "field_named",
                agent=self.id,
                ident=f.ident,
                label=f.label,
                name=named[i].name,
                source=source,
                ms=round((time.monotonic() - t0) * 1000),
            )
            while len(specs) in named:
                specs.append(named[len(specs)])
                if self._phone_started:
                    self.book = fieldbook.queue_announcement(self.book, specs[-1])
            self._wake.set()

        await mapper.name_fields(self.llm, fields, self.max_tokens, on_name)
        self.book = fieldbook.done_naming(self.book)
        if not self._phone_started:
            await self._launch(view, fields, specs)
        self._wake.set()

    async def _launch(self, view: PageView, fields: list[FieldView], specs: list[FieldSpec]) -> None:
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
        self.book, specs = fieldbook.take_announcements(self.book)
        if specs:
            await self._send(NeedInfo(fields=specs))

    # ---- act on messages ---------------------------------------------------------------------------

    async def _take_messages(self, page, view: PageView) -> None:
        while self._inbox.items and self._outcome is None:
            env = self._inbox.items.pop(0)
            match env.payload:
                case InfoCollected():
                    await self._on_info(page, view, env)
                case SubmitAuthorized() if why := self._not_a_go_ahead(env):
                    self.emit("decision", agent=self.id, what="submit_authorized_ignored", sender=env.sender, why=why)
                case SubmitAuthorized():
                    self._authorized, self._auth_id = True, env.id
                    self._state.tries += 1
                    self.emit("decision", agent=self.id, what="submit_authorized_received", sender=env.sender)
                case AddItem(request=request):
                    await self._add_item(page, view, request)
                case Interrupt(reason=reason):
                    self._authorized = False
                    self.emit("decision", agent=self.id, what="authorisation_withdrawn", reason=reason)
                case TaskCompleted(summary=summary) if self._review is not None:
                    self.emit("decision", agent=self.id, what="call_ended_in_review", summary=summary)
                case TaskCompleted(summary=summary):
                    self._outcome = Outcome("not_submitted", summary or "the phone agent completed the task")
                case StatusUpdate(state="canceled" | "rejected" as state, message=message):
                    self._outcome = Outcome("not_submitted", message or f"the phone agent reported {state}")
                case _:
                    pass  # anything else (need_info echoes, acks, broadcasts) is not for this agent to act on

    def _not_a_go_ahead(self, env: Envelope) -> str:
        """Why ``submit_authorized`` ``env`` arms no submit ('' = it does): one given to an agent
        before this one (a pool task taken over from a worker that died, its stream read from the
        start) was for a page that is gone, so the go-ahead is asked for again; the person's page
        may submit only a form left for their review, any other go-ahead is the phone agent's,
        after the spoken summary."""
        if env.ts < self._started_ms:
            return "given before this agent started"
        if env.sender != self.phone_id and self._review is None:
            return "not in review"
        return ""

    async def _add_item(self, page, view: PageView, request: str) -> None:
        """The person asked for one more item of a repeating group: the page's own "Add another …"
        control is pressed (:data:`~appliance.computer_agent.page.ADD_ITEM_BUTTON`); its new fields
        are named and announced as any new fields are. No such control: ``step_failed``. Any
        authorisation given before no longer holds (the form changed)."""
        add = next((b for b in view.buttons if b.role == "opener" and ADD_ITEM_BUTTON.search(b.text)), None)
        if add is None or self._state.added >= MAX_ADDED_ITEMS:
            self.emit("decision", agent=self.id, what="add_item_refused", request=request)
            await self._give_up(verdict.no_add_control())
            return
        self._state.added += 1
        self._authorized = self._ready_sent = False
        self.emit("decision", agent=self.id, what="add_item_pressed", button=add.text, request=request)
        await self._status("working", f"adding an item: pressing {add.text!r}")
        await self._press(page, add)

    async def _on_info(self, page, view: PageView, env: Envelope) -> None:
        p = env.payload
        if fieldbook.get(self.book, p.field) is None and p.field in self._taken_names:
            self._carried.append(env)  # a taken-over field whose page is not open yet
            self.emit("fill_deferred", agent=self.id, field=p.field, why="its page is not open yet")
            return
        if fieldbook.get(self.book, p.field) is None:
            await self._send(FillError(field=p.field, reason="the form has no such field"))
            return
        self.book = fieldbook.collect(self.book, p, env.ts)
        self._ready_sent = False
        self._state.presses = 0
        self._state.tries += 1
        live = {f.ident: f for f in view.live_fields}
        f = live.get(fieldbook.entry(self.book, p.field).view.ident)
        if f is None:
            self.emit("fill_deferred", agent=self.id, field=p.field, why="not on the page now")
            return
        await self._fill(page, p.field, f)

    async def _fill(self, page, name: str, f: FieldView) -> None:
        e = fieldbook.entry(self.book, name)
        value = e.value
        if value is None:
            return
        t0 = time.monotonic()
        if e.skipped:
            got, msg = "", ""
        else:
            read = await self._operate(page, name, f, value)
            if read is None:
                return
            got, msg, f = read
        read_ms = now_ms()
        self._wake.set()  # re-read the page now: filling may reveal fields
        self.book, reply = fieldbook.read_back(self.book, name, f, got, msg)
        if isinstance(reply, FormatInvalid | FillError):
            refusal = (str(value), msg or str(got))
            if self._refusals.get(name) == refusal:  # the same refusal of the same value: the person's to set
                self.book = fieldbook.hand_over(self.book, name, f"the page refused {value!r} twice")
                self.emit("fill", agent=self.id, field=name, value=value, read_back=got, refused_twice=True)
                await self._give_up(verdict.refused_twice(name, f.label, msg))
                return
            self._refusals[name] = refusal
        match reply:
            case FormatInvalid():
                self.emit("fill", agent=self.id, field=name, value=value, read_back=got, invalid=msg)
            case FillError():
                self.emit("fill", agent=self.id, field=name, value=value, read_back=got, mismatch=True)
            case _:
                lag = read_ms - e.confirmed_ts if e.confirmed_ts else None
                self.emit(
                    "fill",
                    agent=self.id,
                    field=name,
                    value=value,
                    read_back=got,
                    confirmed=e.confirmed,
                    fill_ms=round((time.monotonic() - t0) * 1000),
                    fill_lag_ms=lag,
                )
        if reply is not None:
            await self._send(reply)

    async def _operate(self, page, name: str, f: FieldView, value) -> tuple[object, str, FieldView] | None:
        """Put ``value`` into ``f`` with each strategy of its widget's ladder in turn (each
        retry on a fresh reading of the field) until one operates it and the page keeps the
        value (a validation message or another value read back tries the next strategy: a
        format refusal is fixed by typing again, never by asking the person). Returns ``(read back,
        validation message, the field's view)``, or None when the page refused the value
        (sent as ``format_invalid``/``fill_error``) or no strategy could operate the widget
        (the field is handed over to the person: ``step_failed``)."""
        ladder = widgets.LADDERS.get(f.widget, ())
        problem: FillProblem | None = None
        for attempt, strategy in enumerate(ladder):
            if attempt:
                fresh = await self._fresh(page, f)
                if fresh is None:  # gone (re-rendered, or another answer hid it): filled when it is back
                    self.emit("fill_deferred", agent=self.id, field=name, why="not on the page now")
                    return None
                f = fresh
                self.emit(
                    "fill_retry",
                    agent=self.id,
                    field=name,
                    attempt=attempt + 1,
                    strategy=strategy.__name__,
                    after=problem.reason if problem else "",
                )
            if self.preview is not None:
                await self.preview.show_focus(f.label, self.driver.locate(page, f))
                self.emit("preview_focus", agent=self.id, field=name, label=f.label, box=self.preview.focus)
            try:
                got, msg = await self.driver.fill(
                    page, f, value, self.cfg.action_timeout_ms, strategy=strategy, actions=self.actions
                )
                await self._snap()
                if (
                    (msg or not widgets.same_value(f, value, got))
                    and attempt + 1 < len(ladder)
                    and ladder[attempt + 1] is not strategy
                ):
                    # the page refused the shape or holds something else: typed another way before the
                    # person hears of it (a mask that formats on keyup, a picker that wants key presses)
                    problem = FillProblem("format", msg or f"the page holds {got!r}")
                    continue
                return got, msg, f
            except FillProblem as p:
                await self._snap()
                self.emit(
                    "fill",
                    agent=self.id,
                    field=name,
                    value=value,
                    problem=p.kind,
                    reason=p.reason,
                    strategy=strategy.__name__,
                )
                if p.kind == "format":  # the value does not fit: the person is asked again
                    self.book, reply = fieldbook.refused(self.book, name, p)
                    await self._send(reply)
                    return None
                problem = p
        if problem is None:  # no strategy for this widget at all
            self.book, reply = fieldbook.refused(
                self.book, name, FillProblem("error", f"no way to operate a {f.widget!r} field")
            )
            await self._send(reply)
            return None
        reason = problem.reason
        self.book = fieldbook.hand_over(self.book, name, reason)
        await self._give_up(verdict.widget_failed(name, f.label, reason))
        return None

    async def _fresh(self, page, f: FieldView) -> FieldView | None:
        """``f`` read again (its key), or None when it is not on the page any more."""
        view = await self._perceive(page)
        return next((g for g in view.live_fields if fieldbook.key(g) == fieldbook.key(f)), None)

    async def _snap(self) -> None:
        if self.preview is not None:
            await self.preview.snap()

    # ---- advance -----------------------------------------------------------------------------------

    async def _advance(self, page, view: PageView) -> None:
        if self._naming is not None and not self._naming.done():
            return
        if self._review is not None:
            await self._in_review(page, view)
            return
        obstacle = verdict.obstacle(view)
        if obstacle is not None and obstacle.sign_in:
            return  # told once (_on_view); the page changes when the person has signed in
        pending = False
        for f in self._fields(view):
            name = fieldbook.name_of(self.book, f)
            if name is None:
                return  # not named yet
            if fieldbook.needs_fill(self.book, name, f):
                await self._fill(page, name, f)
            pending = fieldbook.pending(self.book, name, f) or pending
        pending = pending or any(verdict.secret(f) and f.required and f.empty for f in view.live_fields)
        if pending or self.book.announce:
            return
        buttons = [b for b in view.buttons if b.role != "avoid"]
        step = next((b for b in buttons if b.role == "step"), None)
        final = next((b for b in buttons if b.role == "final"), None)
        opener = next((b for b in buttons if b.role == "opener" and not ADD_ITEM_BUTTON.search(b.text)), None)
        if step is not None:
            if self._state.presses >= MAX_STEP_PRESSES:
                await self._give_up(verdict.page_error(view.alerts[0]) if view.alerts else verdict.no_result(step.text))
                return
            self._state.presses += 1
            self.emit("decision", agent=self.id, what="press_step_button", button=step.text)
            await self._status("working", f"all fields on this page are filled; pressing {step.text!r}")
            await self._press(page, step)
        elif final is None and opener is not None and self._state.presses < MAX_STEP_PRESSES:
            # the form is behind a button ("Start now", "Request a callback"): opened as a person would;
            # an opener never submits (ButtonView.role), and one with a final button in view is not pressed
            self._state.presses += 1
            self.emit("decision", agent=self.id, what="press_opener_button", button=opener.text)
            await self._status("working", f"opening the form: pressing {opener.text!r}")
            await self._press(page, opener)
        elif not self.intent.submit:
            await self._start_review(view, final)
        elif final is not None and self._authorized:
            await self._submit(page, view, final, by="the agent, as the person allowed")
        elif final is not None and (add := self._add_for_task(buttons)) is not None:
            # the task names more people than there are groups yet ("me and my partner"): one more group
            self._added_for_task += 1
            self.emit("decision", agent=self.id, what="add_item_pressed", button=add.text, request=self.task)
            await self._press(page, add)
        elif final is not None and not self._ready_sent:
            self._ready_sent = True
            add = next((b for b in buttons if b.role == "opener" and ADD_ITEM_BUTTON.search(b.text)), None)
            if add is not None and self._state.added < MAX_ADDED_ITEMS:  # the summary can offer one more
                await self._send(ItemAddable(what=ADD_ITEM_BUTTON.sub("", add.text).strip(" .+") or "item"))
            self.emit("decision", agent=self.id, what="await_authorisation", button=final.text)
            await self._status("auth-required", f"ready to submit ({final.text}). {fieldbook.summary(self.book)}")
        elif final is None and time.monotonic() - self._state.since >= SETTLE_S:
            await self._give_up(verdict.no_control(view))

    def _add_for_task(self, buttons: list[ButtonView]) -> ButtonView | None:
        """The page's "Add another …" control, while the task names more people than this page
        task has had groups added for (:attr:`TaskIntent.others`); else None."""
        if self._added_for_task >= min(self.intent.others, MAX_ADDED_ITEMS):
            return None
        return next((b for b in buttons if b.role == "opener" and ADD_ITEM_BUTTON.search(b.text)), None)

    async def _submit(self, page, view: PageView, final: ButtonView, *, by: str) -> None:
        """Press the final submit and read the page's answer: ``submitted`` only on a result.

        One go-ahead, one press, whichever process holds the task: the task's submit mark
        (:data:`~appliance.computer_agent.takeover.SUBMIT_MARK`, swapped atomically on the bus)
        holds ``"<go-ahead id> pressed"`` from just before the press until the answer is read
        (then ``answered``); a go-ahead whose id the mark already holds (an envelope delivered
        again, two workers on one task) presses nothing."""
        self._authorized = False  # one authorisation, one press
        before = await self.bus.swap_mark(takeover.SUBMIT_MARK, f"{self._auth_id} pressed")
        if before is not None and before.split(" ")[0] == self._auth_id:
            self.emit("decision", agent=self.id, what="submit_guarded", button=final.text, mark=before)
            return
        self.emit("decision", agent=self.id, what="press_final_submit", button=final.text, by=by)
        await self._status("working", f"submitting the form ({final.text!r})")
        submitted_at = now_ms()
        await self._press(page, final)
        v, after = await self._answer(page, view)
        if v.kind != "result":  # the outcome is known: a takeover needs not warn of an unknown one
            await self.bus.swap_mark(takeover.SUBMIT_MARK, f"{self._auth_id} answered")
        self.emit("decision", agent=self.id, what="submit_answer", verdict=v.kind, text=v.text)
        match v.kind:
            case "result":
                self._outcome = Outcome("submitted", v.text, submitted_at)
                await self._send(Submitted(confirmation=v.text))
                await self._status("completed", "the form was submitted")
            case "refused" if not self._ours(after):
                self._ready_sent = True  # not asked again until the page or a value changes
                await self._give_up(verdict.page_error(v.text))
            case "refused" if fieldbook.refused_again(self.book, self._ours(after)):
                self._ready_sent = True  # the person confirmed the refused value again: say the page's words
                await self._give_up(verdict.page_error(v.text))
            case "refused":
                pass  # each error on a value of ours goes back to the phone agent (fieldbook.see), asked again
            case "moved":
                pass  # another step: filled like the first
            case "unreachable":
                self._ready_sent = True
                await self._give_up(verdict.unreachable(final.text, v.text))
            case _:
                self._ready_sent = True
                await self._give_up(verdict.no_result(final.text))

    def _ours(self, view: PageView) -> list[FieldView]:
        """The fields showing an error about a value the agent put in."""
        out = []
        for f in view.live_fields:
            name = fieldbook.name_of(self.book, f) if f.error else None
            if name is not None and fieldbook.entry(self.book, name).value is not None:
                out.append(f)
        return out

    async def _answer(self, page, before: PageView) -> tuple[verdict.Verdict, PageView]:
        """Read the page until it answers a press (``forms.page_load_timeout_ms`` at most)."""
        deadline = time.monotonic() + self.cfg.page_load_timeout_ms / 1000
        while True:
            after = await self._perceive(page)
            v = verdict.after_press(before, after)
            if v.kind != "none" or time.monotonic() > deadline:
                return v, after
            await asyncio.sleep(0.1)

    async def _start_review(self, view: PageView, final: ButtonView | None) -> None:
        """A "don't submit" task with every field done: leave it for the person's review."""
        self._review = _Review(view, time.monotonic() + self.cfg.review_timeout_s)
        self.emit(
            "decision",
            agent=self.id,
            what="review",
            task_words=self.intent.why,
            button=final.text if final else None,
            timeout_s=self.cfg.review_timeout_s,
            summary=fieldbook.summary(self.book),
        )
        await self._status("review", "The form is filled in and waiting for your review")

    async def _in_review(self, page, view: PageView) -> None:
        """Waiting for the person: their submit (in the preview, or authorised from their page), or the time."""
        r = self._review
        final = next((b for b in view.buttons if b.role == "final"), None)
        if self._authorized and final is not None:
            await self._submit(page, view, final, by="the person, from their page")
            if self._outcome is None:
                self._review = _Review(view, r.until)
            return
        if self._authorized:  # the person's Submit, but this page has nothing to press
            self._authorized = False
            await self._give_up(verdict.no_control(view))
        if view.signature != r.view.signature:
            v = verdict.after_press(r.view, view)
            if v.kind == "result":
                self.emit("decision", agent=self.id, what="review_ended", how="submitted_by_person", text=v.text)
                self._outcome = Outcome("submitted", f"submitted by the person: {v.text}", now_ms())
                await self._send(Submitted(confirmation=v.text))
                await self._status("completed", "the person submitted the form")
                return
        if time.monotonic() > r.until:
            self.emit(
                "decision", agent=self.id, what="review_ended", how="timeout", timeout_s=self.cfg.review_timeout_s
            )
            self._outcome = Outcome(
                "not_submitted",
                f"filled in and left for review; nothing was submitted within {self.cfg.review_timeout_s:g} s",
            )
            await self._status("canceled", self._outcome.detail)

    async def _press(self, page, button: ButtonView) -> None:
        from playwright.async_api import Error as PlaywrightError

        loc = self.driver.locate(page, button)
        self.book = fieldbook.pressed(self.book)
        if self.preview is not None:
            await self.preview.show_focus(button.text, loc)
            self.emit("preview_focus", agent=self.id, field=None, label=button.text, box=self.preview.focus)
        try:
            # The last field's popup (a date picker) may open over the button, even after a first
            # look found it clear: leave the field as a person does, look, and once more if covered.
            for _ in range(2):
                await page.evaluate(DISMISS_JS)
                try:
                    await loc.click(trial=True, timeout=COVERED_WAIT_MS)
                    break
                except PlaywrightError:
                    self.emit("decision", agent=self.id, what="dismiss_popup", button=button.text)
            # click() waits for a navigation it starts to commit; then wait for the new page's load
            await loc.click(timeout=self.cfg.page_load_timeout_ms)
            self.actions.add("click")
            await page.wait_for_load_state("load", timeout=self.cfg.page_load_timeout_ms)
        except PlaywrightError as e:
            self.emit("press_failed", agent=self.id, button=button.text, reason=str(e).splitlines()[0])
        await self._snap()
        self._wake.set()

    # ---- giving up, out loud -----------------------------------------------------------------------

    async def _give_up(self, step: StepFailed) -> None:
        """Give up on a step: a ``gave_up`` event and ``step_failed`` to the phone agent, once
        per page state and (problem, field) — for anything but a captcha or a password, once
        more after each new value or authorisation (the person tried again)."""
        key = (step.problem, step.field) + (() if step.problem in ("captcha", "login") else (self._state.tries,))
        if key in self._state.gave_up:
            return
        self._state.gave_up.add(key)
        self.emit(
            "gave_up", agent=self.id, problem=step.problem, field=step.field, reason=step.reason, advice=step.advice
        )
        await self._send(step)

    # ---- bus ---------------------------------------------------------------------------------------

    async def _send(self, payload: Payload) -> None:
        env = Envelope.new(payload, sender=self.id, recipient=self.phone_id, task_id=self.task_id)
        self.emit("bus_out", agent=self.id, type=env.type, payload=env.payload.model_dump())
        await self.bus.publish(env)

    async def _status(self, state: str, message: str) -> None:
        await self._send(StatusUpdate(state=state, message=message))
