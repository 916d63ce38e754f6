"""The phone agent: interviews the person one field at a time, never waiting on the browser.

Its audio side is a :class:`Line` — ``say(text)`` and ``hear()`` (the next final
transcript) — so the same agent runs on the WebRTC voice pipeline (a person at the page, or
the simulated person joining over WebRTC) or on a terminal.

The interview, in code (the LLM only answers side questions and, when no option is named
word for word, picks the option the person meant); its state and rules are the pure
:mod:`~appliance.phone_agent.interview`, and this loop only speaks, listens and sends:

* fields arrive with ``need_info`` (or ``initiate_phone_call_agent.required_info``) and
  queue in page order; ``format_invalid`` / ``fill_error`` put a field back at the front
  with the reason, which is said before the question;
* each answer is normalised in code (:mod:`normalise`), sent at once as
  ``info_collected{confirmed: false}`` (the computer agent fills and checks it while the
  value is read back), then read back; a "yes" sends ``confirmed: true``, a "no, it's …"
  reads the new value back, anything else asks again. A yes/no or an option said word for
  word needs no read-back;
* with nothing left to ask the agent says what is happening (the form is loading, the next
  page is opening) and waits for the computer agent — at such a *step boundary* that is not
  a wait; any other hold of its next utterance counts in ``waits_on_browser``
  (CONTRACTS.md ``phone_waits_on_browser``);
* after ``status_update{auth-required}`` it asks for explicit authorisation: "yes" sends
  ``submit_authorized``, "no" ends the task unsent; ``submitted`` → it tells the person and
  sends ``task_completed``;
* ``step_failed`` (the computer agent gave up on a step) is said at once — what is wrong and
  what the person can do —, cutting short a wait for an answer so that it is never more than
  a moment after the give-up (CONTRACTS.md "within 5 s"); each counts in
  ``explained_failures``, as does a failure that ends the call;
* ``format_invalid`` with ``candidates`` asks the person to pick one of the page's close
  matches (:mod:`~appliance.phone_agent.candidates`);
* ``status_update{review}`` (a "don't submit" task, filled): it tells the person the form
  waits for their review in the preview and ends the call; the browser stays up.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from appliance.bus import Bus, Envelope
from appliance.bus.inbox import AgentInbox, Terminated
from appliance.llm.client import LLM, LLMError
from appliance.llm.decision import choices
from appliance.phone_agent import candidates as cands
from appliance.phone_agent import fields as fl
from appliance.phone_agent import interview as iv
from appliance.phone_agent import normalise as nz
from appliance.bus import now_ms
from appliance.protocol import (Emit, FieldSpec, FieldValue, InfoCollected, Payload, StatusUpdate, StepFailed,
                                SubmitAuthorized, TaskCompleted)

log = logging.getLogger(__name__)

GREETING = ("Hello! I'm your assistant for the web form. I'll ask you a few questions and fill in the form while "
            "we talk.")
FILLERS: dict[iv.Filler, str] = {"opening": "I'm opening the form now.",
                                 "working": "One moment, I'm working on the form."}
HOLD_S = 20.0  # a hold longer than this gets a word to the person


class Line(Protocol):
    """The phone agent's audio side as text. The voice pipeline implements it."""

    async def say(self, text: str) -> None:
        """Speak ``text``; return when it has been played (or cut off by barge-in)."""

    async def hear(self) -> str:
        """The person's next final transcript (waits; must be safe to cancel)."""


class QueueLine:
    """A :class:`Line` whose transcripts come from a queue: call :meth:`heard` with each
    final transcript. Subclasses implement ``say``."""

    def __init__(self) -> None:
        self._q: asyncio.Queue[str] = asyncio.Queue()

    def heard(self, text: str) -> None:
        self._q.put_nowait(text)

    async def hear(self) -> str:
        return await self._q.get()


class _HungUp(Exception):
    """The person stopped answering."""


class _GaveUp(Exception):
    """A ``step_failed`` arrived while the agent waited for an answer: it is said first."""


