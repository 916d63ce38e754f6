"""SpeakableTextProcessor by pushing frames (pipecat's run_test): LLM tokens in, styled clauses out."""

from __future__ import annotations

from pipecat.frames.frames import InterruptionFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame
from pipecat.tests.utils import SleepFrame, run_test

from appliance.voice.markers import SpeakableTextProcessor, SpeechStyle, StyledClauseFrame


def _reply(*tokens: str) -> list:
    return [LLMFullResponseStartFrame(), *(LLMTextFrame(t) for t in tokens), LLMFullResponseEndFrame()]


async def test_tokens_become_clauses_with_their_styles_and_no_markers():
    down, _ = await run_test(
        SpeakableTextProcessor(first_words=4, max_words=14),
        frames_to_send=_reply(
            "[EMO:", "happy]", "Sure", ",", " I can", " help", ". [SPEED:1.5]", "Here", " we", " go", "!", " [THINK"
        ),
        expected_down_frames=[
            LLMFullResponseStartFrame,
            StyledClauseFrame,
            StyledClauseFrame,
            StyledClauseFrame,
            LLMFullResponseEndFrame,
        ],
    )
    clauses = [(f.text, f.style) for f in down if isinstance(f, StyledClauseFrame)]
    assert clauses == [
        ("Sure,", SpeechStyle(1.0, "happy", 0)),
        ("I can help.", SpeechStyle(1.0, "happy", 0)),
        ("Here we go!", SpeechStyle(1.5, "happy", 0)),
    ]  # the unfinished marker is dropped


async def test_the_first_clause_goes_early_and_the_rest_at_the_end_of_the_reply():
    down, _ = await run_test(
        SpeakableTextProcessor(first_words=4, max_words=14),
        frames_to_send=_reply("Greggs", " was", " clearly", " annoyed", " by", " the", " sharp", " turn"),
    )
    clauses = [f.text for f in down if isinstance(f, StyledClauseFrame)]
    assert clauses == ["Greggs was clearly annoyed", "by the sharp turn"]


async def test_an_interruption_drops_the_partial_clause():
    down, _ = await run_test(
        SpeakableTextProcessor(first_words=6, max_words=14),
        frames_to_send=[
            LLMFullResponseStartFrame(),
            LLMTextFrame("Well I think"),
            SleepFrame(0.1),
            InterruptionFrame(),
            SleepFrame(0.1),
            *_reply("Yes", "."),
        ],
    )
    assert [f.text for f in down if isinstance(f, StyledClauseFrame)] == ["Yes."]
    assert any(isinstance(f, InterruptionFrame) for f in down)  # passed on to TTS


async def test_markers_as_the_llm_spells_them_are_never_spoken_and_still_style_the_clause():
    down, _ = await run_test(
        SpeakableTextProcessor(first_words=4, max_words=14),
        frames_to_send=_reply(
            "[SPEED:", "0.8x]", " Slowly", " now", ".", " [", "emo", " :", " Calm", " ]", " Yes", "."
        ),
    )
    clauses = [(f.text, f.style) for f in down if isinstance(f, StyledClauseFrame)]
    assert clauses == [("Slowly now.", SpeechStyle(0.8, "neutral", 0)), ("Yes.", SpeechStyle(0.8, "calm", 0))]


def test_the_assistant_is_told_every_marker_it_may_use_and_each_one_parses():
    import re

    from appliance.voice.markers import EMOTIONS, MARKER_RE, spoken_prompt

    prompt = spoken_prompt("You are a voice assistant.")
    told = re.findall(r"\[[^\]]+\]", prompt)
    assert prompt.startswith("You are a voice assistant.") and len(told) >= 5
    assert all(MARKER_RE.fullmatch(m) for m in told), told
    assert {m.split(":")[1].rstrip("]") for m in told if m.startswith("[EMO:")} <= set(EMOTIONS)
