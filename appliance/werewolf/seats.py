"""AI seats: role strategies in code over each seat's own beliefs; the LLM words the speeches.

Each turn, an :class:`AISeat` rebuilds its :class:`~appliance.judge.beliefs.Beliefs` from
its own log only (the ``werewolf_turn``'s ``view``, :func:`appliance.judge.views.from_lines`;
it never reads another seat's), then:

- **night actions and votes** come from :func:`appliance.judge.policy.choose` — no LLM;
- **a day speech** takes its position from :func:`appliance.judge.policy.position` (a
  claim, an accusation citing a vote or a statement, a defence); the LLM is told the
  position (:func:`~appliance.judge.policy.brief`, after the table's state and before the
  instruction; not the log, which a small model only repeats) and words it
  under :func:`~appliance.judge.policy.speech_grammar` — the speech starts with the
  position's claim and names only seats of the table, never a werewolf's partner — and
  :func:`~appliance.judge.policy.conforms` checks the words (no night actions, no role
  given away, the claim made). The speech **cites what happened**: after its words the
  grammar has it cite one or two public facts of its log
  (:func:`~appliance.judge.policy.offered`), and
  :func:`~appliance.judge.grounding.check` checks the cites against the log and that the
  words name nothing beyond them and the seat's own statements. Words that fail either
  check are asked for again with the reason (``werewolf.speech_retries`` times, another
  sampling seed each); when the LLM fails or still fails a check, the seat says
  :func:`~appliance.judge.policy.grounded` instead (the template's words and the fact
  they cite): a **template speech**, counted (``AISeat.templates``) and traced with its
  reason. Each :class:`Speech` keeps the LLM's first draft, so the benchmark can say how
  often the model's own words were grounded.

Each seat has a fixed system prompt (its seat and role first, so no two seats share a
long prefix) and its own llama-server slot (``runtime.llm(seat)``), so its cached prefix
survives the other seats' requests. Ties in the code strategies and every sampling seed
derive from the game seed, so a game replays the same way on the same machine.
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
from appliance.judge import grounding, policy, tools, views
from appliance.judge.beliefs import Beliefs, beliefs_of
from appliance.judge.grounding import Cite
from appliance.judge.state import IllegalAction, Role
from appliance.judge.strategy import RULES, STRATEGIES
from appliance.judge.tools import ToolSpec
from appliance.llm.base import LLM, LLMError
from appliance.protocol.werewolf import ACTION, ActionPayload, TurnPayload
from appliance.voice.wav import write_wav
from appliance.werewolf.trace import Tracer

log = logging.getLogger(__name__)

_STYLE = (
    "When you speak, you are given your position: say it in your own words, in one or two short sentences. "
    "Give a concrete reason from what was said or voted. Never talk about the night's attacks, saves or "
    "potions, and never reveal your role unless your position says so. Answer only with the JSON asked for."
)

#: the model's own words in a speech, at most (after the position's opening): ~20 tokens
SPEECH_WORDS_CHARS = 80
#: tokens a speech's cite adds to ``werewolf.speech_max_tokens`` (``,"cites":[{…}]``: ~27 with Qwen's tokenizer)
CITE_TOKENS = 32


#: each seat's manner of speaking (by seat number), so that the table does not sound like one voice
PERSONAS = (
    "You speak bluntly, in few words.",
    "You are careful and polite.",
    "You are suspicious of everyone and say so.",
    "You are warm and try to calm the table.",
    "You are logical and point at what people did.",
    "You are a little dramatic.",
    "You are dry and sarcastic.",
    "You are nervous and hesitant.",
)


def system_prompt(seat: str, role: Role, n_seats: int) -> str:
    """An AI seat's fixed system prompt: identity first, then rules, strategy, manner, style."""
    return (
        f"You are {seat}, the {role.value}, in a game of Werewolf with {n_seats} seats.\n"
        f"{RULES}\nYour strategy: {STRATEGIES[role]}\n{PERSONAS[(int(seat[1:]) - 1) % len(PERSONAS)]} "
        f"{_STYLE}"
    )


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

    async def call(
        self,
        lines: list[str] | tuple[str, ...],
        instruction: str,
        tool: ToolSpec,
        *,
        round: int,
        phase: str,
        attempt: int = 0,
        grammar: str | None = None,
        temperature: float | None = None,
    ) -> dict[str, Any]:
        """Ask for the turn tool's arguments; returns them as a dict (legal by construction).

        ``grammar``: the GBNF to decode under (default: the tool's; for a speech,
        :func:`reason_grammar`, the simulated person's). ``temperature``: default
        ``werewolf.temperature``.

        Raises:
            SeatError: no answer, or an answer that is not the tool's JSON.
            IllegalAction: the decoded arguments are not legal (only without a grammar).
        """
        user = "\n".join([*fit(lines, self.cfg.prompt_max_chars), instruction])
        speak = tool.name == tools.SPEAK
        if grammar is None:
            grammar = reason_grammar(tool, self.role) if speak else tool.grammar()
        seed = zlib.crc32(f"{self.seed}:{self.seat}:{round}:{phase}:{tool.name}:{attempt}".encode())
        try:
            reply = await self.llm.complete(
                self.system,
                user,
                grammar=grammar,
                schema=tool.schema(),
                max_tokens=self.cfg.speech_max_tokens + CITE_TOKENS if speak else 40,
                temperature=self.cfg.temperature if temperature is None else temperature,
                seed=seed,
            )
        except LLMError as e:
            raise SeatError(f"{self.seat}: {e}") from e
        self.tracer.record(
            self.seat,
            {
                "round": round,
                "phase": phase,
                "tool": tool.name,
                "attempt": attempt,
                "messages": [{"role": "system", "content": self.system}, {"role": "user", "content": user}],
                "grammar": grammar if self.llm.slot is not None else None,
                "response": reply.text,
                "prompt_tokens": reply.prompt_tokens,
                "cached_tokens": reply.cached_tokens,
                "completion_tokens": reply.completion_tokens,
                "ms": reply.ms,
            },
        )
        args = decode(reply.text, tool)
        tool.to_action(args)
        return args


