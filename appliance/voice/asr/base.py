"""What every ASR engine shares: the :class:`Transcript` it returns, the :class:`ASREngine`
shape the voice pipeline calls, and the input format (float32 mono at 16 kHz)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from appliance.config import ASRConfig

SAMPLE_RATE_HZ = 16_000


@dataclass(frozen=True)
class Transcript:
    """One ASR result: ``text`` ('' when nothing was said), ``no_speech_prob`` in [0, 1]
    (the engine's own estimate that the clip holds no speech), ``audio_s`` seconds of input
    and ``compute_s`` seconds spent. ``words``: each word of ``text`` (split at spaces, as
    written) with the engine's probability for it in [0, 1] (the least of its tokens' with a
    letter or digit in them); empty when the engine gives none (moonshine; whisper with
    ``asr.beam_size`` above 1, or on a clip over 28 s)."""

    text: str
    no_speech_prob: float
    audio_s: float
    compute_s: float
    words: tuple[tuple[str, float], ...] = ()


class ASREngine(Protocol):
    """An ASR engine as the pipeline uses it (``asr.engine`` picks one; see
    :func:`appliance.voice.asr.load_asr`).

    ``transcribe`` is blocking and thread-safe (calls are serialised): call it from a worker
    thread in async code. It returns ``''`` for silence and steady noise, and never drops a
    clear one-word answer ("Yes.", "No.", "Stop."). ``cfg`` is the ``asr`` section it was
    built from; ``name`` the engine's name in ``asr.engine``.
    """

    name: str
    cfg: ASRConfig

    def transcribe(self, audio: np.ndarray, context: str = "") -> Transcript:
        """Transcribe one utterance: float32 mono samples at 16 kHz in [-1, 1]. ``context``:
        words said earlier in the call that the utterance may repeat (a hint: an engine
        without a text prompt transcribes the audio alone)."""
        ...


def pcm16_to_float(pcm: bytes) -> np.ndarray:
    """16-bit little-endian mono PCM → float32 in [-1, 1]."""
    return np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
