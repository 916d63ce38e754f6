"""The base of our TTS services: one synthesis per clause, each in the style its markers set."""

from __future__ import annotations

import asyncio

from pipecat.frames.frames import Frame, InterruptionFrame
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import TTSSettings
from pipecat.services.tts_service import TTSService

from appliance.voice.decisions import PlayoutAheadFrame
from appliance.voice.markers import SpeechStyle, StyledClauseFrame


def silence(ms: int, sample_rate_hz: int) -> bytes:
    """``ms`` milliseconds of s16 mono silence at ``sample_rate_hz``."""
    return bytes(int(sample_rate_hz * ms / 1000) * 2)


class ClauseTTSService(TTSService):
    """A pipecat ``TTSService`` that says each :class:`StyledClauseFrame` as one synthesis.

    Styles travel in a FIFO: each clause's style is queued when its frame arrives and taken
    by the ``run_tts`` call that synthesises that clause (pipecat runs them in frame order);
    an ``InterruptionFrame`` empties it. Text that came without a style (a plain
    ``TTSSpeakFrame``) is said in the default :class:`SpeechStyle`. Subclasses implement
    ``run_tts`` and call :meth:`next_style` once per call.

    The playout's :class:`~appliance.voice.decisions.PlayoutAheadFrame` (upstream) ends
    here: :meth:`ahead_s` is the audio not yet heard, for a service that keeps pace with it.
    """

    def __init__(self, **kwargs):
        super().__init__(
            push_start_frame=True,
            push_stop_frames=True,
            settings=TTSSettings(model=None, voice=None, language=None),
            **kwargs,
        )
        self._styles: list[SpeechStyle] = []
        self._ahead: tuple[PlayoutAheadFrame, float] | None = None  # the playout's last figure, loop time it came

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        if isinstance(frame, PlayoutAheadFrame):
            self._ahead = (frame, asyncio.get_running_loop().time())
            return  # for the TTS alone: nothing above it paces itself by playback
        if isinstance(frame, StyledClauseFrame):
            self._styles.append(frame.style)
        elif isinstance(frame, InterruptionFrame):
            self._styles.clear()
        await super().process_frame(frame, direction)

    def ahead_s(self) -> float:
        """Seconds of the bot's audio the playout holds or sent on and not yet played, from
        its last :class:`~appliance.voice.decisions.PlayoutAheadFrame` (0.0 before one: no
        playout behind this service)."""
        if self._ahead is None:
            return 0.0
        frame, at = self._ahead
        return frame.ahead_s(asyncio.get_running_loop().time() - at)

    def next_style(self) -> SpeechStyle:
        """The style of the clause ``run_tts`` is about to say."""
        return self._styles.pop(0) if self._styles else SpeechStyle()
