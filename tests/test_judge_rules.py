"""Judge rules on scripted scenarios: no LLM, no audio."""

import pytest

from appliance.judge import rules, tools
from appliance.judge.events import Deaths, Eliminated, GameOver, SeerResult, VoteCast, Votes, WitchInfo
from appliance.judge.rules import act, advance, check_win, new_game, next_turn
from appliance.judge.state import Faction, IllegalAction, NightKill, Phase, Role, SeerCheck, Speak, Vote, WitchAct

W, S, X, V = Role.WEREWOLF, Role.SEER, Role.WITCH, Role.VILLAGER
# P1, P2 werewolves; P3 seer; P4 witch; P5–P8 villagers
ROLES_8 = (W, W, S, X, V, V, V, V)


def game(roles=ROLES_8, seed=7):
    return new_game(seed, len(roles), user_seat="P5", roles=roles)


def play(state, *actions):
    """Apply ``(seat, action)`` pairs in order, advancing phases whenever no seat is due."""
    for seat, action in actions:
        while next_turn(state) is None and state.phase is not Phase.OVER:
            state = advance(state)
        state = act(state, seat, action)
    return state


def finish_phase(state):
    assert next_turn(state) is None
    return advance(state)


def day_and_vote(state, votes):
    """Every living seat speaks, then votes per ``votes`` (seat → target or None)."""
    while (t := next_turn(state)) is not None:
        state = act(state, t.seat, Speak(f"{t.seat} here."))
    state = finish_phase(state)
    assert state.phase is Phase.VOTE
    for seat in state.living():
        state = act(state, seat, Vote(votes.get(seat)))
    state = finish_phase(state)
    assert state.phase is Phase.RESOLUTION
    return finish_phase(state)


def kinds(state, kind):
    """The events of ``kind`` (an event class) in ``state``'s log, oldest first."""
    return [e for e in state.events if isinstance(e.what, kind)]


def test_deal_is_seeded_and_user_role_varies():
    a, b = new_game(42, 7), new_game(42, 7)
    assert a == b
    assert sorted(a.roles) == sorted([W, W, S, X, V, V, V])
    user_roles = {new_game(seed, 8).role(new_game(seed, 8).user_seat) for seed in range(60)}
    assert user_roles == {W, S, X, V}
    with pytest.raises(IllegalAction):
        new_game(1, 5)
    with pytest.raises(IllegalAction):
        new_game(1, 9)


def test_wolves_disagree_and_witch_poisons_same_night():
    s = play(
        game(),
        ("P1", NightKill("P5")),  # P1 is the lowest-numbered living werewolf: its choice stands
        ("P2", NightKill("P6")),
        ("P3", SeerCheck("P2")),
        ("P4", WitchAct(save=False, poison="P7")),
    )
    assert kinds(s, WitchInfo)[0].what == WitchInfo(victim="P5")
    assert kinds(s, SeerResult)[0].what == SeerResult(target="P2", werewolf=True)
    s = finish_phase(s)
    assert s.phase is Phase.DAY
    assert kinds(s, Deaths)[-1].what.seats == ("P5", "P7")
    assert s.alive == frozenset({"P1", "P2", "P3", "P4", "P6", "P8"})
    assert not s.poison and s.antidote


def test_disagreement_rule_when_leader_is_dead():
    s = play(
        game(),
        ("P1", NightKill("P5")),
        ("P2", NightKill("P6")),
        ("P3", SeerCheck("P8")),
        ("P4", WitchAct(save=False, poison="P1")),
    )
    s = finish_phase(s)
    s = day_and_vote(s, {})
    assert s.phase is Phase.NIGHT and s.round == 2
    assert next_turn(s).seat == "P2"  # the dead leader no longer proposes
    s = act(s, "P2", NightKill("P6"))
    assert rules.night_victim(s) == "P6"


def test_witch_save_then_antidote_is_gone():
    s = play(game(), ("P1", NightKill("P6")), ("P2", NightKill("P6")), ("P3", SeerCheck("P1")))
    turn = next_turn(s)
    assert turn.seat == "P4" and turn.tool.victim == "P6"
    assert turn.tool.schema()["required"] == ["save", "poison"]
    s = finish_phase(act(s, "P4", WitchAct(save=True, poison=None)))
    assert kinds(s, Deaths)[-1].what.seats == ()
    assert "P6" in s.alive and not s.antidote and s.poison
    s = day_and_vote(s, {})
    s = play(s, ("P1", NightKill("P6")), ("P2", NightKill("P6")), ("P3", SeerCheck("P2")))
    turn = next_turn(s)
    assert turn.tool.victim is None and list(turn.tool.schema()["properties"]) == ["poison"]
    assert len(kinds(s, WitchInfo)) == 1  # she no longer learns the victim
    with pytest.raises(IllegalAction):
        act(s, "P4", WitchAct(save=True, poison=None))
    s = finish_phase(act(s, "P4", WitchAct(save=False, poison=None)))
    assert kinds(s, Deaths)[-1].what.seats == ("P6",)


