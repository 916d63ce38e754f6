"""The rules of Werewolf as pure functions over a frozen :class:`GameState`.

A game is driven by three functions and nothing else::

    state = new_game(seed, n_seats)
    while state.phase is not Phase.OVER:
        turn = next_turn(state)              # who acts now, with the one legal tool
        if turn is None:
            state = advance(state)           # the phase is complete: resolve it
        else:
            state = act(state, turn.seat, action_from_that_seat)

Given the seed and the seats' actions the result is fully determined. An illegal action
(wrong seat, wrong tool, an argument outside the legal set) raises
:class:`IllegalAction`; nothing is ever guessed or defaulted.

**Phases of round r.**

- *Night.* The living werewolves confer in seat order: each proposes a victim among the
  living non-werewolves and sees the proposals made before it. **Disagreement rule:** if
  the proposals differ, the victim is the one proposed by the lowest-numbered living
  werewolf (the pack leader). Then the Seer (if alive, and some living seat is still
  unchecked) checks one living seat she has not checked yet and alone learns whether it
  is a werewolf. Then the Witch (if alive and holding a potion) acts once: while she
  holds the antidote she learns the victim and may save it (the antidote is spent); while
  she holds the poison she may poison any other living seat (the poison is spent); both
  the same night is allowed. The victim (unless saved) and the poisoned seat die at dawn.
- *Day.* The dawn deaths are announced (who, never how). Each living seat speaks once;
  the speaking order is the living seats in seat order rotated by ``round − 1``.
- *Vote.* Each living seat votes for another living seat or abstains explicitly; ballots
  are secret until every vote is in, then all are revealed at once.
- *Resolution.* **Tie rule:** the seat with strictly the most votes is eliminated; if two
  or more seats share the most votes, or every voter abstained, nobody is eliminated.

**Win check** (after the dawn deaths and after each elimination): the villagers win when
no werewolf lives; the werewolves win when living werewolves are at least as many as
all other living seats. ``complete_rounds`` counts finished Night–Day–Vote–Resolution
cycles, so a game won at dawn ends with the previous count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

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
from appliance.judge.state import (
    PUBLIC,
    Action,
    Faction,
    GameState,
    IllegalAction,
    NightKill,
    Phase,
    Role,
    SeerCheck,
    Speak,
    Vote,
    WitchAct,
    deal,
    faction_of,
)
from appliance.judge.tools import ToolSpec


@dataclass(frozen=True)
class Turn:
    """The seat that must act now and the one tool it is offered."""

    seat: str
    tool: ToolSpec


def new_game(seed: int, n_seats: int, user_seat: str | None = None, roles: Sequence[Role] | None = None) -> GameState:
    """Deal roles by ``seed`` (or take ``roles``, in seat order) and log the opening
    events; the game starts at Night 1.

    Opening events: the public table (seats, role counts); each seat's own role (to that
    seat only); the werewolf team (to the werewolves only); the start of Night 1.

    Raises:
        IllegalAction: as :func:`appliance.judge.state.deal`.
    """
    s = deal(seed, n_seats, user_seat, roles)
    counts = {r: s.roles.count(r) for r in Role if r in s.roles}  # fixed order: no hint of who is what
    wolves = s.seats_with(Role.WEREWOLF)
    events = [Event(1, Phase.NIGHT, PUBLIC, Table(s.seats, counts))]
    events += [Event(1, Phase.NIGHT, (seat,), RoleAssigned(seat, s.role(seat))) for seat in s.seats]
    events.append(Event(1, Phase.NIGHT, wolves, WolfTeam(wolves)))
    events.append(Event(1, Phase.NIGHT, PUBLIC, PhaseBegan(Phase.NIGHT)))
    return replace(s, events=tuple(events))


def check_win(state: GameState) -> Faction | None:
    """The win rule on the living seats: villagers if no werewolf lives, werewolves if
    living werewolves ≥ the other living seats, else ``None``."""
    wolves = sum(1 for s in state.alive if state.role(s) is Role.WEREWOLF)
    if wolves == 0:
        return Faction.VILLAGERS
    if wolves >= len(state.alive) - wolves:
        return Faction.WEREWOLVES
    return None


def night_victim(state: GameState) -> str | None:
    """Tonight's werewolf victim by the disagreement rule (the lowest-numbered living
    werewolf's proposal); ``None`` until every living werewolf has proposed."""
    wolves = state.seats_with(Role.WEREWOLF, living=True)
    proposals = {seat: a.target for seat, a in state.pending if isinstance(a, NightKill)}
    if not wolves or any(w not in proposals for w in wolves):
        return None
    return proposals[wolves[0]]


