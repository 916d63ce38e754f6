"""Playout (appliance/voice/playout.py) by pushing frames in real time: the bot's audio paced
to the transport, sent on while a page duck lowers it there, paused by the VAD without a
page and resumed where it was, or dropped on a confirmed barge-in; and with
pipecat's user aggregator and our strategies in front, "mm-hm" against "stop, wait a moment"."""

from __future__ import annotations

import asyncio

import numpy as np
from fakes import ScriptedSmartTurn
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InputTransportMessageFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    OutputTransportMessageUrgentFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregator, LLMUserAggregatorParams
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.playout import Playout
from appliance.voice.turns import turn_strategies

RATE = 16_000
GAP = SleepFrame(0.03)
DUCK = {"type": "duck"}


class Clock(FrameProcessor):
    """After the playout: (seconds since start, frame) of what reaches the transport."""

    def __init__(self):
        super().__init__()
        self.seen: list[tuple[float, Frame]] = []
        self._t0 = None

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        now = asyncio.get_running_loop().time()
        self._t0 = self._t0 if self._t0 is not None else now
        if direction == FrameDirection.DOWNSTREAM:
            self.seen.append((now - self._t0, frame))
        await self.push_frame(frame, direction)

    def audio(self) -> list[tuple[float, TTSAudioRawFrame]]:
        return [(t, f) for t, f in self.seen if isinstance(f, TTSAudioRawFrame)]

    def page(self) -> list[str]:
        states = [f.message["state"] for _t, f in self.seen if isinstance(f, OutputTransportMessageUrgentFrame)]
        assert states[:1] == ["ready"]  # the page ducks only for a playout that said so
        return states[1:]


def speech(seconds: float) -> list[TTSAudioRawFrame]:
    """The bot's audio in 40 ms frames, each frame's samples its index (to tell them apart)."""
    n = RATE * 40 // 1000
    return [TTSAudioRawFrame(np.full(n, i, np.int16).tobytes(), RATE, 1) for i in range(round(seconds * 25))]


def index(frame: TTSAudioRawFrame) -> int:
    return int(np.frombuffer(frame.audio, np.int16)[0])


async def _play(frames: list[Frame], front: list[FrameProcessor] = (), turn: dict | None = None) -> Clock:
    cfg = config.load(overrides={"turn": {"resume_overlap_ms": 0, **(turn or {})}})
    events: list[tuple[str, dict]] = []
    playout = Playout(cfg.turn, vad_start_ms=200, report=lambda e, **f: events.append((e, f)))
    clock = Clock()
    procs = [p(playout, cfg) for p in front] + [playout, clock]
    await run_test(Pipeline(procs), frames_to_send=frames)
    clock.events = events
    return clock


async def test_the_bot_audio_goes_out_in_real_time_a_little_ahead():
    clock = await _play([*speech(1.0), SleepFrame(1.2)])
    times = [t for t, _f in clock.audio()]
    assert len(times) == 25 and [index(f) for _t, f in clock.audio()] == list(range(25))
    assert 0.7 < times[-1] - times[0] < 1.0  # 1 s of audio, sent at most 150 ms ahead


async def test_a_duck_the_vad_does_not_confirm_is_released_at_once_and_the_bot_never_stopped():
    clock = await _play([*speech(1.0), SleepFrame(0.4), InputTransportMessageFrame(message=DUCK), SleepFrame(1.2)])
    assert clock.page() == ["released"]  # a knock, a cough: only the page lowered the bot, for ~0.2 s
    assert [index(f) for _t, f in clock.audio()] == list(range(25))
    times = [t for t, _f in clock.audio()]
    assert max(b - a for a, b in zip(times, times[1:])) < 0.1
    assert [e for e, _f in clock.events] == ["duck", "duck_released"]
    assert 0.15 < clock.events[1][1]["after_ms"] / 1000 < 0.4  # vad.start_ms + a margin


async def test_speech_after_a_duck_leaves_the_bot_yielding_until_a_release():
    frames = [
        *speech(1.0),
        SleepFrame(0.4),
        InputTransportMessageFrame(message=DUCK),
        SleepFrame(0.1),
        VADUserStartedSpeakingFrame(),
        SleepFrame(1.8),
    ]
    clock = await _play(frames, turn={"barge_in_max_pause_ms": 1000})
    assert clock.page() == ["released"]  # only the page lowered the bot's level meanwhile
    assert [index(f) for _t, f in clock.audio()] == list(range(25))  # sent on, in order, nothing again
    times = [t for t, _f in clock.audio()]
    assert max(b - a for a, b in zip(times, times[1:])) < 0.1
    assert [e for e, _f in clock.events] == ["duck", "duck_released"]
    assert 0.9 < clock.events[1][1]["after_ms"] / 1000 < 1.3  # no decision came (barge_in_max_pause_ms)


