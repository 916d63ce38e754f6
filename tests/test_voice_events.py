"""TurnObserver by pushing synthetic frames past it (pipecat's run_test): the events of one
turn, its ``turn`` summary, and a barge-in."""

from __future__ import annotations

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.filters.identity_filter import IdentityFilter
from pipecat.tests.utils import SleepFrame, run_test

from appliance.voice.events import EventLog, TurnObserver

STOP_MS = 200
GAP = SleepFrame(0.05)  # keeps system frames (VAD, bot speaking) in order with data frames


async def _events(frames: list) -> list[dict]:
    log = EventLog(None)
    await run_test(IdentityFilter(), frames_to_send=frames, observers=[TurnObserver(log, STOP_MS)])
    return log.events


def _audio() -> TTSAudioRawFrame:
    return TTSAudioRawFrame(bytes(960), 24_000, 1)


async def test_one_turn_gives_each_stage_once_and_a_summary_from_the_end_of_speech():
    events = await _events(
        [
            VADUserStartedSpeakingFrame(),
            GAP,
            InterimTranscriptionFrame("what is", "", "t"),
            GAP,
            VADUserStoppedSpeakingFrame(),
            GAP,
            TranscriptionFrame("What is two plus two?", "", "t"),
            LLMFullResponseStartFrame(),
            LLMTextFrame("[EMO:happy] Four"),
            LLMTextFrame("."),
            LLMFullResponseEndFrame(),
            _audio(),
            _audio(),
            TTSTextFrame("Four.", text_type="sentence"),
            GAP,
            BotStartedSpeakingFrame(),
            GAP,
            BotStoppedSpeakingFrame(),
            GAP,
        ]
    )
    names = [e["event"] for e in events]
    assert names == [
        "user_started_speaking",
        "interim_transcript",
        "vad_stopped",
        "final_transcript",
        "llm_first_token",
        "llm_reply",
        "tts_first_audio",
        "bot_text",
        "first_audio_sent",
        "turn",
        "bot_stopped",
    ]
    by = {e["event"]: e for e in events}
    assert by["interim_transcript"]["text"] == "what is"
    assert by["final_transcript"]["text"] == "What is two plus two?"
    assert by["llm_reply"]["text"] == "Four." and by["bot_text"]["text"] == "Four."  # markers never logged
    # the end of speech is the VAD stop − vad.stop_ms (read a moment before the event is stamped)
    assert 0 <= round(by["vad_stopped"]["t_ms"] - STOP_MS - by["vad_stopped"]["speech_end_ms"], 1) < 5  # 0.1 ms stamps
    turn = {k: v for k, v in by["turn"].items() if k.endswith("_ms") and k != "t_ms"}
    stages = [
        "vad_stopped_ms",
        "final_transcript_ms",
        "llm_first_token_ms",
        "tts_first_audio_ms",
        "first_audio_sent_ms",
    ]
    assert list(turn) == stages
    assert turn["vad_stopped_ms"] == STOP_MS  # latencies count from the end of speech, VAD stop − vad.stop_ms
    assert [turn[k] for k in stages] == sorted(turn.values())
    assert turn["final_transcript_ms"] >= STOP_MS + 40  # the GAP between VAD stop and transcript


async def test_barge_in_logs_the_cut_reply_and_no_turn_summary():
    events = await _events(
        [
            LLMFullResponseStartFrame(),
            LLMTextFrame("Once upon"),
            LLMTextFrame(" a time"),
            _audio(),
            GAP,
            BotStartedSpeakingFrame(),
            GAP,
            VADUserStartedSpeakingFrame(),
            GAP,
            InterruptionFrame(),
            GAP,
            BotStoppedSpeakingFrame(),
            GAP,
        ]
    )
    names = [e["event"] for e in events]
    assert names == [
        "llm_first_token",
        "tts_first_audio",
        "barge_in_detected",
        "user_started_speaking",
        "interruption",
        "llm_reply",
        "bot_stopped",
    ]
    assert events[names.index("llm_reply")] | {"t_ms": 0, "ts": 0} == {
        "t_ms": 0,
        "ts": 0,
        "event": "llm_reply",
        "text": "Once upon a time",
        "interrupted": True,
    }


async def test_the_llms_own_ttfb_is_logged_and_other_services_are_not():
    from pipecat.frames.frames import MetricsFrame
    from pipecat.metrics.metrics import TTFBMetricsData

    events = await _events(
        [
            MetricsFrame(data=[TTFBMetricsData(processor="RetryingOpenAILLMService#0", value=0.4321)]),
            MetricsFrame(data=[TTFBMetricsData(processor="PiperClauseTTSService#0", value=0.2)]),
            MetricsFrame(data=[TTFBMetricsData(processor="RetryingOpenAILLMService#0", value=0.0)]),  # none measured
            GAP,
        ]
    )
    assert [(e["event"], e["ttfb_ms"]) for e in events] == [("llm_ttfb", 432.1)]
