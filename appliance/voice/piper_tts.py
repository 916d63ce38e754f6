"""Piper as a pipecat TTS service: in-process, one clause at a time, markers as voice settings."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import AsyncGenerator

from pipecat.frames.frames import ErrorFrame, Frame

from appliance.config import TTSConfig
from appliance.voice.clause_tts import ClauseTTSService, silence
from appliance.voice.markers import SpeechStyle
from appliance.voice.piper_synth import PiperSynth, VoiceStyle

log = logging.getLogger(__name__)

# Piper settings per emotion marker: (length_scale factor, noise_scale, pitch semitones).
PIPER_EMOTIONS: dict[str, tuple[float, float, float]] = {
    "neutral": (1.0, 0.667, 0.0),
    "happy": (0.95, 0.75, 1.0),
    "excited": (0.88, 0.8, 1.5),
    "sad": (1.15, 0.5, -1.0),
    "calm": (1.08, 0.5, -0.5),
    "serious": (1.05, 0.55, -0.5),
    "angry": (0.92, 0.8, 0.5),
}

_CHUNK_MS = 40  # audio is handed to the transport in pieces this long
_LEAD_KEPT_MS = 10  # Piper starts each synthesis with ~50–75 ms of silence: all but this is cut
_SILENT = 300  # |sample| under this (−40 dBFS) is silence
_PACE_S = 0.05  # how often a clause waiting for room ahead of playback looks again


def trim_leading_silence(audio, rate: int):
    """``audio`` (int16) from ``_LEAD_KEPT_MS`` before its first sound on: the reply is
    heard that much sooner, and clauses cut mid-sentence run on as speech does."""
    import numpy as np

    loud = np.flatnonzero(np.abs(audio) > _SILENT)
    if not len(loud):
        return audio
    return audio[max(0, int(loud[0]) - rate * _LEAD_KEPT_MS // 1000) :]


def piper_style(voice: VoiceStyle, length_scale: float, style: SpeechStyle) -> VoiceStyle:
    """The Piper settings for one clause: the speaker's voice — the reply's own
    (``style.voice``: a Werewolf seat, the narrator), else this service's ``voice`` —,
    ``tts.length_scale`` (>1 slower) and the clause's marker ``style`` (emotion from
    :data:`PIPER_EMOTIONS`; speed divides the length scale; the emotion scales the voice's
    noise relative to neutral)."""
    length, noise, pitch = PIPER_EMOTIONS[style.emotion]
    v = style.voice or voice
    return VoiceStyle(
        length_scale=v.length_scale * length_scale * length / style.speed,
        pitch_semitones=v.pitch_semitones + pitch,
        noise_scale=noise * (v.noise_scale / PIPER_EMOTIONS["neutral"][1]),
        noise_w_scale=v.noise_w_scale,
    )


class PiperClauseTTSService(ClauseTTSService):
    """Piper, in-process, one clause at a time (its leading silence cut), streamed to the
    transport in 40 ms chunks.

    ``synth``: anything with ``sample_rate_hz`` and ``synthesize(text, VoiceStyle) -> int16
    samples`` (blocking; run on this service's own worker thread). ``voice_style`` sets
    this speaker's own voice; a reply's own voice (``style.voice``) replaces it; markers adjust either. A synthesis failure is
    pushed as an ``ErrorFrame``, never silence.

    Pacing: a clause is synthesised only once the bot's audio not yet played (what the
    :class:`~appliance.voice.playout.Playout` tells in its
    :class:`~appliance.voice.decisions.PlayoutAheadFrame`, :meth:`ahead_s`) is
    under ``tts.max_ahead_ms``: Piper then works at the pace the reply is heard instead of
    taking a core for the whole reply at its start — when the person is most likely to
    interrupt, and their words need the ASR at once — and a cut reply was not synthesised
    in vain.
    """

    def __init__(
        self,
        synth: PiperSynth,
        cfg: TTSConfig,
        voice_style: VoiceStyle = VoiceStyle(),
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._synth = synth
        self._cfg = cfg
        self._voice_style = voice_style
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tts")

    def can_generate_metrics(self) -> bool:
        return True

    async def cleanup(self):
        await super().cleanup()
        self._executor.shutdown(wait=True, cancel_futures=True)

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        if self._cfg.max_ahead_ms:
            while self.ahead_s() * 1000 > self._cfg.max_ahead_ms:
                await asyncio.sleep(_PACE_S)
        style = self.next_style()
        rate = self._synth.sample_rate_hz
        loop = asyncio.get_running_loop()
        t0 = time.monotonic()
        try:
            audio = await loop.run_in_executor(
                self._executor,
                self._synth.synthesize,
                text,
                piper_style(self._voice_style, self._cfg.length_scale, style),
            )
        except Exception as e:  # a synthesis failure is reported, never silent
            yield ErrorFrame(error=f"Piper failed on {text!r}: {e}")
            return
        log.debug("piper %.0f ms for %r", (time.monotonic() - t0) * 1000, text)
        pcm = silence(style.pause_before_ms, rate) + trim_leading_silence(audio, rate).tobytes()

        async def chunks():
            step = rate * 2 * _CHUNK_MS // 1000
            for i in range(0, len(pcm), step):
                yield pcm[i : i + step]

        async for frame in self._stream_audio_frames_from_iterator(
            chunks(), in_sample_rate=rate, context_id=context_id
        ):
            yield frame
