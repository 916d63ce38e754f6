"""Stand-ins for the models and the person, so agent logic is tested in milliseconds.

- :class:`ScriptedLLM` — an :class:`appliance.llm.base.LLM` (``decide``, ``json``,
  ``complete``, ``text``, ``warm``) answering from a script and recording every prompt.
- :class:`ScriptedLine` — the phone agent's :class:`~appliance.phone_agent.line.Line`:
  answers each question with the next scripted line; records what the agent said.
- :func:`names_from_labels` — a scripted answer to the computer agent's field-naming
  request: each label's slug, as a model would name it.
- :class:`FakeASR`, :class:`FakeSynth` — the voice models' shapes for tests that push
  pipecat frames: no model file is loaded.
- :class:`FakeLLMService` — a pipecat LLM service answering every context at once;
  :class:`ScriptedSmartTurn` — pipecat's Smart Turn with a scripted verdict.
"""

from __future__ import annotations

import asyncio
import json as jsonlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pipecat.audio.turn.smart_turn.base_smart_turn import BaseSmartTurn
from pipecat.frames.frames import (
    Frame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import LLMService
from pipecat.services.settings import LLMSettings
from pydantic import ValidationError

from appliance import config
from appliance.computer_agent.page import ButtonView, FieldView, FillProblem, PageView
from appliance.llm import decision
from appliance.llm.base import D, LLMError, Reply
from appliance.phone_agent.line import QueueLine
from appliance.protocol.line import SayOutcome
from appliance.voice.asr import SAMPLE_RATE_HZ, Transcript
from appliance.voice.piper_synth import VoiceStyle

#: One scripted answer: the answer itself, an exception to raise (e.g. ``LLMError``), or
#: ``fn(system, user) -> answer``.
Answer = Any


@dataclass(frozen=True)
class Call:
    """One request the LLM got: ``kind`` (``json``, ``text`` or ``warm``), the prompts, the
    slot and the other keyword arguments (``max_tokens``, ``grammar``, ``schema`` …)."""

    kind: str
    system: str
    user: str
    slot: int | None
    options: dict[str, Any]


@dataclass
class _Script:
    json: list[Answer]
    text: list[Answer]
    calls: list[Call] = field(default_factory=list)


class ScriptedLLM:
    """An :class:`~appliance.llm.base.LLM` answering ``json`` and ``text`` requests in order
    from two scripts; ``warm`` answers nothing.

    ``decide``, ``json`` and ``complete`` take their answers from the ``json`` script, ``text``
    from the ``text`` script (strings). ``json`` answers are returned as given (``on_text``
    first receives the answer's JSON text, as a stream would end); ``decide`` derives the
    model's grammar and schema as the client does (``TypeError``/``ValueError`` for a model
    no grammar can be made of) and validates its answer (``LLMError`` when it is not a valid
    instance of the model);
    ``complete`` returns it as the raw text a server streams. An exception in a script is
    raised instead of answering. A request beyond the end of its script fails the test
    (``AssertionError`` naming the prompt) — nothing is made up. ``calls`` records every
    request with its keyword arguments but ``on_text``; ``warmed`` the systems warmed.
    """

    def __init__(self, json: list[Answer] | None = None, text: list[Answer] | None = None, *, slot: int | None = 0):
        self.slot = slot
        self._script = _Script(list(json or ()), list(text or ()))

    @property
    def calls(self) -> list[Call]:
        return [c for c in self._script.calls if c.kind != "warm"]

    @property
    def warmed(self) -> list[str]:
        return [c.system for c in self._script.calls if c.kind == "warm"]

    @property
    def unused(self) -> dict[str, list[Answer]]:
        """What is left of the scripts (a test may assert it is all used)."""
        return {"json": self._script.json, "text": self._script.text}

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
        options = {"grammar": decision.grammar(model_cls), "schema": decision.json_schema(model_cls)}
        answer = self._next("json", system, user, {**options, "max_tokens": max_tokens, "temperature": temperature})
        if on_text is not None:
            on_text(jsonlib.dumps(answer))
        try:
            return model_cls.model_validate(answer)
        except ValidationError as e:
            raise LLMError(f"scripted answer is not a valid {model_cls.__name__}: {answer!r}") from e

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
        options = {"grammar": grammar, "schema": schema, "max_tokens": max_tokens, "temperature": temperature}
        answer = self._next("json", system, user, {**options, "seed": seed})
        if on_text is not None:
            on_text(jsonlib.dumps(answer))
        return answer

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
        """The next ``json`` answer as the raw text a server streams (a string answer is
        that text as is: a cut-off or malformed answer)."""
        options = {"grammar": grammar, "schema": schema, "max_tokens": max_tokens, "temperature": temperature}
        answer = self._next("json", system, user, {**options, "seed": seed})
        text = answer if isinstance(answer, str) else jsonlib.dumps(answer, separators=(",", ":"))
        if on_text is not None:
            on_text(text)
        return Reply(text, None, None, None, 0)

    async def text(self, system: str, user: str, *, max_tokens: int, temperature: float = 0.3) -> str:
        return self._next("text", system, user, {"max_tokens": max_tokens, "temperature": temperature})

    async def warm(self, system: str) -> None:
        self._script.calls.append(Call("warm", system, "", self.slot, {}))

    def _next(self, kind: str, system: str, user: str, options: dict[str, Any]) -> Answer:
        self._script.calls.append(Call(kind, system, user, self.slot, options))
        script = self._script.json if kind == "json" else self._script.text
        assert script, f"unscripted LLM {kind} request (slot {self.slot}): {user!r}"
        answer = script.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer(system, user) if callable(answer) else answer


class ScriptedLine(QueueLine):
    """The person on the phone agent's line, as text: each time the agent listens, the next
    scripted answer is heard (None: silence, so the agent's answer timeout passes). After the
    script, silence. ``said`` keeps everything the agent said, in order."""

    def __init__(self, answers: list[str | None]):
        super().__init__()
        self.answers = list(answers)
        self.said: list[str] = []
        self.hints: list[tuple[int, str]] = []  # (how many lines were said before it, the context)
        self.spelling: list[bool] = []  # each hint's: a spelling expected
        self.acknowledged: list[int] = []  # each acknowledgement's: how many lines were said before it

    async def say(self, text: str) -> SayOutcome:
        self.said.append(text)
        return SayOutcome(interrupted=False, heard=text)

    async def acknowledge(self) -> None:
        self.acknowledged.append(len(self.said))

    async def hint(self, context: str, spelling: bool = False) -> None:
        self.hints.append((len(self.said), context))
        self.spelling.append(spelling)

    async def hear(self) -> str:
        if self.answers:
            answer = self.answers.pop(0)
            if answer is not None:
                self.heard(answer)
        return await super().hear()


def names_from_labels(system: str, user: str) -> dict:
    """A naming answer (``ScriptedLLM(json=[names_from_labels, …])``): each label of the
    prompt's field list (``1. "Label" kind``) → its snake_case slug, as the model would."""
    from appliance.computer_agent.mapper import slug

    out: dict[str, str] = {}
    for label in re.findall(r'^\d+\. "(.*)" \S+', user, re.M):
        alias, n = label[:48], 1
        while alias in out:
            n += 1
            alias = f"{label[:48]} ({n})"
        out[alias] = slug(label)[:31].rstrip("_")
    return out


_WORDS = "one two three four five six seven eight nine ten".split()


class FakeASR:
    """WhisperASR's shape (``cfg``; ``transcribe(float32 16 kHz, context) -> Transcript``): one
    word ("one", "two", ...) per 0.25 s of samples louder than 0.05, ``''`` for silence.
    ``calls``: the length (samples) of each clip it was given; ``contexts``: each call's context."""

    cfg = config.load().asr

    def __init__(self):
        self.calls: list[int] = []
        self.contexts: list[str] = []

    def transcribe(self, audio: np.ndarray, context: str = "") -> Transcript:
        self.calls.append(len(audio))
        self.contexts.append(context)
        text = " ".join(_WORDS[: int(np.sum(np.abs(audio) > 0.05)) // (SAMPLE_RATE_HZ // 4)])
        return Transcript(text, 0.0 if text else 1.0, len(audio) / SAMPLE_RATE_HZ, 0.0)


class FakeSynth:
    """Piper's shape (``sample_rate_hz``; ``synthesize(text, VoiceStyle) -> int16 samples``):
    0.1 s of a constant for any text, at ``sample_rate_hz``.

    ``calls``: each call's ``(text, style)``; ``times``: when each began (``time.monotonic()``).
    ``fail``: raise instead. ``hold_from``: the ``hold_from``-th call (1-based) and later ones
    block until :meth:`release` (at most 10 s).
    """

    def __init__(self, sample_rate_hz: int = 24_000, fail: bool = False, hold_from: int | None = None):
        self.sample_rate_hz = sample_rate_hz
        self.fail = fail
        self.hold_from = hold_from
        self.calls: list[tuple[str, VoiceStyle]] = []
        self.times: list[float] = []
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def synthesize(self, text: str, style: VoiceStyle) -> np.ndarray:
        if self.fail:
            raise RuntimeError("voice file unreadable")
        self.calls.append((text, style))
        self.times.append(time.monotonic())
        if self.hold_from is not None and len(self.calls) >= self.hold_from:
            self._released.wait(10)
        return np.full(self.sample_rate_hz // 10, 1000, np.int16)


class FakeLLMService(LLMService):
    """A pipecat LLM service (so pipecat's speculation gate holds its speculative replies)
    that answers each ``LLMContextFrame`` with ``"Answer to <last user text>."`` in three
    tokens, ``token_s`` apart. ``contexts``: ``(user text, speculative)`` of each one."""

    def __init__(self, token_s: float = 0.02, **kwargs):
        super().__init__(
            settings=LLMSettings(
                model="fake",
                **dict.fromkeys(
                    (
                        "system_instruction",
                        "temperature",
                        "max_tokens",
                        "top_p",
                        "top_k",
                        "frequency_penalty",
                        "presence_penalty",
                        "seed",
                        "filter_incomplete_user_turns",
                        "user_turn_completion_config",
                    )
                ),
            ),
            **kwargs,
        )
        self.token_s = token_s
        self.contexts: list[tuple[str, bool]] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            user = next((m["content"] for m in reversed(frame.context.get_messages()) if m.get("role") == "user"), "")
            self.contexts.append((user, frame.speculation))
            await self.push_frame(LLMFullResponseStartFrame())
            for token in ("Answer", " to", f" {user}."):
                await asyncio.sleep(self.token_s)
                await self.push_frame(LLMTextFrame(token))
            await self.push_frame(LLMFullResponseEndFrame())
        else:
            await self.push_frame(frame, direction)


class ScriptedSmartTurn(BaseSmartTurn):
    """pipecat's Smart Turn buffering with the model replaced: ``complete(seconds of audio
    in the segment) -> bool`` (default: always complete)."""

    def __init__(self, complete: Callable[[float], bool] = lambda _s: True, **kwargs):
        super().__init__(**kwargs)
        self.complete = complete
        self.verdicts: list[bool] = []

    def _predict_endpoint(self, audio_array: np.ndarray) -> dict[str, Any]:
        verdict = self.complete(len(audio_array) / self.sample_rate)
        self.verdicts.append(verdict)
        return {"prediction": int(verdict), "probability": float(verdict)}


# -- a form page and browser without Chromium (the computer agent's PageDriver) --

SAVE = ButtonView(ref="b1", text="Save address", type="submit", in_form=True, name="", formnovalidate=False)


def text_field(ref: str, key: str, label: str, widget: str = "native") -> FieldView:
    return FieldView(
        ref=ref,
        kind="text",
        key=key,
        label=label,
        required=True,
        pattern=None,
        hint="",
        placeholder="",
        options=None,
        value="",
        visible=True,
        enabled=True,
        error="",
        widget=widget,
    )


class FakePage:
    """A form page as :func:`page.perceive` and :func:`page.fill` see it: ``fields`` (their
    values change as they are filled), ``buttons``; ``broken``: widgets whose every strategy
    fails as a list that never opens does. ``fills``: (field key, strategy name) per try.
    :class:`FakePageDriver` operates whichever FakePage the agent's browser holds."""

    def __init__(self, fields, buttons=(SAVE,), broken=frozenset()):
        self.fields, self.buttons, self.broken = list(fields), tuple(buttons), broken
        self.fills: list[tuple[str, str]] = []
        self.url = "http://127.0.0.1:9/address"

    def set_default_timeout(self, ms: float) -> None:
        pass

    async def goto(self, url: str, timeout: float) -> None:
        pass

    async def wait_for_load_state(self, *a, **k) -> None:
        pass

    async def perceive(self, page) -> PageView:
        return PageView(self.url, "Delivery address", tuple(self.fields), self.buttons, document="d1")

    async def fill(self, page, f, value, timeout_ms, *, strategy=None, actions=None):
        self.fills.append((f.key, strategy.__name__))
        if f.widget in self.broken:
            raise FillProblem("error", "no list of suggestions came up to choose from")
        self.fields = [g if g.ref != f.ref else FieldView(**{**g.__dict__, "value": value}) for g in self.fields]
        actions.add("fill")
        return value, ""


class FakePageDriver:
    """The computer agent's :class:`~appliance.computer_agent.page.PageDriver` over a
    :class:`FakePage` (the one passed: a browser restarted holds a new page)."""

    async def perceive(self, page) -> PageView:
        return await page.perceive(page)

    def locate(self, page, item):
        raise AssertionError(f"a FakePage has no locator for {item.ref}")

    async def fill(self, page, f, value, timeout_ms, *, strategy=None, actions=None):
        return await page.fill(page, f, value, timeout_ms, strategy=strategy, actions=actions)


class FakeBrowser:
    """Stands in for :class:`appliance.computer_agent.browser.Browser`, holding ``page`` (a
    FakePage or any stand-in page); ``closes`` counts :meth:`close` calls."""

    def __init__(self, page) -> None:
        self.page = page
        self.lost: str | None = None
        self.closes = 0

    async def start(self):
        return self.page

    def processes(self) -> list[int]:
        return []

    async def close(self) -> None:
        self.closes += 1
