"""The phone agent's audio side as text: :class:`Line` (the voice pipeline's
:class:`~appliance.voice.line.LineProcessor` is one), :class:`QueueLine`, a line whose
transcripts come from a queue (a terminal, a scripted person), and :class:`CallLine`, a line
as a call uses it (hints, waits for answers, checks that the person is there)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from appliance.phone_agent import normalise, sayings
from appliance.protocol import Emit
from appliance.protocol.line import SayOutcome


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

    async def say(self, text: str) -> SayOutcome:
        """Speak ``text``; return when it has been played (or cut off by barge-in), saying which
        and what was heard (a line without audio: ``SayOutcome(False, text)``)."""

    async def hear(self) -> str:
        """The person's next final transcript (waits; must be safe to cancel)."""

    async def acknowledge(self) -> None:
        """A slow step begins (a page loads, the form is submitted): unless something is said
        within ``turn.ack_after_ms``, the person hears a short acknowledgement (``turn.ack_text``);
        a line without audio says nothing."""

    async def hint(self, context: str, spelling: bool = False) -> None:
        """Words the person may say again (their names as heard, :func:`~appliance.phone_agent.fields.asr_context`):
        a line with an ASR transcribes after them from now on; one without (text) has no use for them.
        ``spelling``: a spelling is expected (a line with an ASR hears it with ``asr.spelling_engine``)."""


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

    async def acknowledge(self) -> None:
        """Text needs no acknowledgement: the person reads the next words when they come."""

    async def hint(self, context: str, spelling: bool = False) -> None:
        """Typed text needs no ASR context."""


#: while the person is still speaking when an answer's wait runs out, it is looked at again this often (s)
#: (bench: "Are you still there?" cut into an 11 s spelled correction of a passport number)
SPEAKING_POLL_S = 0.5


class HungUp(Exception):
    """The person stopped answering: silence after the question and two checks that they are there."""


class CallLine:
    """A :class:`Line` as a call uses it: each utterance hinted, prefixed and recorded, each
    answer waited for within a time, with checks that the person is still there.

    ``emit``: records ``say``, ``heard`` and ``decision{late_presence_ignored}`` as ``agent``.
    ``answer_timeout_s``: silence after which the person is asked "Are you still there?" (not
    while the line hears them speaking: a spelled e-mail runs 10–15 s). ``arrived``: set when
    a bus message arrives; it wakes a wait for an answer so that the caller's ``check`` can
    stop it. ``hint_for(field, spelling)``: the ASR context before asking ``field`` (None: no
    field), spelled or not (:func:`~appliance.phone_agent.fields.asr_context`); the line is
    hinted when it changes. ``prefix``: said before the next utterance, whatever it is.
    """

    def __init__(
        self,
        line: Line,
        emit: Emit,
        agent: str,
        answer_timeout_s: float,
        arrived: asyncio.Event,
        hint_for: Callable[[str | None, bool], str],
    ):
        self.line, self.emit, self.agent = line, emit, agent
        self.answer_timeout_s, self.arrived, self.hint_for = answer_timeout_s, arrived, hint_for
        self.prefix = ""
        self._hinted: tuple[str, bool] = ("", False)  # what the line was last hinted, and whether for a spelling
        self._overtaken = False  # the last answer came after "Are you still there?": it may still be answered

    async def say(self, text: str, field: str | None = None, spelling: bool = False) -> SayOutcome:
        """Say the prefix and ``text``; the line's ASR is hinted first with what the answer
        may hold (``field``: the field asked; ``spelling``: a spelling is expected)."""
        text, self.prefix = self.prefix + text, ""
        hinted = (self.hint_for(field, spelling), spelling)
        if hinted != self._hinted:  # before the question whose answer may repeat them
            self._hinted = hinted
            await self.line.hint(*hinted)
        self.emit("say", agent=self.agent, text=text)
        return await self.line.say(text)

    async def acknowledge(self) -> None:
        """A slow step begins: the line acknowledges it unless the next words come soon (:meth:`Line.acknowledge`)."""
        await self.line.acknowledge()

    async def ask(
        self,
        text: str,
        field: str | None,
        spelling: bool,
        check: Callable[[], None],
        patience_s: float | None = None,
    ) -> tuple[str, SayOutcome]:
        """Say ``text`` and return the answer (cleaned), with how ``text`` was said (its last
        saying). After silence (``patience_s`` until the first check, else ``answer_timeout_s``)
        "Are you still there?", then "Are you there?" and ``text``;
        :class:`HungUp` after the third. "Yes, I'm here." after a check answers the check (the
        question is said again), and after an answer that overtook the check it answers
        nothing. ``check()`` is called before the wait and whenever a bus message arrives; what
        it raises stops the wait."""
        said = await self.say(text, field, spelling)
        prompts = ["Are you still there?", f"Are you there? {text}"]
        prompted = False
        while True:
            try:
                heard = normalise.clean(await self._hear(check, patience_s))
            except TimeoutError:
                patience_s = None
                if not prompts:
                    raise HungUp() from None
                prompted, prompt = True, prompts.pop(0)
                outcome = await self.say(prompt)
                said = outcome if text in prompt else said
                continue
            self.emit("heard", agent=self.agent, text=heard)
            late, self._overtaken = self._overtaken and bool(sayings.LATE_PRESENCE.fullmatch(heard)), False
            if late:  # the answer to an "Are you still there?" that the answer before overtook
                self.emit("decision", agent=self.agent, what="late_presence_ignored", heard=heard)
                continue
            if prompted and sayings.PRESENT.fullmatch(heard):  # "Yes, I'm here." answers the check, not the question
                prompted = False
                said = await self.say(text)
                continue
            if heard:
                self._overtaken = prompted  # the person may still answer the check
                return heard, said

    async def _hear(self, check: Callable[[], None], patience_s: float | None = None) -> str:
        """The person's next transcript within ``patience_s`` (None: ``answer_timeout_s``; else
        ``TimeoutError``; not while the line hears the person speaking)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (patience_s or self.answer_timeout_s)
        hearing = asyncio.ensure_future(self.line.hear())
        try:
            while True:
                check()
                self.arrived.clear()  # what arrived stays in the inbox for the next safe point
                news = asyncio.ensure_future(self.arrived.wait())
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

    async def stopped_before(self, deadline: float) -> bool:
        """Listen until ``deadline`` (``time.monotonic()`` s); True when the person said "wait",
        "stop" or "no" before it."""
        while (left := deadline - time.monotonic()) > 0:
            try:
                heard = normalise.clean(await asyncio.wait_for(self.line.hear(), left))
            except TimeoutError:
                return False
            self.emit("heard", agent=self.agent, text=heard)
            if sayings.STOP.search(heard):
                return True
        return False