#: why the simulated person suspects or trusts a seat, as a small model can say it (``{seat}``: a living seat)
REASONS = tuple(
    "they " + r
    for r in (
        "voted for {seat}",
        "accused {seat}",
        "defended {seat}",
        "copied {seat}",
        "were quiet",
        "sound honest",
        "sound like a werewolf",
        "lie about being the seer",
    )
)
SEER_REASONS = ("my check found a werewolf", "my check cleared them")


def reason_grammar(tool: ToolSpec, role: Role) -> str:
    """The simulated person's speech grammar (AI seats word a position instead, under
    :func:`appliance.judge.policy.speech_grammar`): one stance on one living seat with a
    reason from :data:`REASONS`, e.g. ``I suspect P4 because they voted for P2.`` The Seer
    may open with ``I am the seer.`` and cite her checks. A person's words cite no fact
    (``"cites":[]``, first). Every speech it allows is a legal ``speak`` argument (the longest is
    under 80 characters)."""
    claim = '("I am the seer. ")? ' if role is Role.SEER else ""
    reasons = REASONS + (SEER_REASONS if role is Role.SEER else ())
    alts = " | ".join(_gbnf_seq(r) for r in reasons)
    seats = " | ".join(f'"{s}"' for s in tool.targets)
    return (
        'root ::= "{\\"cites\\":[],\\"text\\":\\"" '
        + claim
        + '("I suspect " | "I trust ") seat " because " reason "." '
        '"\\"}"\n'
        f"seat ::= {seats}\n"
        f"reason ::= {alts}"
    )


def _gbnf_seq(template: str) -> str:
    head, sep, tail = template.partition("{seat}")
    parts = [f'"{head}"'] + (["seat"] if sep else []) + ([f'"{tail}"'] if tail else [])
    return "(" + " ".join(parts) + ")"


def decode(content: str, tool: ToolSpec) -> dict[str, Any]:
    """The model's JSON → arguments. A speech cut off by the token budget (its cites come
    first, :func:`~appliance.judge.policy.speech_grammar`) is closed at its last complete
    sentence (or word), since it is the seat's own public words, and keeps its cites.

    Raises:
        SeatError: not JSON (and not a cut-off speech).
    """
    try:
        args = json.loads(content)
    except json.JSONDecodeError:
        m = re.match(r'\{"cites":(\[[^\]]*\]),"text":"([^"\\\n]*)', content)
        if tool.name != tools.SPEAK or not m or not m.group(2).strip():
            raise SeatError(f"not the {tool.name} tool's JSON: {content!r}") from None
        text = m.group(2)
        cut = max(text.rfind(". "), text.rfind("! "), text.rfind("? "))
        text = text[: cut + 1] if cut > 0 else text.rsplit(" ", 1)[0] if " " in text else text
        try:
            cites = json.loads(m.group(1))
        except json.JSONDecodeError:
            raise SeatError(f"not the {tool.name} tool's JSON: {content!r}") from None
        args = {"cites": cites, "text": text.strip()}
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


