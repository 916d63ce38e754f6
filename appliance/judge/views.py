"""What one seat may know, and the text its LLM (or its page) is given.

:func:`view` filters the event log by each event's audience: public events for all; the
seat's own role; the werewolf team, proposals and victim for werewolves; the Seer's own
checks for the Seer; the night's victim (while she holds the antidote) and her own
potion use for the Witch. :meth:`SeatView.lines` renders it as an append-only log (one
line per event), so a seat's prompt only ever grows and its cached prefix stays valid.

Speech is always rendered as ``P3 said: "…"`` with the text JSON-quoted: the isolation
checker relies on that to tell the seats' own words from the judge's statements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from appliance.judge import tools
from appliance.judge.rules import Turn
from appliance.judge.state import Event, GameState, Phase, Role


@dataclass(frozen=True)
class SeatView:
    """One seat's knowledge at one moment: public state plus the events it may see."""

    seat: str
    role: Role
    round: int
    phase: Phase
    alive: tuple[str, ...]
    dead: tuple[str, ...]
    events: tuple[Event, ...]

    def lines(self) -> list[str]:
        """The seat's event log as text, one line per event, oldest first."""
        return [line for e in self.events if (line := render_event(e)) is not None]

    def status(self) -> str:
        """One line of public state, e.g. ``Day 2. Alive: P1, P3, P4. Dead: P2.``"""
        dead = f" Dead: {', '.join(self.dead)}." if self.dead else ""
        return f"{self.phase.value.capitalize()} {self.round}. Alive: {', '.join(self.alive)}.{dead}"

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "role": self.role.value, "round": self.round, "phase": self.phase.value,
                "alive": list(self.alive), "dead": list(self.dead), "log": self.lines()}


def view(state: GameState, seat: str) -> SeatView:
    """``seat``'s view of ``state`` (events whose audience includes it, plus public state)."""
    return SeatView(seat=seat, role=state.role(seat), round=state.round, phase=state.phase,
                    alive=state.living(), dead=tuple(s for s in state.seats if s not in state.alive),
                    events=tuple(e for e in state.events if e.visible_to(seat)))


_PLURAL = {"werewolf": "werewolves"}


def render_event(e: Event) -> str | None:
    """One event as one line of text (``None`` for events with nothing to say)."""
    d = e.data
    k = e.kind
    if k == "table":
        counts = ", ".join(f"{n} {_PLURAL.get(role, role + 's') if n > 1 else role}"
                           for role, n in d["roles_in_play"].items())
        return f"Table: {', '.join(d['seats'])}. Roles in play: {counts}."
    if k == "role":
        return f"You are {d['seat']}, the {d['role']}."
    if k == "wolf_team":
        return f"Werewolf team: {', '.join(d['seats'])}."
    if k == "phase":
        return f"== {d['phase'].capitalize()} {e.round} =="
    if k == "wolf_proposal":
        return f"Werewolf {d['seat']} proposes to attack {d['target']}."
    if k == "wolf_victim":
        return f"The werewolves attack {d['target']} tonight."
    if k == "witch_info":
        return f"The werewolves attacked {d['victim']} tonight."
    if k == "seer_result":
        return f"Your check: {d['target']} is {'' if d['werewolf'] else 'not '}a werewolf."
    if k == "witch_action":
        parts = [f"You saved {d['victim']} with your antidote." if d["save"] else "You kept your antidote."]
        parts.append(f"You poisoned {d['poison']}." if d["poison"] else "You poisoned nobody.")
        return " ".join(parts)
    if k == "deaths":
        who = " and ".join(d["seats"]) if d["seats"] else "nobody"
        return f"Dawn: {who} died during the night."
    if k == "speech":
        return f"{d['seat']} said: {json.dumps(d['text'], ensure_ascii=False)}"
    if k == "vote_cast":
        return f"You voted for {d['target']}." if d["target"] else "You abstained."
    if k == "votes":
        ballots = ", ".join(f"{s} for {t}" if t else f"{s} abstained" for s, t in d["votes"].items())
        return f"Ballots: {ballots}."
    if k == "eliminated":
        if d["seat"]:
            return f"{d['seat']} was voted out with {d['tally'][d['seat']]} votes."
        return "Tie: nobody was voted out." if d["reason"] == "tie" else "Everyone abstained: nobody was voted out."
    if k == "game_over":
        return f"Game over: the {d['winner']} win."
    raise ValueError(f"unknown event kind {k!r}")


def instruction(turn: Turn, round_: int) -> str:
    """The request for the one legal tool, as the last line of the seat's prompt."""
    t = turn.tool
    choices = ", ".join(t.targets)
    if t.name == tools.NIGHT_KILL:
        return f"Night {round_}: choose the seat to attack. Choices: {choices}."
    if t.name == tools.SEER_CHECK:
        return f"Night {round_}: choose a seat to check. Choices: {choices}."
    if t.name == tools.WITCH_ACT:
        parts = [f"Night {round_}: your potions."]
        if t.victim is not None:
            parts.append("save: true uses your antidote on tonight's victim, false keeps it.")
        if t.can_poison:
            parts.append(f"poison: one of {choices}, or null to keep the poison.")
        return " ".join(parts)
    if t.name == tools.SPEAK:
        return f"Day {round_}: your turn to speak to the table. One or two short sentences, under 25 words."
    return f"Vote {round_}: vote to eliminate one of {choices}, or abstain."
