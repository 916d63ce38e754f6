"""Fakes of the voice models for tests that push frames: no model file is loaded."""

from __future__ import annotations

import threading

import numpy as np

from appliance import config
from appliance.voice.asr import SAMPLE_RATE_HZ, Transcript
from appliance.voice.tts import VoiceStyle

_WORDS = "one two three four five six seven eight nine ten".split()


class FakeASR:
    """WhisperASR's shape (``cfg``; ``transcribe(float32 16 kHz) -> Transcript``): one word
    ("one", "two", ...) per 0.25 s of samples louder than 0.05, ``''`` for silence.
    ``calls``: the length (samples) of each clip it was given."""

    cfg = config.load().asr

    def __init__(self):
        self.calls: list[int] = []

    def transcribe(self, audio: np.ndarray) -> Transcript:
        self.calls.append(len(audio))
        text = " ".join(_WORDS[: int(np.sum(np.abs(audio) > 0.05)) // (SAMPLE_RATE_HZ // 4)])
        return Transcript(text, 0.0 if text else 1.0, len(audio) / SAMPLE_RATE_HZ, 0.0)


class FakeSynth:
    """Piper's shape (``sample_rate_hz``; ``synthesize(text, VoiceStyle) -> int16 samples``):
    0.1 s of a constant for any text, at ``sample_rate_hz``.

    ``calls``: each call's ``(text, style)``. ``fail``: raise instead. ``hold_from``: the
    ``hold_from``-th call (1-based) and later ones block until :meth:`release` (at most 10 s).
    """

    def __init__(self, sample_rate_hz: int = 24_000, fail: bool = False, hold_from: int | None = None):
        self.sample_rate_hz = sample_rate_hz
        self.fail = fail
        self.hold_from = hold_from
        self.calls: list[tuple[str, VoiceStyle]] = []
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def synthesize(self, text: str, style: VoiceStyle) -> np.ndarray:
        if self.fail:
            raise RuntimeError("voice file unreadable")
        self.calls.append((text, style))
        if self.hold_from is not None and len(self.calls) >= self.hold_from:
            self._released.wait(10)
        return np.full(self.sample_rate_hz // 10, 1000, np.int16)
