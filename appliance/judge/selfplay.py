"""Whole games played in code over the judge's rules — no LLM, no audio — and the
benchmark's strategy rates over many seeds.

A seat is played by a :data:`Policy`: ``"code"`` (beliefs from the seat's own view,
:mod:`~appliance.judge.beliefs`, and the role strategies, :mod:`~appliance.judge.policy`)
or ``"random"``, the baseline: every argument a uniformly random value from its legal
set — a target among the tool's targets (and ``abstain`` for a vote), the Witch's
``save`` true or false while she may save, her ``poison`` one of the targets or none while
she holds it — and an empty speech (``"Pass."``: a speech must have a letter). Random
choices come from ``random.Random(f"{seed}:{seat}")``, so a game is fully determined by
its seed and its policies.

:func:`play` plays one game (:func:`states` yields every state of it on the way);
:func:`bench` plays seeds 1..N and returns the rates:

- ``villager_win_rate`` — games the villagers won ÷ games (with a 95 % Wilson interval);
- ``seer_revealed_by_next_day_rate`` — over games in which the Seer found a werewolf and
  lived to speak the next day: the Seer's speech that day claimed the seer and named the
  found werewolf a werewolf (read by :mod:`~appliance.judge.claims`);
- ``seer_exiled_by_villagers_rate`` — games in which the Seer was voted out by ballots
  most of which (more than half) came from the villagers' faction ÷ games.

``python -m appliance.judge.selfplay --games 1000 --seats 7`` prints both policies' rates
as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from appliance.judge import claims, policy, tools
from appliance.judge.beliefs import Beliefs, beliefs_of
from appliance.judge.events import Eliminated, SeerResult, Speech, Votes
from appliance.judge.rules import act, advance, new_game, next_turn
from appliance.judge.state import (
    Action,
    Faction,
    GameState,
    NightKill,
    Phase,
    Role,
    SeerCheck,
    Speak,
    Vote,
    WitchAct,
    faction_of,
)
from appliance.judge.tools import ToolSpec
from appliance.judge.views import view

CODE = "code"
RANDOM = "random"
EMPTY_SPEECH = "Pass."

#: a seat's policy: a name, or a function of (seat's view, its tool, game seed) → action
Policy = str | Callable[..., Action]


def random_action(tool: ToolSpec, rng: random.Random) -> Action:
    """The baseline's action: each argument uniformly from its legal set (module docstring)."""
    if tool.name == tools.SPEAK:
        return Speak(EMPTY_SPEECH)
    if tool.name == tools.VOTE:
        choice = rng.choice(list(tool.targets) + ([tools.ABSTAIN] if tool.can_abstain else []))
        return Vote(None if choice == tools.ABSTAIN else choice)
    if tool.name == tools.WITCH_ACT:
        save = rng.random() < 0.5 if tool.victim is not None else False
        poison = rng.choice(list(tool.targets) + [None]) if tool.can_poison else None
        return WitchAct(save=save, poison=poison)
    return (NightKill if tool.name == tools.NIGHT_KILL else SeerCheck)(rng.choice(tool.targets))


def play(seed: int, n_seats: int, policies: Policy | Mapping[str, Policy] = CODE, roles=None) -> GameState:
    """Play one whole game; returns the final state (``phase`` is ``OVER``).

    ``policies``: one policy for every seat, or seat → policy. Each action is applied by
    :func:`appliance.judge.rules.act`, so an illegal one raises ``IllegalAction``.
    """
    *_, final = states(seed, n_seats, policies, roles)
    return final


