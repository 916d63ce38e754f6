"""StreamingSTTService by pushing frames (pipecat's run_test), Whisper replaced by a stub."""

from __future__ import annotations

import asyncio

import numpy as np
from fakes import FakeASR
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    EagerEndOfTurnCancelFrame,
    EagerTranscriptionFrame,
    Frame,
    InputAudioRawFrame,
    InterimTranscriptionFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.asr import SAMPLE_RATE_HZ, Transcript
from appliance.voice.line import LineProcessor
from appliance.voice.stt import ASRContextFrame, StreamingSTTService, quiet_after, trailing_silence


class StopProbe(FrameProcessor):
    """Notes how many ASR calls had been made when the VAD stop came through."""

    def __init__(self, asr: FakeASR):
        super().__init__()
        self.asr, self.calls_at_stop = asr, None

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStoppedSpeakingFrame):
            self.calls_at_stop = len(self.asr.calls)
        await self.push_frame(frame, direction)


def tone(seconds: float, level: float = 0.3) -> bytes:
    t = np.arange(int(seconds * SAMPLE_RATE_HZ)) / SAMPLE_RATE_HZ
    return (np.sin(2 * np.pi * 220 * t) * level * 32767).astype(np.int16).tobytes()


def silence(seconds: float) -> bytes:
    return bytes(int(seconds * SAMPLE_RATE_HZ) * 2)


def audio_frames(pcm: bytes) -> list[InputAudioRawFrame]:
    step = SAMPLE_RATE_HZ * 2 // 50  # 20 ms
    return [InputAudioRawFrame(pcm[i : i + step], SAMPLE_RATE_HZ, 1) for i in range(0, len(pcm), step)]


async def _run(frames: list[Frame], eager: bool = False) -> tuple[list[Frame], FakeASR, StopProbe, list[Transcript]]:
    asr, finals = FakeASR(), []
    stt = StreamingSTTService(
        asr, interim_every_ms=100, on_final=lambda t, pcm: finals.append(t), eager=eager, quiet_interim_every_ms=100
    )
    probe = StopProbe(asr)
    down, _ = await run_test(
        Pipeline([stt, probe]),
        frames_to_send=[VADUserStartedSpeakingFrame(), *frames, VADUserStoppedSpeakingFrame(), SleepFrame(0.3)],
    )
    kinds = (
        InterimTranscriptionFrame,
        TranscriptionFrame,
        EagerTranscriptionFrame,
        EagerEndOfTurnCancelFrame,
        VADUserStoppedSpeakingFrame,
    )
    return [f for f in down if isinstance(f, kinds)], asr, probe, finals


def _texts(frames: list[Frame]) -> list[tuple[str, str]]:
    return [(type(f).__name__, getattr(f, "text", "")) for f in frames if not isinstance(f, InterimTranscriptionFrame)]


async def test_the_early_final_is_announced_as_the_eager_end_of_turn_before_the_vad_stop():
    got, _asr, _probe, _finals = await _run(
        [*audio_frames(tone(1.2)), *audio_frames(silence(0.16)), SleepFrame(0.3)], eager=True
    )
    assert _texts(got) == [
        ("EagerTranscriptionFrame", "one two three four"),
        ("VADUserStoppedSpeakingFrame", ""),
        ("TranscriptionFrame", "one two three four"),
    ]


async def test_speech_that_goes_on_withdraws_the_eager_end_of_turn():
    got, _asr, _probe, _finals = await _run(
        [
            *audio_frames(tone(1.2)),
            *audio_frames(silence(0.16)),
            SleepFrame(0.3),
            *audio_frames(tone(0.5)),
            SleepFrame(0.3),
        ],
        eager=True,
    )
    assert _texts(got)[:2] == [("EagerTranscriptionFrame", "one two three four"), ("EagerEndOfTurnCancelFrame", "")]
    assert _texts(got)[-1] == ("TranscriptionFrame", "one two three four five six")


