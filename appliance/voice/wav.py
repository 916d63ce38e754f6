"""Writing mono 16-bit WAV files (recordings, spoken turns)."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np


def write_wav(path: Path, audio: bytes | np.ndarray, rate_hz: int) -> None:
    """Write mono s16le ``audio`` (PCM bytes, or int16 samples) to ``path``, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pcm = audio if isinstance(audio, bytes) else np.asarray(audio, dtype=np.int16).tobytes()
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate_hz)
        w.writeframes(pcm)