async def test_without_a_page_the_vads_start_pauses_the_bot_and_a_release_resumes_it_where_it_was():
    frames = [*speech(1.0), SleepFrame(0.4), VADUserStartedSpeakingFrame(), SleepFrame(1.8)]
    clock = await _play(frames, turn={"barge_in_max_pause_ms": 1000})
    assert clock.page() == ["released"]
    indices = [index(f) for _t, f in clock.audio()]
    assert sorted(set(indices)) == list(range(25))  # nothing lost
    resumed = next(i for i in range(1, len(indices)) if indices[i] <= indices[i - 1])
    assert indices[resumed] <= indices[resumed - 1] - 3  # it went back over what was sent but not yet heard
    gap = clock.audio()[resumed][0] - clock.audio()[resumed - 1][0]
    assert 0.7 < gap < 1.3  # paused until no decision came (barge_in_max_pause_ms)
    assert [e for e, _f in clock.events] == ["pause", "duck_released"]


async def test_a_pages_bot_is_never_paused_by_the_vad_even_after_its_duck_was_released():
    # the duck was released as noise before the speech reached the VAD (a slow microphone path)
    frames = [
        *speech(1.6),
        SleepFrame(0.3),
        InputTransportMessageFrame(message=DUCK),
        SleepFrame(0.5),
        VADUserStartedSpeakingFrame(),
        SleepFrame(1.6),
    ]
    clock = await _play(frames)
    assert clock.page() == ["released"]
    assert [index(f) for _t, f in clock.audio()] == list(range(40))  # sent on, in order: at the page no stop
    assert "pause" not in [e for e, _f in clock.events]


async def test_a_confirmed_barge_in_drops_the_rest():
    frames = [
        *speech(1.0),
        SleepFrame(0.3),
        InputTransportMessageFrame(message=DUCK),
        GAP,
        VADUserStartedSpeakingFrame(),
        SleepFrame(0.2),
        InterruptionFrame(),
        SleepFrame(0.8),
    ]
    clock = await _play(frames)
    assert clock.page() == ["confirmed"]
    t_cut = next(t for t, f in clock.seen if isinstance(f, InterruptionFrame))
    assert all(t <= t_cut + 0.01 for t, _f in clock.audio())  # nothing after the interruption
    assert max(index(f) for _t, f in clock.audio()) < 20


async def test_with_barge_in_off_a_duck_is_released_at_once():
    clock = await _play(
        [*speech(0.6), SleepFrame(0.2), InputTransportMessageFrame(message=DUCK), SleepFrame(0.8)],
        turn={"barge_in": False},
    )
    assert clock.page() == ["released"] and len(clock.audio()) == 15


# --- with pipecat's user aggregator and our strategies in front ----------------------------
def _aggregator(_playout: Playout, cfg) -> LLMUserAggregator:
    """The user aggregator right before the playout: its start strategy's verdicts reach it as frames."""
    return LLMUserAggregator(
        LLMContext(),
        params=LLMUserAggregatorParams(
            user_turn_strategies=turn_strategies(cfg.turn, agent=False, analyzer=ScriptedSmartTurn())
        ),
    )


def _person(interim: str, final: str) -> list[Frame]:
    return [
        InputTransportMessageFrame(message=DUCK),
        SleepFrame(0.1),
        VADUserStartedSpeakingFrame(),
        GAP,
        InterimTranscriptionFrame(interim, "", "t"),
        SleepFrame(0.3),
        VADUserStoppedSpeakingFrame(),
        GAP,
        TranscriptionFrame(final, "", "t", finalized=True),
        GAP,
    ]


async def test_mm_hm_during_bot_speech_does_not_stop_it():
    frames = [BotStartedSpeakingFrame(), GAP, *speech(2.0), SleepFrame(0.3), *_person("Mm", "Mm-hm."), SleepFrame(2.5)]
    clock = await _play(frames, front=[_aggregator])
    assert not any(isinstance(f, InterruptionFrame) for _t, f in clock.seen)
    assert clock.page() == ["released"]
    assert sorted({index(f) for _t, f in clock.audio()}) == list(range(50))  # the whole reply was played


async def test_stop_wait_a_moment_during_bot_speech_stops_it():
    frames = [
        BotStartedSpeakingFrame(),
        GAP,
        *speech(2.0),
        SleepFrame(0.3),
        *_person("Stop, wait", "Stop, wait a moment."),
        SleepFrame(1.0),
    ]
    clock = await _play(frames, front=[_aggregator])
    assert any(isinstance(f, InterruptionFrame) for _t, f in clock.seen)
    assert clock.page() == ["confirmed"]
    assert max(index(f) for _t, f in clock.audio()) < 20  # the rest of the reply was dropped
