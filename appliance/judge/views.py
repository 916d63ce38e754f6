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
keep what a seat needs; an :class:`~appliance.judge.events.Eliminated` comes back with
only the exiled seat's votes in its tally.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from appliance.judge import tools
from appliance.judge.events import (
    Deaths,
    Eliminated,
    Event,
    GameOver,
    JudgeEvent,
    PhaseBegan,
    RoleAssigned,
    SeerResult,
    Speech,
    Table,
    VoteCast,
    Votes,
    WitchAction,
    WitchInfo,
    WolfProposal,
    WolfTeam,
    WolfVictim,
)
from appliance.judge.rules import Turn
from appliance.judge.state import PUBLIC, Faction, GameState, Phase, Role


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
        return [render_event(e) for e in self.events]

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


_PLURAL = {Role.WEREWOLF: "werewolves"}


def render_event(e: Event) -> str:
    """One event as one line of text.

    Raises:
        TypeError: ``e.what`` is not one of the judge's event kinds.
    """
    match e.what:
        case Table(seats=seats, roles_in_play=counts):
            roles = ", ".join(
                f"{n} {_PLURAL.get(role, role.value + 's') if n > 1 else role.value}" for role, n in counts.items()
            )
            return f"Table: {', '.join(seats)}. Roles in play: {roles}."
        case RoleAssigned(seat=seat, role=role):
            return f"You are {seat}, the {role.value}."
        case WolfTeam(seats=seats):
            return f"Werewolf team: {', '.join(seats)}."
        case PhaseBegan(phase=phase):
            return f"== {phase.value.capitalize()} {e.round} =="
        case WolfProposal(seat=seat, target=target):
            return f"Werewolf {seat} proposes to attack {target}."
        case WolfVictim(target=target):
            return f"The werewolves attack {target} tonight."
        case WitchInfo(victim=victim):
            return f"The werewolves attacked {victim} tonight."
        case SeerResult(target=target, werewolf=werewolf):
            return f"Your check: {target} is {'' if werewolf else 'not '}a werewolf."
        case WitchAction(save=save, victim=victim, poison=poison):
            kept = f"You saved {victim} with your antidote." if save else "You kept your antidote."
            poisoned = f"You poisoned {poison}." if poison else "You poisoned nobody."
            return f"{kept} {poisoned}"
        case Deaths(seats=seats):
            return f"Dawn: {' and '.join(seats) if seats else 'nobody'} died during the night."
        case Speech(seat=seat, text=text):
            return f"{seat} said: {json.dumps(text, ensure_ascii=False)}"
        case VoteCast(target=target):
            return f"You voted for {target}." if target else "You abstained."
        case Votes(votes=votes):
            ballots = ", ".join(f"{s} for {t}" if t else f"{s} abstained" for s, t in votes.items())
            return f"Ballots: {ballots}."
        case Eliminated(seat=seat, reason=reason, tally=tally):
            if seat:
                return f"{seat} was voted out with {tally[seat]} votes."
            return "Tie: nobody was voted out." if reason == "tie" else "Everyone abstained: nobody was voted out."
        case GameOver(winner=winner):
            return f"Game over: the {winner.value} win."
    raise TypeError(f"not a judge event: {e.what!r}")


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

_SINGULAR = {v: k for k, v in _PLURAL.items()}


def _roles_in_play(counts: str) -> dict[Role, int]:
    out = {}
    for part in counts.split(", "):
        n, name = part.split(" ", 1)
        out[_SINGULAR.get(name) or Role(name[:-1] if int(n) > 1 else name)] = int(n)
    return out


def _ballots(ballots: str) -> dict[str, str | None]:
    votes: dict[str, str | None] = {}
    for ballot in ballots.split(", "):
        voter, _, rest = ballot.partition(" ")
        votes[voter] = None if rest == "abstained" else rest.removeprefix("for ")
    return votes


def _eliminated(g: dict[str, str]) -> Eliminated:
    if g.get("seat"):
        return Eliminated(g["seat"], "most votes", {g["seat"]: int(g["n"])})
    return Eliminated(None, "tie" if g["tie"].startswith("Tie") else "no votes", {})


