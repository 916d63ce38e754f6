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
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from pipecat.frames.frames import (
    Frame,
    InterruptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.voice.decisions import AcknowledgeFrame

_CHUNK_MS = 40


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
