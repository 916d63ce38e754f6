"""Never silent when the LLM fails: a short spoken apology for a reply that did not come.

:class:`LLMApology` sits just before the LLM service. The service reports a failed reply
with an ``ErrorFrame`` it pushes upstream — the embedded llama-server killed mid-reply (the
runtime starts it again and re-warms its prompts: :class:`~appliance.llm.server.EmbeddedLLMServer`),
or a cloud endpoint's 5xx or timeout once the OpenAI SDK's own bounded retries (2, with
exponential backoff) are spent. The apology goes downstream as a ``TTSSpeakFrame`` through
TTS to the person, and the next turn is answered as usual. An ``llm_apology`` event
records the error. Errors of other processors pass by untouched (they are not a missing
reply).
"""

from __future__ import annotations

from typing import Callable

from pipecat.frames.frames import ErrorFrame, Frame, TTSSpeakFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

APOLOGY = "Sorry, I lost my answer there. Could you say that again?"


class LLMApology(FrameProcessor):
    """Says :data:`APOLOGY` when ``llm`` (the processor after this one) reports an error;
    ``report(event, **fields)`` gets ``llm_apology{error}``."""

    def __init__(self, llm: FrameProcessor, report: Callable[..., None], **kwargs):
        super().__init__(**kwargs)
        self._llm, self._report = llm, report

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if direction == FrameDirection.UPSTREAM and isinstance(frame, ErrorFrame) and frame.processor is self._llm:
            self._report("llm_apology", error=frame.error)
            await self.push_frame(TTSSpeakFrame(APOLOGY), FrameDirection.DOWNSTREAM)
        await self.push_frame(frame, direction)
