"""The LLM seam: the real client and the tests' scripted LLM both satisfy the
:class:`~appliance.llm.base.LLM` protocol the agents depend on, method by method and
parameter by parameter, so a fake that drifts from the client fails here, not in a run."""

from __future__ import annotations

import inspect

import pytest
from fakes import ScriptedLLM

from appliance.llm.base import LLM
from appliance.llm.client import OpenAICompatibleClient

#: the protocol's methods, read from the protocol itself
METHODS = sorted(name for name, member in vars(LLM).items() if inspect.isfunction(member) and not name.startswith("_"))


def client() -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        "http://127.0.0.1:9/v1", "m", slot=0, api_key="none", timeout_s=1, max_retries=0, retry_backoff_ms=0
    )


def test_the_protocol_names_the_calls_the_agents_make():
    assert METHODS == ["complete", "decide", "json", "text", "warm"]
    assert set(LLM.__annotations__) == {"slot"}


@pytest.mark.parametrize("implementation", [OpenAICompatibleClient, ScriptedLLM])
def test_each_llm_has_every_method_of_the_protocol_with_its_signature(implementation):
    for name in METHODS:
        method = vars(implementation).get(name)  # its own, not one inherited from the protocol
        assert method is not None, f"{implementation.__name__} has no {name}"
        assert inspect.iscoroutinefunction(method), f"{implementation.__name__}.{name} is not async"
        assert inspect.signature(method) == inspect.signature(vars(LLM)[name]), f"{implementation.__name__}.{name}"


@pytest.mark.parametrize("make", [client, ScriptedLLM], ids=["OpenAICompatibleClient", "ScriptedLLM"])
def test_each_llm_is_an_instance_of_the_protocol(make):
    assert isinstance(make(), LLM)


def test_a_stand_in_missing_a_method_or_a_parameter_is_caught():
    class NoWarm:
        slot = 0

        async def decide(self, system, user, model_cls, *, max_tokens, temperature=0.0, on_text=None): ...
        async def json(self, system, user, **options): ...
        async def complete(self, system, user, **options): ...
        async def text(self, system, user, *, max_tokens, temperature=0.3): ...

    assert not isinstance(NoWarm(), LLM)
    drifted = inspect.signature(NoWarm.json)
    assert drifted != inspect.signature(vars(LLM)["json"])
