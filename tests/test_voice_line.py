"""An agent speaking and listening through the voice pipeline (LineProcessor): by pushing
frames with a fake synth, and on the real models."""

from __future__ import annotations

import asyncio

import pytest
from fakes import FakeSynth
from helpers import make_wav, word_recall
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    EndWorkerFrame,
    InterruptionFrame,
    LLMContextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameDirection
from pipecat.tests.utils import SleepFrame, run_test

from appliance import config, models
from appliance.voice.line import LineProcessor, SayOutcome
from appliance.voice.markers import SpeakableTextProcessor
from appliance.voice.pipeline import build_task, run_task
from appliance.voice.piper_tts import PiperClauseTTSService
from appliance.voice.session import open_session
from appliance.voice.transports import WavFileTransport


@pytest.mark.e2e  # Whisper, Piper, the LLM and an ARCTIC clip
async def test_agent_says_then_hears_the_person(voice_cfg, runtime, arctic, tmp_path):
    clip = "arctic_a0009.wav"
    wav = make_wav(tmp_path / "mic.wav", [4.0, arctic[clip], 1.0], rate_hz=16_000)
    line = LineProcessor(voice_cfg.turn)
    session = open_session(voice_cfg, "line-test")
    transport = WavFileTransport(wav)
    task = build_task(runtime, transport, session, line=line)
    runner = asyncio.create_task(run_task(task))

    async def agent():
        await line.say("Hello. [EMO:happy] Please say something.")
        return await asyncio.wait_for(line.hear(), 30)

    heard = await agent()
    await transport.finished.wait()
    await task.stop_when_done()
    await runner
    assert word_recall(models.ARCTIC_TEXT[clip], heard) >= 0.8, heard
    spoken = " ".join(e["text"] for e in session.events.events if e["event"] == "bot_text")
    assert "Please say something" in spoken and "EMO" not in spoken
    assert any(e["event"] == "tts_first_audio" for e in session.events.events)


async def _on_a_fake_line(synth: FakeSynth, agent, cfg: config.Config | None = None):
    """Run ``agent(line)`` on line → clauses → Piper (``synth``) → line.played, once the
    person said "Book me a seat."; returns what ``agent`` returned and the frames that
    left the line's pipeline."""
    cfg = cfg or config.load()
    line = LineProcessor(cfg.turn)
    pipeline = Pipeline(
        [
            line,
            SpeakableTextProcessor(cfg.tts.first_clause_words, cfg.tts.max_clause_words),
            PiperClauseTTSService(synth, cfg.tts, stop_frame_timeout_s=0.1),
            line.played,
        ]
    )
    context = LLMContext(messages=[{"role": "user", "content": "Book me a seat."}])

    async def drive():
        assert await line.hear() == "Book me a seat."  # the pipeline runs
        try:
            return await agent(line)
        finally:
            synth.release()
            await line.queue_frame(EndWorkerFrame(), FrameDirection.UPSTREAM)  # the line ends the pipeline

    ran, result = await asyncio.gather(  # both to their end, whatever the agent raised
        run_test(pipeline, frames_to_send=[LLMContextFrame(context)], send_end_frame=False),
        drive(),
        return_exceptions=True,
    )
    for outcome in (ran, result):
        if isinstance(outcome, BaseException):
            raise outcome
    return result, ran[0]


async def test_say_returns_when_played_with_what_was_heard_and_hear_takes_the_turn():
    outcome, down = await _on_a_fake_line(FakeSynth(), lambda line: line.say("Hello there. [EMO:happy] How are you?"))
    assert outcome == SayOutcome(interrupted=False, heard="Hello there. How are you?")
    assert not [f for f in down if isinstance(f, LLMContextFrame)]  # no LLM behind a line: the context stops there