async def test_without_eager_no_early_final_is_announced():
    got, _asr, _probe, _finals = await _run([*audio_frames(tone(1.2)), *audio_frames(silence(0.16)), SleepFrame(0.3)])
    assert [n for n, _t in _texts(got)] == ["VADUserStoppedSpeakingFrame", "TranscriptionFrame"]


async def test_interim_transcripts_while_speaking_then_the_final_one():
    got, asr, probe, finals = await _run(
        [*audio_frames(tone(0.6)), SleepFrame(0.4), *audio_frames(tone(0.6)), SleepFrame(0.4)]
    )
    interims = [f.text for f in got if isinstance(f, InterimTranscriptionFrame)]
    assert interims == ["one two", "one two three four"]
    final = got[-1]
    assert isinstance(final, TranscriptionFrame) and final.finalized and final.text == "one two three four"
    assert len(asr.calls) == probe.calls_at_stop + 1  # the final is its own ASR call on the whole segment
    assert asr.calls[-1] == int(1.2 * SAMPLE_RATE_HZ) and finals[0].audio_s == 1.2


async def test_silence_gives_an_empty_final():
    got, asr, _probe, finals = await _run([*audio_frames(silence(1.2)), SleepFrame(0.4)])
    assert _texts(got) == [("VADUserStoppedSpeakingFrame", ""), ("TranscriptionFrame", "")]  # done, nothing said
    assert asr.calls and [f.text for f in finals] == [""]


async def test_an_early_final_on_the_trailing_quiet_is_the_final():
    got, asr, probe, _finals = await _run(
        [*audio_frames(tone(1.2)), SleepFrame(0.3), *audio_frames(silence(0.3)), SleepFrame(0.4)]
    )
    assert [f.text for f in got if isinstance(f, TranscriptionFrame)] == ["one two three four"]
    assert len(asr.calls) == probe.calls_at_stop  # no ASR call after the VAD stop


async def test_no_interims_while_the_bot_is_quiet_unless_asked():
    asr, finals = FakeASR(), []
    stt = StreamingSTTService(asr, interim_every_ms=100, on_final=lambda t, pcm: finals.append(t))
    down, _ = await run_test(
        stt,
        frames_to_send=[
            VADUserStartedSpeakingFrame(),
            *audio_frames(tone(1.2)),
            SleepFrame(0.5),
            VADUserStoppedSpeakingFrame(),
            SleepFrame(0.3),
        ],
    )
    assert not [f for f in down if isinstance(f, InterimTranscriptionFrame)]
    assert [f.text for f in down if isinstance(f, TranscriptionFrame)] == ["one two three four"]


async def test_while_the_bot_speaks_a_word_is_transcribed_once_in_its_own_pause():
    """A barge-in's "Stop." is decided at the word's end, not at the next interim tick, and
    by one ASR call: no early final of the same pause queues beside it."""
    asr = FakeASR()
    stt = StreamingSTTService(asr, interim_every_ms=5000, eager=True)  # no tick in this test's time
    probe = StopProbe(asr)
    down, _ = await run_test(
        Pipeline([stt, probe]),
        frames_to_send=[
            BotStartedSpeakingFrame(),
            VADUserStartedSpeakingFrame(),
            *audio_frames(tone(0.5)),
            *audio_frames(silence(0.2)),
            SleepFrame(0.4),
            VADUserStoppedSpeakingFrame(),
            SleepFrame(0.3),
        ],
    )
    assert [f.text for f in down if isinstance(f, InterimTranscriptionFrame)] == ["one"]
    assert not [f for f in down if isinstance(f, EagerTranscriptionFrame)]
    assert probe.calls_at_stop == 1
    # the VAD stopped in that pause: the final is that transcript, not a second ASR call
    assert [f.text for f in down if isinstance(f, TranscriptionFrame)] == ["one"] and len(asr.calls) == 1


def test_the_person_has_stopped_when_the_end_is_quiet():
    speech = tone(1.0)
    assert not trailing_silence(speech)
    assert trailing_silence(speech + silence(0.14))
    assert not trailing_silence(speech + silence(0.14) + tone(0.04))
    assert quiet_after(speech + silence(0.3), len(speech)) and quiet_after(speech, len(speech))
    assert not quiet_after(speech + silence(0.1) + tone(0.1), len(speech))


