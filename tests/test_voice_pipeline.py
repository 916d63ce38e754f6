"""The user-turn strategies build_task gives pipecat's user aggregator, by pushing frames:
barge-in on VAD speech, or only after ``turn.barge_in_min_words`` words."""

from __future__ import annotations

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    UserStartedSpeakingFrame,
    VADUserStartedSpeakingFrame,
)
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregator, LLMUserAggregatorParams
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.pipeline import turn_strategies

GAP = SleepFrame(0.05)  # keeps system frames in order with the transcripts


async def _user_turn(turn: dict, frames: list) -> tuple[bool, bool]:
    """(the person's turn started, the bot was interrupted) after ``frames`` reach the user
    aggregator built with ``turn`` (config overrides)."""
    cfg = config.load(overrides={"turn": turn})
    aggregator = LLMUserAggregator(LLMContext(), params=LLMUserAggregatorParams(
        user_turn_strategies=turn_strategies(cfg.turn, agent=False)))
    down, _ = await run_test(aggregator, frames_to_send=frames)
    return (any(isinstance(f, UserStartedSpeakingFrame) for f in down),
            any(isinstance(f, InterruptionFrame) for f in down))


def _interim(text: str) -> InterimTranscriptionFrame:
    return InterimTranscriptionFrame(text, "", "t")


async def test_by_default_any_speech_the_vad_hears_interrupts_the_bot():
    assert await _user_turn({}, [BotStartedSpeakingFrame(), GAP, VADUserStartedSpeakingFrame(), GAP]) == (True, True)


async def test_without_barge_in_speech_starts_the_turn_but_never_interrupts():
    frames = [BotStartedSpeakingFrame(), GAP, VADUserStartedSpeakingFrame(), GAP]
    assert await _user_turn({"barge_in": False}, frames) == (True, False)


async def test_with_min_words_a_backchannel_lets_the_bot_go_on():
    frames = [BotStartedSpeakingFrame(), GAP, VADUserStartedSpeakingFrame(), GAP, _interim("mm-hm"), GAP]
    assert await _user_turn({"barge_in_min_words": 2}, frames) == (False, False)


async def test_with_min_words_enough_words_interrupt_the_bot():
    frames = [BotStartedSpeakingFrame(), GAP, VADUserStartedSpeakingFrame(), GAP, _interim("yeah"), GAP,
              _interim("wait, stop"), GAP]
    assert await _user_turn({"barge_in_min_words": 2}, frames) == (True, True)


async def test_with_min_words_one_word_starts_the_turn_while_the_bot_is_quiet():
    frames = [VADUserStartedSpeakingFrame(), GAP, _interim("Yes."), GAP]
    assert (await _user_turn({"barge_in_min_words": 3}, frames))[0]
