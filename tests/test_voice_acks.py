"""Never silent when slow (appliance/voice/acks.py): the acknowledgement comes only when the
answer is late, never holds the answer back, and only where turn.ack says."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from fakes import FakeSynth
from helpers import AudioSink, answer_audio
from pipecat.frames.frames import Frame, UserStoppedSpeakingFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config
from appliance.voice.acks import AckAudioRawFrame, Acknowledger
from appliance.voice.events import EventLog
from appliance.voice.pipeline import acknowledger
from appliance.voice.playout import Playout
from appliance.voice.session import Session

RATE = 16_000


async def _run(frames: list[Frame]) -> tuple[AudioSink, list[tuple[str, dict]]]:
    cfg = config.load()
    reports: list[tuple[str, dict]] = []
    ack = Acknowledger(
        bytes(RATE * 2), RATE, after_ms=200, every_turn=True, report=lambda e, **f: reports.append((e, f))
    )
    sink = AudioSink()
    await run_test(Pipeline([ack, Playout(cfg.turn, 200), sink]), frames_to_send=frames)
    return sink, reports


async def test_a_late_answer_is_acknowledged_and_the_ack_gives_way_to_it():
    sink, reports = await _run([UserStoppedSpeakingFrame(), SleepFrame(0.5), *answer_audio(0.4, RATE), SleepFrame(0.8)])
    assert [e for e, _f in reports] == ["ack"]
    kinds = [isinstance(f, AckAudioRawFrame) for _t, f in sink.audio]
    first_answer = kinds.index(False)
    # from 0.2 s the ack played until the answer came at 0.5 s (+ the playout's 0.15 s lead), then no more of it
    assert 0 < first_answer <= 13 and not any(kinds[first_answer:])
    assert len(kinds) - first_answer == 10  # the whole answer


async def test_a_prompt_answer_is_not_acknowledged():
    sink, reports = await _run(
        [UserStoppedSpeakingFrame(), SleepFrame(0.05), *answer_audio(0.4, RATE), SleepFrame(0.6)]
    )
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


# -- a fast voice while a slow mind thinks (llm.slow, issue 28) -----------------------------------------


class FastLLM:
    """The fast model's ``decide``: ``AckTopic(topic)`` after ``delay_s``, or ``LLMError`` when
    ``topic`` is None; ``asked``: each (system, user)."""

    def __init__(self, topic: str | None, delay_s: float = 0.1):
        self.topic, self.delay_s, self.asked = topic, delay_s, []

    async def decide(self, system, user, model_cls, *, max_tokens, temperature=0.0):
        from appliance.llm.base import LLMError

        self.asked.append((system, user))
        await asyncio.sleep(self.delay_s)
        if self.topic is None:
            raise LLMError("the fast model's server is gone")
        return model_cls(topic=self.topic)


def _turn(words: str):
    from pipecat.frames.frames import LLMContextFrame
    from pipecat.processors.aggregators.llm_context import LLMContext

    return LLMContextFrame(LLMContext(messages=[{"role": "user", "content": words}]))


async def _relevant(llm: FastLLM, frames: list[Frame]) -> tuple[AudioSink, list[tuple[str, dict]], FakeSynth]:
    from appliance.voice.acks import RelevantAck

    reports: list[tuple[str, dict]] = []
    synth = FakeSynth(RATE)
    sink = AudioSink()
    ack = RelevantAck(llm, synth, report=lambda e, **f: reports.append((e, f)))
    await run_test(Pipeline([ack, Playout(config.load().turn, 200), sink]), frames_to_send=frames)
    return sink, reports, synth


async def test_while_the_slow_mind_thinks_the_fast_one_says_what_was_asked_and_gives_way_to_the_answer():
    llm = FastLLM("the history of Rome")
    asked = "Tell me about the history of Rome."
    frames = [UserStoppedSpeakingFrame(), _turn(asked), SleepFrame(0.5), *answer_audio(0.4, RATE), SleepFrame(0.6)]
    sink, reports, synth = await _relevant(llm, frames)
    assert llm.asked[0][1] == asked
    assert [c for c, _ in synth.calls] == ["Let me think about", "the history of Rome."]
    ((event, fields),) = reports
    assert event == "ack" and fields["text"] == "Let me think about the history of Rome." and fields["after_ms"] < 100
    kinds = [isinstance(f, AckAudioRawFrame) for _t, f in sink.audio]
    assert kinds[0] and False in kinds and not any(kinds[kinds.index(False) :])  # the ack first, then only the answer


async def test_an_acknowledgement_later_than_the_answer_is_never_heard_after_it():
    llm = FastLLM("Rome", delay_s=0.6)
    frames = [
        UserStoppedSpeakingFrame(),
        _turn("Tell me about Rome."),
        SleepFrame(0.1),
        *answer_audio(0.4, RATE),
        SleepFrame(0.9),
    ]
    sink, reports, _ = await _relevant(llm, frames)
    kinds = [isinstance(f, AckAudioRawFrame) for _t, f in sink.audio]
    assert not any(kinds[kinds.index(False) :]) and kinds.count(False) == 10  # the whole answer, and no ack after it


async def test_a_fast_model_that_fails_closes_the_acknowledgement_plainly_and_no_error_is_heard():
    sink, reports, synth = await _relevant(
        FastLLM(None), [UserStoppedSpeakingFrame(), _turn("Hello?"), SleepFrame(0.4)]
    )
    assert [e for e, _ in reports] == ["ack_failed", "ack"] and reports[1][1]["text"] == "Let me think about that."
    assert [c for c, _ in synth.calls] == ["Let me think about", "that."]
    assert all(isinstance(f, AckAudioRawFrame) for _t, f in sink.audio)


def test_the_subject_is_said_back_in_a_few_words():
    from appliance.voice.acks import ACK_MAX_WORDS, ack_line

    assert ack_line("making green tea") == "making green tea."
    assert ack_line("a b c d e f g h").count(" ") == ACK_MAX_WORDS - 1
    assert ack_line(" ' ") == "" and ack_line("Rome's history") == "Rome's history."
