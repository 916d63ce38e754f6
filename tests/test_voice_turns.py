"""When a turn starts and ends (appliance/voice/turns.py): the words' rules, then pipecat's
user aggregator with our strategies and a fake LLM service, by pushing frames in real time
(Smart Turn's model scripted; its buffering and pipecat's speculation gate are real)."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from fakes import FakeLLMService, ScriptedSmartTurn
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    EagerTranscriptionFrame,
    Frame,
    InputAudioRawFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMTextFrame,
    STTMetadataFrame,
    TranscriptionFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMUserAggregator, LLMUserAggregatorParams
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.turns import (
    ReplyClock,
    interrupts,
    is_backchannel,
    sounds_finished,
    spoken_words,
    turn_strategies,
    unfinished,
)

RATE = 16_000
GAP = SleepFrame(0.03)  # keeps system frames in order with the transcripts
#: "the turn ends at once": well under the 1 s hold and pipecat's 1 s STT safety net, the waits a wrong
#: rule would make (the frames' own gaps take ~0.05 s; a loaded CI machine took 0.31 s)
AT_ONCE_S = 0.6


# --- the words --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "My name is",
        "My name is...",
        "I want to book a flight to",
        "five five five",
        "555",
        "555 123",
        "Um, I'd like the",
        "and",
        "Well,",
    ],
)
def test_unfinished_utterances(text):
    assert unfinished(text)


@pytest.mark.parametrize(
    "text",
    [
        "My name is David Miller.",
        "Yes.",
        "What is the capital of France?",
        "555 123 4567",
        "Eight.",
        "Thank you.",
        "",
        "Stop, wait a moment.",
        "How many legs does a spider have?",
        "What time zone is Tokyo in?",
        "Yes, I do.",
        "I can.",
        "It was.",
    ],
)
def test_finished_utterances(text):
    assert not unfinished(text)


def test_whole_questions_sound_finished_cut_ones_do_not():
    assert sounds_finished("How do I make a cup of green tea?") and sounds_finished("What time zone is Tokyo in?")
    assert not sounds_finished("What is the capital of?") and not sounds_finished("My name is David.")


def test_words_drop_sound_annotations_and_join_hyphens():
    assert spoken_words("[Music] Mm-hm. (coughing) ♪ la la ♪") == ["mmhm"]


@pytest.mark.parametrize(
    "text", ["Mm-hm.", "Mm-mm", "Mmm.", "Hmm.", "Yeah.", "Right.", "Okay, yeah.", "Uh-huh", "(coughing)", "[Music]", ""]
)
def test_backchannels_and_noises_never_interrupt(text):
    assert is_backchannel(text) and not interrupts(text, 2)


@pytest.mark.parametrize(
    "text", ["Stop.", "Wait.", "Stop, wait a moment.", "No.", "What is two plus two?", "Yeah, but tell me about Paris"]
)
def test_a_request_or_a_stop_word_interrupts(text):
    assert interrupts(text, 2)


# --- frames -------------------------------------------------------------------------------
class Probe(FrameProcessor):
    """Keeps (seconds since the first frame, frame) of everything that comes downstream."""

    def __init__(self):
        super().__init__()
        self.seen: list[tuple[float, Frame]] = []
        self._t0: float | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        now = asyncio.get_running_loop().time()
        self._t0 = self._t0 if self._t0 is not None else now
        if direction == FrameDirection.DOWNSTREAM:
            self.seen.append((now - self._t0, frame))
        await self.push_frame(frame, direction)

    def times(self, cls) -> list[float]:
        return [t for t, f in self.seen if isinstance(f, cls)]

    def frames(self, cls) -> list:
        return [f for _t, f in self.seen if isinstance(f, cls)]


def _audio(seconds: float, level: float) -> list[Frame]:
    """``seconds`` of 20 ms audio frames at ``level`` (0 = silence), in real time."""
    pcm = (np.full(RATE // 50, level * 32767)).astype(np.int16).tobytes()
    out: list[Frame] = [SleepFrame(0.0)]  # a first marker for the probe's clock
    for _ in range(round(seconds * 50)):
        out += [InputAudioRawFrame(pcm, RATE, 1), SleepFrame(0.02)]
    return out


def _utterance(text: str, *, eager: str | None = None, seconds: float = 0.6, interim: bool = True) -> list[Frame]:
    """The frames of one VAD segment: speech with an interim (unless not ``interim``: the
    STT sends none while the bot is quiet), the early final (``eager``) in its trailing
    quiet, the VAD stop and the final transcript."""
    said = [InterimTranscriptionFrame(text.split()[0], "", "t"), GAP] if interim else []
    frames = [
        VADUserStartedSpeakingFrame(),
        GAP,
        *_audio(seconds / 2, 0.3),
        *said,
        *_audio(seconds / 2, 0.3),
        *_audio(0.12, 0),
    ]
    if eager is not None:
        frames += [EagerTranscriptionFrame(eager, "", "t"), GAP]
    return frames + [
        *_audio(0.08, 0),
        VADUserStoppedSpeakingFrame(stop_secs=0.2),
        GAP,
        TranscriptionFrame(text, "", "t", finalized=True),
        GAP,
    ]


async def _run(frames: list[Frame], turn: dict | None = None, complete=lambda _s: True, agent: bool = False):
    """Push ``frames`` through the user aggregator (our strategies, a scripted Smart Turn) and
    a fake LLM; returns (probe after the LLM, the fake LLM, the strategies' reports)."""
    cfg = config.load(overrides={"turn": {"incomplete_timeout_ms": 1000, **(turn or {})}})
    reports: list[dict] = []
    strategies = turn_strategies(
        cfg.turn,
        agent=agent,
        report=lambda event, **f: reports.append({"event": event, **f}),
        analyzer=ScriptedSmartTurn(complete),
    )
    llm, probe = FakeLLMService(), Probe()
    aggregator = LLMUserAggregator(LLMContext(), params=LLMUserAggregatorParams(user_turn_strategies=strategies))
    stt = STTMetadataFrame(service_name="stt", ttfs_p99_latency=1.0)  # as StreamingSTTService says
    await run_test(Pipeline([aggregator, llm, probe]), frames_to_send=[stt, *frames, SleepFrame(0.3)])
    return probe, llm, reports


async def test_a_complete_utterance_ends_the_turn_at_its_final_transcript():
    probe, llm, _ = await _run(_utterance("What is the capital of France?"))
    assert llm.contexts == [("What is the capital of France?", False)]
    (stopped,) = probe.times(UserStoppedSpeakingFrame)
    assert stopped - probe.times(VADUserStoppedSpeakingFrame)[0] < AT_ONCE_S


async def test_a_short_yes_whose_only_transcript_is_the_final_is_one_prompt_turn():
    frames = [
        VADUserStartedSpeakingFrame(),
        GAP,
        *_audio(0.2, 0.3),
        *_audio(0.2, 0),
        VADUserStoppedSpeakingFrame(),
        GAP,
        TranscriptionFrame("Yes.", "", "t", finalized=True),
        GAP,
    ]
    probe, llm, _ = await _run(frames)
    assert llm.contexts == [("Yes.", False)]
    (stopped,) = probe.times(UserStoppedSpeakingFrame)
    assert stopped - probe.times(VADUserStoppedSpeakingFrame)[0] < AT_ONCE_S


async def test_an_incomplete_sentence_with_a_pause_is_answered_only_once_complete():
    frames = [*_utterance("My name is"), *_audio(0.3, 0), *_utterance("David Miller.")]
    probe, llm, reports = await _run(frames)
    assert llm.contexts == [("My name is David Miller.", False)]
    (stopped,) = probe.times(UserStoppedSpeakingFrame)
    assert stopped > probe.times(VADUserStoppedSpeakingFrame)[-1]
    assert [r["text"] for r in reports if r["event"] == "turn_held"] == ["My name is"]


async def test_an_unfinished_utterance_ends_after_the_hold():
    probe, llm, _ = await _run([*_utterance("My name is"), *_audio(1.5, 0)])
    assert llm.contexts == [("My name is", False)]
    (stopped,) = probe.times(UserStoppedSpeakingFrame)
    assert 0.95 < stopped - probe.times(VADUserStoppedSpeakingFrame)[0] < 1.5  # the 1 s hold


async def test_digits_read_in_groups_with_400_ms_pauses_are_one_turn():
    frames = [*_utterance("555"), *_audio(0.2, 0), *_utterance("123"), *_audio(0.2, 0), *_utterance("4567.")]
    probe, llm, _ = await _run(frames)  # each pause: 200 ms before the VAD stop + 200 ms after
    assert llm.contexts == [("555 123 4567.", False)]
    assert len(probe.frames(UserStoppedSpeakingFrame)) == 1


async def test_what_smart_turn_finds_incomplete_waits_for_more_speech():
    verdicts = iter([False, True])
    frames = [*_utterance("I think that's it."), *_audio(0.25, 0), *_utterance("Thanks.")]
    probe, llm, _ = await _run(frames, complete=lambda _s: next(verdicts))
    assert llm.contexts == [("I think that's it. Thanks.", False)]


async def test_a_statement_smart_turn_finds_incomplete_ends_after_a_second():
    probe, llm, reports = await _run(
        [*_utterance("Tell me a fun fact about the moon."), *_audio(1.8, 0)],
        complete=lambda _s: False,
        turn={"incomplete_timeout_ms": 3000},
    )
    (stopped,) = probe.times(UserStoppedSpeakingFrame)
    assert 0.95 < stopped - probe.times(VADUserStoppedSpeakingFrame)[0] < 1.5
    assert [r["event"] for r in reports] == ["turn_ended_by_words"]


async def test_a_whole_question_smart_turn_finds_incomplete_ends_after_a_short_grace():
    probe, llm, reports = await _run(
        [*_utterance("How do I make a cup of green tea?"), *_audio(1.5, 0)], complete=lambda _s: False
    )
    assert llm.contexts == [("How do I make a cup of green tea?", False)]
    (stopped,) = probe.times(UserStoppedSpeakingFrame)
    assert 0.35 < stopped - probe.times(VADUserStoppedSpeakingFrame)[0] < 0.8  # not the 1 s hold
    assert [r["event"] for r in reports] == ["turn_ended_by_words"]


async def test_the_timeout_rule_ends_the_plain_turn_at_once():
    probe, llm, _ = await _run([*_utterance("My name is"), *_audio(0.3, 0)], turn={"end_of_turn": "timeout"})
    assert llm.contexts == [("My name is", False)]
    assert probe.times(UserStoppedSpeakingFrame)[0] - probe.times(VADUserStoppedSpeakingFrame)[0] < AT_ONCE_S


async def test_speculation_is_kept_when_the_final_transcript_is_the_early_one():
    probe, llm, reports = await _run(
        _utterance("What is the capital of France?", eager="what is the capital of france")
    )
    assert llm.contexts == [("what is the capital of france", True)]  # one inference, started early
    assert [r["state"] for r in reports if r["event"] == "speculation"] == ["started", "kept"]
    # held by the gate until the turn ended, then released
    assert probe.times(LLMTextFrame)[0] >= probe.times(UserStoppedSpeakingFrame)[0]


async def test_speculation_starts_on_the_early_final_when_no_interim_came_before_it():
    # the STT sends no interims while the bot is quiet: the early final itself starts the turn
    probe, llm, reports = await _run(
        _utterance("What time zone is Tokyo in?", eager="What time zone is Tokyo in?", interim=False)
    )
    assert llm.contexts == [("What time zone is Tokyo in?", True)]
    assert [r["state"] for r in reports if r["event"] == "speculation"] == ["started", "kept"]
    assert probe.times(LLMTextFrame)[0] >= probe.times(UserStoppedSpeakingFrame)[0]


async def test_speculation_is_withdrawn_unheard_when_the_final_transcript_differs():
    probe, llm, reports = await _run(_utterance("What is the capital of France?", eager="What is the capital"))
    assert llm.contexts == [("What is the capital", True), ("What is the capital of France?", False)]
    assert [r["state"] for r in reports if r["event"] == "speculation"] == ["started", "cancelled"]
    said = "".join(f.text for f in probe.frames(LLMTextFrame))
    assert said == "Answer to What is the capital of France?."  # nothing of the withdrawn reply came out


async def test_speculation_is_withdrawn_when_the_person_goes_on():
    frames = [
        *_utterance("I want a ticket to Paris.", eager="I want a ticket to Paris."),
        *_audio(0.2, 0),
        *_utterance("And back."),
    ]
    verdicts = iter([False, True])  # Smart Turn waits after "Paris": the person goes on
    probe, llm, reports = await _run(frames, complete=lambda _s: next(verdicts))
    assert [r["state"] for r in reports if r["event"] == "speculation"] == ["started", "cancelled"]
    assert llm.contexts[-1] == ("I want a ticket to Paris. And back.", False)
    said = "".join(f.text for f in probe.frames(LLMTextFrame))
    assert said == "Answer to I want a ticket to Paris. And back.."


async def test_agent_modes_never_speculate():
    _probe, llm, reports = await _run(_utterance("Yes.", eager="Yes."), agent=True)
    assert llm.contexts == [("Yes.", False)] and not reports


# --- barge-in -----------------------------------------------------------------------------
async def _barge(
    frames: list[Frame], turn: dict | None = None, before: list[Frame] = (), bot_s: float = 0.0
) -> tuple[bool, bool]:
    """(the person's turn started, the bot was interrupted) after ``frames`` reach the user
    aggregator while the bot speaks, the person's speech beginning ``bot_s`` into the bot's
    reply to the turn in ``before`` (none: the person has not spoken before)."""
    cfg = config.load(overrides={"turn": turn or {}})
    aggregator = LLMUserAggregator(
        LLMContext(),
        params=LLMUserAggregatorParams(
            user_turn_strategies=turn_strategies(cfg.turn, agent=False, analyzer=ScriptedSmartTurn())
        ),
    )
    stt = STTMetadataFrame(service_name="stt", ttfs_p99_latency=1.0)
    down, _ = await run_test(
        aggregator,
        frames_to_send=[
            stt,
            *before,
            BotStartedSpeakingFrame(),
            SleepFrame(bot_s),
            GAP,
            VADUserStartedSpeakingFrame(),
            GAP,
            *frames,
        ],
    )
    down = down[next(i for i, f in enumerate(down) if isinstance(f, BotStartedSpeakingFrame)) :]
    return (
        any(isinstance(f, UserStartedSpeakingFrame) for f in down),
        any(isinstance(f, InterruptionFrame) for f in down),
    )


def _interim(text: str) -> InterimTranscriptionFrame:
    return InterimTranscriptionFrame(text, "", "t")


@pytest.mark.parametrize("heard", ["Mm-hm.", "Yeah.", "Right.", "(coughing)"])
async def test_a_backchannel_during_bot_speech_lets_the_bot_go_on(heard):
    frames = [
        _interim(heard.split()[0]),
        GAP,
        VADUserStoppedSpeakingFrame(),
        GAP,
        TranscriptionFrame(heard, "", "t", finalized=True),
        GAP,
    ]
    assert await _barge(frames) == (False, False)


async def test_stop_wait_a_moment_during_bot_speech_stops_the_bot():
    assert await _barge([_interim("Stop."), GAP]) == (True, True)


async def test_with_min_words_zero_any_speech_the_vad_hears_interrupts():
    assert await _barge([], turn={"barge_in_min_words": 0}) == (True, True)


async def test_without_barge_in_speech_never_interrupts():
    assert await _barge([_interim("Stop, wait a moment.")], turn={"barge_in_min_words": 0, "barge_in": False}) == (
        True,
        False,
    )


async def test_one_word_that_resumes_the_persons_answer_takes_the_turn_from_the_reply():
    """Bench: "My passport number is PX472, [pause] 9183." Smart Turn ended the turn in the
    pause, the bot replied, and the one-word "9183." 30 ms into the reply was dropped."""
    answer = _utterance("My passport number is PX472.")
    assert await _barge([_interim("9183."), GAP], before=answer) == (True, True)
    # a second into the reply the bot has said something: one word is no barge-in
    assert await _barge([_interim("9183."), GAP], before=answer, bot_s=1.1) == (False, False)
    assert await _barge([_interim("9183."), GAP], before=answer, turn={"resumed_speech_ms": 0}) == (False, False)
    assert await _barge([_interim("9183."), GAP]) == (False, False)  # nothing said before: nothing to resume
    assert await _barge([_interim("Mm-hm."), GAP], before=answer) == (False, False)  # a backchannel lets it go on


def test_the_reply_clock_counts_the_bots_speech_since_the_persons_turn_ended():
    clock = ReplyClock(1.0)
    assert clock.spoken_s(0.0) == math.inf  # no turn yet: nothing to resume
    clock.see(UserStoppedSpeakingFrame(), 10.0)
    assert clock.spoken_s(10.5) == 0.0  # the bot has not begun its reply
    clock.see(BotStartedSpeakingFrame(), 11.0)
    assert clock.spoken_s(11.4) == pytest.approx(0.4)
    clock.see(BotStoppedSpeakingFrame(), 11.5)  # a pause between clauses does not count
    clock.see(BotStartedSpeakingFrame(), 12.0)
    assert clock.spoken_s(12.3) == pytest.approx(0.8)
    clock.turn_ended(12.4)  # the person's next turn ended while the bot spoke
    assert clock.spoken_s(12.6) == pytest.approx(0.2)
