"""Never silent when slow (appliance/voice/acks.py): the acknowledgement comes only when the
answer is late, never holds the answer back, and only where turn.ack says."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
from fakes import FakeSynth
from pipecat.frames.frames import Frame, TTSAudioRawFrame, UserStoppedSpeakingFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.acks import AckAudioRawFrame, Acknowledger
from appliance.voice.events import EventLog
from appliance.voice.pipeline import acknowledger
from appliance.voice.playout import Playout
from appliance.voice.session import Session

RATE = 16_000


class Sink(FrameProcessor):
    def __init__(self):
        super().__init__()
        self.audio: list[tuple[float, TTSAudioRawFrame]] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio.append((asyncio.get_running_loop().time(), frame))
        await self.push_frame(frame, direction)


def answer(seconds: float) -> list[TTSAudioRawFrame]:
    n = RATE * 40 // 1000
    return [TTSAudioRawFrame(np.full(n, 1, np.int16).tobytes(), RATE, 1) for _ in range(round(seconds * 25))]


async def _run(frames: list[Frame]) -> tuple[Sink, list[tuple[str, dict]]]:
    cfg = config.load()
    reports: list[tuple[str, dict]] = []
    ack = Acknowledger(
        bytes(RATE * 2), RATE, after_ms=200, every_turn=True, report=lambda e, **f: reports.append((e, f))
    )
    sink = Sink()
    await run_test(Pipeline([ack, Playout(cfg.turn, 200), sink]), frames_to_send=frames)
    return sink, reports


async def test_a_late_answer_is_acknowledged_and_the_ack_gives_way_to_it():
    sink, reports = await _run([UserStoppedSpeakingFrame(), SleepFrame(0.5), *answer(0.4), SleepFrame(0.8)])
    assert [e for e, _f in reports] == ["ack"]
    kinds = [isinstance(f, AckAudioRawFrame) for _t, f in sink.audio]
    first_answer = kinds.index(False)
    # from 0.2 s the ack played until the answer came at 0.5 s (+ the playout's 0.15 s lead), then no more of it
    assert 0 < first_answer <= 13 and not any(kinds[first_answer:])
    assert len(kinds) - first_answer == 10  # the whole answer


async def test_a_prompt_answer_is_not_acknowledged():
    sink, reports = await _run([UserStoppedSpeakingFrame(), SleepFrame(0.05), *answer(0.4), SleepFrame(0.6)])
    assert reports == [] and not any(isinstance(f, AckAudioRawFrame) for _t, f in sink.audio)


def _runtime(ack: str, provider: str = "embedded"):
    llm = (
        {"provider": provider}
        if provider == "embedded"
        else {"provider": provider, "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    cfg = config.load(overrides={"turn": {"ack": ack}, "llm": llm})
    synth = FakeSynth()
    return SimpleNamespace(cfg=cfg, ack_audio=lambda: (synth.synthesize("One moment.", None).tobytes(), 24_000))


def _every_turn(ack, provider="embedded", agent=False):
    got = acknowledger(_runtime(ack, provider), agent, Session(events=EventLog(None)))
    return None if got is None else got._every_turn


def test_ack_is_off_for_the_embedded_plain_loop_and_on_for_a_remote_llm():
    assert _every_turn("auto") is None
    assert _every_turn("auto", provider="openai_compatible") is True
    assert _every_turn("auto", agent=True) is False  # an agent mode: only when the agent says a step is slow
    assert _every_turn("on") is True
    assert _every_turn("off", provider="openai_compatible", agent=True) is None
