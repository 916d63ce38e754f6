"""AI seats: one LLM conversation per seat with a role strategy, answering the judge's turns.

Each seat has a fixed system prompt (its seat and role first, so no two seats share a
long prefix) and its own llama-server slot (``runtime.llm(seat)``), so its cached prefix
survives the other seats' requests. The user message is the seat's log (append-only, from
:mod:`appliance.judge.views`) plus the turn instruction; the answer is decoded under the
turn tool's GBNF, so it can only be legal.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from appliance.bus import Bus, Subscription
from appliance.config import WerewolfConfig
from appliance.judge import tools
from appliance.llm.client import LLM, LLMError
from appliance.protocol.werewolf import ACTION, ActionPayload, TurnPayload
from appliance.judge.state import IllegalAction, Role
from appliance.judge.strategy import RULES, STRATEGIES
from appliance.judge.tools import ToolSpec
from appliance.werewolf.trace import Tracer
from appliance.voice.wav import write_wav

log = logging.getLogger(__name__)

_STYLE = ("When you speak, say whom you suspect or trust and why, in your own words; do not repeat others. "
          "Answer only with the JSON the turn asks for.")


def system_prompt(seat: str, role: Role, n_seats: int) -> str:
    """An AI seat's fixed system prompt: identity first, then rules, strategy, style."""
    return (f"You are {seat}, the {role.value}, in a game of Werewolf with {n_seats} seats.\n"
            f"{RULES}\nYour strategy: {STRATEGIES[role]}\n{_STYLE}")


class SeatError(RuntimeError):
    """A seat's LLM gave no usable answer (unreachable server, or output that is not the tool's JSON)."""


@dataclass
class SeatLLM:
    """One seat's LLM conversation: its fixed system prompt on its own client (``llm``,
    from ``runtime.llm(seat)``: the seat's slot on the embedded server, where GBNF
    grammars apply; JSON schema elsewhere). ``seed``: the game seed; each request's
    sampling seed derives from it, the seat and the turn, so a game replays the same way
    on the same machine. Every request is recorded in ``tracer``.
    """

    llm: LLM
    seat: str
    role: Role
    system: str
    cfg: WerewolfConfig
    tracer: Tracer
    seed: int

    async def call(self, lines: list[str] | tuple[str, ...], instruction: str, tool: ToolSpec, *,
                   round: int, phase: str, attempt: int = 0) -> dict[str, Any]:
        """Ask for the turn tool's arguments; returns them as a dict (legal by construction).

        Raises:
            SeatError: no answer, or an answer that is not the tool's JSON.
            IllegalAction: the decoded arguments are not legal (only without a grammar).
        """
        user = "\n".join([*fit(lines, self.cfg.prompt_max_chars), instruction])
        speak = tool.name == tools.SPEAK
        grammar = speech_grammar(tool, self.role) if speak else tool.grammar()
        seed = zlib.crc32(f"{self.seed}:{self.seat}:{round}:{phase}:{tool.name}:{attempt}".encode())
        try:
            reply = await self.llm.complete(self.system, user, grammar=grammar, schema=tool.schema(),
                                            max_tokens=self.cfg.speech_max_tokens if speak else 40,
                                            temperature=self.cfg.temperature, seed=seed)
        except LLMError as e:
            raise SeatError(f"{self.seat}: {e}") from e
        self.tracer.record(self.seat, {
            "round": round, "phase": phase, "tool": tool.name, "attempt": attempt,
            "messages": [{"role": "system", "content": self.system}, {"role": "user", "content": user}],
            "grammar": grammar if self.llm.slot is not None else None, "response": reply.text,
            "prompt_tokens": reply.prompt_tokens, "cached_tokens": reply.cached_tokens,
            "completion_tokens": reply.completion_tokens, "ms": reply.ms})
        args = decode(reply.text, tool)
        tool.to_action(args)
        return args


#: why a seat suspects or trusts another, as a small model can say it (``{seat}``: a living seat)
REASONS = tuple("they " + r for r in ("voted for {seat}", "accused {seat}", "defended {seat}", "copied {seat}",
                                      "were quiet", "sound honest", "sound like a werewolf",
                                      "lie about being the seer"))
