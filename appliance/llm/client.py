"""The :class:`~appliance.llm.base.LLM` of an OpenAI-compatible chat endpoint:
:class:`OpenAICompatibleClient`, shared by every agent, seat and simulated person.

Each caller owns a fixed system prompt and, on the embedded llama-server, a slot of its
own (``slot``), so its prompt prefix stays cached (one KV cache per slot; llama-server
otherwise reuses the slot with the longest common prefix). Output is constrained: a GBNF
grammar on the embedded server (no free whitespace, so the 0.5B model wastes no tokens),
the equivalent JSON schema on any other OpenAI-compatible server. ``decide`` takes
both from one pydantic model (:mod:`appliance.llm.decision`); ``json`` and ``complete``
take a grammar and a schema their caller already owns (a Werewolf turn tool).

**Retries.** A transient failure — no connection, a timeout, HTTP 5xx or 429 — is tried
again up to ``max_retries`` times, after ``retry_backoff_ms``, then twice that, and so on.
A 4xx, an answer that is not the requested JSON, and a failure after ``on_text`` has seen
part of the answer (the caller may have acted on it) are never retried. The last failure
raises :class:`LLMError` naming the endpoint and the cause.

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
from dataclasses import dataclass, field
from typing import Any

import openai
from pydantic import ValidationError

from appliance.llm import decision
from appliance.llm.base import D, LLMError, Reply

log = logging.getLogger(__name__)
for _noisy in ("httpx", "httpx2"):  # the OpenAI client logs every request at INFO: one line per LLM call
    logging.getLogger(_noisy).setLevel(logging.WARNING)

# event loop → base_url → the lock serialising requests to that server (an asyncio.Lock
# belongs to one loop; tests and tools may run several loops one after another)
_LOCKS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]]" = weakref.WeakKeyDictionary()


@dataclass
class OpenAICompatibleClient:
    """The :class:`~appliance.llm.base.LLM` of an OpenAI-compatible chat endpoint (see the
    module docstring; each method's contract is the protocol's).

    ``slot``: the llama-server slot to pin (embedded server; enables GBNF grammars) or None
    (any other server: JSON schema). ``timeout_s``: longest wait for one try.
    ``max_retries``/``retry_backoff_ms``: see *Retries*. ``on_warm(system, slot)``: called
    after each successful :meth:`warm`, so the server's owner can warm it again after a restart.
    Build one with :meth:`appliance.llm.runtime.LLMRuntime.llm` (by slot name), not by hand.
    """

    base_url: str
    model: str
    slot: int | None
    api_key: str
    timeout_s: float
    max_retries: int
    retry_backoff_ms: int
    on_warm: Callable[[str, int | None], None] | None = None
    _client: openai.AsyncOpenAI = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0
        )  # our own retries: the policy above, one log line each

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
        """See :meth:`LLM.decide <appliance.llm.base.LLM.decide>`: ``model_cls``'s grammar
        (embedded) or schema (other servers) constrains the answer."""
        ans = await self.json(
            system,
            user,
            grammar=decision.grammar(model_cls),
            schema=decision.json_schema(model_cls),
            max_tokens=max_tokens,
            temperature=temperature,
            on_text=on_text,
        )
        try:
            return model_cls.model_validate(ans)
        except ValidationError as e:
            raise LLMError(
                f"LLM at {self.base_url}: answer is not a valid {model_cls.__name__}: {ans!r} "
                f"({e.error_count()} errors: {e.errors()[0]['msg']})"
            ) from None

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
        """See :meth:`LLM.json <appliance.llm.base.LLM.json>`."""
        reply = await self.complete(
            system,
            user,
            grammar=grammar,
            schema=schema,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            on_text=on_text,
        )
        try:
            return json.loads(reply.text)
        except json.JSONDecodeError:
            raise LLMError(
                f"LLM at {self.base_url}: not the requested JSON (cut off by max_tokens={max_tokens}?): {reply.text!r}"
            ) from None

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
        """See :meth:`LLM.complete <appliance.llm.base.LLM.complete>`: ``grammar`` on the
        embedded server (a pinned ``slot``), ``schema`` on any other."""
        if self.slot is not None:
            extra: dict[str, Any] = {"grammar": grammar}
        else:
            extra = {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}}
        return await self._request(
            system, user, extra, max_tokens=max_tokens, temperature=temperature, seed=seed, on_text=on_text
        )

    async def text(self, system: str, user: str, *, max_tokens: int, temperature: float = 0.3) -> str:
        """See :meth:`LLM.text <appliance.llm.base.LLM.text>`."""
        reply = await self._request(system, user, {}, max_tokens=max_tokens, temperature=temperature)
        return reply.text.strip()

    async def warm(self, system: str) -> None:
        """See :meth:`LLM.warm <appliance.llm.base.LLM.warm>`; then ``on_warm(system, slot)``."""
        await self.text(system, "Hello.", max_tokens=1)
        if self.on_warm is not None:
            self.on_warm(system, self.slot)

    # ---- one request, with retries -----------------------------------------------------

    async def _request(
        self,
        system: str,
        user: str,
        extra: dict[str, Any],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> Reply:
        if self.slot is not None:
            extra = {**extra, "id_slot": self.slot, "cache_prompt": True}
        kwargs: dict[str, Any] = {
            "model": self.model,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "extra_body": extra,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        if seed is not None:
            kwargs["seed"] = seed
        seen: list[str] = []  # the text on_text has been given (a failure after it is not retried)

        def shown(text: str) -> None:
            seen[:] = [text]
            on_text(text)

        attempt = 0
        while True:
            try:
                async with self._serialised():
                    return await self._stream(kwargs, shown if on_text is not None else None)
            except openai.OpenAIError as e:  # every failure of the request itself; on_text's own errors propagate
                why = _transient(e)
                if why is None or seen or attempt == self.max_retries:
                    tries = f" after {attempt + 1} tries" if attempt else ""
                    raise LLMError(f"LLM at {self.base_url} failed{tries}: {why or _describe(e)}") from e
                delay_s = self.retry_backoff_ms * 2**attempt / 1000
                attempt += 1
                log.warning(
                    "LLM at %s: %s; try %d of %d in %.2f s",
                    self.base_url,
                    why,
                    attempt + 1,
                    self.max_retries + 1,
                    delay_s,
                )
                await asyncio.sleep(delay_s)

    async def _stream(self, kwargs: dict[str, Any], on_text: Callable[[str], None] | None) -> Reply:
        t0 = time.monotonic()
        text, usage = "", None
        stream = await self._client.chat.completions.create(**kwargs)
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
                if on_text is not None:
                    on_text(text)
        ms = int((time.monotonic() - t0) * 1000 + 0.5)
        log.debug("llm slot=%s %d ms: %s", self.slot, ms, text)
        details = usage.prompt_tokens_details if usage is not None else None
        return Reply(
            text,
            usage.prompt_tokens if usage else None,
            details.cached_tokens if details else None,
            usage.completion_tokens if usage else None,
            ms,
        )

    def _serialised(self):
        if self.slot is None:  # not the embedded server: no need to queue
            return contextlib.nullcontext()
        locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
        return locks.setdefault(self.base_url, asyncio.Lock())


def _transient(e: BaseException) -> str | None:
    """Why ``e`` is worth another try (no connection, timeout, HTTP 5xx or 429), or None."""
    if isinstance(e, openai.APITimeoutError):
        return "timed out"
    if isinstance(e, openai.APIConnectionError):
        return f"no connection ({e.__cause__ or e})"
    if isinstance(e, openai.APIStatusError) and (e.status_code >= 500 or e.status_code == 429):
        return f"HTTP {e.status_code}: {_body(e)}"
    return None


def _describe(e: BaseException) -> str:
    if isinstance(e, openai.APIStatusError):
        return f"HTTP {e.status_code}: {_body(e)}"
    return repr(e)


def _body(e: openai.APIStatusError) -> str:
    body = e.body  # the error object of the answer ({"code", "message", ...}), or its text
    if isinstance(body, dict):
        body = body.get("error", body)
        return str(body.get("message", body) if isinstance(body, dict) else body)
    return str(body if body is not None else e.message)
