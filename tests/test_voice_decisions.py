"""Decisions as frames (appliance/voice/decisions.py), by pushing frames through the
processors that make and take them: a backchannel verdict releases the playout's duck, the
playout's ahead figure paces Piper, an acknowledge frame arms the acknowledger, and the VAD's
state reaches the playout through the one VoiceActivity."""

from __future__ import annotations

import asyncio

import numpy as np
from fakes import FakeSynth, ScriptedSmartTurn
from pipecat.audio.vad.vad_analyzer import VADState
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InputTransportMessageFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregator, LLMUserAggregatorParams
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.acks import AckAudioRawFrame, Acknowledger
from appliance.voice.decisions import (
    AcknowledgeFrame,
    BackchannelFrame,
    BargeInFrame,
    PlayoutAheadFrame,
    VoiceActivity,
)
from appliance.voice.line import LineProcessor
from appliance.voice.markers import SpeechStyle, StyledClauseFrame
from appliance.voice.piper_tts import PiperClauseTTSService
from appliance.voice.playout import ListeningSileroVAD, Playout
from appliance.voice.turns import turn_strategies

RATE = 16_000


def duck() -> InputTransportMessageFrame:
    """The page's message: it lowered the bot at a sound."""
    return InputTransportMessageFrame(message={"type": "duck"})


def speech(seconds: float) -> list[TTSAudioRawFrame]:
    n = RATE * 40 // 1000
    return [TTSAudioRawFrame(np.full(n, 1000, np.int16).tobytes(), RATE, 1) for _ in range(round(seconds * 25))]


def playout(turn: dict | None = None, activity: VoiceActivity | None = None) -> tuple[Playout, list]:
    events: list[tuple[str, dict]] = []
    cfg = config.load(overrides={"turn": turn or {}})
    return Playout(cfg.turn, 200, report=lambda e, **f: events.append((e, f)), activity=activity), events


def page(frames) -> list[str]:
    return [f.state for f in frames if isinstance(f, BargeInFrame)]


# --- BackchannelFrame: the start strategy → the playout ----------------------------------------
async def test_the_start_strategy_pushes_a_backchannel_frame_for_words_that_do_not_take_the_turn():
    cfg = config.load()

    async def person(interim: str, final: str) -> list[Frame]:
        aggregator = LLMUserAggregator(
            LLMContext(),
            params=LLMUserAggregatorParams(
                user_turn_strategies=turn_strategies(cfg.turn, agent=False, analyzer=ScriptedSmartTurn())
            ),
        )
        down, _up = await run_test(
            aggregator,
            frames_to_send=[
                BotStartedSpeakingFrame(),
                VADUserStartedSpeakingFrame(),
                InterimTranscriptionFrame(interim, "", "t"),
                SleepFrame(0.05),
                VADUserStoppedSpeakingFrame(),
                TranscriptionFrame(final, "", "t", finalized=True),
                SleepFrame(0.1),
            ],
        )
        return down

    down = await person("Mm", "Mm-hm.")
    assert [f.text for f in down if isinstance(f, BackchannelFrame)] == ["Mm-hm."]
    assert not any(isinstance(f, InterruptionFrame) for f in down)
    down = await person("Stop, wait", "Stop, wait a moment.")
    assert not any(isinstance(f, BackchannelFrame) for f in down)
    assert any(isinstance(f, InterruptionFrame) for f in down)


async def test_a_backchannel_frame_releases_a_ducked_bot_at_once():
    proc, events = playout(turn={"barge_in_max_pause_ms": 3000})
    frames = [
        *speech(1.0),
        SleepFrame(0.3),
        duck(),
        SleepFrame(0.1),
        VADUserStartedSpeakingFrame(),  # speech: the noise check leaves the duck to the words
        SleepFrame(0.2),
        BackchannelFrame(text="Mm-hm."),
        SleepFrame(0.3),
    ]
    down, _up = await run_test(proc, frames_to_send=frames)
    assert page(down) == ["ready", "released"]
    assert [(e, f.get("why")) for e, f in events] == [("duck", None), ("duck_released", "backchannel")]
    assert 0.25 < events[1][1]["after_ms"] / 1000 < 0.4  # at the verdict, not barge_in_max_pause_ms later
    assert any(isinstance(f, BackchannelFrame) for f in down)  # a system frame: it goes on


async def test_a_backchannel_frame_with_nothing_ducked_changes_nothing():
    proc, events = playout()
    down, _up = await run_test(proc, frames_to_send=[*speech(0.4), BackchannelFrame(text="Yeah."), SleepFrame(0.5)])
    assert page(down) == ["ready"] and events == []
    assert len([f for f in down if isinstance(f, TTSAudioRawFrame)]) == 10


# --- PlayoutAheadFrame: the playout → the TTS ----------------------------------------------------
async def test_the_playout_tells_upstream_how_much_audio_is_not_yet_played():
    proc, _events = playout()
    _down, up = await run_test(
        proc, frames_to_send=[*speech(1.0), SleepFrame(0.3), InterruptionFrame(), SleepFrame(0.1)]
    )
    told = [f for f in up if isinstance(f, PlayoutAheadFrame)]
    assert 0.95 <= max(f.ahead_s(0.0) for f in told) <= 1.0 + 1e-9  # all of it taken in at once, 1 s of audio
    assert max(f.sent_s for f in told) <= 0.2  # paced: at most lead_ms (150 ms) and one frame sent on ahead
    assert 0.4 < told[-2].queued_s < 0.7  # 0.3 s in: the rest still waits here ...
    assert (told[-1].sent_s, told[-1].queued_s) == (0.0, 0.0)  # ... until the interruption drops it


