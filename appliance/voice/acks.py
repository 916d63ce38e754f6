"""Never silent when slow: a short acknowledgement when the answer's first audio is late.

:class:`Acknowledger` sits between TTS and :class:`~appliance.voice.playout.Playout`. When
the person's turn ends it waits ``turn.ack_after_ms``; if no audio of the answer has come
by then it says ``turn.ack_text`` ("One moment.", synthesised once per session) as
:class:`AckAudioRawFrame` audio. The acknowledgement never holds the answer back: the
playout drops what is left of it as soon as the answer's audio arrives (at most its
``lead_ms`` has already gone to the transport). It is not the answer: the latency events
and the benchmark's v2v ignore it; each one is reported as an ``ack`` event.

When (``turn.ack``): ``on`` after every turn; ``auto`` (default) after every turn when the
LLM is remote (``llm.provider`` is not ``embedded``), and in an agent mode whenever the
agent announces a slow step (:meth:`~appliance.voice.line.LineProcessor.acknowledge`,
e.g. a tool call, sends an :class:`~appliance.voice.decisions.AcknowledgeFrame`); ``off`` never.

A fast voice while a slow mind thinks (``llm.slow``, the plain assistant; issue 28):
:class:`RelevantAck` sits before the LLM, which then answers with ``llm.slow``; at each turn's
end the fast ``llm`` names what was asked, said back ("The history of Rome, let me think."),
not a canned line, as :class:`AckAudioRawFrame` audio; the playout drops it when the
answer's audio comes first.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from typing import Callable

from pipecat.frames.frames import (
    Frame,
    InterruptionFrame,
    LLMContextFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pydantic import BaseModel, Field

from appliance.llm.base import LLM
from appliance.voice.decisions import AcknowledgeFrame
from appliance.voice.line import last_user_text
from appliance.voice.piper_synth import VoiceStyle

log = logging.getLogger(__name__)

_CHUNK_MS = 40

#: what the fast model is asked while the slow one answers (issue 28: "a short, relevant acknowledgement … not a
#: canned 'One moment.'"): the subject of the person's last words, which the line says back (:func:`ack_line`). Asked
#: for a whole sentence, the 0.5B coder model answered the question instead ("Rome was a Roman city located in the
#: Mediterranean Sea.") and took ~1 s for 16 tokens; a few words under a grammar take ~10 tokens
ACK_PROMPT = (
    "Name the subject of the person's words in two to five words, as a listener repeats it back while thinking. "
    'Examples: "Can you tell me about the history of Rome?" -> the history of Rome. "How do I make a cup of '
    'green tea?" -> making green tea. "What is the weather like in London in spring?" -> London in spring.'
)


class AckTopic(BaseModel):
    """The fast model's answer: what the person asked about, in a few words ("the history of Rome")."""

    topic: str = Field(pattern=r"^[A-Za-z][A-Za-z' ]{1,34}$")


ACK_MAX_TOKENS = 16  # {"topic":"…"} of up to 35 characters
ACK_MAX_WORDS = 6
#: the acknowledgement's opening, said the moment the turn ends while the fast model names the subject (its words
#: came 0.6–0.7 s after the turn's end here, 2 cores; the opening lasts ~0.8 s): it starts within the issue's 700 ms
ACK_LEAD = "Let me think about"
#: … and its close when the fast model named nothing speakable
ACK_FALLBACK = "that."


def ack_line(topic: str) -> str:
    """The close said after :data:`ACK_LEAD` for the subject ``topic``: "the history of Rome."
    (at most :data:`ACK_MAX_WORDS` of its words); '' when it has no word."""
    words = re.findall(r"[A-Za-z][A-Za-z']*", topic)[:ACK_MAX_WORDS]
    return f"{' '.join(words)}." if words else ""


@dataclass
class AckAudioRawFrame(TTSAudioRawFrame):
    """Audio of an acknowledgement, not of an answer."""


