"""Fish Audio (cloud) as a pipecat TTS service, through the official ``fish-audio-sdk``."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncGenerator

from fishaudio import AsyncFishAudio
from fishaudio.types import ReferenceAudio
from fishaudio.types import TTSConfig as FishTTSConfig
from pipecat.frames.frames import ErrorFrame, Frame

from appliance.config import TTSConfig
from appliance.voice.clause_tts import ClauseTTSService, silence


class FishClauseTTSService(ClauseTTSService):
    """Fish Audio through the official ``fish-audio-sdk`` (``fishaudio`` API), PCM streamed.

    Emotion markers pick a reference clip from ``tts.voice_library/<emotion>.wav`` (with its
    transcript in ``<emotion>.txt``) when one exists, else the configured
    ``tts.reference_id`` voice speaks; the speed marker is Fish's ``speed``. ``api_key``
    comes from ``tts.api_key_env`` (checked at start). Any failure (offline: an
    ``httpx.ConnectError``) is pushed as an ``ErrorFrame``, never silence.
    """

    FISH_SAMPLE_RATE_HZ = 44_100

    def __init__(self, cfg: TTSConfig, api_key: str, **kwargs):
        super().__init__(**kwargs)
        self._cfg = cfg
        client_kwargs = {"api_key": api_key, "timeout": cfg.timeout_s}
        if cfg.base_url:
            client_kwargs["base_url"] = cfg.base_url
        self._client = AsyncFishAudio(**client_kwargs)
        self._library = Path(cfg.voice_library)

    def _references(self, emotion: str) -> list[ReferenceAudio] | None:
        clip = self._library / f"{emotion}.wav"
        if emotion == "neutral" or not clip.is_file():
            return None
        return [ReferenceAudio(audio=clip.read_bytes(), text=clip.with_suffix(".txt").read_text().strip())]

    async def run_tts(self, text: str, context_id: str) -> AsyncGenerator[Frame, None]:
        style = self.next_style()
        refs = self._references(style.emotion)
        kwargs = {
            "text": text,
            "format": "pcm",
            "latency": "balanced",
            "speed": style.speed,
            "config": FishTTSConfig(sample_rate=self.FISH_SAMPLE_RATE_HZ),
        }
        if refs:
            kwargs["references"] = refs
        else:
            kwargs["reference_id"] = self._cfg.reference_id
        try:
            stream = await self._client.tts.stream(**kwargs)

            async def chunks():
                if style.pause_before_ms:
                    yield silence(style.pause_before_ms, self.FISH_SAMPLE_RATE_HZ)
                async for chunk in stream:
                    yield chunk

            async for frame in self._stream_audio_frames_from_iterator(
                chunks(), in_sample_rate=self.FISH_SAMPLE_RATE_HZ, context_id=context_id
            ):
                yield frame
        except Exception as e:  # offline → httpx.ConnectError: report, never a silent fallback
            yield ErrorFrame(error=f"Fish Audio TTS failed: {type(e).__name__}: {e}")
