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
end the fast ``llm`` says a short acknowledgement of what was asked ("The history of Rome, let
me think."), not a canned one, as :class:`AckAudioRawFrame` audio; the playout drops it when the
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

from appliance.llm.base import LLM
from appliance.voice.decisions import AcknowledgeFrame
from appliance.voice.line import last_user_text
from appliance.voice.markers import strip_markers
from appliance.voice.piper_synth import VoiceStyle

log = logging.getLogger(__name__)

_CHUNK_MS = 40

#: what the fast model is asked while the slow one answers (issue 28: "a short, relevant acknowledgement … not a
#: canned 'One moment.'"); its words are the person's last ones
ACK_PROMPT = (
    "You are a voice assistant. Another assistant is working out the full answer to what the person just said. "
    "Reply with one short sentence of at most eight words that shows you understood what they asked, "
    'without answering it. Examples: "The history of Rome, let me think." "A book for a long flight, '
    'good question." "Green tea, let me check."'
)
ACK_MAX_TOKENS = 16  # at ~30 ms a token on 2 cores, the acknowledgement's text within ~0.5 s
ACK_MAX_WORDS = 10


def ack_line(text: str) -> str:
    """The fast model's reply as said: markers, quotation marks and a role prefix gone, its first
    sentence, at most :data:`ACK_MAX_WORDS` words; '' when no word is left."""
    text = re.sub(r"^\s*(?:assistant|bot|ai)\s*:\s*", "", strip_markers(text), flags=re.I)
    text = re.sub(r"[\"“”]|(?<!\w)'|'(?!\w)", "", text).strip()
    first = re.match(r"(.+?[.!?])(?:\s|$)", text)
    words = (first.group(1) if first else text).split()[:ACK_MAX_WORDS]
    if not any(re.search(r"\w", w) for w in words):
        return ""
    line = " ".join(words)
    return line if line.endswith((".", "!", "?")) else f"{line.rstrip(',;:')}."


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
    on) ``llm`` (the fast model's ``"ack"`` slot) is asked for a line (:data:`ACK_PROMPT`,
    :func:`ack_line`) about the person's last words; ``synth`` (Piper: ``synthesize(text,
    VoiceStyle) -> int16``, ``sample_rate_hz``) says it in the bot's voice, and the audio goes downstream as
    :class:`AckAudioRawFrame` chunks. ``report(event, **fields)`` gets ``ack`` with ``after_ms``
    (from the turn's end to the audio's push) and ``text``, or ``ack_failed`` with ``error``:
    the person hears nothing then, never an error. New speech or an interruption drops an
    acknowledgement not yet pushed.
    """

    def __init__(self, llm: LLM, synth, report: Callable[..., None] | None = None, **kwargs):
        super().__init__(**kwargs)
        self._llm, self._synth = llm, synth
        self._report = report or (lambda *_a, **_k: None)
        self._task: asyncio.Task | None = None

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

    async def _say(self, words: str) -> None:
        t0 = asyncio.get_running_loop().time()
        try:
            line = ack_line(await self._llm.text(ACK_PROMPT, words, max_tokens=ACK_MAX_TOKENS, temperature=0.3))
            if not line:
                self._report("ack_failed", error="the fast model said nothing speakable")
                return
            audio = (await asyncio.to_thread(self._synth.synthesize, line, VoiceStyle())).tobytes()
        except Exception as e:  # the LLM's error, or Piper's: the answer still comes, unacknowledged
            log.warning("acknowledgement failed: %s", e)
            self._report("ack_failed", error=str(e))
            return
        rate = self._synth.sample_rate_hz
        self._report("ack", after_ms=round((asyncio.get_running_loop().time() - t0) * 1000), text=line)
        step = rate * 2 * _CHUNK_MS // 1000
        for i in range(0, len(audio), step):
            await self.push_frame(AckAudioRawFrame(audio[i : i + step], rate, 1))

    async def cleanup(self):
        await super().cleanup()
        await self._drop()
