"""The phone agent's loop: one call, by voice or on a terminal. It speaks, listens and sends;
what to ask next is :mod:`~appliance.phone_agent.interview`'s, how a field's value is got and
confirmed (read-backs, spelling, implicit confirmation, fields asked together, the page's
close matches) :mod:`~appliance.phone_agent.confirmation`'s — both pure; the LLM only answers
side questions and, when no option is named word for word, picks the option meant.

Its audio side is a :class:`~appliance.phone_agent.line.Line` (``say`` → a ``SayOutcome``,
fed back to the confirmation core; ``hear``): the WebRTC voice pipeline or a terminal.

* the greeting says whether the call is recorded (``consent``) before the first question;
* an answer is waited for as :class:`~appliance.phone_agent.line.CallLine` does (``no_answer``);
* with nothing left to ask the agent says what is happening (the form is loading, the next
  page is opening) and waits for the computer agent — at such a *step boundary* that is not
  a wait; any other hold of its next utterance counts in ``waits_on_browser``;
* ``step_failed`` (the computer agent gave up on a step) is said at once — what is wrong and
  what the person can do —, cutting short a wait for an answer; its field is handed over to
  the person (a hold reminds them of the advice; after :data:`HANDS_REMINDERS` reminders
  with nothing changing, the call ends unsent). Each counts in ``explained_failures``, as
  do a page's refusal said before a question and a failure that ends the call;
* after ``status_update{auth-required}``: a summary and the question to submit
  (:func:`~appliance.phone_agent.confirmation.authorise`); a "wait"/"stop"/"no" within
  ``submit_grace_s`` of the yes sends nothing, a later one before the page answered sends
  ``interrupt``; ``submitted`` → it tells the person the page's answer and sends ``task_completed``;
* ``status_update{review}`` (a "don't submit" task, filled): it tells the person the form
  waits for their review in the preview and ends the call; the browser stays up.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque

from pydantic import BaseModel

from appliance.bus import Bus, Envelope, now_ms
from appliance.bus.inbox import AgentInbox, Terminated
from appliance.llm.base import LLM, LLMError
from appliance.llm.decision import choices
from appliance.phone_agent import confirmation, fields, interview, normalise, sayings, told
from appliance.phone_agent.confirmation import Ahead, Answered, GaveUp, Heard, Picked, Stopped, Synced, Typed
from appliance.phone_agent.line import CallLine, HungUp, Line
from appliance.phone_agent.outcome import CallStats, PhoneOutcome
from appliance.protocol import (
    Emit,
    FieldSpec,
    InfoCollected,
    Interrupt,
    Payload,
    StatusUpdate,
    StepFailed,
    TaskCompleted,
)
from appliance.protocol.events import PhoneStatus

HOLD_S = 20.0  # a hold longer than this gets a word to the person
#: reminders of a give-up's advice (one each :data:`HOLD_S`) with nothing changing before the call ends
#: unsent: the person is not acting on it (about 2 minutes)
HANDS_REMINDERS = 6
#: the person asked to wait ("hold on, I need to find it"): silence this long (s) before "Are you still there?"
PERSON_HOLD_S = 60.0
#: holding for the computer agent this long (s) with no word from it, and the call ends unsent:
#: it is gone (its process killed, its browser stuck), and the person would wait for ever
SILENT_S = 180.0


class _Typed(Exception):
    """The person typed the value of the field being asked."""


class _Unresponsive(Exception):
    """The computer agent has said nothing for :data:`SILENT_S`."""


def _cuts_the_wait(p: Payload) -> bool:
    """A message the person must hear before their answer: a give-up, or the task failed."""
    return isinstance(p, StepFailed) or (isinstance(p, StatusUpdate) and p.state == "failed")


class _GaveUp(Exception):
    """A ``step_failed`` arrived while the agent waited for an answer: it is said first."""


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
        consent: said with the greeting, before the first question (the recording notice).
        submit_grace_s: after the yes to submitting, how long a "stop" still prevents it.
        spell_below_prob: a name answered in words is asked to be spelled at once, without a
            read-back, when the ASR's probability for one of its words is below this
            (:attr:`Line.heard_words`; 0: never).
        task: the person's request in their words ('' = none): the values it gives are not
            asked (:mod:`~appliance.phone_agent.told`).
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
        task: str = "",
    ):
        self.bus, self.line, self.llm = bus, line, llm
        self.task = told.request(task)
        self._told_seen: set[str] = set()  # fields the request was looked at for
        self.task_id, self.purpose, self.emit = task_id, purpose, emit
        self.id, self.computer_id = agent_id, computer_id
        self.consent, self.submit_grace_s = consent, submit_grace_s
        self.state = interview.start(fields)
        self.talk = confirmation.Talk(date_order, spell_below_prob)
        self._context: deque[str] = deque(maxlen=8)  # recent bus messages, labelled by sender
        self._inbox = AgentInbox(self.id, emit)
        self.call_line = CallLine(line, emit, agent_id, answer_timeout_s, self._inbox.arrived, self._hint_for)
        self._t_first: float | None = None  # the first question
        self._t_authorise: float | None = None  # the first authorisation question
        self._t_last_answer: float | None = None
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
                tg.create_task(self._warm())
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

    async def _warm(self) -> None:
        """Put :data:`~appliance.phone_agent.told.SYSTEM` into the phone agent's LLM slot while
        the greeting plays: the first answer that gives several values is copied without
        evaluating it (bench form, flight/david: 269 prompt tokens took 3.1 s of a 4.6 s wait
        after "My name is David Miller and I was born on the 14th of March, 1990")."""
        try:
            await self.llm.warm(told.SYSTEM)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="warm_failed", error=str(e)[:200])

    async def _call(self) -> PhoneOutcome:
        try:
            await self.call_line.say(f"{sayings.GREETING} {self.consent}".strip())
            while True:
                self._take_messages()
                step = interview.next_step(self.state)
                if not isinstance(step, interview.Hold):
                    self._silent_since = None  # talking with the person: the computer agent may be quiet
                match step:
                    case interview.Failed(reason=reason):
                        self.stats.explained_failures += 1
                        return await self._end(sayings.failed(reason), f"not submitted: {reason}", "failed", reason)
                    case interview.Finished(confirmation=page_said):
                        said = sayings.submitted(fields.page_answer(page_said))
                        return await self._end(said, f"submitted: {page_said}", "submitted", page_said)
                    case interview.Reopening():
                        self.state = interview.told_reopening(self.state)
                        await self.call_line.say(sayings.REOPENING)
                    case interview.Explain() as ex:
                        await self._explain(ex)
                    case interview.AskTogether() | interview.Ask():
                        if await self._take_told():
                            continue  # the request gave values: the next step again
                        if await self._converse(confirmation.begin(self.state, self.talk, step)):
                            return self._outcome("not_submitted", "the person cancelled")
                    case interview.Authorise():
                        if self._t_authorise is None:
                            self._t_authorise = time.monotonic()
                        if await self._converse(confirmation.authorise(self.state, self.talk)):
                            return self._outcome("not_submitted", "the person did not authorise")
                    case interview.Review(message=message):
                        summary = "not submitted: filled in, waiting for the person's review"
                        return await self._end(sayings.review(message), summary, "review", message)
                    case interview.Hold(boundary=boundary):
                        if (advice := await self._hold(boundary)) is not None:
                            detail = f"the person did not act on: {advice}"
                            return await self._end(
                                sayings.stopping(advice), f"not submitted: {detail}", "failed", detail
                            )
        except HungUp:
            return await self._end("", "not submitted: the person stopped answering", "no_answer", "no answer")
        except _Unresponsive:
            detail = f"the computer agent said nothing for {round(SILENT_S)} s"
            return await self._end(sayings.UNRESPONSIVE, f"not submitted: {detail}", "failed", detail)

    async def _end(self, said: str, summary: str, status: PhoneStatus, detail: str) -> PhoneOutcome:
        """The call ends: ``said`` to the person ('' = nothing), ``task_completed{summary}`` sent."""
        if said:
            await self.call_line.say(said)
        await self._send(TaskCompleted(summary=summary))
        return self._outcome(status, detail)

    def _outcome(self, status: PhoneStatus, detail: str) -> PhoneOutcome:
        s = self.stats
        end = self._t_authorise or self._t_last_answer
        s.interview_s = round(end - self._t_first, 2) if self._t_first is not None and end else None
        s.spelled, s.typed = tuple(self.state.spell_asks), tuple(self.state.typed)
        s.read_backs = self.talk.read_backs
        s.asks = dict(self.state.asks)
        s.explained_failures += self.talk.reasons_said
        return PhoneOutcome(status, self.state.waits_on_browser, detail, s)

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
            typed = self.state.typed
            for name in set(typed) - set(before):
                self.emit(
                    "decision", agent=self.id, what="typed_value", field=name, value=typed[name], sender=env.sender
                )

    async def _copied(self, text: str, specs: tuple[FieldSpec, ...]) -> BaseModel:
        """The LLM's copy of the words of ``text`` per field of ``specs``
        (:func:`~appliance.phone_agent.told.decision_model`).

        Raises:
            LLMError: the LLM gave no usable answer.
        """
        return await self.llm.decide(
            told.SYSTEM, told.prompt(text, specs), told.decision_model(specs), max_tokens=40 * len(specs)
        )

    async def _look_ahead(self, specs: tuple[FieldSpec, ...], text: str) -> dict[str, str]:
        """The words of the answer ``text`` that give values of ``specs`` (the field asked
        first), by field name (:func:`~appliance.phone_agent.told.copies`); none when the LLM fails."""
        try:
            answer = await self._copied(text, specs)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="look_ahead_failed", error=str(e)[:200])
            return {}
        return told.copies(text, specs, answer, self.talk.date_order)

    async def _take_told(self) -> bool:
        """The values the person's request gives for fields not yet looked at (once per field):
        sent confirmed and said before the next question. True when there were any."""
        specs = told.open_fields([s for n, s in self.state.specs.items() if n not in self._told_seen])
        self._told_seen |= set(self.state.specs)
        specs = tuple(
            s for s in specs if s.name not in self.state.confirmed and told.may_give(self.task, s, request=True)
        )
        if not self.task or not specs:
            return False
        try:
            answer = await self._copied(self.task, specs)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="told_failed", error=str(e)[:200])
            return False
        values = told.values(self.task, specs, answer, self.talk.date_order)
        copied = answer.model_dump(by_alias=True)
        self.emit(
            "decision",
            agent=self.id,
            what="told",
            looked_at=[s.name for s in specs],
            copied=copied,
            fields=sorted(values),
        )
        if not values:
            return False
        self.state = interview.told(self.state, values)
        for name, value in values.items():
            await self._send(InfoCollected(field=name, value=value, confirmed=True))
        self.call_line.prefix = f"{told.statement(self.state.specs, values)} "
        return True

    async def _hold(self, boundary: bool) -> str | None:
        """Nothing to ask: keep the person informed, then wait for the computer agent. Returns
        the advice the person has not acted on after :data:`HANDS_REMINDERS` reminders (the
        call ends), else None. Raises :class:`_Unresponsive` when the computer agent has said
        nothing for :data:`SILENT_S`."""
        if self._silent_since is None:
            self._silent_since = time.monotonic()
        self.state, filler = interview.hold(self.state)
        match filler:
            case "opening":
                await self.call_line.say(sayings.OPENING)
            case "working":  # a page loads, the form is submitted: "One moment." unless the next words come soon
                await self.call_line.acknowledge()
            case None if not boundary:
                self.emit("waits_on_browser", agent=self.id, count=self.state.waits_on_browser)
        try:
            await asyncio.wait_for(self._inbox.arrived.wait(), HOLD_S)
            self._reminders = 0
        except TimeoutError:
            # waiting for the person, not the browser: remind them what to do (and which field: bench, xiaoling
            # heard "I'm waiting for you: You can type it in the box …" six times, and never which box)
            advice = self.state.waiting_for
            field = None
            if not advice and self.state.handed_over:
                field, advice = next(reversed(self.state.handed_over.items()))
            if not advice:
                if time.monotonic() - self._silent_since >= SILENT_S:
                    raise _Unresponsive() from None
                await self.call_line.say("I'm still working on the form, thank you for waiting.")
            elif self._reminders >= HANDS_REMINDERS:
                return advice
            else:
                self._reminders += 1
                if field is None:
                    await self.call_line.say(f"I'm waiting for you: {advice}")
                else:
                    self._offer_box(field)
                    what = re.sub(r"(?i)^(your|my)\s+", "", fields.spoken_label(self.state.specs[field]))
                    await self.call_line.say(fields.spoken_text(f"I'm waiting for you to set your {what}: {advice}"))
        return None

    async def _explain(self, ex: interview.Explain) -> None:
        """Tell the person what the computer agent could not do and what they can do."""
        self.state = interview.explained(self.state)
        self.stats.explained_failures += 1
        delay_ms = now_ms() - ex.since_ms if ex.since_ms else None
        self.emit("failure_explained", agent=self.id, problem=ex.problem, field=ex.field, delay_ms=delay_ms)
        if ex.problem == "asked_out" and ex.field is not None:  # its advice offers the box: the page shows it
            self._offer_box(ex.field)
        await self.call_line.say(fields.spoken_text(f"{ex.reason.rstrip('. ')}. {ex.advice}"))

    def _offer_box(self, name: str) -> None:
        """Event ``type_requested`` for field ``name``: the page highlights the box on the screen for it."""
        self.emit("type_requested", agent=self.id, field=name, label=self.state.specs[name].label)

    # ---- the confirmation core's steps -------------------------------------------------------------

    async def _converse(self, turn: confirmation.Turn) -> bool:
        """Carry out the confirmation core's steps, feeding back what each waited for, until its
        exchange is done. True: the call ended (:class:`~appliance.phone_agent.confirmation.EndCall`)."""
        while True:
            self.state, self.talk = turn.state, turn.talk
            for step in turn.steps:
                match step:
                    case confirmation.Decision(what=what, details=details):
                        self.emit("decision", agent=self.id, what=what, **details)
                    case confirmation.SpellingRequested(field=name, label=label, times=times):
                        self.emit("spelling_requested", agent=self.id, field=name, label=label, times=times)
                    case confirmation.TypeRequested(field=name, label=label):
                        self.emit("type_requested", agent=self.id, field=name, label=label)
                    case confirmation.Send(payload=payload):
                        await self._send(payload)
                    case confirmation.Say(text=text):
                        await self.call_line.say(text)
                    case confirmation.Prefix(text=text):
                        self.call_line.prefix = text
                    case confirmation.Question() as question:
                        got = await self._question(question)
                    case confirmation.PickOption(spec=spec, text=text):
                        got = Picked(await self._pick_option(spec, text))
                    case confirmation.SideQuestion(spec=spec, text=text):
                        got = Answered(await self._answer_side_question(spec, text))
                    case confirmation.LookAhead(specs=specs, text=text):
                        got = Ahead(await self._look_ahead(specs, text))
                    case confirmation.Sync():
                        self._take_messages()
                        await self._take_told()  # fields that came meanwhile: never asked what the request gave
                        got = Synced()
                    case confirmation.SubmitGrace():  # "stop" within submit_grace_s of the yes sends nothing
                        deadline = time.monotonic() + self.submit_grace_s
                        await self.call_line.say("Okay, submitting.")
                        got = Stopped(await self.call_line.stopped_before(deadline))
                        if got.stopped:
                            self.emit("decision", agent=self.id, what="submit_stopped", within_s=self.submit_grace_s)
                    case confirmation.WatchSubmit():
                        await self._watch_submit()
                    case confirmation.EndCall(summary=summary):
                        await self._send(TaskCompleted(summary=summary))
                        return True
                    case confirmation.Done():
                        return False
            turn = confirmation.carry(self.state, self.talk, got)

    async def _watch_submit(self) -> None:
        """Until the page has answered: a "wait"/"stop"/"no" sends ``interrupt`` (the computer
        agent disarms the submit if it has not clicked yet) and authorisation is asked again.
        The submit is a slow step: acknowledged (:meth:`~appliance.phone_agent.line.Line.acknowledge`)."""
        await self.call_line.acknowledge()
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
                    if sayings.STOP.search(heard):
                        await self._send(Interrupt(reason="the person said stop before the page answered"))
                        self.emit("decision", agent=self.id, what="submit_interrupted")
                        self.state = interview.withdrawn(self.state)
                        await self.call_line.say("Stopping. If it was not too late, nothing has been sent.")
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
        try:
            ans = await self.llm.decide(
                sayings.PICK_OPTION,
                sayings.pick_option_prompt(spec, text),
                choices("OptionPick", option=(*opts, sayings.NONE_OF_THEM)),
                max_tokens=30,
            )
        except LLMError as e:
            self.emit("decision", agent=self.id, what="pick_option_failed", error=str(e))
            return None
        pick = ans.option
        self.emit("decision", agent=self.id, what="pick_option", field=spec.name, heard=text, option=pick)
        return pick if pick in opts else None

    async def _answer_side_question(self, spec: FieldSpec, text: str) -> str:
        system = sayings.side_question_prompt(self.purpose, spec, self._context)
        try:
            reply = await self.llm.text(system, text, max_tokens=50)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="side_question_failed", error=str(e))
            reply = sayings.NO_ANSWER
        self.emit("decision", agent=self.id, what="side_question", heard=text, reply=reply)
        return reply

    # ---- speaking and hearing ----------------------------------------------------------------------

    def _hint_for(self, field: str | None, spelling: bool) -> str:
        """What the line's ASR is hinted with before asking ``field``: the person's names and
        its options, or the letters and the spelling alphabet when ``spelling`` is expected."""
        spec = self.state.specs.get(field or "")
        if spelling:
            return fields.spelling_context(spec)
        return fields.asr_context(self.state.specs, self.talk.held(self.state), spec)

    async def _question(self, question: confirmation.Question) -> Heard | Typed | GaveUp:
        """Say the question and return the answer (:meth:`CallLine.ask`); :class:`Typed` when
        the person typed the value of ``question.field`` meanwhile; :class:`GaveUp` when a
        ``step_failed`` or the computer agent's failure arrived (the person hears about it now
        rather than after their answer)."""
        field = question.field

        def check() -> None:
            if any(_cuts_the_wait(e.payload) for e in self._inbox.items):
                raise _GaveUp()  # left in items: applied at the next safe point, after this ask
            if field is not None:
                self._take_messages()
                if field in self.state.typed:
                    raise _Typed(field)

        if self._t_first is None:
            self._t_first = time.monotonic()
        try:  # spelling: asked, now or before
            text, said = await self.call_line.ask(
                question.text, field, field in self.state.spell_asks, check, PERSON_HOLD_S if question.hold else None
            )
        except _Typed:
            return Typed()
        except _GaveUp:
            return GaveUp()
        if question.counted and self._t_authorise is None:
            self.stats.person_turns += 1
            self._t_last_answer = time.monotonic()
        if question.sync:
            self._take_messages()
        return Heard(text, self.line.heard_words, self.line.heard_resumes, said)

    async def _send(self, payload: Payload) -> None:
        env = Envelope.new(payload, sender=self.id, recipient=self.computer_id, task_id=self.task_id)
        self.emit("bus_out", agent=self.id, type=env.type, payload=env.payload.model_dump())
        await self.bus.publish(env)
