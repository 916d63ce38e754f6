"""A voice line for agents that decide in code what to say: the phone agent, the
Werewolf judge talking to a human seat.

:class:`LineProcessor` takes the LLM's place in the voice pipeline
(:func:`appliance.voice.pipeline.build_task` with ``line=``)::

    transport.input → STT → user aggregator → LineProcessor → clauses + markers → TTS
      → transport.output → LineProcessor.played

The agent calls :meth:`LineProcessor.say` (returns once the bot's audio has been played
or cut off by barge-in) and :meth:`LineProcessor.hear` (the person's next turn, the final
transcript the user aggregator committed). VAD, barge-in, captions, latency events and
recording are the pipeline's as for the plain assistant.
"""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InterruptionFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.voice.markers import VoiceFrame
from appliance.voice.tts import VoiceStyle

#: ``say`` gives up waiting for the audio after this long plus ~80 ms per character.
SAY_TIMEOUT_BASE_S = 8.0


class LineProcessor(FrameProcessor):
    """The agent's side of a voice session: ``say(text)`` and ``hear()``."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._heard: asyncio.Queue[str] = asyncio.Queue()
        self._spoken = asyncio.Event()
        self._started = asyncio.Event()
        #: goes after ``transport.output()``: the output transport lets a reply's end
        #: frame through only after the reply's audio, so seeing it means "played".
        self.played = _PlayedProbe(self._spoken)

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            text = _last_user_text(frame.context.get_messages())
            if text:
                self._heard.put_nowait(text)
            return  # no LLM behind this line: the context stops here
        if isinstance(frame, BotStartedSpeakingFrame):
            self._started.set()
        elif isinstance(frame, InterruptionFrame):
            self._spoken.set()
        await self.push_frame(frame, direction)

    async def say(self, text: str, voice: VoiceStyle | None = None) -> None:
        """Speak ``text`` (markers allowed), in ``voice`` when given (a speaker's own,
        e.g. a Werewolf seat's); return when it was played or interrupted."""
        self._spoken.clear()
        self._started.clear()
        await self.push_frame(LLMFullResponseStartFrame())
        if voice is not None:
            await self.push_frame(VoiceFrame(voice=voice))
        await self.push_frame(LLMTextFrame(text))
        await self.push_frame(LLMFullResponseEndFrame())
        try:
            await asyncio.wait_for(self._spoken.wait(), SAY_TIMEOUT_BASE_S + 0.08 * len(text))
        except TimeoutError:
            if not self._started.is_set():
                raise RuntimeError(f"no audio was played for {text!r}: is TTS working?") from None

    def forget(self) -> None:
        """Drop transcripts not yet taken by :meth:`hear` (talk that answered no question)."""
        while not self._heard.empty():
            self._heard.get_nowait()

    async def hear(self) -> str:
        """The person's next final transcript (safe to cancel)."""
        return await self._heard.get()


class _PlayedProbe(FrameProcessor):
    def __init__(self, spoken: asyncio.Event, **kwargs):
        super().__init__(**kwargs)
        self._spoken = spoken

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMFullResponseEndFrame) and direction == FrameDirection.DOWNSTREAM:
            self._spoken.set()
        await self.push_frame(frame, direction)


def _last_user_text(messages: list) -> str:
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content.strip()
            return " ".join(p.get("text", "") for p in content if isinstance(p, dict)).strip()
    return ""
