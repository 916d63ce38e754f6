"""What one seat believes, built only from its own :class:`~appliance.judge.views.SeatView`.

:func:`beliefs_of` folds the view's events, oldest first, through :func:`update`; both are
pure and return a new frozen :class:`Beliefs`. Nothing here reads a :class:`GameState`:
a seat's beliefs hold its own role, its own private results and the public record, and
nothing else (the isolation property test checks it over 1,000 seeded games).

**Facts** (certain, from the seat's own view): its role; for a werewolf the team, the
night proposals and victims; for the Seer her checks; for the Witch the night's victim
while she held the antidote (never a werewolf: werewolves cannot attack their own) and
her potions. **The public record**: seats and roles in play, night deaths (who, never
how), exiles, ballots, speeches and the :mod:`~appliance.judge.claims` they make.

**Suspicion** (:func:`assess`): for each seat, the chance that it is a werewolf as this
seat can reason it.

- *Seer claims.* Each claimant gets a credibility, its chance of being the seer: 0.85
  when it is the only claimant; for several, 0.6 for the first and 0.4 for each later
  one, shared so that they sum to 1 (one of them is the seer); up when the claimant
  died at night (werewolves attack seers), down when it named a seat killed at night a
  werewolf; ≈ 0 when this seat *caught* it: it named a werewolf a seat this seat knows
  is none (this seat itself included), cleared a known werewolf, or it is not this seat
  when this seat is the Seer. Under "claimant h is the seer" h is no werewolf, what h
  reported is true and the other claimants lie (a liar is a werewolf with 0.9); the
  suspicion is the mix of these cases by credibility, the rest meaning "none is".
  A claimant under 0.15 counts as caught.
- *Accusations and defences* ("I suspect P4", "I trust P2") move the seat a little,
  more when the speaker looks honest; accusing a likely villager (a credible seer, say)
  or defending a likely werewolf moves the speaker.
- *Votes.* A ballot for a likely werewolf makes the voter less suspicious, a ballot for
  a likely villager more.

The last two set each seat's own lean (from a prior of unknown werewolves ÷ unknown
seats), which the claims cases keep where they say nothing; the facts override all.
Each move is kept as :class:`Evidence`, so a position can cite why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from types import MappingProxyType, SimpleNamespace

from appliance.judge import claims
from appliance.judge.claims import Claim
from appliance.judge.events import (
    Deaths,
    Eliminated,
    Event,
    GameOver,
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
from appliance.judge.state import Faction, Phase, Role
from appliance.judge.views import SeatView

# evidence kinds
CHECK = "check"  # this seat's own check (Seer)
TEAM = "team"  # the werewolf team (werewolves)
ATTACKED = "attacked"  # a night victim this seat was told of (werewolves, Witch)
CLAIM = "claim"  # something a seat said (``claim`` holds the claims.Claim)
VOTE = "vote"  # a ballot
CAUGHT = "caught"  # a seer claim this seat knows to be false
NIGHT_DEATH = "night_death"


@dataclass(frozen=True)
class Evidence:
    """One reason for a belief: ``seat`` did something (a check, a ballot, a claim) about
    ``target`` in ``round``. ``claim`` is the claim, for ``CLAIM`` and ``CAUGHT``."""

    kind: str
    round: int
    seat: str
    target: str | None = None
    claim: Claim | None = None
    wolf: bool | None = None  # CHECK: the result


@dataclass(frozen=True)
class Beliefs:
    """One seat's facts and public record (see the module docstring). Never mutated.

    ``seen``: how many of the view's events are folded in, so :func:`beliefs_of` can
    continue from an earlier state of the same seat's append-only view.
    """

    seat: str
    role: Role | None = None
    round: int = 1
    phase: Phase = Phase.NIGHT
    seats: tuple[str, ...] = ()
    wolves_in_play: int = 2
    dead: tuple[str, ...] = ()
    # facts of this seat's own
    team: tuple[str, ...] = ()  # werewolves: the whole team
    proposals: tuple[tuple[int, str, str], ...] = ()  # werewolves: (round, proposer, target)
    attacked: tuple[tuple[int, str], ...] = ()  # werewolves, Witch: (round, victim)
    checks: tuple[tuple[int, str, bool], ...] = ()  # Seer: (round, target, is werewolf)
    antidote: bool | None = None  # Witch: potions still held
    poison: bool | None = None
    saved: tuple[tuple[int, str], ...] = ()  # Witch: (round, seat saved)
    poisoned: tuple[tuple[int, str], ...] = ()  # Witch: (round, seat poisoned)
    # the public record
    speeches: tuple[tuple[int, str, str], ...] = ()  # (round, speaker, text)
    claims: tuple[Claim, ...] = ()
    ballots: tuple[tuple[int, str, str | None], ...] = ()  # (round, voter, target or None)
    night_deaths: tuple[tuple[int, str], ...] = ()
    exiled: tuple[tuple[int, str], ...] = ()
    winner: Faction | None = None
    seen: int = 0

    @property
    def alive(self) -> tuple[str, ...]:
        return tuple(s for s in self.seats if s not in self.dead)

    @property
    def partners(self) -> tuple[str, ...]:
        """The other werewolves (werewolves only), dead or alive."""
        return tuple(s for s in self.team if s != self.seat)

    def seer_claimants(self) -> tuple[str, ...]:
        """Seats that claimed to be the seer, in the order they first did."""
        out: list[str] = []
        for c in self.claims:
            if c.kind == claims.SEER and c.speaker not in out:
                out.append(c.speaker)
        return tuple(out)

    def known(self) -> dict[str, bool]:
        """Seats whose faction this seat knows for certain → ``True`` for a werewolf.
        Itself included. Werewolves know every seat; the Seer her checks; the Witch the
        victims she was told of."""
        out = {self.seat: self.role is Role.WEREWOLF}
        if self.role is Role.WEREWOLF:
            out.update({s: s in self.team for s in self.seats})
        for _, seat in self.attacked:
            out[seat] = False
        for _, seat, wolf in self.checks:
            out[seat] = wolf
        return out

    def votes_in(self, round_: int) -> dict[str, str | None]:
        return {v: t for r, v, t in self.ballots if r == round_}


_FIELDS = tuple(x.name for x in fields(Beliefs))


def update(b: Beliefs, e: Event) -> Beliefs:
    """``b`` after this seat learns event ``e`` (one of its view's events)."""
    return replace(b, seen=b.seen + 1, round=e.round, **_changes(b, e))


def _changes(b: Beliefs, e: Event) -> dict:
    """The fields of ``b`` that event ``e`` changes (raises ``TypeError`` for a non-event)."""
    match e.what:
        case Table(seats=seats, roles_in_play=counts):
            return {"seats": seats, "wolves_in_play": counts.get(Role.WEREWOLF, 0)}
        case RoleAssigned(seat=seat, role=role):
            return {"role": role} if seat == b.seat else {}
        case WolfTeam(seats=seats):
            return {"team": seats}
        case PhaseBegan(phase=phase):
            return {"phase": phase}
        case WolfProposal(seat=seat, target=target):
            return {"proposals": b.proposals + ((e.round, seat, target),)}
        case WolfVictim(target=target):
            return {"attacked": b.attacked + ((e.round, target),)}
        case WitchInfo(victim=victim):
            return {
                "attacked": b.attacked + ((e.round, victim),),
                "antidote": True if b.antidote is None else b.antidote,
                "poison": True if b.poison is None else b.poison,
            }
        case SeerResult(target=target, werewolf=werewolf):
            return {"checks": b.checks + ((e.round, target, werewolf),)}
        case WitchAction(save=save, victim=victim, poison=poison):
            return {
                "antidote": (b.antidote is not False) and not save,
                "poison": (b.poison is not False) and poison is None,
                "saved": b.saved + (((e.round, victim),) if save else ()),
                "poisoned": b.poisoned + (((e.round, poison),) if poison else ()),
            }
        case Deaths(seats=dead):
            return {"dead": b.dead + dead, "night_deaths": b.night_deaths + tuple((e.round, s) for s in dead)}
        case Speech(seat=seat, text=text):
            said = claims.read(seat, text, e.round)
            return {
                "speeches": b.speeches + ((e.round, seat, text),),
                "claims": b.claims + tuple(c for c in said if c.target is None or c.target in b.seats),
            }
        case VoteCast():
            return {}  # the Votes event reveals it with all the others
        case Votes(votes=votes):
            return {"ballots": b.ballots + tuple((e.round, v, t) for v, t in votes.items())}
        case Eliminated(seat=None):
            return {}
        case Eliminated(seat=seat):
            return {"dead": b.dead + (seat,), "exiled": b.exiled + ((e.round, seat),)}
        case GameOver(winner=winner):
            return {"winner": winner}
    raise TypeError(f"not a judge event: {e.what!r}")


def beliefs_of(view: SeatView, prior: Beliefs | None = None) -> Beliefs:
    """The beliefs of ``view.seat`` from its view alone. ``prior``: an earlier result for
    the same seat, so only the events it has not seen are folded (views only grow).

    Raises:
        ValueError: ``prior`` belongs to another seat or has seen more than ``view``.
    """
    b = prior or Beliefs(seat=view.seat)
    if b.seat != view.seat or b.seen > len(view.events):
        raise ValueError(f"prior beliefs of {b.seat} ({b.seen} events) do not fit {view.seat}'s view")
    # the same fold as update(), on one scratch copy rather than a new Beliefs per event
    f = SimpleNamespace(**{name: getattr(b, name) for name in _FIELDS})
    for e in view.events[b.seen :]:
        f.__dict__.update(_changes(f, e))
        f.seen += 1
    f.round, f.phase = view.round, view.phase
    return Beliefs(**vars(f))


# --- suspicion --------------------------------------------------------------------------


@dataclass(frozen=True)
class Assessment:
    """Suspicion per seat (chance of being a werewolf, 0–1), each seat's reasons with
    their weights (strongest first), and each seer claimant's credibility."""

    score: Mapping[str, float] = field(hash=False)
    reasons: Mapping[str, tuple[tuple[float, Evidence], ...]] = field(hash=False)
    credibility: Mapping[str, float] = field(hash=False)

    def ranked(self, seats) -> list[str]:
        """``seats`` most suspicious first (ties in seat order)."""
        seats = list(seats)
        return sorted(seats, key=lambda s: (-self.score.get(s, 0.0), seats.index(s)))


#: weights (log-odds) of the soft evidence; tuned on self-play (``appliance.judge.selfplay``)
W_SUSPECT = 0.4  # a plain accusation or defence, by the speaker's trustworthiness
W_STANCE = 1.5  # the speaker of an accusation or a defence, by its target's suspicion
W_VOTE = 1.5  # a voter, by its target's suspicion

SINGLE_CLAIM = 0.85
FIRST_OF_SEVERAL = 0.6
LATER_CLAIM = 0.4
#: a seer claimant below this credibility counts as caught lying
LIAR = 0.15
#: chance that a false seer claimant is a werewolf (a villager may bluff, rarely)
LIAR_IS_WOLF = 0.9


def credibility(b: Beliefs, public: bool = False) -> dict[str, float]:
    """Each seer claimant's chance of being the real seer, as ``b``'s seat sees it
    (``public``: as any seat sees it, from the public record alone). Several claimants'
    chances sum to 1 (one of them is the seer); a single claimant's is at most 0.85."""
    claimants = b.seer_claimants()
    known = {} if public else b.known()
    night_dead = {s for _, s in b.night_deaths}
    out: dict[str, float] = {}
    for i, x in enumerate(claimants):
        # one claimant: log-odds of being the seer; several: log of a share of one chance
        lo = _logit(SINGLE_CLAIM) if len(claimants) == 1 else math.log(FIRST_OF_SEVERAL if i == 0 else LATER_CLAIM)
        if x in night_dead:
            lo += 1.5  # werewolves attack seers
        for c in b.claims:  # a seat killed at night was (nearly always) no werewolf
            if c.speaker == x and c.kind == claims.WOLF and c.target in night_dead:
                lo -= 1.5
        if not public:
            if b.role is Role.SEER:
                lo = 30.0 if x == b.seat else -30.0
            elif x in known and known[x] or _caught(b, x, known) or x == b.seat:
                lo = -30.0  # a werewolf's claim, a claim this seat knows is false, or its own bluff
        out[x] = lo
    if len(out) <= 1:
        return {x: _sigmoid(lo) for x, lo in out.items()}
    top = max(out.values())
    odds = {x: math.exp(lo - top) for x, lo in out.items()}
    total = sum(odds.values())
    return {x: o / total for x, o in odds.items()}


def _caught(b: Beliefs, x: str, known: dict[str, bool]) -> Claim | None:
    """A claim of ``x`` that contradicts this seat's facts (``x`` is then lying)."""
    if x == b.seat:
        return None
    for c in b.claims:
        if c.speaker != x or c.target not in known:
            continue
        if (c.kind == claims.WOLF and not known[c.target]) or (
            c.kind == claims.CLEAR and c.checked and known[c.target]
        ):
            return c
    return None


@lru_cache(maxsize=512)  # a seat's turn asks for it several times (the result is read-only)
def assess(b: Beliefs, public: bool = False) -> Assessment:
    """Suspicion of every living seat as ``b``'s seat reasons it (see the module docstring).

    ``public``: reason as a seat with no private facts would (a werewolf uses it to see
    how the table sees it); then the seat itself is scored too.
    """
    known = {} if public else b.known()
    cred = credibility(b, public)
    reports = _reports(b, cred)
    p0 = _prior(b, known)
    p1 = _mixture(b, cred, known, dict.fromkeys(b.seats, p0), reports)

    # accusations, defences and votes, weighed by what the claims already say: (seat, weight, why)
    soft: list[tuple[str, float, Claim | tuple[int, str, str]]] = []
    for c in b.claims:
        if c.speaker == b.seat and not public:
            continue
        if not (c.kind in (claims.SUSPECT, claims.TRUST) or (c.kind == claims.WOLF and c.speaker not in cred)):
            continue
        sign = -1 if c.kind == claims.TRUST else 1
        weight = 1.5 * W_SUSPECT if c.kind == claims.WOLF else W_SUSPECT
        if c.target in p1:
            soft.append((c.target, sign * weight * (1.5 - 2 * p1[c.speaker]), c))
        # accusing a likely villager or defending a likely werewolf says something
        soft.append((c.speaker, W_STANCE * sign * (p0 - p1.get(c.target, p0)), c))
    for r, voter, target in b.ballots:
        if target is None or (voter == b.seat and not public):
            continue
        soft.append((voter, W_VOTE * (p0 - p1.get(target, p0)), (r, voter, target)))
    lean = dict.fromkeys(b.seats, 0)
    for s, w, _ in soft:
        lean[s] += w
    lo0 = _logit(p0)
    base = {s: _sigmoid(lo0 + lean[s]) for s in b.seats}
    p = _mixture(b, cred, known, base, reports)
    scored = [s for s in b.alive if public or s != b.seat]

    def explain(s: str) -> tuple[tuple[float, Evidence], ...]:
        moves = _claim_moves(b, cred, known, base, reports, p, public, s)
        moves += [(0.25 * w, _evidence(why)) for seat, w, why in soft if seat == s and w]
        moves.sort(key=lambda m: -abs(m[0]))
        return tuple(([_fact(b, s)] if s in known else []) + moves)

    return Assessment(MappingProxyType({s: p[s] for s in scored}), _Lazy(scored, explain), MappingProxyType(cred))


class _Lazy(Mapping):
    """A read-only mapping over ``keys`` whose values ``value(key)`` works out on first use
    (a seat's reasons: a vote needs none, a speech one seat's)."""

    def __init__(self, keys: list[str], value: Callable[[str], tuple]) -> None:
        self._keys, self._value, self._done = keys, value, {}

    def __getitem__(self, key: str) -> tuple:
        if key not in self._done:
            if key not in self._keys:
                raise KeyError(key)
            self._done[key] = self._value(key)
        return self._done[key]

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _evidence(why: Claim | tuple[int, str, str]) -> Evidence:
    """The evidence of a soft move: a claim said, or a ballot ``(round, voter, target)``."""
    if isinstance(why, Claim):
        return Evidence(CLAIM, why.round, why.speaker, why.target, why)
    r, voter, target = why
    return Evidence(VOTE, r, voter, target)


def _prior(b: Beliefs, known: dict[str, bool]) -> float:
    """Unknown werewolves ÷ unknown seats (the living, and half of the exiled)."""
    unknown_alive = [s for s in b.alive if s not in known]
    wolves_known = sum(1 for w in known.values() if w)
    exiled_unknown = [s for _, s in b.exiled if s not in known]
    p0 = (b.wolves_in_play - wolves_known) / max(1.0, len(unknown_alive) + 0.5 * len(exiled_unknown))
    return min(0.9, max(0.05, p0))


def _reports(b: Beliefs, cred: dict[str, float]) -> dict[str, dict[str, tuple[bool, Claim]]]:
    """Per seer claimant, the seats it reported → (a werewolf?, the claim); the latest
    report stands."""
    reports: dict[str, dict[str, tuple[bool, Claim]]] = {x: {} for x in cred}
    for c in b.claims:
        if c.speaker in cred and c.kind in (claims.WOLF, claims.CLEAR) and c.target is not None:
            reports[c.speaker][c.target] = (c.kind == claims.WOLF, c)
    return reports


def _mixture(
    b: Beliefs,
    cred: dict[str, float],
    known: dict[str, bool],
    base: dict[str, float],
    reports: dict[str, dict[str, tuple[bool, Claim]]],
) -> dict[str, float]:
    """P(werewolf) per seat over the hypotheses "claimant h is the seer" (weight: its
    credibility) and "no claimant is" (the rest): under h, h is no werewolf, the seats h
    reported are what h said, the other claimants lie (werewolves with
    :data:`LIAR_IS_WOLF`), the other seats keep ``base``. Facts override."""
    hypotheses = list(cred.items()) + [(None, max(0.0, 1.0 - sum(cred.values())))]
    p: dict[str, float] = {}
    for s in b.seats:
        if s in known:
            p[s] = 1.0 if known[s] else 0.0
            continue
        total = 0.0
        for h, w in hypotheses:
            if s == h:
                q = 0.0
            elif s in cred:
                q = LIAR_IS_WOLF
            elif h is not None and s in reports[h]:
                q = 1.0 if reports[h][s][0] else 0.0
            else:
                q = base[s]
            total += w * q
        p[s] = total
    return p


def _claim_moves(
    b: Beliefs,
    cred: dict[str, float],
    known: dict[str, bool],
    base: dict[str, float],
    reports: dict[str, dict[str, tuple[bool, Claim]]],
    p: dict[str, float],
    public: bool,
    s: str,
) -> list[tuple[float, Evidence]]:
    """How the seer claims moved seat ``s`` from ``base`` to ``p`` (:func:`_mixture`), as
    evidence: its own claim if it is a claimant (``CAUGHT`` when this seat caught it or
    it fell under :data:`LIAR`), and each claimant's report on it."""
    if s in known:
        return []
    out = []
    if s in cred:
        first = next(c for c in b.claims if c.speaker == s and c.kind == claims.SEER)
        caught = None if public else _caught(b, s, known)
        kind = CAUGHT if caught or cred[s] < LIAR else CLAIM
        out.append((p[s] - base[s], Evidence(kind, first.round, s, None, caught or first)))
    for h, w in cred.items():
        if s != h and s not in cred and s in reports[h]:
            wolf, c = reports[h][s]
            out.append((w * ((1.0 if wolf else 0.0) - base[s]), Evidence(CLAIM, c.round, h, s, c)))
    return out


def _fact(b: Beliefs, s: str) -> tuple[float, Evidence]:
    for r, t, wolf in b.checks:
        if t == s:
            return (1.0 if wolf else -1.0), Evidence(CHECK, r, b.seat, s, wolf=wolf)
    for r, t in b.attacked:
        if t == s:
            return -1.0, Evidence(ATTACKED, r, b.seat, s)
    wolf = s in b.team
    return (1.0 if wolf else -1.0), Evidence(TEAM, 1, b.seat, s, wolf=wolf)


def _logit(p: float) -> float:
    p = min(1 - 1e-6, max(1e-6, p))
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, x))))
