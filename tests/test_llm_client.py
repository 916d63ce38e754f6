"""The LLM client against a scripted local server (no model): retries, what is never
retried, the error after the last try, streaming, seeds and token counts."""

from __future__ import annotations

import socket
import time

import pytest
from fake_openai import FakeOpenAI

from appliance import config
from appliance.llm.base import LLMError
from appliance.llm.client import OpenAICompatibleClient
from appliance.llm.runtime import LLMRuntime

GRAMMAR = 'root ::= "{\\"a\\":" ("1" | "2") "}"'
SCHEMA = {"type": "object", "properties": {"a": {"enum": [1, 2]}}, "required": ["a"]}


def client(base_url: str, *, slot: int | None = 0, retries: int = 2, timeout_s: float = 5.0) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        base_url, "m", slot=slot, api_key="none", timeout_s=timeout_s, max_retries=retries, retry_backoff_ms=10
    )


async def ask(llm: OpenAICompatibleClient, **kw):
    return await llm.json("system", "user", grammar=GRAMMAR, schema=SCHEMA, max_tokens=8, **kw)


@pytest.mark.parametrize("failures", [[503, 503], [429], [502], ["drop"], ["slow"]])
async def test_transient_failures_are_retried_with_doubling_backoff(failures):
    async with FakeOpenAI([*failures, '{"a":2}'], slow_s=1.0) as fake:
        t0 = time.monotonic()
        assert await ask(client(fake.base_url, timeout_s=0.3)) == {"a": 2}
        assert len(fake.requests) == len(failures) + 1
        assert time.monotonic() - t0 >= sum(0.010 * 2**i for i in range(len(failures)))


async def test_the_last_failure_names_the_endpoint_and_the_cause():
    async with FakeOpenAI([503, 503, 503]) as fake:
        with pytest.raises(LLMError) as e:
            await ask(client(fake.base_url))
        assert len(fake.requests) == 3
    assert fake.base_url in str(e.value) and "after 3 tries" in str(e.value) and "HTTP 503" in str(e.value)


async def test_an_unreachable_endpoint_is_retried_then_named():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(LLMError, match="no connection") as e:
        await ask(client(url, retries=1))
    assert url in str(e.value) and "after 2 tries" in str(e.value)


@pytest.mark.parametrize(
    "answer, why", [(400, "HTTP 400: scripted 400"), (404, "HTTP 404"), ('{"a":', "not the requested JSON")]
)
async def test_a_4xx_or_bad_json_is_never_retried(answer, why):
    async with FakeOpenAI([answer, '{"a":1}']) as fake:
        with pytest.raises(LLMError, match=why):
            await ask(client(fake.base_url))
        assert len(fake.requests) == 1


async def test_a_failure_after_streamed_text_is_not_retried():
    seen: list[str] = []
    async with FakeOpenAI(['cut:{"a":', '{"a":1}']) as fake:
        with pytest.raises(LLMError, match="no connection"):
            await ask(client(fake.base_url), on_text=seen.append)
        assert len(fake.requests) == 1
    assert seen and seen[-1].startswith('{"a')


async def test_embedded_slot_sends_grammar_and_seed_remote_sends_schema():
    async with FakeOpenAI(['{"a":1}', '{"a":2}']) as fake:
        reply = await client(fake.base_url, slot=3).complete(
            "s", "u", grammar=GRAMMAR, schema=SCHEMA, max_tokens=8, seed=42
        )
        assert await ask(client(fake.base_url, slot=None)) == {"a": 2}
    pinned, remote = fake.requests
    assert (pinned["grammar"], pinned["id_slot"], pinned["cache_prompt"], pinned["seed"]) == (GRAMMAR, 3, True, 42)
    assert "response_format" not in pinned and "grammar" not in remote and "id_slot" not in remote
    assert remote["response_format"]["json_schema"]["schema"] == SCHEMA
    assert pinned["messages"] == [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert (reply.text, reply.prompt_tokens, reply.cached_tokens, reply.completion_tokens) == ('{"a":1}', 20, 18, 5)


async def test_text_and_warm_report_the_warmed_prompt():
    warmed = []
    async with FakeOpenAI([" Hi there. ", "x"]) as fake:
        llm = client(fake.base_url, slot=1)
        assert await llm.text("s", "u", max_tokens=5) == "Hi there."
        llm.on_warm = lambda system, slot: warmed.append((system, slot))
        await llm.warm("the prompt")
    assert warmed == [("the prompt", 1)] and fake.requests[1]["max_tokens"] == 1


async def test_werewolf_seats_get_their_own_endpoint_when_werewolf_llm_is_set():
    async with FakeOpenAI(['{"a":1}']) as main, FakeOpenAI(['{"b":2}']) as seats:
        remote = {"provider": "openai_compatible", "model": "big", "base_url": seats.base_url}
        cfg = config.load(
            overrides={
                "llm": {"provider": "openai_compatible", "base_url": main.base_url, "model": "small"},
                "werewolf": {"llm": remote},
            }
        ).for_werewolf(7)
        runtime = LLMRuntime(cfg).start(progress=lambda _: None)
        assert (runtime.llm("P3").base_url, runtime.llm("P3").model) == (seats.base_url, "big")
        assert (runtime.llm("phone").base_url, runtime.base_url) == (main.base_url, main.base_url)
        assert await ask(runtime.llm("P3")) == {"b": 2} and await ask(runtime.llm("person")) == {"a": 1}
        assert runtime.describe("P1") == {
            "config": "werewolf.llm",
            "provider": "openai_compatible",
            "model": "big",
            "base_url": seats.base_url,
        }
        assert runtime.describe("phone")["config"] == "llm"
        runtime.stop()
    same = config.load(overrides={"llm": remote, "werewolf": {"llm": remote}})
    assert LLMRuntime(same).seats is None  # the same endpoint twice is one
    assert LLMRuntime(config.Config()).describe("P1") == {
        "config": "llm",
        "provider": "embedded",
        "model": "qwen2.5-coder-0.5b",
    }


async def test_runtime_hands_out_remote_clients_by_name_with_the_configured_retries():
    async with FakeOpenAI(['{"a":1}']) as fake:
        cfg = config.load(
            overrides={
                "llm": {
                    "provider": "openai_compatible",
                    "base_url": fake.base_url,
                    "model": "remote",
                    "max_retries": 5,
                    "retry_backoff_ms": 40,
                }
            }
        )
        runtime = LLMRuntime(cfg).start(progress=lambda _: None)
        llm = runtime.llm("P8")
        assert (llm.slot, llm.model, llm.max_retries, llm.retry_backoff_ms) == (None, "remote", 5, 40)
        assert await ask(llm) == {"a": 1}
        with pytest.raises(ValueError, match="no LLM slot named 'judge'"):
            runtime.llm("judge")
        runtime.stop()
        with pytest.raises(RuntimeError, match="before start"):
            runtime.llm("phone")