async def test_the_asr_transcribes_after_the_context_an_agents_line_sends_upstream():
    """The phone agent's line hints the person's confirmed names (``ASRContextFrame``, pushed
    upstream): every later transcription, interim or final, is decoded after them."""
    asr = FakeASR()
    stt = StreamingSTTService(asr, interim_every_ms=100, quiet_interim_every_ms=100)
    line = LineProcessor(config.load().turn)
    task = asyncio.create_task(
        run_test(
            Pipeline([stt, line]),
            frames_to_send=[
                SleepFrame(0.2),
                VADUserStartedSpeakingFrame(),
                *audio_frames(tone(0.6)),
                SleepFrame(0.3),
                VADUserStoppedSpeakingFrame(),
                SleepFrame(0.3),
            ],
        )
    )
    await asyncio.sleep(0.1)
    assert not asr.contexts
    await line.hint("Oluwaseun Oyelaran")
    await task
    assert asr.contexts and set(asr.contexts) == {"Oluwaseun Oyelaran"}


async def test_each_use_is_heard_by_its_own_engine():
    """Interims while the bot speaks go to the interim engine (the barge-in ear), finals to the
    conversation's, and, while the last context said a spelling is expected, to the spelling
    pass's; an interim of another engine is never taken for the final."""
    talk, spell, ear = FakeASR(), FakeASR(), FakeASR()
    stt = StreamingSTTService(talk, interim_every_ms=100, eager=True, interim_asr=ear, spelling_asr=spell)
    utterance = [
        VADUserStartedSpeakingFrame(),
        *audio_frames(tone(0.6)),
        SleepFrame(0.4),
        VADUserStoppedSpeakingFrame(),
    ]
    down, _ = await run_test(
        stt,
        frames_to_send=[
            BotStartedSpeakingFrame(),
            *utterance,
            SleepFrame(0.3),
            ASRContextFrame(context="Alfa, Bravo", spelling=True),
            *utterance,
            SleepFrame(0.3),
            ASRContextFrame(context=""),
            *utterance,
            SleepFrame(0.3),
        ],
    )
    assert [f.text for f in down if isinstance(f, TranscriptionFrame)] == ["one two"] * 3
    assert ear.calls and len(talk.calls) == 2 and len(spell.calls) == 1
    assert spell.contexts == ["Alfa, Bravo"] and talk.contexts == ["", ""]


class SlowASR(FakeASR):
    def transcribe(self, audio, context=""):
        import time

        time.sleep(0.3)
        return super().transcribe(audio, context)


async def test_while_the_bot_is_quiet_interims_reach_the_page_and_the_early_final_takes_over_the_last_one():
    """Issue 28: the page's live line in an ordinary turn. The interim in flight when the
    person stops already heard everything: the early final is that transcription, so the
    interims cost the end of the turn no ASR call."""
    asr = SlowASR()
    stt = StreamingSTTService(asr, interim_every_ms=100, quiet_interim_every_ms=100, eager=True)
    down, _ = await run_test(
        stt,
        frames_to_send=[
            VADUserStartedSpeakingFrame(),
            *audio_frames(tone(1.0)),
            SleepFrame(0.2),  # an interim starts on the second of speech
            *audio_frames(silence(0.16)),  # the person stops: the early final is due
            SleepFrame(0.5),
            VADUserStoppedSpeakingFrame(),
            SleepFrame(0.3),
        ],
    )
    interims = [f.text for f in down if isinstance(f, InterimTranscriptionFrame)]
    finals = [
        f.text for f in down if isinstance(f, TranscriptionFrame) and not isinstance(f, InterimTranscriptionFrame)
    ]
    assert len(interims) == 1 and interims[0] and finals[-1] == interims[0]
    assert any(isinstance(f, EagerTranscriptionFrame) for f in down)
    assert asr.calls == [SAMPLE_RATE_HZ]  # one call: the interim's, taken over by the early and the final
