"""ASR, TTS and VAD on the real bundled models and real speech."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import read_16k, word_recall

from appliance import config, models
from appliance.voice.asr import WhisperASR
from appliance.voice.piper_synth import PiperSynth, VoiceStyle, resample

pytestmark = pytest.mark.e2e  # Whisper, Piper, the ARCTIC clips


@pytest.fixture(scope="module")
def asr():
    return WhisperASR(config.load().asr)


@pytest.fixture(scope="module")
def synth():
    return PiperSynth()


@pytest.mark.parametrize("clip", sorted(models.ARCTIC_TEXT))
def test_asr_transcribes_real_speech(asr, arctic, clip):
    result = asr.transcribe(read_16k(arctic[clip]))
    assert word_recall(models.ARCTIC_TEXT[clip], result.text) >= 0.8, result
    assert result.no_speech_prob < 0.5


def test_asr_gives_nothing_for_silence_and_steady_noise(asr):
    rng = np.random.default_rng(7)
    assert asr.transcribe(np.zeros(32_000, np.float32)).text == ""
    for level in (0.02, 0.1, 0.3):
        noise = (rng.standard_normal(48_000) * level).astype(np.float32)
        assert asr.transcribe(noise).text == "", level
    hum = (0.2 * np.sin(2 * np.pi * 120 * np.arange(48_000) / 16_000)).astype(np.float32)
    assert asr.transcribe(hum).text == ""


def test_asr_keeps_quiet_clear_speech(asr, arctic):
    """pipecat's default no_speech_prob 0.4 dropped a clear clip; ours must not drop quiet speech."""
    audio = read_16k(arctic["arctic_a0009.wav"]) * 0.1  # −20 dB
    assert word_recall(models.ARCTIC_TEXT["arctic_a0009.wav"], asr.transcribe(audio).text) >= 0.8


def test_tts_keeps_no_memory_arena(synth):
    """One voice serves every session of ``appliance serve``: onnxruntime's CPU arena would keep
    (and keep doubling) the largest sentence's buffers for the life of the process."""
    assert synth._voice.session.get_session_options().enable_cpu_mem_arena is False


@pytest.mark.parametrize("style", [VoiceStyle(), VoiceStyle(length_scale=0.9, pitch_semitones=-2)])
def test_tts_round_trip_through_asr(asr, synth, style):
    """Piper draws fresh noise each call (``noise_scale``), so one synthesis in ~50 is misheard
    ("Please welcome Wendell's seat", CI): the median of three must be heard right."""
    text = "Please book a window seat for the twelfth of March."
    recalls, heard = [], []
    for _ in range(3):
        audio = synth.synthesize(text, style)
        assert audio.dtype == np.int16 and len(audio) > synth.sample_rate_hz  # over a second of speech
        heard.append(asr.transcribe(resample(audio, synth.sample_rate_hz, 16_000).astype(np.float32) / 32768).text)
        recalls.append(word_recall("please book a window seat for the of march", heard[-1]))
    assert sorted(recalls)[1] >= 0.8, heard


def _vad_speech_windows(audio16k: np.ndarray) -> int:
    """How many 32 ms windows pipecat's Silero VAD (bundled ONNX) calls speech (confidence ≥ 0.7)."""
    from pipecat.audio.vad.silero import SileroVADAnalyzer

    vad = SileroVADAnalyzer(sample_rate=16_000)
    vad.set_sample_rate(16_000)
    n = vad.num_frames_required()
    pcm = (np.clip(audio16k, -1, 1) * 32767).astype(np.int16)
    return sum(vad.voice_confidence(pcm[i : i + n].tobytes()) >= 0.7 for i in range(0, len(pcm) - n, n))


def test_vad_on_speech_silence_and_noise(arctic):
    speech = read_16k(arctic["arctic_a0007.wav"])
    assert _vad_speech_windows(speech) >= 30  # ~1 s or more of its 4 s is speech
    assert _vad_speech_windows(np.zeros(48_000, np.float32)) == 0
    rng = np.random.default_rng(3)
    assert _vad_speech_windows((rng.standard_normal(48_000) * 0.05).astype(np.float32)) <= 1
