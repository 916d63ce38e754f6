"""The phone agent: interviews the person one field at a time, never waiting on the browser.

Its audio side is a :class:`Line` — ``say(text)`` and ``hear()`` (the next final
transcript) — so the same agent runs on the WebRTC voice pipeline (a person at the page, or
the simulated person joining over WebRTC) or on a terminal.

The interview, in code (the LLM only answers side questions and, when no option is named
word for word, picks the option the person meant); its state and rules are the pure
:mod:`~appliance.phone_agent.interview`, and this loop only speaks, listens and sends:

* the greeting says whether the call is recorded (``consent``) before the first question;
* fields arrive with ``need_info`` (or ``initiate_phone_call_agent.required_info``) and
  queue in page order; ``format_invalid`` / ``fill_error`` put a field back at the front
  with the reason, which is said before the question (an *explained failure*);
* a given and a family name, or a date's day, month and year fields, are asked in one
  question and read back together; a rejected joint read-back asks each on its own;
* each answer is normalised in code (:mod:`normalise`), sent at once as
  ``info_collected{confirmed: false}`` (the computer agent fills and checks it while the
  value is read back), then read back; a "yes" sends ``confirmed: true``. A yes/no or an
  option said word for word needs no read-back. Where the next step is a plain question
  (not a yes/no), the read-back goes with it — *implicit confirmation*, one exchange
  instead of two: "I have Miller. What is your date of birth?"; an answer to the question
  confirms the value, a "no …" is the read-back's rejection (the question waits), and a
  value once rejected or asked to be spelled is read back on its own;
* a rejected read-back of a name, code, address, user name or e-mail leads to a spelling
  (:mod:`~appliance.phone_agent.spelling`; a correction that is already spelled is taken
  at once); a name the ASR was unsure of (``spell_below_prob``, :meth:`PhoneAgent._unsure`)
  is not read back but asked to be spelled at once ("I'm not sure I heard that right.
  Could you spell …"; a full name part by part); the second request for a spelling adds "or type it in the box on your screen"
  (event ``type_requested``); a spelled value is spelled back. Other kinds read a "no,
  it's …" correction back, and when that led nowhere ask again with the offer of the box
  ("Let's try again. What is your date of birth? Or type it in the box on your
  screen."). A value the person typed (``info_collected{confirmed: true}`` from the page
  or the terminal) ends the field's question at once;
* with nothing left to ask the agent says what is happening (the form is loading, the next
  page is opening) and waits for the computer agent — at such a *step boundary* that is not
  a wait; any other hold of its next utterance counts in ``waits_on_browser``
  (reported as ``phone_waits_on_browser``);
* ``step_failed`` (the computer agent gave up on a step) is said at once — what is wrong and
  what the person can do —, cutting short a wait for an answer so that it is never more than
  a moment after the give-up (within 5 s); its field is handed over to the person (a hold
  reminds them of the advice; after :data:`HANDS_REMINDERS` reminders with nothing
  changing, the call ends unsent: "I'll stop here: …"). Each counts in
  ``explained_failures``, as do a page's refusal said before a question and a failure that
  ends the call;
* ``format_invalid`` with ``candidates`` asks the person to pick one of the page's close
  matches (:mod:`~appliance.phone_agent.candidates`);
* after ``status_update{auth-required}`` it reads a short summary and asks for explicit
  authorisation. After a "yes" it waits ``submit_grace_s`` for a "wait"/"stop"/"no"
  before it sends ``submit_authorized`` (one in that window sends nothing; a later one,
  before the page answered, sends ``interrupt``, which disarms the computer agent's submit);
  "no" ends the task unsent; ``submitted`` → it tells the person what the page answered
  (its reference, spelled) and sends ``task_completed``;
* ``status_update{review}`` (a "don't submit" task, filled): it tells the person the form
  waits for their review in the preview and ends the call; the browser stays up.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from appliance.bus import Bus, Envelope, now_ms
from appliance.bus.inbox import AgentInbox, Terminated
from appliance.llm.client import LLM, LLMError
from appliance.llm.decision import choices
from appliance.phone_agent import candidates, fields, interview, normalise, spelling
from appliance.protocol import (
    Emit,
    FieldSpec,
    FieldValue,
    InfoCollected,
    Interrupt,
    Payload,
    StatusUpdate,
    StepFailed,
    SubmitAuthorized,
    TaskCompleted,
)

log = logging.getLogger(__name__)

#: short: the greeting and the consent notice ran 10.5 s before the first question (bench)
GREETING = "Hello! I'll fill in your web form while we talk."
#: Said when the computer agent's browser died and it opens the form again with every value it had.
REOPENING = (
    "Sorry, the web browser I use for your form stopped. I'm opening the form again and putting back what "
    "you've told me, so there's no need to repeat anything."
)
#: said before a request to spell a name the ASR was unsure of (:meth:`PhoneAgent._unsure`), instead of a read-back
UNSURE = "I'm not sure I heard that right."
FILLERS: dict[interview.Filler, str] = {"opening": "I'm opening the form now.", "working": "One moment, please."}
HOLD_S = 20.0  # a hold longer than this gets a word to the person
#: reminders of a give-up's advice (one each :data:`HOLD_S`) with nothing changing before the call ends
#: unsent: the person is not acting on it (about 2 minutes)
HANDS_REMINDERS = 6
#: holding for the computer agent this long (s) with no word from it, and the call ends unsent:
#: it is gone (its process killed, its browser stuck), and the person would wait for ever
SILENT_S = 180.0
#: while the person is still speaking when an answer's wait runs out, it is looked at again this often (s)
#: (bench: "Are you still there?" cut into an 11 s spelled correction of a passport number)
SPEAKING_POLL_S = 0.5
#: tries at one field (answers that did not parse, side questions, page refusals) before it is given up
ATTEMPTS = 4
#: "wait", "stop", "no" after the yes to submitting
_STOP = re.compile(r"\b(wait|stop|hold on|hang on|cancel|no|don't|do not|not yet)\b", re.I)


def consent_notice(folder: Path | None) -> str:
    """What the person is told about recording before the first question."""
    if folder is None:
        return "This call is not recorded."
    return "This call is recorded, on this appliance only; the page shows where."


class Line(Protocol):
    """The phone agent's audio side as text. The voice pipeline implements it.

    ``person_speaking``: whether the person is speaking now or their turn is still open; a
    wait for an answer does not time out meanwhile. ``heard_words``: the words of the transcript
    :meth:`hear` last returned as the ASR wrote them, each with the ASR's probability for it
    in [0, 1]; empty when there are none (typed text, an engine without them).
    ``heard_resumes``: that transcript began before the bot had said much since the person's
    speech before it (``turn.resumed_speech_ms``): it goes on with the answer before ("… 472,
    [pause] 9183."); False for typed text."""

    person_speaking: bool
    heard_words: tuple[tuple[str, float], ...]
    heard_resumes: bool

    async def say(self, text: str) -> object:
        """Speak ``text``; return when it has been played (or cut off by barge-in)."""

    async def hear(self) -> str:
        """The person's next final transcript (waits; must be safe to cancel)."""

    async def hint(self, context: str) -> None:
        """Words the person may say again (their names as heard, :func:`~appliance.phone_agent.fields.asr_context`):
        a line with an ASR transcribes after them from now on; one without (text) has no use for them."""


class QueueLine:
    """A :class:`Line` whose transcripts come from a queue: call :meth:`heard` with each
    final transcript. Subclasses implement ``say``."""

    person_speaking = False  # text arrives whole
    heard_words: tuple[tuple[str, float], ...] = ()  # no ASR behind it
    heard_resumes = False  # each text is whole

    def __init__(self) -> None:
        self._q: asyncio.Queue[str] = asyncio.Queue()

    def heard(self, text: str) -> None:
        self._q.put_nowait(text)

    async def hear(self) -> str:
        return await self._q.get()

    async def hint(self, context: str) -> None:
        """Typed text needs no ASR context."""


class _HungUp(Exception):
    """The person stopped answering."""


class _Typed(Exception):
    """The person typed the value of the field being asked."""


class _Unresponsive(Exception):
    """The computer agent has said nothing for :data:`SILENT_S`."""


class _GaveUp(Exception):
    """A ``step_failed`` arrived while the agent waited for an answer: it is said first."""


@dataclass
class CallStats:
    """What the benchmark reads off a call: ``interview_s`` from the first question to the
    authorisation question (or the last answer when none was asked); ``person_turns``:
    answers the person gave in that span; ``spelled``: fields asked to be spelled;
    ``typed``: fields the person typed; ``explained_failures``: times the person was told a
    step failed and why; ``read_backs``: read-backs said."""

    interview_s: float | None = None
    person_turns: int = 0
    spelled: tuple[str, ...] = ()
    typed: tuple[str, ...] = ()
    explained_failures: int = 0
    read_backs: int = 0


@dataclass
class PhoneOutcome:
    """``status``: ``submitted``, ``not_submitted`` (declined), ``review`` (filled, left for the
    person to check), ``failed`` (the form could not be done), ``no_answer`` or
    ``terminated``; ``waits_on_browser``: holds of its next utterance waiting for the
    computer agent, step boundaries excepted; ``stats``: the call's figures
    (:class:`CallStats`)."""

    status: str
    waits_on_browser: int
    detail: str = ""
    stats: CallStats = field(default_factory=CallStats)

    @property
    def explained_failures(self) -> int:
        """Times the person was told a step failed and why."""
        return self.stats.explained_failures


@dataclass
class _Result:
    """How a read-back ended: ``confirmed`` (``value``), ``refused`` by the page (``reason``),
    ``rejected`` by the person (``more``: the field may still be asked), or ``unclear``."""

    how: str
    value: FieldValue | None = None
    reason: str = ""
    more: bool = True


class PhoneAgent:
    """One call. ``await run()`` → :class:`PhoneOutcome`.

    Args:
        bus: a started bus; the agent subscribes as ``agent_id``.
        line: the audio side.
        llm: endpoint with its own slot (side questions, option matching).
        purpose: what the call is for, in words (the computer agent's ``initiate_phone_call_agent``
            purpose); it grounds the answers to side questions.
        fields: fields already known (autonomous launch: ``required_info``).
        answer_timeout_s: silence after which the agent checks the person is still there
            (twice), then gives up.
        consent: said with the greeting, before the first question (:func:`consent_notice`).
        submit_grace_s: after the yes to submitting, how long a "stop" still prevents it.
        spell_below_prob: a name answered in words is asked to be spelled at once, without a
            read-back, when the ASR's probability for one of its words is below this
            (:attr:`Line.heard_words`; 0: never).
    """

    def __init__(
        self,
        bus: Bus,
        line: Line,
        llm: LLM,
        *,
        task_id: str,
        purpose: str,
        emit: Emit,
        fields: tuple[FieldSpec, ...] = (),
        date_order: str = "DMY",
        agent_id: str = "phone",
        computer_id: str = "computer",
        answer_timeout_s: float = 30.0,
        consent: str = "",
        submit_grace_s: float = 3.0,
        spell_below_prob: float = 0.0,
    ):
        self.bus, self.line, self.llm = bus, line, llm
        self.task_id, self.purpose, self.emit = task_id, purpose, emit
        self.date_order, self.id, self.computer_id = date_order, agent_id, computer_id
        self.answer_timeout_s, self.consent, self.submit_grace_s = answer_timeout_s, consent, submit_grace_s
        self.spell_below_prob = spell_below_prob
        self.state = interview.start(fields)
        self._context: deque[str] = deque(maxlen=8)  # recent bus messages, labelled by sender
        self._asr_context = ""  # what the line was last hinted (fields.asr_context)
        self._sent: dict[str, FieldValue] = {}  # the last value sent per field (info_collected)
        self._inbox = AgentInbox(self.id, emit)
        self._prefix = ""
        self._t_first: float | None = None  # the first question
        self._t_authorise: float | None = None  # the first authorisation question
        self._t_last_answer: float | None = None
        self._overtaken = False  # the last answer came after "Are you still there?": it may still be answered
        self._reminders = 0  # reminders of a give-up's advice since the last bus message
        self._silent_since: float | None = None  # holding for the computer agent, no word from it since
        self.stats = CallStats()

    # ---- lifecycle ---------------------------------------------------------------------------------

    async def run(self) -> PhoneOutcome:
        """Run the call to its end; cancelling it stops the call."""
        sub = self.bus.subscribe(self.id)
        self.emit("agent_started", agent=self.id, purpose=self.purpose, fields=list(self.state.specs))
        try:
            async with asyncio.TaskGroup() as tg:
                reader = tg.create_task(self._inbox.read(sub))
                outcome = await self._call()
                reader.cancel()
        except* Terminated:
            outcome = self._outcome("terminated", "terminate received")
        finally:
            await sub.close()
        self.emit(
            "agent_finished",
            agent=self.id,
            status=outcome.status,
            waits_on_browser=outcome.waits_on_browser,
            explained_failures=outcome.explained_failures,
            detail=outcome.detail,
        )
        return outcome

    async def _call(self) -> PhoneOutcome:
        try:
            await self._say(f"{GREETING} {self.consent}".strip())
            while True:
                self._take_messages()
                step = interview.next_step(self.state)
                if not isinstance(step, interview.Hold):
                    self._silent_since = None  # talking with the person: the computer agent may be quiet
                match step:
                    case interview.Failed(reason=reason):
                        self.stats.explained_failures += 1
                        await self._say(f"I'm sorry, I couldn't complete the form: {reason}")
                        await self._finish(f"not submitted: {reason}")
                        return self._outcome("failed", reason)
                    case interview.Finished(confirmation=confirmation):
                        await self._say(
                            f"Done! The form has been submitted. {fields.page_answer(confirmation)}"
                            "Thank you, goodbye.".replace("  ", " ")
                        )
                        await self._finish(f"submitted: {confirmation}")
                        return self._outcome("submitted", confirmation)
                    case interview.Reopening():
                        self.state = interview.told_reopening(self.state)
                        await self._say(REOPENING)
                    case interview.Explain() as ex:
                        await self._explain(ex)
                    case interview.AskTogether() as together:
                        self.state = interview.begin(self.state, together)
                        try:
                            carry = await self._interview_together(together)
                        except _GaveUp:  # asked again after the explanation (those fields it leaves)
                            self.state = interview.requeue(self.state, together)
                            carry = None
                        await self._carry_on(carry)
                    case interview.Ask() as ask:
                        self.state = interview.begin(self.state, ask)
                        await self._carry_on((ask, None))
                    case interview.Authorise():
                        try:
                            if not await self._authorise():
                                return self._outcome("not_submitted", "the person did not authorise")
                        except _GaveUp:
                            pass  # still requested: asked again after the explanation
                    case interview.Review(message=message):
                        await self._say(
                            f"{message.rstrip('. ')}. I have not submitted it: you can check it in the "
                            "preview on your page, then submit it there yourself, or cancel. Goodbye."
                        )
                        await self._finish("not submitted: filled in, waiting for the person's review")
                        return self._outcome("review", message)
                    case interview.Hold(boundary=boundary):
                        if (advice := await self._hold(boundary)) is not None:
                            await self._say(
                                f"I'll stop here: nothing has changed, and the form is not submitted. {advice} Goodbye."
                            )
                            await self._finish(f"not submitted: the person did not act on: {advice}")
                            return self._outcome("failed", f"the person did not act on: {advice}")
        except _HungUp:
            await self._finish("not submitted: the person stopped answering")
            return self._outcome("no_answer", "no answer")
        except _Unresponsive:
            silent_s = round(SILENT_S)
            await self._say(
                "I'm sorry, the form has stopped responding, so I'll end the call here. Nothing has been "
                "submitted. Goodbye."
            )
            await self._finish(f"not submitted: the computer agent said nothing for {silent_s} s")
            return self._outcome("failed", f"the computer agent said nothing for {silent_s} s")

    def _outcome(self, status: str, detail: str) -> PhoneOutcome:
        s = self.stats
        end = self._t_authorise or self._t_last_answer
        s.interview_s = round(end - self._t_first, 2) if self._t_first is not None and end else None
        s.spelled = tuple(self.state.spell_asks)
        s.typed = tuple(self.state.typed)
        return PhoneOutcome(status, self.state.waits_on_browser, detail, s)

    async def _finish(self, summary: str) -> None:
        await self._send(TaskCompleted(summary=summary))

    # ---- bus messages ------------------------------------------------------------------------------

    def _take_messages(self) -> None:
        """Apply what arrived (at a safe point between utterances; never blocks)."""
        self._inbox.arrived.clear()
        if self._inbox.items:
            self._silent_since = None
        while self._inbox.items:
            env = self._inbox.items.pop(0)
            self._context.append(f"[{env.sender}] {env.type}: {env.payload.model_dump_json(exclude_none=True)[:200]}")
            before = self.state.typed
            self.state = interview.apply(self.state, env.payload, env.ts)
            for name in set(self.state.typed) - set(before):
                self.emit(
                    "decision",
                    agent=self.id,
                    what="typed_value",
                    field=name,
                    value=self.state.typed[name],
                    sender=env.sender,
                )

    async def _hold(self, boundary: bool) -> str | None:
        """Nothing to ask: keep the person informed, then wait for the computer agent. Returns
        the advice the person has not acted on after :data:`HANDS_REMINDERS` reminders (the
        call ends), else None. Raises :class:`_Unresponsive` when the computer agent has said
        nothing for :data:`SILENT_S`."""
        self.state, filler = interview.hold(self.state)
        if self._silent_since is None:
            self._silent_since = time.monotonic()
        if filler is not None:
            await self._say(FILLERS[filler])
        elif not boundary:
            self.emit("waits_on_browser", agent=self.id, count=self.state.waits_on_browser)
        try:
            await asyncio.wait_for(self._inbox.arrived.wait(), HOLD_S)
            self._reminders = 0
        except TimeoutError:
            # waiting for the person, not the browser: remind them what to do
            advice = self.state.waiting_for or next(reversed(self.state.handed_over.values()), "")
            if not advice:
                if time.monotonic() - self._silent_since >= SILENT_S:
                    raise _Unresponsive() from None
                await self._say("I'm still working on the form, thank you for waiting.")
            elif self._reminders >= HANDS_REMINDERS:
                return advice
            else:
                self._reminders += 1
                await self._say(f"I'm waiting for you: {advice}")
        return None

    async def _explain(self, ex: interview.Explain) -> None:
        """Tell the person what the computer agent could not do and what they can do."""
        self.state = interview.explained(self.state)
        self.stats.explained_failures += 1
        self.emit(
            "failure_explained",
            agent=self.id,
            problem=ex.problem,
            field=ex.field,
            delay_ms=now_ms() - ex.since_ms if ex.since_ms else None,
        )
        await self._say(fields.spoken_text(f"{ex.reason.rstrip('. ')}. {ex.advice}"))

    # ---- the interview -----------------------------------------------------------------------------

    def _prompt(self, spec: FieldSpec, mode: interview.AskMode, reason: str = "") -> str:
        """The question for ``spec`` in ``mode``, after the page's reason for a refusal if any."""
        if mode == "words":
            q = fields.question(spec)
        elif mode == "words_or_type":
            q = f"{fields.question(spec)} {fields.TYPE_OFFER}"
        else:
            q = fields.spell_question(spec, or_type=mode == "spell_or_type")
        if reason:
            self.stats.explained_failures += 1
            return f"Sorry, the form did not accept that: {fields.spoken_text(reason).rstrip('. ')}. {q}"
        return q

    def _offer(self, spec: FieldSpec, mode: interview.AskMode) -> None:
        """Record how ``spec`` is asked beyond plain words: a spelling requested, the page's box offered."""
        if mode.startswith("spell"):
            self.state = interview.spell_asked(self.state, spec.name)
            self.emit(
                "spelling_requested",
                agent=self.id,
                field=spec.name,
                label=spec.label,
                times=self.state.spell_asks[spec.name],
            )
        if mode.endswith("_or_type"):  # the page shows a box for this field
            self.emit("type_requested", agent=self.id, field=spec.name, label=spec.label)

    async def _carry_on(self, carry: tuple[interview.Ask, str | None] | None) -> None:
        """Interview ``carry``'s ask (begun) with its answer if heard already, then each next
        field whose question its read-back carried."""
        while carry is not None:
            ask, answer = carry
            try:
                carry = await self._interview(ask, answer)
            except _GaveUp:  # asked again after the explanation, unless it is about this field
                self.state = interview.requeue(self.state, ask)
                carry = None

    async def _interview(self, ask: interview.Ask, answer: str | None = None) -> tuple[interview.Ask, str] | None:
        """Ask ``ask`` (begun) until its value is confirmed, refused or given up. ``answer``:
        the person's answer to its question, already heard (it was asked with the previous
        field's read-back). Returns the next field's ask (begun) and the person's answer to it
        when this field's read-back went with that question and the person did not object
        (:meth:`_confirm_implicitly`), else None."""
        if ask.choices:
            await self._choose(ask)
            return None
        spec = ask.spec
        say: str | None = None
        reason = ask.reason
        for _ in range(ATTEMPTS):
            if spec.name in self.state.typed:
                return None
            mode = interview.ask_mode(self.state, spec)
            if say is None and answer is None:
                say = self._prompt(spec, mode, reason)
                self._offer(spec, mode)
            reason = ""
            try:
                if answer is not None:
                    text, answer = answer, None
                else:
                    text = await self._ask(say, field=spec.name)
                say = None
                if _REPEAT.search(text):
                    continue
                if _is_question(text):  # a side question, not an answer: answer it, then ask again
                    say = f"{await self._answer_side_question(spec, text)} {self._prompt(spec, mode)}"
                    continue
                other = fields.named_field(text, spec, self.state.specs)
                if other is not None:  # "My username is …" to "What is your first name?": out of step
                    self.emit(
                        "decision",
                        agent=self.id,
                        what="answer_names_another_field",
                        field=spec.name,
                        named=other.name,
                        heard=text,
                    )
                    say = f"That sounds like your {fields.spoken_label(other)}. {self._prompt(spec, mode)}"
                    continue
                value, spelled = self._parse(spec, text, mode)
                needs_read_back = fields.kind(spec) not in ("yesno", "choice") or (
                    isinstance(value, str) and normalise.choice(text, (value,), by_sound=False) is None
                )  # matched by sound
                if value is None and fields.kind(spec) == "choice":
                    value = await self._pick_option(spec, text)
                    needs_read_back = value is not None
                if value is None:
                    self.state = interview.not_understood(self.state, spec.name)
                    mode = interview.ask_mode(self.state, spec)
                    hint = "" if mode.startswith("spell") else fields.hint(spec)
                    say = f"Sorry, I didn't get that. {hint} {self._prompt(spec, mode)}".replace("  ", " ")
                    self._offer(spec, mode)
                    continue
                if not needs_read_back:
                    await self._info(spec, value, confirmed=True)
                    return None
                if fields.kind(spec) == "name" and mode == "words" and not spelled and self._unsure(spec, value):
                    self.state = interview.not_understood(self.state, spec.name)
                    mode = interview.ask_mode(self.state, spec)
                    say = f"{UNSURE} {self._prompt(spec, mode)}"
                    self._offer(spec, mode)
                    continue
                nxt = self._implicit_next(spec)
                if nxt is None:
                    result = await self._confirm(spec, value, text, spelled)
                else:
                    result, carry = await self._confirm_implicitly(spec, value, text, spelled, nxt)
                    if carry is not None or result is None:
                        return carry
            except _Typed:
                await self._say("Thanks, I have what you typed.")
                return None
            if result.how == "confirmed":
                return None
            if any(a.spec.name == spec.name and a.choices for a in self.state.queue):
                return None  # the page offers close matches: that ask, with its choices, comes next
            if result.how == "refused":  # the page refused it: ask again right here, with its reason
                self.state, why = interview.reask(self.state, spec.name)
                reason = why or result.reason
            elif result.how == "rejected":
                if not result.more:
                    break
                self._prefix = "Sorry about that. "
            else:
                if not fields.spellable(spec):  # a choice, date or number misheard: spelled or typed next (ask_mode)
                    self.state = interview.not_understood(self.state, spec.name)
                mode = interview.ask_mode(self.state, spec)
                say = f"Let's try again. {self._prompt(spec, mode)}"
                self._offer(spec, mode)
        self.state = interview.give_up(self.state, spec.name)  # back of the queue, or the form fails
        self.emit(
            "decision", agent=self.id, what="field_given_up", field=spec.name, times=self.state.given_up[spec.name]
        )
        return None

    def _unsure(self, spec: FieldSpec, value: FieldValue) -> bool:
        """Whether the ASR was unsure of ``value`` (a name, in the answer just heard): the least
        probability of its words in :attr:`Line.heard_words` is below ``spell_below_prob``
        (words compared by their letters and digits; a word of ``value`` the transcript does
        not hold as such, e.g. one the normaliser rewrote, is not judged). Emits ``decision
        {what: asr_unsure}``."""
        if not isinstance(value, str) or not self.line.heard_words:
            return False
        probs: dict[str, float] = {}
        for word, p in self.line.heard_words:
            key = _letters(word)
            probs[key] = min(p, probs.get(key, 1.0))
        found = [probs[w] for w in map(_letters, value.split()) if w in probs]
        if not found or min(found) >= self.spell_below_prob:
            return False
        self.emit("decision", agent=self.id, what="asr_unsure", field=spec.name, value=value, prob=min(found))
        return True

    def _resumed(
        self, spec: FieldSpec, value: FieldValue, heard: str, text: str
    ) -> tuple[FieldValue, str, bool] | None:
        """The value of ``spec`` in its answer ``heard`` and ``text`` together, with that answer
        and whether it was spelled, when ``text`` (heard after the read-back of ``value`` began)
        resumed that answer (:attr:`Line.heard_resumes`), is no yes or no, and makes a different
        value of a strict kind (a code, number, phone, e-mail, date: the ones people dictate in
        groups; bench: "My passport number is PX472, [pause] 9183." was cut in two turns) that
        :func:`~appliance.phone_agent.fields.fits` its pattern, else None. Emits ``decision {what:
        answer_resumed}``."""
        if not self.line.heard_resumes or fields.kind(spec) not in _STRICT_KINDS or normalise.yes_no(text) is not None:
            return None
        whole = f"{heard.rstrip('. ')} {text}"
        again, spelled = self._parse(spec, whole, "words")
        if again is None or again == value or not fields.fits(spec, again):
            return None
        self.emit("decision", agent=self.id, what="answer_resumed", field=spec.name, heard=text, value=again)
        return again, whole, spelled

    def _implicit_next(self, spec: FieldSpec | None) -> interview.Ask | None:
        """The next field's ask when the read-back of ``spec`` (None: of fields asked together)
        may go with its question ("I have Miller. What is your date of birth?"): the next step
        is a plain question in words, not a yes/no (a "no" to it would read as an objection),
        and ``spec`` was neither rejected nor asked to be spelled. None: read back on its own."""
        if spec is not None and (self.state.rejections.get(spec.name) or spec.name in self.state.spell_asks):
            return None
        self._take_messages()  # a safe point: the next step as it stands now
        nxt = interview.next_step(self.state)
        if (
            not isinstance(nxt, interview.Ask)
            or nxt.choices
            or nxt.reason
            or fields.kind(nxt.spec) == "yesno"
            or nxt.spec.name in self.state.typed
            or interview.ask_mode(self.state, nxt.spec) != "words"
        ):
            return None
        return nxt

    async def _confirm_implicitly(
        self, spec: FieldSpec, value: FieldValue, heard: str, spelled: bool, nxt: interview.Ask
    ) -> tuple[_Result | None, tuple[interview.Ask, str] | None]:
        """Read ``value`` back with the next field's question (*implicit confirmation*): an
        answer that does not object ("no …") confirms it and is the next field's answer,
        returned with its ask (begun) as the carry; an objection is the read-back's "no" (the
        next field goes back to the front of the queue) and goes on as :meth:`_confirm` does.
        A page refusal meanwhile takes the value back (it is asked again with the page's
        reason) and the answer still goes to the next field. Returns (how the read-back
        ended, None: the carry came back instead; or None: nothing more to do here)."""
        await self._info(spec, value, confirmed=False)
        text = await self._ask_with_next(fields.stated(spec, value, heard, spelled), nxt)
        if text is None:  # the next field typed; this one was not objected to
            await self._info(spec, value, confirmed=True)
            await self._say("Thanks, I have what you typed.")
            return None, None
        resumed = self._resumed(spec, value, heard, text)
        if resumed is not None:  # more of the answer, not one to the next question: read the whole back
            self.state = interview.requeue(self.state, nxt)
            return await self._confirm(spec, *resumed), None
        if self._objected(text, nxt, spec):
            self.emit("decision", agent=self.id, what="implicit_read_back_rejected", field=spec.name)
            return await self._confirm(spec, value, heard, spelled, answer=text, rejected=True), None
        if not interview.refused(self.state, spec.name, value):
            await self._info(spec, value, confirmed=True)
        return None, self._carried(text, nxt)

    async def _ask_with_next(self, stated: str, nxt: interview.Ask) -> str | None:
        """Say the read-back ``stated`` with ``nxt``'s question (``nxt`` is begun) and return the
        answer, the messages that came meanwhile applied; None when the person typed ``nxt``'s
        value instead. Raises :class:`_GaveUp` (``nxt`` back in the queue)."""
        self.stats.read_backs += 1
        self.state = interview.begin(self.state, nxt)
        say = f"{stated} {self._prompt(nxt.spec, 'words')}"
        try:
            text = await self._ask(say, field=nxt.spec.name)
            if _REPEAT.search(text):  # "Sorry, could you say that again?": the read-back too
                text = await self._ask(say, field=nxt.spec.name)
        except _Typed:
            return None
        except _GaveUp:
            self.state = interview.requeue(self.state, nxt)
            raise
        self._take_messages()
        return text

    def _objected(self, text: str, nxt: interview.Ask, about: FieldSpec | None = None) -> bool:
        """Whether ``text``, the answer to a read-back of ``about`` said with ``nxt``'s question,
        objects to the read-back: a "no …" (not one of ``nxt``'s options that starts with no),
        or a value of ``about``'s strict kinds (a date, number, phone, e-mail, code) that fits
        its pattern and is no answer to ``nxt`` (ASR wrote "No, it's the 2nd of June" as "Now,
        it's …", and the correction became the seat; bench: "My nationality desires." was read as
        the passport number NATIONALITYDESIRES and taken for an objection to a right one). Then
        ``nxt`` goes back to the front of the queue."""
        says_next = bool(nxt.spec.options and normalise.choice(text, nxt.spec.options, by_sound=False))
        objected = normalise.yes_no(text) is False and not says_next
        if about is not None and fields.named_field(text, nxt.spec, self.state.specs) == about:
            objected = True  # "My first name is David." to "I have David Miller. What is your last name?"
        if not objected and about is not None and fields.kind(about) in _STRICT_KINDS and not says_next:
            value = fields.parse(about, text, self.date_order)
            objected = (
                value is not None
                and fields.fits(about, value)
                and (bool(nxt.spec.options) or fields.parse(nxt.spec, text, self.date_order) is None)
            )
        if objected:
            self.state = interview.requeue(self.state, nxt)
        return objected

    def _carried(self, text: str, nxt: interview.Ask) -> tuple[interview.Ask, str] | None:
        """The answer to ``nxt``'s question, with its ask, for :meth:`_interview`; None when it
        only said yes to the read-back ("Yes, that's right."): ``nxt`` is asked again."""
        if normalise.yes_no(text) and len(text.split()) <= 4:
            self.state = interview.requeue(self.state, nxt)
            return None
        return nxt, text

    def _parse(self, spec: FieldSpec, text: str, mode: interview.AskMode) -> tuple[FieldValue | None, bool]:
        """The value in an answer, and whether the person spelled it."""
        kind = fields.kind(spec) if fields.spellable(spec) else "name"
        by_letter = mode.startswith("spell")
        spelled = spelling.looks_spelled(text, kind) or (by_letter and spelling.letters(text, kind) is not None)
        if by_letter or (fields.spellable(spec) and spelled):
            value = fields.parse_spelled(spec, text)
            if value is not None:
                return value, True
            if spelled:  # a spelling that did not decode: its words are no answer ("India, Romelo, …")
                return None, False
        value = fields.parse(spec, text, self.date_order)
        return fields.own_part(spec, value, self.state.specs, self._held()), False

    def _held(self) -> dict[str, FieldValue]:
        """Each field's value as the interview holds it: confirmed, else the last one sent."""
        return {**self._sent, **self.state.confirmed}

    async def _choose(self, ask: interview.Ask) -> None:
        """The page offers several close matches for the person's value: they pick one (no
        read-back: it is said as the page lists it); an answer that names none is taken as a
        new value for the field."""
        spec, q = ask.spec, candidates.question(ask.spec.label, ask.choices)
        say = q
        for _ in range(3):
            try:
                text = await self._ask(say, field=spec.name)
            except _Typed:
                await self._say("Thanks, I have what you typed.")
                return
            if _REPEAT.search(text):
                continue
            pick = candidates.pick(text, ask.choices)
            if pick is None and not _is_question(text):
                pick = await self._pick_option(spec.model_copy(update={"type": "select", "options": ask.choices}), text)
            if pick is not None:
                self.emit("decision", agent=self.id, what="candidate_picked", field=spec.name, heard=text, pick=pick)
                await self._info(spec, pick, confirmed=True)
                return
            say = f"Sorry, I didn't get which one. {q}"
        self.state = interview.give_up(self.state, spec.name)
        self.emit(
            "decision", agent=self.id, what="field_given_up", field=spec.name, times=self.state.given_up[spec.name]
        )

    async def _confirm(
        self,
        spec: FieldSpec,
        value: FieldValue,
        heard: str,
        spelled: bool,
        answer: str | None = None,
        rejected: bool = False,
    ) -> _Result:
        """Read ``value`` (from the answer ``heard``) back until the person accepts it, the page
        refuses it, or the person rejects it (a name, code, … then is spelled; another kind's
        "no, it's …" is read back). ``answer``: the person's answer to a read-back said
        already (the implicit one of :meth:`_confirm_implicitly`); ``rejected``: it is known to
        object (:meth:`_objected`), "no" or not."""
        for _ in range(3):
            if answer is not None:
                text, answer = answer, None
            else:
                await self._info(spec, value, confirmed=False)
                self.stats.read_backs += 1
                text = await self._ask(fields.read_back(spec, value, heard, spelled), field=spec.name)
            self._take_messages()
            if interview.refused(self.state, spec.name, value):
                return _Result("refused", reason=self.state.refusals[spec.name].reason)
            resumed = None if rejected else self._resumed(spec, value, heard, text)
            if resumed is not None:
                value, heard, spelled = resumed
                continue
            yes = False if rejected else normalise.yes_no(text)
            rejected = False
            if yes:
                await self._info(spec, value, confirmed=True)
                return _Result("confirmed", value)
            correction = _correction(text)
            if fields.spellable(spec):
                if yes is None and not spelling.looks_spelled(correction, fields.kind(spec)):
                    return _Result("unclear")
                self.state, more = interview.rejected(self.state, spec.name)
                self.emit(
                    "decision",
                    agent=self.id,
                    what="read_back_rejected",
                    field=spec.name,
                    times=self.state.rejections[spec.name],
                )
                again = (
                    fields.parse_spelled(spec, correction)
                    if spelling.looks_spelled(correction, fields.kind(spec))
                    else None
                )
                # spelled in the first correction: read that back at once; from the second "no" on, the
                # field is asked again (a spelling, then the box on the screen) rather than read back
                if again is None or not more or self.state.rejections[spec.name] >= 2:
                    return _Result("rejected", more=more)
                value, heard, spelled = again, correction, True
                continue
            corrected = fields.parse(spec, correction, self.date_order)
            if yes is False and corrected is not None:  # "No, it's …": read that back (the same value
                value = corrected  # again when the person misheard the read-back)
                continue
            return _Result("unclear")
        return _Result("unclear")

    async def _interview_together(self, together: interview.AskTogether) -> tuple[interview.Ask, str] | None:
        """Fields a person answers together, in one question and one read-back (said with the
        next field's question when it may be: :meth:`_implicit_next`; then the carry, as
        :meth:`_interview` returns it). A rejected name read-back sends each field back to be
        asked (and spelled) on its own; a date's "no, it's …" is read back; anything else that
        fails asks each field on its own."""
        specs = tuple(a.spec for a in together.asks)
        q = fields.question_together(together.what, specs)
        say, values, unheard = q, None, 0
        for _ in range(3):
            if values is None:
                text = await self._ask(say)
                if _REPEAT.search(text):
                    say = q
                    continue
                if _is_question(text):
                    say = f"{await self._answer_side_question(specs[0], text)} {q}"
                    continue
                values = fields.parse_together(together.what, specs, text, self.date_order)
                if (
                    together.what == "name"
                    and values is not None
                    and any(self._unsure(s, v) for s, v in zip(specs, values))
                ):  # each on its own, spelled
                    self._prefix = f"{UNSURE} "
                    self.state = interview.split(self.state, together, rejected=False, unheard=1)
                    return None
                if values is None:
                    unheard += 1
                    if together.what == "name" or unheard == 2:  # each on its own (a name: spelled, interview.ask_mode)
                        self._prefix = "Sorry, I didn't get that. "
                        break
                    say = f"Sorry, I didn't get that. {q}"
                    continue
            for spec, v in zip(specs, values):
                await self._info(spec, v, confirmed=False)
            stated = fields.stated_together(together.what, specs, values)
            nxt = self._implicit_next(None)
            if nxt is None:
                self.stats.read_backs += 1
                answer = await self._ask(f"{stated} Is that right?")
                self._take_messages()
            else:
                answer = await self._ask_with_next(stated, nxt)
            refused = {s.name for s, v in zip(specs, values) if interview.refused(self.state, s.name, v)}
            yes = normalise.yes_no(answer) if answer is not None else True  # None: the next field typed, no objection
            if yes or (nxt is not None and not self._objected(answer, nxt)):  # refused ones: queued with the reason
                for spec, v in zip(specs, values):
                    if spec.name not in refused:
                        await self._info(spec, v, confirmed=True)
                if answer is None:
                    await self._say("Thanks, I have what you typed.")
                    return None
                return None if nxt is None else self._carried(answer, nxt)
            if together.what == "date" and yes is False and not refused:
                values = fields.parse_together(together.what, specs, _correction(answer), self.date_order)
                say = f"Sorry about that. {q}"
                continue
            self._prefix = "Sorry about that. " if yes is False else ""
            self.state = interview.split(self.state, together, rejected=yes is False)
            return None
        self.state = interview.split(self.state, together, rejected=False, unheard=unheard)
        return None

    async def _authorise(self) -> bool:
        """Read a summary and ask for explicit authorisation to submit. False: declined (the
        task ends unsent). A "stop" within ``submit_grace_s`` of the yes sends nothing. An
        answer that names a confirmed field ("No, my town is Leeds.") takes that field up again
        with the answer (:func:`~appliance.phone_agent.interview.reopen`); the summary is read
        again once the computer agent has the new value in and asks again."""
        if self._t_authorise is None:
            self._t_authorise = time.monotonic()
        question = f"{fields.summary(self.state.specs, self.state.confirmed)} Shall I submit the form now?"
        for _ in range(3):
            text = await self._ask(question, counted=False)
            question = "Shall I submit the form now?"
            self._take_messages()
            if self.state.queue:  # the page wants something else first
                return True
            yes = normalise.yes_no(text)
            named = None if yes else fields.field_named(text, {n: self.state.specs[n] for n in self.state.confirmed})
            if named is not None:  # "No, my town is Leeds.": that field again, its answer given
                self.emit("decision", agent=self.id, what="summary_corrected", field=named.name, heard=text)
                self.state = interview.reopen(self.state, named.name)
                ask = self.state.queue[0]
                self.state = interview.begin(self.state, ask)
                await self._carry_on((ask, _correction(text)))
                return True
            if yes:
                if await self._stopped_after_yes():
                    self.emit("decision", agent=self.id, what="submit_stopped", within_s=self.submit_grace_s)
                    await self._say("All right, I've stopped. Nothing has been sent.")
                    question = "Shall I submit the form now, or leave it unsent?"
                    continue
                self.state = interview.authorised(self.state)
                await self._send(SubmitAuthorized())
                self.emit("decision", agent=self.id, what="submit_authorized")
                await self._watch_submit()
                return True
            if yes is False:
                self.emit("decision", agent=self.id, what="submit_declined")
                await self._say("All right, I won't submit it. Nothing has been sent. Goodbye.")
                await self._send(StatusUpdate(state="canceled", message="the person did not authorise the submission"))
                await self._finish("not submitted: the person did not authorise the submission")
                return False
        await self._say("I'll leave the form unsent for now. Goodbye.")
        await self._finish("not submitted: no clear authorisation")
        return False

    async def _stopped_after_yes(self) -> bool:
        """After the yes: say so, and listen until ``submit_grace_s`` has passed since it; True
        when the person said "wait", "stop" or "no" in that time."""
        deadline = time.monotonic() + self.submit_grace_s
        await self._say("Okay, submitting.")
        while (left := deadline - time.monotonic()) > 0:
            try:
                heard = normalise.clean(await asyncio.wait_for(self.line.hear(), left))
            except TimeoutError:
                return False
            self.emit("heard", agent=self.id, text=heard)
            if _STOP.search(heard):
                return True
        return False

    async def _watch_submit(self) -> None:
        """Until the page has answered: a "wait"/"stop"/"no" sends ``interrupt`` (the computer
        agent disarms the submit if it has not clicked yet) and authorisation is asked again."""
        hearing = asyncio.ensure_future(self.line.hear())
        try:
            while True:
                news = asyncio.ensure_future(self._inbox.arrived.wait())
                done, _ = await asyncio.wait({hearing, news}, timeout=HOLD_S, return_when=asyncio.FIRST_COMPLETED)
                news.cancel()
                if not done:
                    return
                if hearing in done:
                    heard = normalise.clean(hearing.result())
                    self.emit("heard", agent=self.id, text=heard)
                    if _STOP.search(heard):
                        await self._send(Interrupt(reason="the person said stop before the page answered"))
                        self.emit("decision", agent=self.id, what="submit_interrupted")
                        self.state = interview.withdrawn(self.state)
                        await self._say("Stopping. If it was not too late, nothing has been sent.")
                        return
                    hearing = asyncio.ensure_future(self.line.hear())
                    continue
                self._take_messages()
                if not isinstance(interview.next_step(self.state), interview.Hold):
                    return
        finally:
            if not hearing.done():
                hearing.cancel()

    async def _pick_option(self, spec: FieldSpec, text: str) -> str | None:
        """The LLM picks the option the person meant (one of them, or none)."""
        opts = tuple(spec.options or ())
        none = "none of them"
        try:
            ans = await self.llm.decide(
                'Pick the option the person means. Answer with the option, or "none of them" when the person '
                'named none of them. Example: options Germany, France, Spain; the person said "I\'m French" → '
                '{"option":"France"}.',
                f'Options: {", ".join(opts)}\nQuestion: {fields.question(spec)}\nThe person said: "{text}"',
                choices("OptionPick", option=(*opts, none)),
                max_tokens=30,
            )
        except LLMError as e:
            self.emit("decision", agent=self.id, what="pick_option_failed", error=str(e))
            return None
        pick = ans.option
        self.emit("decision", agent=self.id, what="pick_option", field=spec.name, heard=text, option=pick)
        return pick if pick in opts else None

    async def _answer_side_question(self, spec: FieldSpec, text: str) -> str:
        system = (
            f"You are a friendly phone assistant helping a person fill in a web form. Purpose of the "
            f"call: {self.purpose}. The form asks for: {spec.label}"
            f"{'; its choices: ' + ', '.join(spec.options) if spec.options else ''}. What the person tells you is "
            "typed into that form and "
            "nowhere else, and nothing is sent before they allow it. Answer the person's question in one "
            "short spoken sentence; if you do not know, say so; never make up facts.\n"
            "Example: Why do you need my date of birth? => The form asks for it, and it is required to "
            "complete it.\nRecent messages from the other agents:\n" + "\n".join(self._context)
        )
        try:
            reply = await self.llm.text(system, text, max_tokens=50)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="side_question_failed", error=str(e))
            reply = "Good question; I can only help with the form for now."
        self.emit("decision", agent=self.id, what="side_question", heard=text, reply=reply)
        return reply

    # ---- speaking and hearing ----------------------------------------------------------------------

    async def _say(self, text: str, spelling: bool = False, field: str | None = None) -> None:
        """Say ``text``; the line's ASR is hinted first with what the answer may hold: the
        person's names and the options of ``field`` (the field asked), or the letters and the
        spelling alphabet when ``spelling`` is expected."""
        text, self._prefix = self._prefix + text, ""
        spec = self.state.specs.get(field or "")
        context = (
            fields.spelling_context(spec) if spelling else fields.asr_context(self.state.specs, self._held(), spec)
        )
        if context != self._asr_context:  # before the question whose answer may repeat them
            self._asr_context = context
            await self.line.hint(context)
        self.emit("say", agent=self.id, text=text)
        await self.line.say(text)

    async def _ask(self, text: str, field: str | None = None, counted: bool = True) -> str:
        """Say ``text`` and return the answer; re-prompt after silence; :class:`_HungUp` after
        three. ``field``: the field being asked — a value the person types for it meanwhile
        raises :class:`_Typed`. ``counted``: the answer counts as an interview turn."""
        if self._t_first is None:
            self._t_first = time.monotonic()
        await self._say(text, spelling=field in self.state.spell_asks, field=field)  # spelling: asked, now or before
        prompts = ["Are you still there?", f"Are you there? {text}"]
        prompted = False
        while True:
            try:
                heard = normalise.clean(await self._hear(field))
            except TimeoutError:
                if not prompts:
                    raise _HungUp() from None
                prompted = True
                await self._say(prompts.pop(0))
                continue
            self.emit("heard", agent=self.id, text=heard)
            late, self._overtaken = self._overtaken and bool(_LATE_PRESENCE.fullmatch(heard)), False
            if late:  # the answer to an "Are you still there?" that the answer before overtook
                self.emit("decision", agent=self.id, what="late_presence_ignored", heard=heard)
                continue
            if prompted and _PRESENT.fullmatch(heard):  # "Yes, I'm here." answers the check, not the question
                prompted = False
                await self._say(text)
                continue
            if heard:
                if counted and self._t_authorise is None:
                    self.stats.person_turns += 1
                    self._t_last_answer = time.monotonic()
                self._overtaken = prompted  # the person may still answer the check
                return heard

    async def _hear(self, field: str | None) -> str:
        """The person's next transcript within ``answer_timeout_s`` (else ``TimeoutError``;
        not while the line hears the person speaking: a spelled e-mail runs 10–15 s). A
        ``step_failed`` arriving meanwhile stops the wait (:class:`_GaveUp`), so that the person
        hears about it now rather than after their answer; with ``field`` (the field being
        asked), so does a value the person typed for it (:class:`_Typed`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.answer_timeout_s
        hearing = asyncio.ensure_future(self.line.hear())
        try:
            while True:
                if any(isinstance(e.payload, StepFailed) for e in self._inbox.items):
                    raise _GaveUp()  # left in items: applied at the next safe point, after this ask
                if field is not None:
                    self._take_messages()
                    if field in self.state.typed:
                        raise _Typed(field)
                self._inbox.arrived.clear()  # what arrived stays in items for the next safe point
                news = asyncio.ensure_future(self._inbox.arrived.wait())
                done, _ = await asyncio.wait(
                    {hearing, news}, timeout=max(0.0, deadline - loop.time()), return_when=asyncio.FIRST_COMPLETED
                )
                news.cancel()
                if hearing in done:
                    return hearing.result()
                if not done:
                    if not self.line.person_speaking:
                        raise TimeoutError
                    deadline = loop.time() + SPEAKING_POLL_S  # the answer is still being said
        finally:
            if not hearing.done():
                hearing.cancel()

    async def _info(self, spec: FieldSpec, value: FieldValue, confirmed: bool) -> None:
        self._sent[spec.name] = value
        if confirmed:
            self.state = interview.confirm(self.state, spec.name, value)
        await self._send(InfoCollected(field=spec.name, value=value, confirmed=confirmed))

    async def _send(self, payload: Payload) -> None:
        env = Envelope.new(payload, sender=self.id, recipient=self.computer_id, task_id=self.task_id)
        self.emit("bus_out", agent=self.id, type=env.type, payload=env.payload.model_dump())
        await self.bus.publish(env)


#: kinds whose parser takes only a value of that kind (a name or free text would take any answer)
_STRICT_KINDS = ("date", "number", "phone", "email", "code")


def _correction(text: str) -> str:
    """An objection without its "no" ("No, it's Leeds." → "it's Leeds."; tiny.en writes "no" as "now")."""
    return re.sub(r"(?i)^\W*(no|now)\b[\W]*", "", text)


def _letters(word: str) -> str:
    """A word's letters and digits, casefolded: "D'Arcy-Byrne," → "darcybyrne"."""
    return "".join(re.findall(r"[^\W_]+", word.casefold()))


_PRESENT = re.compile(r"\W*(yes|yeah|yep)?\W*(i am|i'm)?\W*(still )?(here|there)?\W*", re.I)
#: an answer to "Are you still there?" and to nothing else ("Yes, I'm here.", not "Yes.")
_LATE_PRESENCE = re.compile(r"\W*(yes|yeah|yep)?\W*(i am|i'm)\W*(still )?(here|there)\W*", re.I)
_REPEAT = re.compile(r"\b(say that again|repeat|pardon|come again|didn't (catch|hear))\b", re.I)


def _is_question(text: str) -> bool:
    t = text.strip().casefold()
    return t.endswith("?") or bool(
        re.match(
            r"(why|what|how|who|where|when|which|can|could|do|does|is|are|will|"
            r"would|should)\b",
            t,
        )
    )