def test_tie_vote_and_all_abstain_eliminate_nobody():
    s = finish_phase(
        play(
            game(),
            ("P1", NightKill("P5")),
            ("P2", NightKill("P5")),
            ("P3", SeerCheck("P1")),
            ("P4", WitchAct(save=False, poison=None)),
        )
    )
    before = s.alive
    s = day_and_vote(s, {"P1": "P3", "P2": "P3", "P3": "P1", "P4": "P1"})  # 2–2, others abstain
    assert kinds(s, Eliminated)[-1].what == Eliminated(seat=None, reason="tie", tally={"P1": 2, "P3": 2})
    assert s.alive == before and s.complete_rounds == 1 and s.round == 2
    s = finish_phase(
        play(
            s,
            ("P1", NightKill("P6")),
            ("P2", NightKill("P6")),
            ("P3", SeerCheck("P2")),
            ("P4", WitchAct(save=False, poison=None)),
        )
    )
    s = day_and_vote(s, {})
    assert kinds(s, Eliminated)[-1].what.reason == "no votes"
    assert s.complete_rounds == 2


def test_ballots_are_secret_until_all_are_in():
    s = finish_phase(
        play(
            game(),
            ("P1", NightKill("P5")),
            ("P2", NightKill("P5")),
            ("P3", SeerCheck("P1")),
            ("P4", WitchAct(save=False, poison=None)),
        )
    )
    while (t := next_turn(s)) is not None:
        s = act(s, t.seat, Speak("hello"))
    s = finish_phase(s)
    s = act(s, "P1", Vote("P3"))
    ev = kinds(s, VoteCast)[-1]
    assert ev.audience == ("P1",)
    assert not kinds(s, Votes)


def test_villagers_win_when_no_werewolf_lives():
    s = play(
        game(),
        ("P1", NightKill("P5")),
        ("P2", NightKill("P5")),
        ("P3", SeerCheck("P1")),
        ("P4", WitchAct(save=True, poison="P1")),
    )
    s = finish_phase(s)
    assert s.alive == frozenset(game().seats) - {"P1"}
    s = day_and_vote(s, {seat: "P2" for seat in ("P3", "P4", "P5", "P6", "P7", "P8")})
    assert s.phase is Phase.OVER and s.winner is Faction.VILLAGERS
    assert s.complete_rounds == 1
    assert kinds(s, GameOver)[-1].what == GameOver(winner=Faction.VILLAGERS)
    with pytest.raises(IllegalAction):
        advance(s)


def test_werewolves_win_when_at_least_as_many():
    roles6 = (W, W, S, X, V, V)
    s = new_game(3, 6, roles=roles6)
    s = finish_phase(
        play(
            s,
            ("P1", NightKill("P5")),
            ("P2", NightKill("P5")),
            ("P3", SeerCheck("P1")),
            ("P4", WitchAct(save=False, poison="P6")),
        )
    )
    # P1, P2 wolves vs P3, P4: 2 ≥ 2 at dawn
    assert s.phase is Phase.OVER and s.winner is Faction.WEREWOLVES
    assert s.complete_rounds == 0
    assert check_win(s) is Faction.WEREWOLVES


def test_illegal_actions_raise_and_are_never_guessed():
    s = game()
    with pytest.raises(IllegalAction, match="P1's turn"):
        act(s, "P2", NightKill("P5"))
    with pytest.raises(IllegalAction):
        act(s, "P1", NightKill("P2"))  # a werewolf cannot attack a werewolf
    with pytest.raises(IllegalAction):
        act(s, "P1", Vote("P5"))  # wrong tool
    with pytest.raises(IllegalAction):
        act(s, "P1", NightKill("P9"))
    with pytest.raises(IllegalAction, match="must still act"):
        advance(s)
    s = finish_phase(
        play(
            s,
            ("P1", NightKill("P5")),
            ("P2", NightKill("P5")),
            ("P3", SeerCheck("P1")),
            ("P4", WitchAct(save=False, poison=None)),
        )
    )
    first = next_turn(s).seat
    with pytest.raises(IllegalAction):
        act(s, first, Vote("P3"))
    while (t := next_turn(s)) is not None:
        s = act(s, t.seat, Speak("hi"))
    s = finish_phase(s)
    with pytest.raises(IllegalAction):
        act(s, "P1", Vote("P5"))  # P5 is dead
    with pytest.raises(IllegalAction):
        act(s, "P1", Vote("P1"))  # no vote for oneself
    s = act(s, "P1", Vote(None))
    with pytest.raises(IllegalAction):
        act(s, "P1", Vote("P3"))  # one vote per seat


def test_seer_never_rechecks_and_speaking_order_rotates():
    s = game()
    s = play(
        s,
        ("P1", NightKill("P5")),
        ("P2", NightKill("P5")),
        ("P3", SeerCheck("P4")),
        ("P4", WitchAct(save=False, poison=None)),
    )
    s = finish_phase(s)
    order = []
    while (t := next_turn(s)) is not None:
        order.append(t.seat)
        s = act(s, t.seat, Speak("hi"))
    assert order[0] == "P1"
    s = finish_phase(s)
    for seat in s.living():
        s = act(s, seat, Vote(None))
    s = finish_phase(finish_phase(s))
    s = play(s, ("P1", NightKill("P6")), ("P2", NightKill("P6")))
    turn = next_turn(s)
    assert turn.seat == "P3" and "P4" not in turn.tool.targets and turn.tool.name == tools.SEER_CHECK
    s = finish_phase(play(s, ("P3", SeerCheck("P1")), ("P4", WitchAct(save=False, poison=None))))
    assert next_turn(s).seat == s.living()[1]  # round 2 starts one seat later