async def test_say_cut_off_by_barge_in_tells_what_was_heard():
    synth = FakeSynth(hold_from=2)  # the second clause is still being synthesised

    async def agent(line):
        say = asyncio.create_task(line.say("Hello there. How are you today?"))
        while len(synth.calls) < 2 or not line.played.texts:  # the first clause played, the second not yet
            await asyncio.sleep(0.01)
        await line.queue_frame(InterruptionFrame())  # as the user aggregator broadcasts it
        return await say

    outcome, _ = await _on_a_fake_line(synth, agent)
    assert outcome == SayOutcome(interrupted=True, heard="Hello there.")


async def test_say_is_an_error_when_tts_fails():
    with pytest.raises(RuntimeError, match="no audio was played for 'Hello.': is TTS working"):
        await _on_a_fake_line(FakeSynth(fail=True), lambda line: line.say("Hello."))


async def test_say_gives_up_after_the_configured_wait_for_audio():
    cfg = config.load(overrides={"turn": {"say_timeout_s": 0.3, "say_timeout_per_char_ms": 100}})
    with pytest.raises(RuntimeError, match="no audio was played for 'Hello.' in 0.9 s"):
        await _on_a_fake_line(FakeSynth(hold_from=1), lambda line: line.say("Hello."), cfg)


async def test_a_turn_begun_as_the_bot_began_its_reply_resumes_the_answer_before():
    """``heard_resumes``: the person went on before the bot had said ``turn.resumed_speech_ms``
    of its reply ("My passport number is PX472." [the reply begins] "9183.")."""
    gap = SleepFrame(0.03)

    def turn(text: str) -> list:
        said = LLMContext(messages=[{"role": "user", "content": text}])
        return [
            VADUserStartedSpeakingFrame(),
            gap,
            UserStartedSpeakingFrame(),
            gap,
            VADUserStoppedSpeakingFrame(),
            gap,
            UserStoppedSpeakingFrame(),
            gap,
            LLMContextFrame(said),
            gap,
        ]

    line = LineProcessor(config.load().turn)
    await run_test(
        line,
        frames_to_send=[
            *turn("My passport number is PX472."),
            BotStartedSpeakingFrame(),
            gap,
            *turn("9183."),
            BotStartedSpeakingFrame(),
            SleepFrame(1.1),
            *turn("Irish."),
        ],
    )
    heard = [(await line.hear(), line.heard_resumes) for _ in range(3)]
    assert heard == [("My passport number is PX472.", False), ("9183.", True), ("Irish.", False)]


async def test_the_person_is_speaking_while_their_turn_is_held_after_the_vad_stop():
    """Bench: the turn held for more words after the VAD stop was taken for silence, and the
    agent asked "Are you still there?" over the person's answer."""
    gap = SleepFrame(0.03)
    held = [VADUserStartedSpeakingFrame(), gap, UserStartedSpeakingFrame(), gap, VADUserStoppedSpeakingFrame(), gap]
    line = LineProcessor(config.load().turn)
    await run_test(line, frames_to_send=held)
    assert line.person_speaking
    line = LineProcessor(config.load().turn)
    said = LLMContextFrame(LLMContext(messages=[{"role": "user", "content": "Sierra, Echo."}]))
    await run_test(line, frames_to_send=[*held, UserStoppedSpeakingFrame(), gap, said, gap])
    assert not line.person_speaking  # the turn ended and its transcript came


async def test_the_persons_answer_is_on_its_way_from_the_vad_stop_until_its_transcript(monkeypatch):
    """Bench (oluwaseun): the turn starts with its transcript; after a 15.8 s spelled e-mail the
    agent asked "Are you still there?" 12 ms after the VAD stop, 1.2 s before the transcript."""
    gap = SleepFrame(0.03)
    stopped = [VADUserStartedSpeakingFrame(), gap, VADUserStoppedSpeakingFrame(), gap]
    line = LineProcessor(config.load().turn)
    await run_test(line, frames_to_send=stopped)
    assert line.person_speaking  # no turn yet, no transcript yet: the answer is on its way
    monkeypatch.setattr("appliance.voice.line.ANSWER_PENDING_S", 0.01)
    assert not line.person_speaking  # nothing came of it (noise): silence again
