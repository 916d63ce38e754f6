"""A fast voice while a slow mind thinks (issue 28, ``llm.slow``), with the real embedded model
and Piper: the acknowledgement starts well within 700 ms of the turn's end, names what was asked, and
gives way to the slow answer."""

from __future__ import annotations

import pytest
from helpers import AudioSink, answer_audio
from pipecat.frames.frames import (
    LLMContextFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.tests.utils import SleepFrame, run_test

from appliance.voice.acks import ACK_PROMPT, AckAudioRawFrame, RelevantAck
from appliance.voice.playout import Playout

pytestmark = pytest.mark.e2e

#: the acknowledgement's first audio within this long of the turn's end (issue 28: 700 ms from the end of
#: speech, of which the VAD stop and the end of turn take ~200–300 ms)
ACK_WITHIN_MS = 400


@pytest.mark.parametrize("asked", ["Can you tell me about the history of Rome?", "How do I make a cup of green tea?"])
async def test_the_fast_model_acknowledges_what_was_asked_before_the_slow_answer(runtime, asked):
    fast = runtime.llm("ack")
    await fast.warm(ACK_PROMPT)  # at start-up with llm.slow set (VoiceRuntime.start)
    reports: list[tuple[str, dict]] = []
    heard = AudioSink()
    rate = runtime.synth.sample_rate_hz
    await run_test(
        Pipeline(
            [
                RelevantAck(fast, runtime.synth, report=lambda e, **f: reports.append((e, f))),
                Playout(runtime.cfg.turn, 120),
                heard,
            ]
        ),
        frames_to_send=[
            UserStoppedSpeakingFrame(),
            LLMContextFrame(LLMContext(messages=[{"role": "user", "content": asked}])),
            SleepFrame(2.0),  # the slow mind's answer comes after 2 s
            *answer_audio(0.5, rate, level=300),
            SleepFrame(0.6),
        ],
    )
    (event, fields), *_ = reports
    assert event == "ack", reports
    assert fields["after_ms"] <= ACK_WITHIN_MS, fields
    topic = ("rome", "history") if "Rome" in asked else ("tea",)
    assert any(w in fields["text"].lower() for w in topic), fields  # about what was asked, not a canned line
    kinds = [isinstance(f, AckAudioRawFrame) for _t, f in heard.audio]
    assert kinds and kinds[0] and not any(kinds[kinds.index(False) :])  # the ack, then the answer alone