_SEATS = r"P\d+(?:, P\d+)*"
#: (the line's pattern, its event from the match's groups and the log's seat, private?)
_LINES: list[tuple[re.Pattern, Callable[[dict[str, str], str], JudgeEvent], bool]] = [
    (re.compile(p), what, private)
    for p, what, private in (
        (
            rf"Table: (?P<seats>{_SEATS})\. Roles in play: (?P<counts>.*)\.",
            lambda g, _: Table(tuple(g["seats"].split(", ")), _roles_in_play(g["counts"])),
            False,
        ),
        (r"You are (?P<seat>P\d+), the (?P<role>\w+)\.", lambda g, _: RoleAssigned(g["seat"], Role(g["role"])), True),
        (rf"Werewolf team: (?P<seats>{_SEATS})\.", lambda g, _: WolfTeam(tuple(g["seats"].split(", "))), True),
        (r"== (?P<phase>\w+) (?P<round>\d+) ==", lambda g, _: PhaseBegan(Phase(g["phase"].lower())), False),
        (
            r"Werewolf (?P<seat>P\d+) proposes to attack (?P<target>P\d+)\.",
            lambda g, _: WolfProposal(g["seat"], g["target"]),
            True,
        ),
        (r"The werewolves attack (?P<target>P\d+) tonight\.", lambda g, _: WolfVictim(g["target"]), True),
        (r"The werewolves attacked (?P<victim>P\d+) tonight\.", lambda g, _: WitchInfo(g["victim"]), True),
        (
            r"Your check: (?P<target>P\d+) is (?P<not>not )?a werewolf\.",
            lambda g, _: SeerResult(g["target"], werewolf=g["not"] is None),
            True,
        ),
        (
            r"(?:You saved (?P<victim>P\d+) with your antidote|You kept your antidote)\. "
            r"(?:You poisoned (?P<poison>P\d+)|You poisoned nobody)\.",
            lambda g, _: WitchAction(g["victim"] is not None, g["victim"], g["poison"]),
            True,
        ),
        (
            r"Dawn: (?P<who>.+) died during the night\.",
            lambda g, _: Deaths(() if g["who"] == "nobody" else tuple(g["who"].split(" and "))),
            False,
        ),
        (r'(?P<seat>P\d+) said: (?P<text>".*")', lambda g, _: Speech(g["seat"], json.loads(g["text"])), False),
        (
            r"(?:You voted for (?P<target>P\d+)|You abstained)\.",
            lambda g, seat: VoteCast(seat, g["target"]),
            True,
        ),
        (r"Ballots: (?P<ballots>.*)\.", lambda g, _: Votes(_ballots(g["ballots"])), False),
        (r"(?P<seat>P\d+) was voted out with (?P<n>\d+) votes\.", lambda g, _: _eliminated(g), False),
        (
            r"(?P<tie>Tie: nobody was voted out|Everyone abstained: nobody was voted out)\.",
            lambda g, _: _eliminated(g),
            False,
        ),
        (r"Game over: the (?P<winner>\w+) win\.", lambda g, _: GameOver(Faction(g["winner"])), False),
    )
]


def parse_line(line: str, seat: str, round_: int, phase: Phase) -> Event:
    """One line of ``seat``'s log back into its event (``round_``/``phase``: the last
    phase line before it; Night 1 before the first). Private events come back with
    ``seat`` as their only audience.

    Raises:
        ValueError: a line :func:`render_event` does not write.
    """
    for pattern, what, private in _LINES:
        m = pattern.fullmatch(line)
        if m:
            event = what(m.groupdict(), seat)
            if isinstance(event, PhaseBegan):
                round_, phase = int(m["round"]), event.phase
            return Event(round_, phase, (seat,) if private else PUBLIC, event)
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
        match e.what:
            case PhaseBegan():
                round_, phase = e.round, e.phase
            case Table(seats=table):
                seats = list(table)
            case RoleAssigned(seat=whose) if whose != seat:
                raise ValueError(f"not {seat}'s log: it is {whose}'s ({line!r})")
            case RoleAssigned(role=own):
                role = own
            case Deaths(seats=died):
                dead += died
            case Eliminated(seat=str() as out):
                dead.append(out)
        events.append(e)
    if role is None:
        raise ValueError(f"{seat}'s log does not say its role")
    over = any(isinstance(e.what, GameOver) for e in events)
    return SeatView(
        seat=seat,
        role=role,
        round=round_,
        phase=Phase.OVER if over else phase,
        alive=tuple(s for s in seats if s not in dead),
        dead=tuple(s for s in seats if s in dead),
        events=tuple(events),
    )
