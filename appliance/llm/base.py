"""What every agent, seat and simulated person depends on: the :class:`LLM` protocol, its
:class:`Reply` and :class:`LLMError`.

Each caller asks for one short answer under a fixed system prompt of its own: a decision
validated into a pydantic model (:meth:`LLM.decide`: the computer agent's field names and
launch, the phone agent's option pick, the person's topic), a JSON answer to a grammar and
schema its caller owns (:meth:`LLM.json`, :meth:`LLM.complete`: the person's own grammars,
a Werewolf turn tool), or a short free text (:meth:`LLM.text`: a side question).
:meth:`LLM.warm` puts a system prompt in the cache before the first question.

The real one is :class:`appliance.llm.client.OpenAICompatibleClient`, handed out by
:meth:`appliance.llm.runtime.LLMRuntime.llm`; the tests' is ``tests/fakes.py``
``ScriptedLLM``. Both satisfy the protocol structurally, signatures included
(``tests/test_llm_protocol.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from appliance.errors import ApplianceError

D = TypeVar("D", bound=BaseModel)


class LLMError(ApplianceError, RuntimeError):
    """The LLM gave no usable answer (unreachable, timed out, refused, or not the constrained JSON)."""


@dataclass(frozen=True)
class Reply:
    """One answer: its raw text, token counts (None where the server does not report
    them; ``cached_tokens``: prompt tokens reused from the slot's cache) and wall time in ms."""

    text: str
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    ms: int


@runtime_checkable
class LLM(Protocol):
    """One constrained answer at a time, under the caller's fixed ``system`` prompt.

    ``slot``: the llama-server slot the caller's prompt is pinned to (answers are
    constrained by the GBNF ``grammar``), or None (another server: by the JSON ``schema``).
    ``max_tokens`` bounds the answer; ``temperature`` and ``seed`` are the sampling's (seed
    None: the server's); ``on_text`` receives the growing raw text while it streams.
    """

    slot: int | None

    async def decide(
        self,
        system: str,
        user: str,
        model_cls: type[D],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        on_text: Callable[[str], None] | None = None,
    ) -> D:
        """One decision: the answer constrained by ``model_cls``'s grammar or schema
        (:mod:`appliance.llm.decision`), validated into an instance of it.

        Raises:
            LLMError: request failed, the text is not JSON (e.g. cut off by ``max_tokens``),
                or it does not validate as ``model_cls``.
            TypeError, ValueError: ``model_cls`` is not a supported decision model.
        """

    async def json(
        self,
        system: str,
        user: str,
        *,
        grammar: str,
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> Any:
        """One answer constrained by ``grammar`` (or ``schema``), decoded from JSON.

        Raises:
            LLMError: request failed, or the text is not JSON (e.g. cut off by ``max_tokens``).
        """

    async def complete(
        self,
        system: str,
        user: str,
        *,
        grammar: str,
        schema: dict[str, Any],
        max_tokens: int,
        temperature: float = 0.0,
        seed: int | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> Reply:
        """One answer constrained by ``grammar`` (or ``schema``) as raw text, for a caller
        that decodes it itself.

        Raises:
            LLMError: request failed.
        """

    async def text(self, system: str, user: str, *, max_tokens: int, temperature: float = 0.3) -> str:
        """One short free-text answer (no grammar), stripped.

        Raises:
            LLMError: request failed.
        """

    async def warm(self, system: str) -> None:
        """Evaluate ``system`` once so the slot holds its prefix (later calls start fast).

        Raises:
            LLMError: request failed.
        """
