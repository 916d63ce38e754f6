"""One small constrained LLM call, shared by the computer agent, the phone agent and the simulated person.

Each caller owns a fixed system prompt and, on the embedded llama-server, a slot of its
own (``slot``), so its prompt prefix stays cached (OFFLINE.md §2). Output is constrained:
a GBNF grammar on the embedded server (no free whitespace, so the 0.5B model wastes no
tokens), the equivalent JSON schema on any other OpenAI-compatible server.

Requests to one embedded server are serialised (one at a time per ``base_url`` in this
process). Measured here (2 cores, xllamacpp, grammar sampling): two concurrent requests in
different slots dropped generation from ~18 tok/s to 0.3–0.4 tok/s each — a 15-token answer
took 46 s instead of under 1 s — so waiting for the other request is far faster.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)
for _noisy in ("httpx", "httpx2"):  # the OpenAI client logs every request at INFO: one line per LLM call
    logging.getLogger(_noisy).setLevel(logging.WARNING)

# event loop → base_url → the lock serialising requests to that server (an asyncio.Lock
# belongs to one loop; tests and tools may run several loops one after another)
_LOCKS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]]" = weakref.WeakKeyDictionary()


class LLMError(RuntimeError):
    """The LLM gave no usable answer (unreachable, timed out, or not the constrained JSON)."""


def gbnf_string(s: str) -> str:
    """A GBNF literal matching the JSON string ``s`` (quotes included)."""
    return json.dumps(json.dumps(s))


def gbnf_alternatives(values: list[str] | tuple[str, ...]) -> str:
    """GBNF alternatives matching any of ``values`` as JSON strings."""
    return " | ".join(gbnf_string(v) for v in values)


@dataclass
class LLM:
    """An OpenAI-compatible chat endpoint. ``slot``: the llama-server slot to pin (embedded
    server; enables GBNF grammars) or None (any other server: JSON schema)."""

    base_url: str
    model: str
    slot: int | None = None
    api_key: str = "none"
    timeout_s: float = 60.0

    def __post_init__(self) -> None:
        from openai import AsyncOpenAI


        self._client = AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s,
                                   max_retries=0)

    def _serialised(self):
        if self.slot is None:  # not the embedded server: no need to queue
            return contextlib.nullcontext()
        locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
        return locks.setdefault(self.base_url, asyncio.Lock())

    def with_slot(self, slot: int | None) -> "LLM":
        """The same endpoint pinned to another slot."""
        return LLM(self.base_url, self.model, slot if self.slot is not None else None, self.api_key, self.timeout_s)

    async def json(self, system: str, user: str, *, grammar: str, schema: dict[str, Any], max_tokens: int,
                   temperature: float = 0.0, on_text: Callable[[str], None] | None = None) -> Any:
        """Ask for one constrained JSON answer and return it decoded.

        ``on_text`` (optional) receives the growing raw text while it streams, so a caller
        can act on a prefix (e.g. publish each mapped field as soon as it is complete).

        Raises:
            LLMError: request failed, or the text is not JSON (e.g. cut off by ``max_tokens``).
        """
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if self.slot is not None:
            extra = {"grammar": grammar, "id_slot": self.slot, "cache_prompt": True}
        else:
            extra = {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}}
        t0 = time.monotonic()
        text = ""
        try:
            async with self._serialised():
                stream = await self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=temperature, max_tokens=max_tokens,
                    stream=True, extra_body=extra)
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        text += chunk.choices[0].delta.content
                        if on_text is not None:
                            on_text(text)
        except Exception as e:  # the openai client raises many types; all mean "no answer"
            raise LLMError(f"LLM request failed: {e!r}") from e
        log.debug("llm slot=%s %.0f ms: %s", self.slot, (time.monotonic() - t0) * 1000, text)
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise LLMError(f"not the requested JSON (cut off by max_tokens={max_tokens}?): {text!r}") from None

    async def text(self, system: str, user: str, *, max_tokens: int, temperature: float = 0.3) -> str:
        """One short free-text answer (no grammar), stripped.

        Raises:
            LLMError: request failed.
        """
        extra = {"id_slot": self.slot, "cache_prompt": True} if self.slot is not None else {}
        try:
            async with self._serialised():
                resp = await self._client.chat.completions.create(
                    model=self.model, messages=[{"role": "system", "content": system},
                                                {"role": "user", "content": user}],
                    temperature=temperature, max_tokens=max_tokens, extra_body=extra)
        except Exception as e:  # the openai client raises many types; all mean "no answer"
            raise LLMError(f"LLM request failed: {e!r}") from e
        return (resp.choices[0].message.content or "").strip()

    async def warm(self, system: str) -> None:
        """Evaluate ``system`` once so this slot holds its prefix (later calls start fast).

        Raises:
            LLMError: request failed.
        """
        await self.text(system, "Hello.", max_tokens=1)