@dataclass(frozen=True)
class Draft:
    """What the LLM first gave for a speech, before any re-wording or template: its words
    and the facts they cite."""

    text: str
    cites: tuple[Cite, ...]


@dataclass(frozen=True)
class Speech:
    """One day speech of an AI seat: its text and the public facts it cites, ``template``
    — why the fallback was said instead of the LLM's words (``None``: the LLM's words were
    said) — and ``draft``, the LLM's first wording (``None``: the LLM gave none)."""

    seat: str
    round: int
    text: str
    template: str | None = None
    cites: tuple[Cite, ...] = ()
    draft: Draft | None = None


def _told(cite: Cite, facts: dict[Cite, str]) -> str:
    """How the fact ``cite`` is told to the seat's LLM: its sentence, except that a claim is
    quoted as what was said (``On day 1 P4 said: "I am the seer."``), since the words
    themselves are public and the isolation audit reads a role or a check outside quotes
    as a private fact."""
    if cite.kind != grounding.CLAIM:
        return facts[cite]
    words = "I am the seer." if cite.target is None else f"I checked {cite.target}."
    return f'On day {cite.day} {cite.by} said: "{words}"'


class AISeat:
    """The agent of one AI seat (see the module docstring): answers every
    ``werewolf_turn`` addressed to it with one legal tool call.

    ``speeches`` lists every day speech it made (``templates`` counts the fallbacks).
    With ``speech`` set, each speech is also synthesised in the seat's own voice and
    saved as a WAV (``speech`` = (synth, style, folder)).
    """

    def __init__(self, seat: str, llm: SeatLLM, speech: tuple[Any, Any, Path] | None = None):
        self.seat = seat
        self.llm = llm
        self.speech = speech
        self.speeches: list[Speech] = []
        self._view: views.SeatView | None = None
        self._beliefs: Beliefs | None = None

    @property
    def templates(self) -> int:
        return sum(1 for s in self.speeches if s.template is not None)

    def beliefs(self, p: TurnPayload) -> Beliefs:
        """This seat's beliefs from the turn's view (its own log), folding only what is new.

        Raises:
            ValueError: the view is not this seat's log.
        """
        self._view = views.from_lines(self.seat, p.view, self._view)
        self._beliefs = beliefs_of(self._view, self._beliefs)
        return self._beliefs

    async def answer(self, p: TurnPayload) -> dict[str, Any]:
        """The tool arguments for turn ``p`` (legal: checked by the turn's tool).

        Raises:
            IllegalAction: the strategy has no legal choice (never replaced by a guess).
        """
        tool = ToolSpec.from_json(p.tool)
        b = self.beliefs(p)
        salt = self.llm.seed
        if tool.name != tools.SPEAK:
            return tool.arguments(policy.choose(b, tool, salt))
        pos = policy.position(b, tool, salt)
        assert self._view is not None
        facts = grounding.public_facts(self._view.events)
        offer = policy.offered(pos, b, facts)
        instruction = self._speech_instruction(pos, b, p, facts, offer)
        why: str | None = None
        draft: Draft | None = None
        for retry in range(1 + self.llm.cfg.speech_retries):  # a new sampling seed each time
            try:
                chars = self._speech_chars(pos, tool)
                args = await self.llm.call(
                    self._speech_lines(),
                    instruction
                    if why is None
                    else f"{instruction}\nYour last words were not said: they {why}. "
                    "Say it again, naming only what you cite.",
                    tool,
                    round=p.round,
                    phase=p.phase,
                    attempt=p.attempt + 100 * retry,
                    grammar=policy.speech_grammar(pos, b, tool, chars, one_sentence=True, offer=offer),
                    temperature=self.llm.cfg.speech_temperature,
                )
            except (SeatError, IllegalAction) as e:  # no LLM words: the counted fallback, at once
                why = str(e)
                break
            text, cites = args["text"].strip(), grounding.cites_of(args)
            draft = draft or Draft(text, cites)
            why = policy.conforms(text, pos, b, tool) or grounding.check(
                self.seat, text, cites, self._view.events, p.round
            )
            if why is None:
                break
            log.info("%s: the LLM's words are not said (%s): %r %s", self.seat, why, text, [str(c) for c in cites])
        if why is not None:
            text, cites = policy.grounded(pos, b, facts, tool.max_chars, salt)
            log.info("%s: template speech (%s)", self.seat, why)
            self.llm.tracer.record(
                self.seat,
                {
                    "round": p.round,
                    "phase": p.phase,
                    "tool": tool.name,
                    "attempt": p.attempt,
                    "messages": [],
                    "template": why,
                    "response": text,
                    "cites": [c.to_json() for c in cites],
                },
            )
        self.speeches.append(Speech(self.seat, p.round, text, why, cites, draft))
        args = {"text": text, "cites": [c.to_json() for c in cites]}
        tool.to_action(args)
        return args

    def _speech_chars(self, pos: policy.Position, tool: ToolSpec) -> int:
        """The speech length the grammar allows: the opening plus :data:`SPEECH_WORDS_CHARS`
        of the model's own (the grammar counts a seat id as two characters, so it is
        given twice that), within the tool's limit."""
        return min(tool.max_chars, len(policy.opening(pos)) + 2 * SPEECH_WORDS_CHARS + 1)

    def _speech_lines(self) -> list[str]:
        """What the LLM words a speech from, before the brief: the table's state. Not the
        log: the position already holds what the log means, and a small model given the
        log only repeats its lines — the night's among them, or the others' speeches."""
        assert self._view is not None
        return [self._view.status()]

    @staticmethod
    def _speech_instruction(
        pos: policy.Position, b: Beliefs, p: TurnPayload, facts: dict[Cite, str], offer: list[Cite]
    ) -> str:
        """The brief, the fact the speech cites (a line of its own: a small model copied
        "The fact your speech cites:" into its words), the turn's instruction and how to go
        on from the opening. A claim's opening
        is not quoted: its check reports are the position's words, not the view's."""
        start = policy.opening(pos).strip()
        evidence = " (the fact above, in your own words)" if offer else " (what they said or how they voted)"
        if not start:
            then = " Say it in one short sentence of your own."
        elif pos.stance in (policy.CLAIM_SEER, policy.COUNTER_CLAIM) and start.endswith("because"):
            then = (
                f' Your speech begins with your claim and your results, then "I suspect {pos.target} because"; '
                f"finish it with your reason{evidence}, in one short sentence of your own."
            )
        elif pos.stance in (policy.CLAIM_SEER, policy.COUNTER_CLAIM):
            then = (
                " Your speech begins with your claim and your results; add one short sentence of your own "
                "telling the table what to do."
            )
        else:
            then = (
                f' Your speech begins "{start}"; finish it with your reason{evidence}, in one short sentence '
                "of your own."
            )
        cite = f"\nFact: {_told(offer[0], facts)}" if offer else ""
        return (
            f"{policy.brief(pos, b, reads=False, short_quotes=True)}{cite}\n{p.instruction}{then} "
            "Name no seat or event but your target and that fact."
        )

    async def run(self, bus: Bus, sub: Subscription) -> None:
        """Serve turns from ``sub`` (subscribed to this seat's turns) until it closes or the task is cancelled.

        Raises:
            SeatError: the turn was not this seat's, or the strategy found no legal choice.
        """
        async for env in sub:
            p: TurnPayload = env.payload
            try:
                args = await self.answer(p)
            except (IllegalAction, ValueError) as e:
                raise SeatError(f"{self.seat}: {e}") from e
            if "text" in args and self.speech is not None:
                synth, style, folder = self.speech
                audio = await asyncio.to_thread(synth.synthesize, args["text"], style)
                write_wav(folder / f"{self.seat}-day{p.round}.wav", audio, synth.sample_rate_hz)
            await bus.publish(
                env.reply(
                    ACTION,
                    ActionPayload(
                        game_id=p.game_id, seat=self.seat, tool=ToolSpec.from_json(p.tool).name, arguments=args
                    ),
                )
            )
