"""The voice loop's apology when the LLM fails a reply: the pipeline's pipecat OpenAI service
(with ``llm.max_retries``) against a local fake of the endpoint (tests/fake_openai.py) that
cuts an answer mid-stream or keeps failing; pipecat's ``run_test`` drives the frames."""

from __future__ import annotations

from fake_openai import FakeOpenAI
from pipecat.frames.frames import ErrorFrame, LLMContextFrame, LLMTextFrame, TTSSpeakFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.tests.utils import SleepFrame, run_test

from appliance.voice.apology import APOLOGY, LLMApology
from appliance.voice.pipeline import RetryingOpenAILLMService


def _llm(base_url: str, max_retries: int) -> RetryingOpenAILLMService:
    return RetryingOpenAILLMService(
        max_retries=max_retries,
        api_key="none",
        base_url=base_url,
        settings=RetryingOpenAILLMService.Settings(model="m"),
    )


def _context(question: str) -> LLMContextFrame:
    return LLMContextFrame(LLMContext(messages=[{"role": "user", "content": question}]))


async def test_a_reply_cut_mid_stream_is_apologised_for_and_the_next_turn_is_answered():
    reports: list[tuple[str, dict]] = []
    async with FakeOpenAI(["cut:The capital of", "Paris is the capital."]) as api:
        llm = _llm(api.base_url, max_retries=2)  # an answer cut mid-stream is not tried again
        down, up = await run_test(
            Pipeline([LLMApology(llm, lambda ev, **kw: reports.append((ev, kw))), llm]),
            frames_to_send=[
                _context("What is the capital of France?"),
                SleepFrame(sleep=0.5),  # the person speaks again later
                _context("The capital of France?"),
            ],
        )
    spoken = [f.text if isinstance(f, TTSSpeakFrame) else "" for f in down]
    assert spoken.count(APOLOGY) == 1
    at = spoken.index(APOLOGY)

    def text(frames) -> str:
        return "".join(f.text for f in frames if isinstance(f, LLMTextFrame))

    # the cut reply's words, then the apology, then the next turn's whole answer
    assert (text(down[:at]), text(down[at:])) == ("The capital of", "Paris is the capital.")
    assert [ev for ev, _ in reports] == ["llm_apology"]
    assert any(isinstance(f, ErrorFrame) for f in up)  # the error still reaches the pipeline


async def test_an_endpoint_that_keeps_failing_is_retried_llm_max_retries_times_then_apologised_for():
    async with FakeOpenAI([503, 503, "unused"]) as api:
        llm = _llm(api.base_url, max_retries=1)
        down, _ = await run_test(
            Pipeline([LLMApology(llm, lambda *a, **k: None), llm]), frames_to_send=[_context("Hello?")]
        )
        assert len(api.requests) == 2  # the first try and one retry
    assert [f.text for f in down if isinstance(f, TTSSpeakFrame)] == [APOLOGY]
