"""What one seat may know, and the text its LLM (or its page) is given.

:func:`view` filters the event log by each event's audience: public events for all; the
seat's own role; the werewolf team, proposals and victim for werewolves; the Seer's own
checks for the Seer; the night's victim (while she holds the antidote) and her own
potion use for the Witch. :meth:`SeatView.lines` renders it as an append-only log (one
line per event), so a seat's prompt only ever grows and its cached prefix stays valid.

Speech is always rendered as ``P3 said: "…"`` with the text JSON-quoted: the isolation
checker relies on that to tell the seats' own words from the judge's statements.

:func:`from_lines` is the inverse of :meth:`SeatView.lines`: a seat that receives only
its log (a ``werewolf_turn``'s ``view``) rebuilds its :class:`SeatView` from it. Lines
keep what a seat needs; an ``eliminated`` event comes back without the full tally.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from appliance.judge import tools
from appliance.judge.rules import Turn
from appliance.judge.state import PUBLIC, Event, GameState, Phase, Role


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
        return {
            "seat": self.seat,
            "role": self.role.value,
            "round": self.round,
            "phase": self.phase.value,
            "alive": list(self.alive),
            "dead": list(self.dead),
            "log": self.lines(),
        }


def view(state: GameState, seat: str) -> SeatView:
    """``seat``'s view of ``state`` (events whose audience includes it, plus public state)."""
    return SeatView(
        seat=seat,
        role=state.role(seat),
        round=state.round,
        phase=state.phase,
        alive=state.living(),
        dead=tuple(s for s in state.seats if s not in state.alive),
        events=tuple(e for e in state.events if e.visible_to(seat)),
    )


_PLURAL = {"werewolf": "werewolves"}


def render_event(e: Event) -> str | None:
    """One event as one line of text (``None`` for events with nothing to say)."""
    d = e.data
    k = e.kind
    if k == "table":
        counts = ", ".join(
            f"{n} {_PLURAL.get(role, role + 's') if n > 1 else role}" for role, n in d["roles_in_play"].items()
        )
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


# --- lines → events (the inverse of render_event) ----------------------------------------

_SEATS = r"P\d+(?:, P\d+)*"
_LINES: list[tuple[re.Pattern, str, bool]] = [
    (re.compile(p), kind, private)
    for p, kind, private in (
        (rf"Table: (?P<seats>{_SEATS})\. Roles in play: (?P<counts>.*)\.", "table", False),
        (r"You are (?P<seat>P\d+), the (?P<role>\w+)\.", "role", True),
        (rf"Werewolf team: (?P<seats>{_SEATS})\.", "wolf_team", True),
        (r"== (?P<phase>\w+) (?P<round>\d+) ==", "phase", False),
        (r"Werewolf (?P<seat>P\d+) proposes to attack (?P<target>P\d+)\.", "wolf_proposal", True),
        (r"The werewolves attack (?P<target>P\d+) tonight\.", "wolf_victim", True),
        (r"The werewolves attacked (?P<victim>P\d+) tonight\.", "witch_info", True),
        (r"Your check: (?P<target>P\d+) is (?P<not>not )?a werewolf\.", "seer_result", True),
        (
            r"(?:You saved (?P<victim>P\d+) with your antidote|You kept your antidote)\. "
            r"(?:You poisoned (?P<poison>P\d+)|You poisoned nobody)\.",
            "witch_action",
            True,
        ),
        (r"Dawn: (?P<who>.+) died during the night\.", "deaths", False),
        (r'(?P<seat>P\d+) said: (?P<text>".*")', "speech", False),
        (r"(?:You voted for (?P<target>P\d+)|You abstained)\.", "vote_cast", True),
        (r"Ballots: (?P<ballots>.*)\.", "votes", False),
        (r"(?P<seat>P\d+) was voted out with (?P<n>\d+) votes\.", "eliminated", False),
        (r"(?P<tie>Tie: nobody was voted out|Everyone abstained: nobody was voted out)\.", "eliminated", False),
        (r"Game over: the (?P<winner>\w+) win\.", "game_over", False),
    )
]


def parse_line(line: str, seat: str, round_: int, phase: Phase) -> Event:
    """One line of ``seat``'s log back into its event (``round_``/``phase``: the last
    phase line before it; Night 1 before the first). Private events come back with
    ``seat`` as their only audience.

    Raises:
        ValueError: a line :func:`render_event` does not write.
    """
    for pattern, kind, private in _LINES:
        m = pattern.fullmatch(line)
        if m:
            g = m.groupdict()
            data = _data(kind, g)
            if kind == "phase":
                round_, phase = int(g["round"]), Phase(data["phase"])
            elif kind == "vote_cast":
                data["seat"] = seat
            return Event(round_, phase, kind, (seat,) if private else PUBLIC, data)
    raise ValueError(f"not a line of a seat's view: {line!r}")


