"""The judge's event log: one frozen dataclass per kind of event, and :class:`Event`, which
places one in the game (round, phase, audience).

Consumers dispatch on the kind with ``match event.what: case Speech(seat=s, text=t): …``.
Seat ids are ``"P1"`` … ``"PN"``; every value is a seat id, a bool, a count, text or one of
the judge's enums, so an event is JSON-able as it stands.

**On disk** (a recording's ``events.jsonl``, one event a line) an event is
``{"round": 2, "phase": "day", "kind": "speech", "audience": "*" | ["P3", …],
"data": {"seat": "P3", "text": "…"}}``: ``kind`` is the class's :attr:`kind` and ``data``
its fields in order (enums as their values, tuples as lists). :meth:`Event.from_json`
reads a line back and fails closed: an unknown kind, a missing or extra field or a value
of the wrong type raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from functools import cache
from typing import Any, ClassVar, Literal, Union, get_args

from pydantic import TypeAdapter

from appliance.judge.state import PUBLIC, Faction, Phase, Role


@dataclass(frozen=True)
class Table:
    """The public table: every seat, and how many of each role are in play (in the fixed
    order of :class:`Role`, so it hints at nobody)."""

    kind: ClassVar[str] = "table"
    seats: tuple[str, ...]
    roles_in_play: dict[Role, int] = field(hash=False)


@dataclass(frozen=True)
class RoleAssigned:
    """``seat``'s own role (to that seat only)."""

    kind: ClassVar[str] = "role"
    seat: str
    role: Role


@dataclass(frozen=True)
class WolfTeam:
    """Every werewolf seat (to the werewolves only)."""

    kind: ClassVar[str] = "wolf_team"
    seats: tuple[str, ...]


@dataclass(frozen=True)
class PhaseBegan:
    """A phase opens (the event's own ``round`` is its round)."""

    kind: ClassVar[str] = "phase"
    phase: Phase


@dataclass(frozen=True)
class WolfProposal:
    """Werewolf ``seat`` proposes tonight's victim (to the werewolves)."""

    kind: ClassVar[str] = "wolf_proposal"
    seat: str
    target: str


@dataclass(frozen=True)
class WolfVictim:
    """Tonight's victim by the disagreement rule, once every werewolf has proposed (to the werewolves)."""

    kind: ClassVar[str] = "wolf_victim"
    target: str


@dataclass(frozen=True)
class WitchInfo:
    """Tonight's victim, told to the Witch while she holds the antidote."""

    kind: ClassVar[str] = "witch_info"
    victim: str


@dataclass(frozen=True)
class SeerResult:
    """The Seer's check of ``target``: whether it is a werewolf (to the Seer)."""

    kind: ClassVar[str] = "seer_result"
    target: str
    werewolf: bool


@dataclass(frozen=True)
class WitchAction:
    """The Witch's night (to the Witch): ``save`` (then ``victim`` is the seat saved, else
    ``None``) and the seat she poisoned, or ``None``."""

    kind: ClassVar[str] = "witch_action"
    save: bool
    victim: str | None
    poison: str | None


@dataclass(frozen=True)
class Deaths:
    """Dawn: the seats that died in the night, in seat order (who, never how)."""

    kind: ClassVar[str] = "deaths"
    seats: tuple[str, ...]


@dataclass(frozen=True)
class Speech:
    """``seat``'s daytime speech (public)."""

    kind: ClassVar[str] = "speech"
    seat: str
    text: str


@dataclass(frozen=True)
class VoteCast:
    """``seat``'s own ballot, to that seat only until :class:`Votes` reveals all:
    ``target`` or ``None`` for an abstention."""

    kind: ClassVar[str] = "vote_cast"
    seat: str
    target: str | None


@dataclass(frozen=True)
class Votes:
    """Every ballot at once, voter → target (``None``: abstained), in seat order."""

    kind: ClassVar[str] = "votes"
    votes: dict[str, str | None] = field(hash=False)


@dataclass(frozen=True)
class Eliminated:
    """The vote's result by the tie rule: ``seat`` voted out (``None`` for nobody), why,
    and the tally of votes per seat named (seat order)."""

    kind: ClassVar[str] = "eliminated"
    seat: str | None
    reason: Literal["most votes", "tie", "no votes"]
    tally: dict[str, int] = field(hash=False)


@dataclass(frozen=True)
class GameOver:
    """The game is won by ``winner``."""

    kind: ClassVar[str] = "game_over"
    winner: Faction


JudgeEvent = Union[
    Table,
    RoleAssigned,
    WolfTeam,
    PhaseBegan,
    WolfProposal,
    WolfVictim,
    WitchInfo,
    SeerResult,
    WitchAction,
    Deaths,
    Speech,
    VoteCast,
    Votes,
    Eliminated,
    GameOver,
]

#: the kind's name on disk → its class
KINDS: dict[str, type[JudgeEvent]] = {cls.kind: cls for cls in get_args(JudgeEvent)}


@dataclass(frozen=True)
class Event:
    """One entry of the event log: ``what`` happened in ``round``/``phase``, for
    ``audience`` (:data:`~appliance.judge.state.PUBLIC` or the tuple of seats that may
    learn it)."""

    round: int
    phase: Phase
    audience: tuple[str, ...] | Literal["*"]
    what: JudgeEvent

    def visible_to(self, seat: str) -> bool:
        return self.audience == PUBLIC or seat in self.audience

    def to_json(self) -> dict[str, Any]:
        """The event as one line of ``events.jsonl`` (the module docstring's shape)."""
        return {
            "round": self.round,
            "phase": self.phase.value,
            "kind": self.what.kind,
            "audience": self.audience if self.audience == PUBLIC else list(self.audience),
            "data": {f.name: _plain(getattr(self.what, f.name)) for f in fields(self.what)},
        }

    @classmethod
    def from_json(cls, line: Mapping[str, Any]) -> Event:
        """The event back from :meth:`to_json`'s dict (a line of a recording).

        Raises:
            ValueError: keys other than :meth:`to_json`'s, an unknown kind, ``data``
                without exactly the kind's fields, or a value that does not fit its field
                (pydantic's ``ValidationError`` is a ``ValueError``).
        """
        if set(line) != _LINE_KEYS:
            raise ValueError(f"an event line has the keys {sorted(_LINE_KEYS)}, not {sorted(line)}")
        what = KINDS.get(line["kind"])
        if what is None:
            raise ValueError(f"unknown event kind {line['kind']!r}; kinds are {', '.join(KINDS)}")
        names = [f.name for f in fields(what)]
        if not isinstance(line["data"], Mapping) or set(line["data"]) != set(names):
            raise ValueError(f"a {what.kind} event's data has the fields {names}, not {line['data']!r}")
        return _adapter(Event).validate_python(
            {
                "round": line["round"],
                "phase": line["phase"],
                "audience": line["audience"],
                "what": _adapter(what).validate_python(line["data"]),
            }
        )


_LINE_KEYS = {"round", "phase", "kind", "audience", "data"}


@cache
def _adapter(cls: type) -> TypeAdapter:
    return TypeAdapter(cls)


def _plain(value: Any) -> Any:
    """``value`` as JSON: enums as their values, tuples as lists, dicts with plain keys."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value