def states(seed: int, n_seats: int, policies: Policy | Mapping[str, Policy] = CODE, roles=None) -> Iterator[GameState]:
    """Every state of the game :func:`play` plays, in order: the new game, then the state
    after each action and each phase change; the last is the final one."""
    s = new_game(seed, n_seats, roles=roles)
    yield s
    per_seat = {seat: (policies.get(seat, CODE) if isinstance(policies, Mapping) else policies) for seat in s.seats}
    rngs = {seat: random.Random(f"{seed}:{seat}") for seat in s.seats}
    beliefs: dict[str, Beliefs] = {}
    while s.phase is not Phase.OVER:
        turn = next_turn(s)
        if turn is None:
            s = advance(s)
            yield s
            continue
        p = per_seat[turn.seat]
        if p == RANDOM:
            action = random_action(turn.tool, rngs[turn.seat])
        elif p == CODE:
            b = beliefs_of(view(s, turn.seat), beliefs.get(turn.seat))
            beliefs[turn.seat] = b
            action = policy.choose(b, turn.tool, seed)
        else:
            action = p(view(s, turn.seat), turn.tool, seed)
        s = act(s, turn.seat, action)
        yield s


@dataclass(frozen=True)
class GameStats:
    """What the benchmark counts in one finished game."""

    seed: int
    winner: str
    seer_found_wolf: bool  # and lived to speak the next day
    seer_revealed: bool  # … and that day's speech claimed the seer and named it
    seer_exiled_by_villagers: bool
    complete_rounds: int


def stats(final: GameState) -> GameStats:
    """The benchmark's counts for one final state (see the module docstring)."""
    seer = final.seats_with(Role.SEER)[0]
    found = [(e.round, e.what.target) for e in final.events if isinstance(e.what, SeerResult) and e.what.werewolf]
    found_ok = revealed = False
    if found:
        day, wolf = found[0]
        speech = next(
            (e.what for e in final.events if isinstance(e.what, Speech) and e.round == day and e.what.seat == seer),
            None,
        )
        if speech is not None:
            found_ok = True
            said = claims.read(seer, speech.text, day)
            revealed = any(c.kind == claims.SEER for c in said) and any(
                c.kind == claims.WOLF and c.target == wolf for c in said
            )
    exiled = False
    for e in final.events:
        if isinstance(e.what, Eliminated) and e.what.seat == seer:
            votes = next(v.what.votes for v in final.events if isinstance(v.what, Votes) and v.round == e.round)
            against = [v for v, t in votes.items() if t == seer]
            village = sum(1 for v in against if faction_of(final.role(v)) is Faction.VILLAGERS)
            exiled = village * 2 > len(against)
    return GameStats(
        final.seed, final.winner.value if final.winner else "", found_ok, revealed, exiled, final.complete_rounds
    )


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval for ``k`` successes in ``n`` trials."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def bench(
    games: int, n_seats: int = 7, policies: Policy | Mapping[str, Policy] = CODE, first_seed: int = 1
) -> dict[str, Any]:
    """Play seeds ``first_seed`` … ``first_seed + games − 1`` and return the rates."""
    rows = [stats(play(seed, n_seats, policies)) for seed in range(first_seed, first_seed + games)]
    wins = sum(1 for r in rows if r.winner == Faction.VILLAGERS.value)
    found = [r for r in rows if r.seer_found_wolf]
    lo, hi = wilson(wins, len(rows))
    return {
        "games": len(rows),
        "villager_win_rate": _r(wins / len(rows)),
        "villager_win_rate_95": [_r(lo), _r(hi)],
        "seer_revealed_by_next_day_rate": _r(sum(r.seer_revealed for r in found) / len(found)) if found else None,
        "seer_found_wolf_games": len(found),
        "seer_exiled_by_villagers_rate": _r(sum(r.seer_exiled_by_villagers for r in rows) / len(rows)),
        "mean_complete_rounds": _r(sum(r.complete_rounds for r in rows) / len(rows)),
    }


def _r(x: float) -> float:
    return round(x, 4)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m appliance.judge.selfplay", description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seats", type=int, default=7)
    args = ap.parse_args(argv)
    out = {name: bench(args.games, args.seats, name) for name in (RANDOM, CODE)}
    print(json.dumps({"seats": args.seats, "seeds": [1, args.games], **out}, indent=2))


if __name__ == "__main__":
    main()
