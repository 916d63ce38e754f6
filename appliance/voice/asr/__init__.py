"""Speech recognition: engines behind one shape, ``transcribe(float32 mono 16 kHz) -> Transcript``.

``asr.engine``, ``asr.spelling_engine`` and ``asr.interim_engine`` pick the engines the voice
runtime loads (:func:`load_asrs`; :func:`load_asr` loads one):

- ``base`` — :class:`Transcript`, the :class:`ASREngine` shape, :func:`pcm16_to_float`.
- ``whisper`` — :class:`WhisperASR`, faster-whisper (``engine: whisper``; ``asr.model``: tiny.en or base).
- ``moonshine`` — :class:`MoonshineASR`, Moonshine base-en as plain ONNX on onnxruntime
  (``engine: moonshine``), and the set-up step that converts its shipped ``.ort`` files.
- ``wer`` — word error rate after normalising (case, punctuation, numbers as digits).
- ``accuracy`` — the word-accuracy set: utterances with their reference text, rendered
  with Piper and espeak-ng voices, clean and in noise.
- ``bench`` and ``commands`` — ``appliance bench asr``: WER and latency per engine on that set.
"""

from __future__ import annotations

from appliance.config import ASRConfig, ASRUse
from appliance.voice.asr.base import SAMPLE_RATE_HZ, ASREngine, Transcript, pcm16_to_float
from appliance.voice.asr.moonshine import MoonshineASR
from appliance.voice.asr.whisper import WhisperASR

#: ``asr.engine`` → the engine class.
ENGINES: dict[str, type] = {"whisper": WhisperASR, "moonshine": MoonshineASR}

__all__ = [
    "ENGINES",
    "SAMPLE_RATE_HZ",
    "ASREngine",
    "MoonshineASR",
    "Transcript",
    "WhisperASR",
    "load_asr",
    "load_asrs",
    "pcm16_to_float",
]


def load_asr(cfg: ASRConfig) -> ASREngine:
    """The engine ``cfg.engine`` names, loaded with ``cfg``.

    Raises:
        ModelError: the engine's model files are missing or have the wrong size.
    """
    return ENGINES[cfg.engine](cfg)


def load_asrs(cfg: ASRConfig) -> dict[ASRUse, ASREngine]:
    """The engine of each use (``conversation``, ``spelling``, ``interim``;
    :meth:`~appliance.config.ASRConfig.engine_for`), each engine loaded once: two uses that
    name the same engine share one instance (its calls are serialised).

    Raises:
        ModelError: an engine's model files are missing or have the wrong size.
    """
    loaded: dict[str, ASREngine] = {}
    out: dict[ASRUse, ASREngine] = {}
    for use in ("conversation", "spelling", "interim"):
        name = cfg.engine_for(use)
        if name not in loaded:
            loaded[name] = load_asr(cfg.for_engine(name))
        out[use] = loaded[name]
    return out