def from_lines(seat: str, lines: list[str] | tuple[str, ...], prior: SeatView | None = None) -> SeatView:
    """``seat``'s view rebuilt from its log (:meth:`SeatView.lines`).

    ``prior``: the view this function returned for an earlier, shorter log of the same
    seat; logs only grow (one line per event), so only the lines after its events are
    parsed.

    Raises:
        ValueError: a line that no event renders to, a log without the seat's role or with
            another seat's, or a ``prior`` of another seat or of a longer log.
    """
    events: list[Event] = []
    round_, phase = 1, Phase.NIGHT
    seats: list[str] = []
    dead: list[str] = []
    role: Role | None = None
    if prior is not None:
        if prior.seat != seat or len(prior.events) > len(lines):
            raise ValueError(f"prior view of {prior.seat} ({len(prior.events)} lines) does not fit {seat}'s log")
        events = list(prior.events)
        round_, phase = prior.round, (Phase.NIGHT if prior.phase is Phase.OVER else prior.phase)
        seats, dead, role = list(prior.alive + prior.dead), list(prior.dead), prior.role
        seats.sort(key=lambda s: int(s[1:]))
        lines = lines[len(prior.events) :]
    for line in lines:
        e = parse_line(line, seat, round_, phase)
        if e.kind == "phase":
            round_, phase = e.round, e.phase
        elif e.kind == "table":
            seats = e.data["seats"]
        elif e.kind == "role":
            if e.data["seat"] != seat:
                raise ValueError(f"not {seat}'s log: it is {e.data['seat']}'s ({line!r})")
            role = Role(e.data["role"])
        elif e.kind == "deaths":
            dead += e.data["seats"]
        elif e.kind == "eliminated" and e.data["seat"]:
            dead.append(e.data["seat"])
        events.append(e)
    if role is None:
        raise ValueError(f"{seat}'s log does not say its role")
    over = any(e.kind == "game_over" for e in events)
    return SeatView(
        seat=seat,
        role=role,
        round=round_,
        phase=Phase.OVER if over else phase,
        alive=tuple(s for s in seats if s not in dead),
        dead=tuple(s for s in seats if s in dead),
        events=tuple(events),
    )


_SINGULAR = {v: k for k, v in _PLURAL.items()}


def _data(kind: str, g: dict) -> dict:
    if kind == "table":
        counts = {}
        for part in g["counts"].split(", "):
            n, name = part.split(" ", 1)
            counts[_SINGULAR.get(name, name[:-1] if int(n) > 1 else name)] = int(n)
        return {"seats": g["seats"].split(", "), "roles_in_play": counts}
    if kind == "role":
        return {"seat": g["seat"], "role": g["role"]}
    if kind == "wolf_team":
        return {"seats": g["seats"].split(", ")}
    if kind == "phase":
        return {"phase": g["phase"].lower()}
    if kind == "wolf_proposal":
        return {"seat": g["seat"], "target": g["target"]}
    if kind == "wolf_victim":
        return {"target": g["target"]}
    if kind == "witch_info":
        return {"victim": g["victim"]}
    if kind == "seer_result":
        return {"target": g["target"], "werewolf": g["not"] is None}
    if kind == "witch_action":
        return {"save": g["victim"] is not None, "victim": g["victim"], "poison": g["poison"]}
    if kind == "deaths":
        return {"seats": [] if g["who"] == "nobody" else g["who"].split(" and ")}
    if kind == "speech":
        return {"seat": g["seat"], "text": json.loads(g["text"])}
    if kind == "vote_cast":
        return {"seat": None, "target": g["target"]}
    if kind == "votes":
        votes: dict[str, str | None] = {}
        for ballot in g["ballots"].split(", "):
            voter, _, rest = ballot.partition(" ")
            votes[voter] = None if rest == "abstained" else rest.removeprefix("for ")
        return {"votes": votes}
    if kind == "eliminated":
        if g.get("seat"):
            return {"seat": g["seat"], "reason": "most votes", "tally": {g["seat"]: int(g["n"])}}
        return {"seat": None, "reason": "tie" if g["tie"].startswith("Tie") else "no votes", "tally": {}}
    return {"winner": g["winner"]}
