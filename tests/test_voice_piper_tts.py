"""PiperClauseTTSService (and the clause TTS base's style FIFO) by pushing frames, Piper
replaced by a fake synth."""

from __future__ import annotations

import asyncio
import time

from fakes import FakeSynth
from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    StartFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import run_test

from appliance import config
from appliance.voice.decisions import PlayoutAheadFrame
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
    """Piper keeps pace with playback: a clause is synthesised only once the audio the playout
    tells it holds (its ``PlayoutAheadFrame``: queued audio stays, audio sent on runs down with
    time) is under ``tts.max_ahead_ms``; the frame ends at the TTS."""
    synth = FakeSynth(RATE_HZ)
    playout = FakePlayout([(0.0, PlayoutAheadFrame(sent_s=0.0, queued_s=5.0)), (0.3, PlayoutAheadFrame(3.2, 0.0))])
    tts = PiperClauseTTSService(synth, config.load(overrides={"tts": {"max_ahead_ms": 3000}}).tts)
    _down, up = await run_test(
        Pipeline([tts, playout]),
        frames_to_send=[
            LLMFullResponseStartFrame(),
            StyledClauseFrame(text="Once upon a time.", text_type="sentence", style=SpeechStyle()),
            StyledClauseFrame(text="A knight rode out.", text_type="sentence", style=SpeechStyle()),
            LLMFullResponseEndFrame(),
        ],
    )
    assert [c for c, _ in synth.calls] == ["Once upon a time.", "A knight rode out."]
    waited = synth.times[0] - playout.started
    assert 0.5 <= waited < 0.65  # 5 s queued for 0.3 s, then 3.2 s sent on ran down to 3 s in 0.2 s
    assert not [f for f in up if isinstance(f, PlayoutAheadFrame)]


class FakePlayout(FrameProcessor):
    """After the TTS: from the pipeline's start (``started``, monotonic s) pushes each
    ``(at_s, frame)`` upstream at ``at_s``, as a playout tells what it holds."""

    def __init__(self, script: list[tuple[float, PlayoutAheadFrame]]):
        super().__init__()
        self._script = script
        self.started = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, StartFrame):
            self.started = time.monotonic()
            self.create_task(self._tell(), "fake-playout")

    async def _tell(self) -> None:
        for at_s, frame in self._script:
            await asyncio.sleep(max(0.0, self.started + at_s - time.monotonic()))
            await self.push_frame(frame, FrameDirection.UPSTREAM)
