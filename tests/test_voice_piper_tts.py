"""PiperClauseTTSService (and the clause TTS base's style FIFO) by pushing frames, Piper
replaced by a fake synth."""

from __future__ import annotations

from fakes import FakeSynth
from pipecat.frames.frames import (
    ErrorFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
)
from pipecat.tests.utils import run_test

from appliance import config
from appliance.voice.markers import EMOTIONS, SpeechStyle, StyledClauseFrame
from appliance.voice.piper_synth import VoiceStyle
from appliance.voice.piper_tts import PIPER_EMOTIONS, PiperClauseTTSService

RATE_HZ = 24_000  # the pipeline's output rate in run_test: no resampling


async def test_each_clause_is_said_in_its_own_style_in_order():
    synth = FakeSynth(RATE_HZ)
    seat = VoiceStyle(length_scale=1.1, pitch_semitones=-2.0, noise_w_scale=0.7)
    tts = PiperClauseTTSService(synth, config.load(overrides={"tts": {"length_scale": 0.9}}).tts, voice_style=seat)
    down, _ = await run_test(
        tts,
        frames_to_send=[  # as SpeakableTextProcessor sends a reply
            LLMFullResponseStartFrame(),
            StyledClauseFrame(text="Hello there.", text_type="sentence", style=SpeechStyle()),
            StyledClauseFrame(text="Great news!", text_type="sentence", style=SpeechStyle(1.25, "happy", 300)),
            LLMFullResponseEndFrame(),
        ],
    )
    (first, plain), (second, happy) = synth.calls
    assert (first, second) == ("Hello there.", "Great news!")
    assert plain == VoiceStyle(length_scale=1.1 * 0.9, pitch_semitones=-2.0, noise_scale=0.667, noise_w_scale=0.7)
    assert happy == VoiceStyle(
        length_scale=1.1 * 0.9 * 0.95 / 1.25, pitch_semitones=-1.0, noise_scale=0.75, noise_w_scale=0.7
    )
    audio = b"".join(f.audio for f in down if isinstance(f, TTSAudioRawFrame))
    assert len(audio) == 2 * int(RATE_HZ * (0.1 + 0.3 + 0.1))  # the second clause's 300 ms pause included
    assert [f.text for f in down if isinstance(f, TTSTextFrame)] == ["Hello there.", "Great news!"]


async def test_a_synthesis_failure_is_an_error_not_silence():
    tts = PiperClauseTTSService(FakeSynth(RATE_HZ, fail=True), config.load().tts, stop_frame_timeout_s=0.1)
    down, up = await run_test(
        tts,
        frames_to_send=[
            LLMFullResponseStartFrame(),
            StyledClauseFrame(text="Hello.", text_type="sentence"),
            LLMFullResponseEndFrame(),
        ],
    )
    assert any("Piper failed on 'Hello.'" in f.error for f in up if isinstance(f, ErrorFrame))
    assert not [f for f in down if isinstance(f, TTSAudioRawFrame)]


def test_every_marker_emotion_has_piper_settings():
    assert set(PIPER_EMOTIONS) == set(EMOTIONS)


async def test_a_clause_waits_until_less_than_max_ahead_ms_of_audio_waits_to_be_played():
    """Piper keeps pace with playback: the second clause is synthesised only once the audio
    ahead of the listener (the playout's ``ahead_s``) is under ``tts.max_ahead_ms``."""
    import time

    synth, first_at, looks = FakeSynth(RATE_HZ), [], []

    def ahead_s() -> float:  # nothing waits before the first clause; then 5 s for 0.3 s, then 0.5 s
        if synth.calls and not first_at:
            first_at.append(time.monotonic())
        looks.append(len(synth.calls))
        return 5.0 if first_at and time.monotonic() - first_at[0] < 0.3 else 0.5

    tts = PiperClauseTTSService(synth, config.load(overrides={"tts": {"max_ahead_ms": 3000}}).tts, ahead_s=ahead_s)
    await run_test(
        tts,
        frames_to_send=[
            LLMFullResponseStartFrame(),
            StyledClauseFrame(text="Once upon a time.", text_type="sentence", style=SpeechStyle()),
            StyledClauseFrame(text="A knight rode out.", text_type="sentence", style=SpeechStyle()),
            LLMFullResponseEndFrame(),
        ],
    )
    assert [c for c, _ in synth.calls] == ["Once upon a time.", "A knight rode out."]
    assert looks.count(0) == 1 and looks.count(1) >= 5  # the second clause looked again every 50 ms for 0.3 s
