"""The game's data: roles, phases, actions and the frozen :class:`GameState` (its event
log's entries are :mod:`appliance.judge.events`).

Everything here is immutable; :mod:`appliance.judge.rules` makes new states from old ones.
Seat ids are ``"P1"`` … ``"PN"`` (6 ≤ N ≤ 8).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from appliance.judge.events import Event

MIN_SEATS = 6
MAX_SEATS = 8

#: audience of an event every seat may see
PUBLIC = "*"


class IllegalAction(ValueError):
    """An action that the rules do not allow now (wrong seat, wrong tool, illegal argument).

    The judge never guesses a replacement: the caller must ask again or stop the game.
    """


class Role(str, Enum):
    WEREWOLF = "werewolf"
    SEER = "seer"
    WITCH = "witch"
    VILLAGER = "villager"


class Faction(str, Enum):
    VILLAGERS = "villagers"
    WEREWOLVES = "werewolves"


def faction_of(role: Role) -> Faction:
    """Werewolves are one faction; Seer, Witch and Villagers are the villagers' faction."""
    return Faction.WEREWOLVES if role is Role.WEREWOLF else Faction.VILLAGERS


class Phase(str, Enum):
    NIGHT = "night"
    DAY = "day"
    VOTE = "vote"
    RESOLUTION = "resolution"
    OVER = "over"


# --- actions: the arguments of the one legal turn tool, as typed values ---------------


@dataclass(frozen=True)
class NightKill:
    """A werewolf's proposal for tonight's victim (a living non-werewolf)."""

    target: str


@dataclass(frozen=True)
class SeerCheck:
    """The Seer's check of one living seat; she learns whether it is a werewolf."""

    target: str


@dataclass(frozen=True)
class WitchAct:
    """The Witch's night: ``save`` the night's victim (antidote), ``poison`` a seat or ``None``.

    ``save`` must be ``False`` when the antidote is spent; ``poison`` must be ``None`` when
    the poison is spent.
    """

    save: bool
    poison: str | None


@dataclass(frozen=True)
class Speak:
    """One daytime speech, as text (the user seat's is its ASR transcript)."""

    text: str


@dataclass(frozen=True)
class Vote:
    """A vote for a living seat other than the voter, or ``None`` for an explicit abstention."""

    target: str | None


Action = Union[NightKill, SeerCheck, WitchAct, Speak, Vote]


@dataclass(frozen=True)
class GameState:
    """A whole game at one moment. Never mutated: the rules return a new state.

    ``roles[i]`` is the role of ``seats[i]``. ``pending`` holds the actions taken so far in
    the current phase, in order, as ``(seat, action)``. ``antidote``/``poison``: the
    Witch's potions still unused. ``winner`` is set when ``phase`` is ``OVER``.
    ``complete_rounds`` counts finished Night–Day–Vote–Resolution cycles.
    """

    seed: int
    seats: tuple[str, ...]
    roles: tuple[Role, ...]
    user_seat: str
    alive: frozenset[str]
    phase: Phase = Phase.NIGHT
    round: int = 1
    complete_rounds: int = 0
    antidote: bool = True
    poison: bool = True
    pending: tuple[tuple[str, Action], ...] = ()
    events: tuple[Event, ...] = ()
    winner: Faction | None = None

    def role(self, seat: str) -> Role:
        """Role of ``seat``. Raises ``IllegalAction`` for an unknown seat id."""
        try:
            return self.roles[self.seats.index(seat)]
        except ValueError:
            raise IllegalAction(f"no seat {seat!r}; seats are {', '.join(self.seats)}") from None

    def seats_with(self, role: Role, living: bool = False) -> tuple[str, ...]:
        """Seats holding ``role`` in seat order (only living ones when ``living``)."""
        return tuple(s for s, r in zip(self.seats, self.roles) if r is role and (not living or s in self.alive))

    def living(self) -> tuple[str, ...]:
        """Living seats in seat order."""
        return tuple(s for s in self.seats if s in self.alive)

    def roles_by_seat(self) -> dict[str, str]:
        return {s: r.value for s, r in zip(self.seats, self.roles)}


def seat_ids(n_seats: int) -> tuple[str, ...]:
    return tuple(f"P{i}" for i in range(1, n_seats + 1))


def deal(seed: int, n_seats: int, user_seat: str | None = None, roles: Sequence[Role] | None = None) -> GameState:
    """A new game before the first night's events: roles dealt and the user seat drawn by ``seed``.

    Roles: 2 Werewolves, 1 Seer, 1 Witch, the rest Villagers, shuffled with
    ``random.Random(seed)``; the user seat is drawn from the same generator unless given,
    so its role is random too. ``roles`` (seat order) replaces the deal, for scripted
    scenarios and replays. Use :func:`appliance.judge.rules.new_game`, which also logs
    the opening events.

    Raises:
        IllegalAction: ``n_seats`` outside 6–8, an unknown ``user_seat``, or ``roles``
            that are not 2 Werewolves, 1 Seer, 1 Witch and Villagers for ``n_seats``.
    """
    if not MIN_SEATS <= n_seats <= MAX_SEATS:
        raise IllegalAction(f"seats must be {MIN_SEATS}–{MAX_SEATS}, got {n_seats}")
    rng = random.Random(seed)
    dealt = [Role.WEREWOLF, Role.WEREWOLF, Role.SEER, Role.WITCH] + [Role.VILLAGER] * (n_seats - 4)
    rng.shuffle(dealt)
    if roles is not None:
        if sorted(roles) != sorted(dealt):
            raise IllegalAction(f"roles must be 2 werewolves, 1 seer, 1 witch and villagers for {n_seats} seats")
        dealt = list(roles)
    seats = seat_ids(n_seats)
    drawn = rng.choice(seats)
    if user_seat is not None and user_seat not in seats:
        raise IllegalAction(f"user seat {user_seat!r} is not one of {', '.join(seats)}")
    return GameState(seed=seed, seats=seats, roles=tuple(dealt), user_seat=user_seat or drawn, alive=frozenset(seats))