def checked_by_seer(state: GameState) -> tuple[str, ...]:
    """Seats the Seer has checked so far, in order."""
    return tuple(e.what.target for e in state.events if isinstance(e.what, SeerResult))


def next_turn(state: GameState) -> Turn | None:
    """The seat that must act now with its one legal tool, or ``None`` when the current
    phase needs no more actions (call :func:`advance`) or the game is over."""
    acted = {seat for seat, _ in state.pending}
    for seat in _order(state):
        if seat not in acted:
            return Turn(seat, _tool(state, seat))
    return None


def act(state: GameState, seat: str, action: Action) -> GameState:
    """Apply ``seat``'s action for the open turn and return the new state.

    Raises:
        IllegalAction: no turn is open, it is another seat's turn, the action is of
            another tool, or an argument is outside the tool's legal set.
    """
    turn = next_turn(state)
    if turn is None:
        raise IllegalAction(f"no seat may act now (phase {state.phase.value}); the phase must be advanced")
    if seat != turn.seat:
        raise IllegalAction(f"it is {turn.seat}'s turn ({turn.tool.name}), not {seat}'s")
    turn.tool.check(action)
    pending = state.pending + ((seat, action),)
    ev = _event_maker(state)
    potions = {}
    if isinstance(action, NightKill):
        wolves = state.seats_with(Role.WEREWOLF)
        out = [ev(wolves, WolfProposal(seat, action.target))]
        victim = night_victim(replace(state, pending=pending))
        if victim is not None:
            out.append(ev(wolves, WolfVictim(victim)))
            witch = state.seats_with(Role.WITCH, living=True)
            if witch and state.antidote:
                out.append(ev(witch, WitchInfo(victim)))
    elif isinstance(action, SeerCheck):
        out = [ev((seat,), SeerResult(action.target, werewolf=state.role(action.target) is Role.WEREWOLF))]
    elif isinstance(action, WitchAct):
        victim = night_victim(state)  # the Witch acts after every werewolf
        out = [ev((seat,), WitchAction(action.save, victim if action.save else None, action.poison))]
        potions = {"antidote": state.antidote and not action.save, "poison": state.poison and action.poison is None}
    elif isinstance(action, Speak):
        out = [ev(PUBLIC, Speech(seat, action.text))]
    else:
        out = [ev((seat,), VoteCast(seat, action.target))]
    return replace(state, pending=pending, events=state.events + tuple(out), **potions)


def advance(state: GameState) -> GameState:
    """Close the current phase once every seat has acted, and open the next.

    Night → dawn deaths, win check, Day. Day → Vote. Vote → ballots revealed, Resolution.
    Resolution → elimination (tie rule), ``complete_rounds`` + 1, win check, Night r+1.

    Raises:
        IllegalAction: a seat still has to act, or the game is over.
    """
    if state.phase is Phase.OVER:
        raise IllegalAction("the game is over")
    turn = next_turn(state)
    if turn is not None:
        raise IllegalAction(f"{turn.seat} must still act ({turn.tool.name})")
    ev = _event_maker(state)
    if state.phase is Phase.NIGHT:
        victim = night_victim(state)
        witch = next((a for _, a in state.pending if isinstance(a, WitchAct)), None)
        dead = set() if victim is None or (witch and witch.save) else {victim}
        if witch and witch.poison:
            dead.add(witch.poison)
        s = replace(state, alive=state.alive - dead)
        return _after_deaths(s, [ev(PUBLIC, Deaths(_in_seat_order(state, dead)))], Phase.DAY)
    if state.phase is Phase.DAY:
        return _open(state, Phase.DAY, [], Phase.VOTE)
    if state.phase is Phase.VOTE:
        votes = {seat: a.target for seat, a in state.pending if isinstance(a, Vote)}
        ordered = {seat: votes[seat] for seat in state.seats if seat in votes}
        return _open(state, Phase.VOTE, [ev(PUBLIC, Votes(ordered))], Phase.RESOLUTION)
    # Resolution
    votes = next(e.what.votes for e in reversed(state.events) if isinstance(e.what, Votes))
    tally = Counter(t for t in votes.values() if t is not None)
    top = tally.most_common()
    eliminated = top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None
    reason = "most votes" if eliminated else ("tie" if top else "no votes")
    s = replace(
        state,
        alive=state.alive - {eliminated} if eliminated else state.alive,
        complete_rounds=state.complete_rounds + 1,
    )
    out = [ev(PUBLIC, Eliminated(eliminated, reason, {k: tally[k] for k in state.seats if k in tally}))]
    return _after_deaths(s, out, Phase.NIGHT)


