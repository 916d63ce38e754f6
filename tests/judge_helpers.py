"""Shared by the judge's strategy tests: scripted games and seeded self-play (no LLM)."""

import json
import re
from collections import Counter
from functools import cache
from typing import NamedTuple

from appliance.judge import policy, tools, views
from appliance.judge.beliefs import Beliefs, beliefs_of
from appliance.judge.events import Votes
from appliance.judge.rules import act, advance, new_game, next_turn
from appliance.judge.state import GameState, Phase, Role, Speak

W, S, X, V = Role.WEREWOLF, Role.SEER, Role.WITCH, Role.VILLAGER
# P1, P2 werewolves; P3 seer; P4 witch; P5–P8 villagers
ROLES_8 = (W, W, S, X, V, V, V, V)


def scripted(*actions, roles=ROLES_8, seed=7) -> GameState:
    """Apply ``(seat, action)`` pairs in order, advancing phases whenever no seat is due
    (also after the last); a ``str`` action is a speech."""
    s = new_game(seed, len(roles), user_seat="P8", roles=roles)
    for seat, action in actions:
        s = settle(s)
        s = act(s, seat, Speak(action) if isinstance(action, str) else action)
    return settle(s)


def settle(s: GameState) -> GameState:
    """Advance until some seat must act (or the game is over)."""
    while next_turn(s) is None and s.phase is not Phase.OVER:
        s = advance(s)
    return s


def beliefs(state: GameState, seat: str) -> Beliefs:
    return beliefs_of(views.view(state, seat))


class CodeGame(NamedTuple):
    final: GameState
    briefs: tuple[tuple[str, str], ...]  # (seat, the brief its LLM would get), every day speech
    misfits: tuple[tuple[str, str, str], ...]  # (seat, template speech, why it does not conform)


@cache
def code_games(n: int = 1000) -> tuple[CodeGame, ...]:
    """Seeds 1..n (6–8 seats) with every seat on the code policy."""
    out = []
    for seed in range(1, n + 1):
        s = new_game(seed, 6 + seed % 3)
        known: dict[str, Beliefs] = {}
        briefs, misfits = [], []
        while s.phase is not Phase.OVER:
            turn = next_turn(s)
            if turn is None:
                s = advance(s)
                continue
            b = known[turn.seat] = beliefs_of(views.view(s, turn.seat), known.get(turn.seat))
            action = policy.choose(b, turn.tool, seed)
            if turn.tool.name == tools.SPEAK:
                pos = policy.position(b, turn.tool, seed)
                briefs.append((turn.seat, policy.brief(pos, b)))
                if (why := policy.conforms(action.text, pos, b, turn.tool)) is not None:
                    misfits.append((turn.seat, action.text, why))
            s = act(s, turn.seat, action)
        out.append(CodeGame(s, tuple(briefs), tuple(misfits)))
    return tuple(out)


def partner_ballots(final: GameState) -> tuple[int, int]:
    """``(n, decisive)``: the werewolves' ballots for a partner in ``final``, and how many
    of them decided the vote (without that ballot the partner would not have had
    strictly the most votes)."""
    wolves = set(final.seats_with(Role.WEREWOLF))
    n = decisive = 0
    for e in final.events:
        if not isinstance(e.what, Votes):
            continue
        for voter, target in e.what.votes.items():
            if voter in wolves and target in wolves:
                n += 1
                top = Counter(t for v, t in e.what.votes.items() if t and v != voter).most_common(2)
                decisive += not (top[0][0] == target and (len(top) == 1 or top[0][1] > top[1][1]))
    return n, decisive


def gbnf_regex(grammar: str) -> re.Pattern:
    """A regex for the small GBNF subset our grammars use (literals, character classes,
    groups, ``|``, ``?``/``*``/``+``/``{m,n}``, non-recursive rule references)."""
    rules = dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())
    token = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|\{\d+,\d+\}|[()|?*+]|[a-z][a-z0-9_-]*|\s+')

    def conv(expr: str) -> str:
        out = []
        for t in token.findall(expr):
            if t.isspace():
                continue
            if t.startswith('"'):
                out.append(re.escape(json.loads(t)))
            elif t.startswith("["):
                out.append(t.replace("\\n", "\n"))
            elif t == "(":
                out.append("(?:")
            elif t.startswith("{") or t in ")|?*+":
                out.append(t)
            else:
                out.append("(?:" + conv(rules[t]) + ")")
        return "".join(out)

    return re.compile(conv(rules["root"]), re.DOTALL)


def offered_cites(grammar: str) -> list[dict]:
    """The cites a speech grammar offers (:func:`appliance.judge.policy.speech_grammar`'s
    ``cN`` rules open with them), in order; ``[]`` when it offers none."""
    out = []
    for m in re.finditer(r'^c\d+ ::= ("(?:[^"\\]|\\.)*") ', grammar, re.M):
        lit = json.loads(m.group(1))
        if lit.startswith("{"):
            out.append(json.loads(lit))
    return out


def opening_of(grammar: str) -> str:
    """The words a speech grammar forces first (its position's claim), or ''."""
    m = re.search(r'^c0 ::= (?:"(?:[^"\\]|\\.)*" )?"\],\\"text\\":\\"" ("(?:[^"\\]|\\.)*") ', grammar, re.M)
    return json.loads(m.group(1)) if m else ""
