"""pipecat services around the embedded models: streaming Whisper STT, Piper and Fish TTS.

Each is a pipecat service class (the framework's extension point), so the pipeline,
interruptions and metrics are pipecat's own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import AsyncGenerator

import numpy as np
from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings, TTSSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.services.tts_service import TTSService
from pipecat.utils.time import time_now_iso8601

from appliance.config import TTSConfig
from appliance.voice.asr import SAMPLE_RATE_HZ, WhisperASR, pcm16_to_float
from appliance.voice.markers import SpeechStyle, StyledClauseFrame
from appliance.voice.tts import PiperSynth, VoiceStyle

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


def _window_rms(pcm: bytes) -> np.ndarray:
    """RMS of each 20 ms window of 16 kHz s16 audio."""
    a = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
    win = SAMPLE_RATE_HZ // 50
    n = len(a) // win
    return np.sqrt((a[: n * win].reshape(n, win) ** 2).mean(axis=1)) if n else np.zeros(0)


def _trailing_silence(pcm: bytes, window_ms: int = 120) -> bool:
    """Whether the last ``window_ms`` of 16 kHz s16 speech is under 1/8 of the utterance's
    loudest 20 ms window (RMS) — i.e. the person has probably stopped."""
    rms = _window_rms(pcm)
    if len(rms) < 10:
        return False
    return bool(rms[-max(1, window_ms // 20):].max() < rms.max() / 8)


def _quiet_after(pcm: bytes, offset: int) -> bool:
    """Whether everything from byte ``offset`` on stays under 1/8 of the loudest window before it."""
    before, after = _window_rms(pcm[:offset]), _window_rms(pcm[offset - offset % 2:])
    return len(before) > 0 and (len(after) == 0 or bool(after.max() < before.max() / 8))


class StreamingWhisperSTTService(SegmentedSTTService):
    """Whisper STT with interim transcripts while the person speaks and a final one at
    the VAD stop.

    Interims: every ``interim_every_ms`` the growing utterance is re-transcribed and an
    ``InterimTranscriptionFrame`` pushed. Final: a ``TranscriptionFrame`` with
    ``finalized=True`` for the whole segment; an empty final (silence, noise) is not
    pushed. Early final: once the end of the buffer has been quiet for ~120 ms (the VAD
    needs ``vad.stop_ms`` of silence to decide), the buffer is transcribed at once; if the
    audio that arrives before the VAD stop is still quiet, that transcript *is* the final
    one — the same speech, only less trailing silence — so the final is ready at the VAD
    stop instead of one ASR call later. Input audio: 16 kHz mono s16. ``on_final``
    (optional) receives each :class:`~appliance.voice.asr.Transcript`.
    """

    _TICK_S = 0.04

    def __init__(self, asr: WhisperASR, interim_every_ms: int = 400, on_final=None, **kwargs):
        super().__init__(sample_rate=SAMPLE_RATE_HZ, trailing_silence_secs=0.0,
                         settings=STTSettings(model=asr.cfg.model, language=None), **kwargs)
        self._asr = asr
        self._interim_every_s = interim_every_ms / 1000
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asr")
        self._interim_task: asyncio.Task | None = None
        self._early: tuple[int, asyncio.Future] | None = None  # (bytes covered, transcription)
        self._on_final = on_final

    @property
    def wants_wav_segments(self) -> bool:
        return False

    async def cleanup(self):
        await super().cleanup()
        self._drop_early()
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _transcribe(self, pcm: bytes) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._executor, self._asr.transcribe, pcm16_to_float(pcm))

    def _drop_early(self) -> None:
        if self._early is not None:
            self._early[1].cancel()
            self._early = None

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStartedSpeakingFrame) and self._interim_task is None:
            self._drop_early()
            self._interim_task = self.create_task(self._interims())

    async def _handle_user_stopped_speaking(self, frame):
        if self._interim_task is not None:
            await self.cancel_task(self._interim_task)
            self._interim_task = None
        await super()._handle_user_stopped_speaking(frame)

    async def _interims(self):
        loop = asyncio.get_running_loop()
        last_text, last_t = "", loop.time()
        while True:
            await asyncio.sleep(self._TICK_S)
            pcm = bytes(self._audio_buffer)
            if len(pcm) < SAMPLE_RATE_HZ:  # < 0.5 s: nothing useful yet
                continue
            if _trailing_silence(pcm):
                if self._early is None:  # the person has probably stopped: start the final now
                    self._early = (len(pcm), self._transcribe(pcm))
                continue
            self._drop_early()  # speech went on: that early transcript is stale
            if loop.time() - last_t < self._interim_every_s:
                continue
            last_t = loop.time()
            result = await self._transcribe(pcm)
            if result.text and result.text != last_text and self._user_speaking:
                last_text = result.text
                await self.push_frame(InterimTranscriptionFrame(result.text, self._user_id, time_now_iso8601()))

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        early, self._early = self._early, None
        if early is not None and _quiet_after(audio, early[0]):
            result = await early[1]
        else:
            if early is not None:
                early[1].cancel()
            result = await self._transcribe(audio)
        if self._on_final:
            self._on_final(result)
        if result.text:
            yield TranscriptionFrame(result.text, self._user_id, time_now_iso8601(), finalized=True)


class _ClauseTTSService(TTSService):
    """Base for our TTS services: one synthesis per :class:`StyledClauseFrame`, styles in order."""

    def __init__(self, **kwargs):
        super().__init__(push_start_frame=True, push_stop_frames=True,
                         settings=TTSSettings(model=None, voice=None, language=None), **kwargs)
        self._styles: list[SpeechStyle] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        if isinstance(frame, StyledClauseFrame):
            self._styles.append(frame.style)
        elif isinstance(frame, InterruptionFrame):
            self._styles.clear()
        await super().process_frame(frame, direction)

    def _next_style(self) -> SpeechStyle:
        return self._styles.pop(0) if self._styles else SpeechStyle()

    def _silence(self, ms: int, sample_rate_hz: int) -> bytes:
        return bytes(int(sample_rate_hz * ms / 1000) * 2)


class PiperClauseTTSService(_ClauseTTSService):
    """Piper, in-process, one clause at a time, streamed to the transport in 40 ms chunks.

    ``voice_style`` sets this speaker's own voice; a reply's own voice (a clause's
    ``style.voice``: a Werewolf seat, the narrator) replaces it; markers adjust either.
    """

    def __init__(self, synth: PiperSynth, cfg: TTSConfig, voice_style: VoiceStyle = VoiceStyle(), **kwargs):
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

    def _style_for(self, s: SpeechStyle) -> VoiceStyle:
        length, noise, pitch = PIPER_EMOTIONS.get(s.emotion, PIPER_EMOTIONS["neutral"])
        v = s.voice or self._voice_style  # the reply's speaker (a Werewolf seat), else this service's
        return VoiceStyle(length_scale=v.length_scale * self._cfg.length_scale * length / s.speed,
                          pitch_semitones=v.pitch_semitones + pitch,
                          noise_scale=v.noise_scale * noise / PIPER_EMOTIONS["neutral"][1],
                          noise_w_scale=v.noise_w_scale)

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        style = self._next_style()
        loop = asyncio.get_running_loop()
        t0 = time.monotonic()
        try:
            audio = await loop.run_in_executor(self._executor, self._synth.synthesize, text, self._style_for(style))
        except Exception as e:  # a synthesis failure is reported, never silent
            yield ErrorFrame(error=f"Piper failed on {text!r}: {e}")
            return
        log.debug("piper %.0f ms for %r", (time.monotonic() - t0) * 1000, text)
        pcm = self._silence(style.pause_before_ms, self._synth.sample_rate_hz) + audio.tobytes()

        async def chunks():
            step = self._synth.sample_rate_hz * 2 * 40 // 1000
            for i in range(0, len(pcm), step):
                yield pcm[i: i + step]

        async for frame in self._stream_audio_frames_from_iterator(
                chunks(), in_sample_rate=self._synth.sample_rate_hz, context_id=context_id):
            yield frame


class FishClauseTTSService(_ClauseTTSService):
    """Fish Audio through the official ``fish-audio-sdk`` (``fishaudio`` API), PCM streamed.

    Emotion markers pick a reference clip from ``voice_library/<emotion>.wav`` (with its
    transcript in ``<emotion>.txt``) when one exists, else the configured
    ``reference_id`` voice speaks. The key comes from ``tts.api_key_env`` (checked at start).
    """

    FISH_SAMPLE_RATE_HZ = 44_100

    def __init__(self, cfg: TTSConfig, api_key: str, **kwargs):
        from fishaudio import AsyncFishAudio

        super().__init__(**kwargs)
        self._cfg = cfg
        client_kwargs = {"api_key": api_key, "timeout": cfg.timeout_s}
        if cfg.base_url:
            client_kwargs["base_url"] = cfg.base_url
        self._client = AsyncFishAudio(**client_kwargs)
        self._library = Path(cfg.voice_library)

    def _references(self, emotion: str):
        from fishaudio.types import ReferenceAudio

        clip = self._library / f"{emotion}.wav"
        if emotion == "neutral" or not clip.is_file():
            return None
        return [ReferenceAudio(audio=clip.read_bytes(), text=clip.with_suffix(".txt").read_text().strip())]

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        style = self._next_style()
        refs = self._references(style.emotion)
        from fishaudio.types import TTSConfig as FishTTSConfig

        kwargs = {"text": text, "format": "pcm", "latency": "balanced", "speed": style.speed,
                  "config": FishTTSConfig(sample_rate=self.FISH_SAMPLE_RATE_HZ)}
        if refs:
            kwargs["references"] = refs
        else:
            kwargs["reference_id"] = self._cfg.reference_id
        try:
            stream = await self._client.tts.stream(**kwargs)

            async def chunks():
                if style.pause_before_ms:
                    yield self._silence(style.pause_before_ms, self.FISH_SAMPLE_RATE_HZ)
                async for chunk in stream:
                    yield chunk

            async for frame in self._stream_audio_frames_from_iterator(
                    chunks(), in_sample_rate=self.FISH_SAMPLE_RATE_HZ, context_id=context_id):
                yield frame
        except Exception as e:  # offline → httpx.ConnectError: report, never a silent fallback
            yield ErrorFrame(error=f"Fish Audio TTS failed: {type(e).__name__}: {e}")