@dataclass
class PhoneOutcome:
    """``status``: ``submitted``, ``not_submitted`` (declined), ``review`` (filled, left for the
    person to check), ``failed`` (the form could not be done), ``no_answer`` or
    ``terminated``; ``waits_on_browser`` and ``explained_failures`` as in CONTRACTS.md."""

    status: str
    waits_on_browser: int
    detail: str = ""
    explained_failures: int = 0


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
    """

    def __init__(self, bus: Bus, line: Line, llm: LLM, *, task_id: str, purpose: str, emit: Emit,
                 fields: tuple[FieldSpec, ...] = (), date_order: str = "DMY", agent_id: str = "phone",
                 computer_id: str = "computer", answer_timeout_s: float = 30.0):
        self.bus, self.line, self.llm = bus, line, llm
        self.task_id, self.purpose, self.emit = task_id, purpose, emit
        self.date_order, self.id, self.computer_id = date_order, agent_id, computer_id
        self.answer_timeout_s = answer_timeout_s
        self.state = iv.start(fields)
        self._context: deque[str] = deque(maxlen=8)  # recent bus messages, labelled by sender
        self._inbox = AgentInbox(self.id, emit)
        self._prefix = ""
        self._explained = 0

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
        self.emit("agent_finished", agent=self.id, status=outcome.status, waits_on_browser=outcome.waits_on_browser,
                  explained_failures=outcome.explained_failures, detail=outcome.detail)
        return outcome

    async def _call(self) -> PhoneOutcome:
        try:
            await self._say(GREETING)
            while True:
                self._take_messages()
                match iv.next_step(self.state):
                    case iv.Failed(reason=reason):
                        self._explained += 1
                        await self._say(f"I'm sorry, I couldn't complete the form: {reason}")
                        await self._finish(f"not submitted: {reason}")
                        return self._outcome("failed", reason)
                    case iv.Finished(confirmation=confirmation):
                        await self._say("Done! The form has been submitted. Thank you, goodbye.")
                        await self._finish(f"submitted: {confirmation}")
                        return self._outcome("submitted", confirmation)
                    case iv.Explain() as ex:
                        await self._explain(ex)
                    case iv.Ask() as ask:
                        self.state = iv.begin(self.state, ask)
                        try:
                            await self._interview(ask)
                        except _GaveUp:  # asked again after the explanation, unless it is about this field
                            self.state = iv.requeue(self.state, ask)
                    case iv.Authorise():
                        try:
                            if not await self._authorise():
                                return self._outcome("not_submitted", "the person did not authorise")
                        except _GaveUp:
                            pass  # still requested: asked again after the explanation
                    case iv.Review(message=message):
                        await self._say(f"{message.rstrip('. ')}. I have not submitted it: you can check it in the "
                                        "preview on your page, then submit it there yourself, or cancel. Goodbye.")
                        await self._finish("not submitted: filled in, waiting for the person's review")
                        return self._outcome("review", message)
                    case iv.Hold(boundary=boundary):
                        await self._hold(boundary)
        except _HungUp:
            await self._finish("not submitted: the person stopped answering")
            return self._outcome("no_answer", "no answer")

    def _outcome(self, status: str, detail: str) -> PhoneOutcome:
        return PhoneOutcome(status, self.state.waits_on_browser, detail, self._explained)

    async def _finish(self, summary: str) -> None:
        await self._send(TaskCompleted(summary=summary))

    # ---- bus messages ------------------------------------------------------------------------------

    def _take_messages(self) -> None:
        """Apply what arrived (at a safe point between utterances; never blocks)."""
        self._inbox.arrived.clear()
        while self._inbox.items:
            env = self._inbox.items.pop(0)
            self._context.append(f"[{env.sender}] {env.type}: {env.payload.model_dump_json(exclude_none=True)[:200]}")
            self.state = iv.apply(self.state, env.payload, env.ts)

    async def _hold(self, boundary: bool) -> None:
        """Nothing to ask: keep the person informed, then wait for the computer agent."""
        self.state, filler = iv.hold(self.state)
        if filler is not None:
            await self._say(FILLERS[filler])
        elif not boundary:
            self.emit("waits_on_browser", agent=self.id, count=self.state.waits_on_browser)
        try:
            await asyncio.wait_for(self._inbox.arrived.wait(), HOLD_S)
        except TimeoutError:
            if self.state.handed_over:  # waiting for the person, not the browser: remind them what to do
                await self._say(f"I'm waiting for you: {list(self.state.handed_over.values())[-1]}")
            else:
                await self._say("I'm still working on the form, thank you for waiting.")

    async def _explain(self, ex: iv.Explain) -> None:
        """Tell the person what the computer agent could not do and what they can do."""
        self.state = iv.explained(self.state)
        self._explained += 1
        self.emit("failure_explained", agent=self.id, problem=ex.problem, field=ex.field,
                  delay_ms=now_ms() - ex.since_ms if ex.since_ms else None)
        await self._say(f"{ex.reason.rstrip('. ')}. {ex.advice}")

    # ---- the interview -----------------------------------------------------------------------------

    async def _interview(self, ask: iv.Ask) -> None:
        if ask.choices:
            await self._choose(ask)
            return
        spec = ask.spec
        q = fl.question(spec)
        say = f"Sorry, the form did not accept that: {ask.reason.rstrip('. ')}. {q}" if ask.reason else q
        for _ in range(4):
            text = await self._ask(say)
            if _REPEAT.search(text):
                say = q
                continue
            if _is_question(text):  # a side question, not an answer: answer it, then ask again
                say = f"{await self._answer_side_question(spec, text)} {q}"
                continue
            value = fl.parse(spec, text, self.date_order)
            needs_read_back = fl.kind(spec) not in ("yesno", "choice") or (
                isinstance(value, str) and nz.choice(text, (value,), by_sound=False) is None)  # matched by sound
            if value is None and fl.kind(spec) == "choice":
                value = await self._pick_option(spec, text)
                needs_read_back = value is not None
            if value is None:
                say = f"Sorry, I didn't get that. {fl.hint(spec)} {q}".replace("  ", " ")
                continue
            if not needs_read_back:
                await self._info(spec, value, confirmed=True)
                self._prefix = "Thanks. "
                return
            value = await self._confirm(spec, value, text)
            if value is not None:
                self._prefix = "Thanks. "
                return
            if any(a.spec.name == spec.name and a.choices for a in self.state.queue):
                return  # the page offers close matches: that ask, with its choices, comes next
            self.state, reason = iv.reask(self.state, spec.name)  # re-asked right here
            say = (f"Sorry, the form did not accept that: {reason.rstrip('. ')}. {q}" if reason
                   else f"Let's try again. {q}")
        self.state = iv.give_up(self.state, spec.name)  # back of the queue, or the form fails
        self.emit("decision", agent=self.id, what="field_given_up", field=spec.name,
                  times=self.state.given_up[spec.name])

    async def _choose(self, ask: iv.Ask) -> None:
        """The page offers several close matches for the person's value: they pick one (no
        read-back: it is said as the page lists it); an answer that names none is taken as a
        new value for the field."""
        spec, q = ask.spec, cands.question(ask.spec.label, ask.choices)
        say = q
        for _ in range(3):
            text = await self._ask(say)
            if _REPEAT.search(text):
                continue
            pick = cands.pick(text, ask.choices)
            if pick is None and not _is_question(text):
                pick = await self._pick_option(spec.model_copy(update={"type": "select", "options": ask.choices}), text)
            if pick is not None:
                self.emit("decision", agent=self.id, what="candidate_picked", field=spec.name, heard=text, pick=pick)
                await self._info(spec, pick, confirmed=True)
                self._prefix = "Thanks. "
                return
            say = f"Sorry, I didn't get which one. {q}"
        self.state = iv.give_up(self.state, spec.name)
        self.emit("decision", agent=self.id, what="field_given_up", field=spec.name,
                  times=self.state.given_up[spec.name])

    async def _confirm(self, spec: FieldSpec, value: FieldValue, heard: str) -> FieldValue | None:
        """Read ``value`` (from the answer ``heard``) back until the person accepts it (→ the
        value) or not (→ None)."""
        for _ in range(3):
            await self._info(spec, value, confirmed=False)
            text = await self._ask(fl.read_back(spec, value, heard))
            self._take_messages()
            if iv.refused(self.state, spec.name, value):
                return None  # the page already refused it: ask again with the reason
            yes = nz.yes_no(text)
            if yes:
                await self._info(spec, value, confirmed=True)
                return value
            heard = re.sub(r"(?i)^\W*no\b[\W]*", "", text)
            corrected = fl.parse(spec, heard, self.date_order)
            if yes is False and corrected is not None:  # "No, it's …": read that back (the same value
                value = corrected                       # again when the person misheard the read-back)
                continue
            return None
        return None

    async def _authorise(self) -> bool:
        """Ask for explicit authorisation to submit. False: declined (the task ends unsent)."""
        for _ in range(3):
            yes = nz.yes_no(await self._ask("All the fields are filled in. Shall I submit the form now?"))
            self._take_messages()
            if self.state.queue:  # the page wants something else first
                return True
            if yes:
                self.state = iv.authorised(self.state)
                await self._send(SubmitAuthorized())
                self.emit("decision", agent=self.id, what="submit_authorized")
                await self._say("Thank you. I'm submitting it now.")
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

    async def _pick_option(self, spec: FieldSpec, text: str) -> str | None:
        """The LLM picks the option the person meant (one of them, or none)."""
        opts = tuple(spec.options or ())
        none = "none of them"
        try:
            ans = await self.llm.decide(
                "Pick the option the person means. Answer with the option, or \"none of them\" when the person "
                'named none of them. Example: options Germany, France, Spain; the person said "I\'m French" → '
                '{"option":"France"}.',
                f'Options: {", ".join(opts)}\nQuestion: {fl.question(spec)}\nThe person said: "{text}"',
                choices("OptionPick", option=(*opts, none)), max_tokens=30)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="pick_option_failed", error=str(e))
            return None
        pick = ans.option
        self.emit("decision", agent=self.id, what="pick_option", field=spec.name, heard=text, option=pick)
        return pick if pick in opts else None

    async def _answer_side_question(self, spec: FieldSpec, text: str) -> str:
        system = (f"You are a friendly phone assistant helping a person fill in a web form. Purpose of the "
                  f"call: {self.purpose}. The form asks for: {spec.label}. What the person tells you is typed into that form and "
                  "nowhere else, and nothing is sent before they allow it. Answer the person's question in one "
                  "short spoken sentence; if you do not know, say so; never make up facts.\n"
                  "Example: Why do you need my date of birth? => The form asks for it, and it is required to "
                  "complete it.\nRecent messages from the other agents:\n" + "\n".join(self._context))
        try:
            reply = await self.llm.text(system, text, max_tokens=50)
        except LLMError as e:
            self.emit("decision", agent=self.id, what="side_question_failed", error=str(e))
            reply = "Good question; I can only help with the form for now."
        self.emit("decision", agent=self.id, what="side_question", heard=text, reply=reply)
        return reply

    # ---- speaking and hearing ----------------------------------------------------------------------

    async def _say(self, text: str) -> None:
        text, self._prefix = self._prefix + text, ""
        self.emit("say", agent=self.id, text=text)
        await self.line.say(text)

    async def _ask(self, text: str) -> str:
        """Say ``text`` and return the answer; re-prompt after silence; :class:`_HungUp` after three."""
        await self._say(text)
        prompts = ["Are you still there?", f"Are you there? {text}"]
        prompted = False
        while True:
            try:
                heard = nz.clean(await self._hear(self.answer_timeout_s))
            except TimeoutError:
                if not prompts:
                    raise _HungUp() from None
                prompted = True
                await self._say(prompts.pop(0))
                continue
            self.emit("heard", agent=self.id, text=heard)
            if prompted and _PRESENT.fullmatch(heard):  # "Yes, I'm here." answers the check, not the question
                prompted = False
                await self._say(text)
                continue
            if heard:
                return heard

    async def _hear(self, timeout_s: float) -> str:
        """The person's next transcript within ``timeout_s`` (else ``TimeoutError``); a
        ``step_failed`` arriving meanwhile stops the wait (:class:`_GaveUp`), so that the
        person hears about it now rather than after their answer."""
        hear = asyncio.ensure_future(self.line.hear())
        deadline = asyncio.get_running_loop().time() + timeout_s
        try:
            while True:
                if any(isinstance(e.payload, StepFailed) for e in self._inbox.items):
                    raise _GaveUp()
                self._inbox.arrived.clear()  # what arrived stays in items for the next safe point
                arrived = asyncio.ensure_future(self._inbox.arrived.wait())
                left = deadline - asyncio.get_running_loop().time()
                done, _ = await asyncio.wait({hear, arrived}, timeout=max(0.0, left),
                                             return_when=asyncio.FIRST_COMPLETED)
                arrived.cancel()
                if hear in done:
                    return hear.result()
                if not done:
                    raise TimeoutError()
        finally:
            if not hear.done():
                hear.cancel()

    async def _info(self, spec: FieldSpec, value: FieldValue, confirmed: bool) -> None:
        if confirmed:
            self.state = iv.confirm(self.state, spec.name, value)
        await self._send(InfoCollected(field=spec.name, value=value, confirmed=confirmed))

    async def _send(self, payload: Payload) -> None:
        env = Envelope.new(payload, sender=self.id, recipient=self.computer_id, task_id=self.task_id)
        self.emit("bus_out", agent=self.id, type=env.type, payload=env.payload.model_dump())
        await self.bus.publish(env)


_PRESENT = re.compile(r"\W*(yes|yeah|yep)?\W*(i am|i'm)?\W*(still )?(here|there)?\W*", re.I)
_REPEAT = re.compile(r"\b(say that again|repeat|pardon|come again|didn't (catch|hear))\b", re.I)


def _is_question(text: str) -> bool:
    t = text.strip().casefold()
    return t.endswith("?") or bool(re.match(r"(why|what|how|who|where|when|which|can|could|do|does|is|are|will|"
                                            r"would|should)\b", t))