class Acknowledger(FrameProcessor):
    """Says ``audio`` (s16 mono at ``sample_rate``) when the answer's audio is ``after_ms`` late.

    ``every_turn``: arm after each person's turn (else only on an
    :class:`~appliance.voice.decisions.AcknowledgeFrame`: a slow step begins, acknowledge
    unless the answer comes within ``after_ms`` from then; the frame ends here).
    ``report(event, **fields)`` gets ``ack`` with ``after_ms``.
    """

    def __init__(
        self,
        audio: bytes,
        sample_rate: int,
        after_ms: int,
        every_turn: bool,
        report: Callable[..., None] | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._audio = audio
        self._rate = sample_rate
        self._after_s = after_ms / 1000
        self._every_turn = every_turn
        self._report = report or (lambda *_a, **_k: None)
        self._timer: asyncio.Task | None = None
        self._armed_at = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, AcknowledgeFrame):
                self._arm(self._after_s)
                return
            if isinstance(frame, UserStoppedSpeakingFrame) and self._every_turn:
                self._arm(self._after_s)
            elif isinstance(frame, (TTSStartedFrame, TTSAudioRawFrame, InterruptionFrame, VADUserStartedSpeakingFrame)):
                self._disarm()  # the answer is here, or the person talks again
        await self.push_frame(frame, direction)

    def _arm(self, delay_s: float) -> None:
        self._disarm()
        self._armed_at = asyncio.get_running_loop().time()
        self._timer = self.create_task(self._say_after(delay_s), "ack")

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _say_after(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        self._timer = None
        late_ms = round((asyncio.get_running_loop().time() - self._armed_at) * 1000)
        self._report("ack", after_ms=late_ms)
        step = self._rate * 2 * _CHUNK_MS // 1000
        for i in range(0, len(self._audio), step):
            await self.push_frame(AckAudioRawFrame(self._audio[i : i + step], self._rate, 1))

    async def cleanup(self):
        await super().cleanup()
        self._disarm()


class RelevantAck(FrameProcessor):
    """Says what a person says while thinking (``llm.slow`` answers; see the module docstring).

    At each turn's end (the ``LLMContextFrame`` the user aggregator pushes to the LLM, passed
    on) it says :data:`ACK_LEAD` at once and asks ``llm`` (the fast model's ``"ack"`` slot)
    for the subject of the person's last words (:data:`ACK_PROMPT`, :class:`AckTopic`), said
    next (:func:`ack_line`; :data:`ACK_FALLBACK` when it names nothing speakable or fails):
    "Let me think about the history of Rome." ``synth`` (Piper: ``synthesize(text,
    VoiceStyle) -> int16``, ``sample_rate_hz``) says both in the bot's voice (the opening and
    the fallback once per session); the audio goes downstream as :class:`AckAudioRawFrame`
    chunks. ``report(event, **fields)`` gets ``ack`` with ``after_ms`` (from the turn's end to
    the opening's push) and ``text`` (all of it), and ``ack_failed`` with ``error`` when the
    subject could not be had: the person hears the fallback then, never an error. New speech
    or an interruption drops what is not yet pushed.
    """

    def __init__(self, llm: LLM, synth, report: Callable[..., None] | None = None, **kwargs):
        super().__init__(**kwargs)
        self._llm, self._synth = llm, synth
        self._report = report or (lambda *_a, **_k: None)
        self._task: asyncio.Task | None = None
        self._said: dict[str, bytes] = {}  # the opening and the fallback, synthesised once

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, LLMContextFrame):
                words = last_user_text(frame.context.get_messages())
                if words:
                    await self._drop()
                    self._task = self.create_task(self._say(words), "relevant-ack")
            elif isinstance(frame, (InterruptionFrame, VADUserStartedSpeakingFrame)):
                await self._drop()
        await self.push_frame(frame, direction)

    async def _drop(self) -> None:
        if self._task is not None:
            await self.cancel_task(self._task)
            self._task = None

    async def _audio(self, text: str, keep: bool = False) -> bytes:
        if text in self._said:
            return self._said[text]
        audio = (await asyncio.to_thread(self._synth.synthesize, text, VoiceStyle())).tobytes()
        if keep:
            self._said[text] = audio
        return audio

    async def _push(self, audio: bytes) -> None:
        rate = self._synth.sample_rate_hz
        step = rate * 2 * _CHUNK_MS // 1000
        for i in range(0, len(audio), step):
            await self.push_frame(AckAudioRawFrame(audio[i : i + step], rate, 1))

    async def _say(self, words: str) -> None:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        topic = asyncio.ensure_future(self._llm.decide(ACK_PROMPT, words, AckTopic, max_tokens=ACK_MAX_TOKENS))
        try:
            await self._push(await self._audio(ACK_LEAD, keep=True))
            after_ms = round((loop.time() - t0) * 1000)
            try:
                line = ack_line((await topic).topic)
                if not line:
                    raise ValueError("the fast model named nothing speakable")
                close = await self._audio(line)
            except Exception as e:  # the LLM's error, or Piper's: the fallback closes it
                log.warning("acknowledgement: %s", e)
                self._report("ack_failed", error=str(e))
                line, close = ACK_FALLBACK, await self._audio(ACK_FALLBACK, keep=True)
            await self._push(close)
            self._report("ack", after_ms=after_ms, text=f"{ACK_LEAD} {line}")
        finally:
            topic.cancel()

    async def cleanup(self):
        await super().cleanup()
        await self._drop()
