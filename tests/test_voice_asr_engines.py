"""Every ASR engine on real speech: the ARCTIC clips, Piper one-word answers framed as the
pipeline hands them over, and silence and steady noise."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import read_16k

from appliance import config, models
from appliance.bench import asr_accuracy
from appliance.bench.wer import normalise, wer
from appliance.voice.asr import ENGINES, SAMPLE_RATE_HZ, load_asr
from appliance.voice.piper_synth import PiperSynth, VoiceStyle, resample

pytestmark = pytest.mark.e2e  # the engines' model files, Piper, the ARCTIC clips


@pytest.fixture(scope="module", params=sorted(ENGINES))
def engine(request):
    return load_asr(config.load().for_asr_engine(request.param).asr)


@pytest.fixture(scope="module")
def answers() -> dict[str, np.ndarray]:
    """Piper's "Yes." / "No." / "Stop." at 16 kHz with 0.8 s of silence before and 0.3 s
    after: the VAD segment the STT gets (its pre-roll, the VAD's stop)."""
    synth = PiperSynth()
    out = {}
    for text in ("Yes.", "No.", "Stop."):
        speech = resample(synth.synthesize(text), synth.sample_rate_hz, SAMPLE_RATE_HZ).astype(np.float32) / 32768
        out[text] = np.concatenate(
            [np.zeros(int(0.8 * SAMPLE_RATE_HZ), np.float32), speech, np.zeros(int(0.3 * SAMPLE_RATE_HZ), np.float32)]
        )
    return out


@pytest.mark.parametrize("clip", sorted(models.ARCTIC_TEXT))
def test_engine_transcribes_real_speech(engine, arctic, clip):
    result = engine.transcribe(read_16k(arctic[clip]))
    assert wer([(models.ARCTIC_TEXT[clip], result.text)]) <= 0.2, (engine.name, result)
    assert result.compute_s > 0 and result.audio_s == pytest.approx(len(read_16k(arctic[clip])) / SAMPLE_RATE_HZ)


def test_engine_never_drops_a_one_word_answer(engine, answers):
    """One word said is one word heard, also at −20 dB: never dropped, never repeated. Which word
    is the engine's accuracy (``bench asr``): CI once had Moonshine write "Start." for Piper's
    "Stop.", which is not a drop."""
    for text, audio in answers.items():
        heard = engine.transcribe(audio)
        assert len(normalise(heard.text)) == 1, (engine.name, text, heard)
        quiet = engine.transcribe(audio * 0.1)  # −20 dB
        assert len(normalise(quiet.text)) == 1, (engine.name, text, "quiet", quiet)


@pytest.fixture(scope="module")
def moonshine_asr():
    return load_asr(config.load().for_asr_engine("moonshine").asr)


@pytest.fixture(scope="module")
def synth() -> PiperSynth:
    return PiperSynth()


_ESPEAK = asr_accuracy.ESPEAK_VOICES[0]
#: Piper without its random phoneme and duration noise: the same speech every run. With the
#: default noise, Moonshine dropped the digit string's leading "Zero" in 3 renders of 12
#: ("Darrow seven, seven, …"; CI would fail at random): a known limit, kept in the closing note
_PIPER = asr_accuracy.Voice("piper-steady", style=VoiceStyle(noise_scale=0.0, noise_w_scale=0.0))
_CORRECT = asr_accuracy.Utterance("one_word", ("Correct.",))  # "Cracked, cracked, cracked," before its 2 s padding
_DIGITS = asr_accuracy.Utterance("digits", ("Zero seven seven,", "one two three,", "four five six."))  # in groups


@pytest.mark.parametrize(
    "said, voice",
    [(_CORRECT, _PIPER), (_CORRECT, _ESPEAK), (_DIGITS, _PIPER)],
    ids=["one-word-piper", "one-word-espeak", "digits-piper"],
)
def test_moonshine_hears_a_one_word_answer_and_a_digit_string(moonshine_asr, synth, said, voice):
    """Real speech (Piper and espeak-ng) framed as the pipeline hands it over: Moonshine gives
    its words, case, punctuation and the way numbers are written aside ("077-123-456")."""
    heard = moonshine_asr.transcribe(asr_accuracy.frame(asr_accuracy.say(synth, said, voice)))
    assert normalise(heard.text) == normalise(said.text), (voice.name, heard)


def test_engine_hears_nothing_in_silence_and_steady_noise(engine):
    rng = np.random.default_rng(7)
    assert engine.transcribe(np.zeros(32_000, np.float32)).text == ""
    for level in (0.02, 0.1):
        assert engine.transcribe((rng.standard_normal(48_000) * level).astype(np.float32)).text == "", level
    hum = (0.2 * np.sin(2 * np.pi * 120 * np.arange(48_000) / SAMPLE_RATE_HZ)).astype(np.float32)
    assert engine.transcribe(hum).text == ""


def test_a_context_is_never_heard_in_place_of_the_speech(engine, answers):
    """A ``context`` (the person's names, as the phone agent hints them) is what the speech may
    repeat, not speech: one word said is still one word heard, silence and noise still nothing."""
    context = "Oluwaseun Oyelaran, seun.oyelaran2@example.org"
    for text, audio in answers.items():
        heard = engine.transcribe(audio, context)
        assert len(normalise(heard.text)) == 1, (engine.name, text, heard)
    rng = np.random.default_rng(7)
    assert engine.transcribe(np.zeros(32_000, np.float32), context).text == ""
    for level in (0.02, 0.1):
        assert engine.transcribe((rng.standard_normal(48_000) * level).astype(np.float32), context).text == "", level


def test_whisper_gives_each_word_of_its_text_with_a_probability(arctic):
    """Whisper's short path: ``words`` are the text's words in order, each with a probability;
    on clear read speech most are sure (the phone agent asks for a spelling only below
    ``forms.spell_below_prob``)."""
    engine = load_asr(config.load().for_asr_engine("whisper").asr)
    for clip in sorted(models.ARCTIC_TEXT):
        result = engine.transcribe(read_16k(arctic[clip]))
        assert " ".join(w for w, _ in result.words) == result.text, result
        probs = [p for _, p in result.words]
        assert all(0 <= p <= 1 for p in probs), result
        assert sorted(probs)[len(probs) // 2] >= config.FormsConfig().spell_below_prob, result