def test_an_ahead_figure_runs_down_only_for_audio_sent_on():
    told = PlayoutAheadFrame(sent_s=0.5, queued_s=2.0)
    assert told.ahead_s(0.0) == 2.5 and told.ahead_s(0.3) == 2.2 and told.ahead_s(9.0) == 2.0


async def test_a_paused_playout_holds_piper_back_until_its_audio_is_played():
    """The playout's ahead frames reach Piper: a clause waits while more than ``max_ahead_ms``
    waits to be played, here a first clause's audio held by a pause (the VAD's start, no page)
    until no decision came (``barge_in_max_pause_ms``); without them it would be synthesised
    at once, for a reply that may be cut."""
    cfg = config.load(overrides={"tts": {"max_ahead_ms": 50}})
    synth = FakeSynth(24_000)
    tts = PiperClauseTTSService(synth, cfg.tts)
    proc, events = playout(turn={"barge_in_max_pause_ms": 300})
    one, two = (StyledClauseFrame(text=t, text_type="sentence", style=SpeechStyle()) for t in ("One.", "Two."))
    frames = [LLMFullResponseStartFrame(), one, SleepFrame(0.1), VADUserStartedSpeakingFrame(), SleepFrame(0.05)]
    _down, up = await run_test(
        Pipeline([tts, proc]), frames_to_send=[*frames, two, LLMFullResponseEndFrame(), SleepFrame(0.8)]
    )
    assert [c for c, _ in synth.calls] == ["One.", "Two."]
    assert [e for e, _f in events] == ["pause", "duck_released"]
    waited = synth.times[1] - synth.times[0]
    assert 0.4 < waited < 0.7, synth.times  # 0.1 s before the pause, 0.3 s paused, the 0.1 s clause played down
    assert not any(isinstance(f, PlayoutAheadFrame) for f in up)  # it ends at the TTS


# --- AcknowledgeFrame: the line → the acknowledger -----------------------------------------------
def acknowledger() -> tuple[Acknowledger, list]:
    reports: list[tuple[str, dict]] = []
    ack = Acknowledger(
        bytes(RATE // 5), RATE, after_ms=200, every_turn=False, report=lambda e, **f: reports.append((e, f))
    )
    return ack, reports


async def test_an_acknowledge_frame_arms_the_acknowledger_and_ends_there():
    ack, reports = acknowledger()
    down, _up = await run_test(ack, frames_to_send=[AcknowledgeFrame(), SleepFrame(0.4)])
    assert [e for e, _f in reports] == ["ack"] and 0.18 < reports[0][1]["after_ms"] / 1000 < 0.3
    assert any(isinstance(f, AckAudioRawFrame) for f in down)
    assert not any(isinstance(f, AcknowledgeFrame) for f in down)


async def test_the_answer_within_after_ms_of_an_acknowledge_frame_goes_unacknowledged():
    ack, reports = acknowledger()
    down, _up = await run_test(
        ack, frames_to_send=[AcknowledgeFrame(), SleepFrame(0.05), *speech(0.2), SleepFrame(0.4)]
    )
    assert reports == [] and not any(isinstance(f, AckAudioRawFrame) for f in down)


async def test_the_line_acknowledges_a_slow_step_with_a_frame():
    line = LineProcessor(config.load().turn)
    ack, reports = acknowledger()

    async def slow_step():
        await asyncio.sleep(0.1)  # the pipeline has started
        await line.acknowledge()

    step = asyncio.create_task(slow_step())
    down, _up = await run_test(Pipeline([line, ack]), frames_to_send=[SleepFrame(0.6)])
    await step
    assert [e for e, _f in reports] == ["ack"] and any(isinstance(f, AckAudioRawFrame) for f in down)


# --- VoiceActivity: the VAD → the playout ----------------------------------------------------------
async def test_the_listening_vad_writes_what_it_hears_into_the_activity():
    activity = VoiceActivity(state=VADState.SPEAKING)
    vad = ListeningSileroVAD(activity)
    vad.set_sample_rate(RATE)
    assert await vad.analyze_audio(bytes(RATE // 5)) == VADState.QUIET  # 0.1 s of silence
    assert activity.state == VADState.QUIET


async def test_a_duck_is_released_as_noise_only_when_the_activity_hears_nothing_speech_like():
    def frames() -> list[Frame]:
        return [*speech(1.2), SleepFrame(0.3), duck(), SleepFrame(0.7)]

    quiet, events = playout(activity=VoiceActivity(VADState.QUIET))
    down, _up = await run_test(quiet, frames_to_send=frames())
    assert page(down) == ["ready", "released"] and events[-1][1]["why"] == "no speech"
    assert 0.45 < events[-1][1]["after_ms"] / 1000 < 0.7  # SOUND_WAIT_MS (no sound came) + NOISE_CHECK_MS
    heard, events = playout(activity=VoiceActivity(VADState.SPEAKING))  # its start frame still on the way
    down, _up = await run_test(heard, frames_to_send=frames())
    assert page(down) == ["ready", "released"]  # only when the session ends: the words decide
    assert [(e, f.get("why")) for e, f in events] == [("duck", None), ("duck_released", "the session ends")]
