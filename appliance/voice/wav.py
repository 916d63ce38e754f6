"""Writing and reading mono 16-bit WAV files (recordings, spoken turns, recorded utterances)."""

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


def read_pcm(path: Path) -> tuple[bytes, int]:
    """A mono 16-bit WAV file's PCM and rate (Hz), as :func:`write_wav` writes it.

    Raises:
        ValueError: not mono 16-bit PCM (wave.Error: not a WAV file at all).
    """
    with wave.open(str(path), "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise ValueError(f"{path}: {w.getnchannels()} channel(s) of {8 * w.getsampwidth()} bits, not mono 16-bit")
        return w.readframes(w.getnframes()), w.getframerate()