SEER_REASONS = ("my check found a werewolf", "my check cleared them")


def speech_grammar(tool: ToolSpec, role: Role) -> str:
    """GBNF for a speech a small model keeps on topic: one stance on one living seat with a
    reason from :data:`REASONS`, e.g. ``I suspect P4 because they voted for P2.`` The Seer
    may open with ``I am the seer.`` and cite her checks. Every speech it allows is a
    legal ``speak`` argument (the longest is under 80 characters)."""
    claim = '("I am the seer. ")? ' if role is Role.SEER else ""
    reasons = REASONS + (SEER_REASONS if role is Role.SEER else ())
    alts = " | ".join(_gbnf_seq(r) for r in reasons)
    seats = " | ".join(f'"{s}"' for s in tool.targets)
    return ('root ::= "{\\"text\\":\\"" ' + claim + '("I suspect " | "I trust ") seat " because " reason "." '
            '"\\"}"\n'
            f"seat ::= {seats}\n"
            f"reason ::= {alts}")


def _gbnf_seq(template: str) -> str:
    head, sep, tail = template.partition("{seat}")
    parts = [f'"{head}"'] + (["seat"] if sep else []) + ([f'"{tail}"'] if tail else [])
    return "(" + " ".join(parts) + ")"


def decode(content: str, tool: ToolSpec) -> dict[str, Any]:
    """The model's JSON → arguments. A speech cut off by the token budget is closed at its
    last complete sentence (or word), since it is the seat's own public words.

    Raises:
        SeatError: not JSON (and not a cut-off speech).
    """
    try:
        args = json.loads(content)
    except json.JSONDecodeError:
        m = re.match(r'\{"text":"([^"\\\n]*)', content)
        if tool.name != tools.SPEAK or not m or not m.group(1).strip():
            raise SeatError(f"not the {tool.name} tool's JSON: {content!r}") from None
        text = m.group(1)
        cut = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
        text = text[:cut + 1] if cut > 0 else text.rsplit(" ", 1)[0] if " " in text else text
        args = {"text": text.strip()}
    if not isinstance(args, dict):
        raise SeatError(f"not the {tool.name} tool's JSON object: {content!r}")
    return args


def fit(lines: list[str] | tuple[str, ...], max_chars: int) -> list[str]:
    """``lines`` within ``max_chars`` (newlines included), dropping the oldest speeches
    first; other lines (the judge's statements) are always kept."""
    out = list(lines)
    total = sum(len(x) + 1 for x in out)
    i = 0
    while total > max_chars and i < len(out):
        if re.match(r"P\d+ said: ", out[i]):
            total -= len(out[i]) + 1
            del out[i]
        else:
            i += 1
    return out


class AISeat:
    """The agent of one AI seat: answers every ``werewolf_turn`` addressed to it with one
    tool call. With ``speech`` set, each of its speeches is also synthesised in its own
    voice and saved as a WAV (``speech`` = (synth, style, folder))."""

    def __init__(self, seat: str, llm: SeatLLM, speech: tuple[Any, Any, Path] | None = None):
        self.seat = seat
        self.llm = llm
        self.speech = speech

    async def run(self, bus: Bus, sub: Subscription) -> None:
        """Serve turns from ``sub`` (subscribed to this seat's turns) until it closes or the task is cancelled.

        Raises:
            SeatError: the LLM gave no usable answer.
        """
        async for env in sub:
            p: TurnPayload = env.payload
            tool = ToolSpec.from_json(p.tool)
            try:
                args = await self.llm.call(p.view, p.instruction, tool, round=p.round, phase=p.phase,
                                           attempt=p.attempt)
            except IllegalAction as e:
                raise SeatError(f"{self.seat}: {e}") from e
            if tool.name == tools.SPEAK and self.speech is not None:
                synth, style, folder = self.speech
                audio = await asyncio.to_thread(synth.synthesize, args["text"], style)
                write_wav(folder / f"{self.seat}-day{p.round}.wav", audio, synth.sample_rate_hz)
            await bus.publish(env.reply(ACTION, ActionPayload(game_id=p.game_id, seat=self.seat, tool=tool.name,
                                                              arguments=args)))