# --- internals -------------------------------------------------------------------------


def _event_maker(state: GameState):
    def ev(audience: tuple[str, ...] | str, what: JudgeEvent) -> Event:
        return Event(state.round, state.phase, audience, what)

    return ev


def _in_seat_order(state: GameState, seats: set[str]) -> tuple[str, ...]:
    return tuple(s for s in state.seats if s in seats)


def _after_deaths(state: GameState, events: list[Event], next_phase: Phase) -> GameState:
    winner = check_win(state)
    if winner is not None:
        over = Event(state.round, state.phase, PUBLIC, GameOver(winner))
        return replace(state, phase=Phase.OVER, winner=winner, pending=(), events=state.events + (*events, over))
    return _open(state, state.phase, events, next_phase)


def _open(state: GameState, closing: Phase, events: list[Event], phase: Phase) -> GameState:
    rnd = state.round + 1 if phase is Phase.NIGHT and closing is Phase.RESOLUTION else state.round
    start = Event(rnd, phase, PUBLIC, PhaseBegan(phase))
    return replace(state, phase=phase, round=rnd, pending=(), events=state.events + (*events, start))


def _order(state: GameState) -> tuple[str, ...]:
    """Seats that act in the current phase, in acting order."""
    living = state.living()
    if state.phase is Phase.NIGHT:
        order = list(state.seats_with(Role.WEREWOLF, living=True))
        seer = state.seats_with(Role.SEER, living=True)
        if seer and _seer_targets(state, seer[0]):
            order.append(seer[0])
        witch = state.seats_with(Role.WITCH, living=True)
        if witch and (state.antidote or state.poison):
            order.append(witch[0])
        return tuple(order)
    if state.phase is Phase.DAY:
        k = (state.round - 1) % len(living)
        return living[k:] + living[:k]
    if state.phase is Phase.VOTE:
        return living
    return ()


def _seer_targets(state: GameState, seer: str) -> tuple[str, ...]:
    done = set(checked_by_seer(state))
    return tuple(s for s in state.living() if s != seer and s not in done)


def _tool(state: GameState, seat: str) -> ToolSpec:
    others = tuple(s for s in state.living() if s != seat)
    if state.phase is Phase.NIGHT:
        role = state.role(seat)
        if role is Role.WEREWOLF:
            prey = tuple(s for s in state.living() if faction_of(state.role(s)) is not Faction.WEREWOLVES)
            return ToolSpec(tools.NIGHT_KILL, targets=prey)
        if role is Role.SEER:
            return ToolSpec(tools.SEER_CHECK, targets=_seer_targets(state, seat))
        return ToolSpec(
            tools.WITCH_ACT,
            targets=others if state.poison else (),
            victim=night_victim(state) if state.antidote else None,
            can_poison=state.poison,
        )
    if state.phase is Phase.DAY:
        return ToolSpec(tools.SPEAK, targets=others)  # targets: seats a speech may name (decoding aid)
    return ToolSpec(tools.VOTE, targets=others, can_abstain=True)
