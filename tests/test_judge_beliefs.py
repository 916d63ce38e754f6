"""A seat's beliefs from its own view: facts, the public record and the suspicion order."""

import pytest
from judge_helpers import ROLES_8, S, V, W, X, beliefs, scripted

from appliance.judge import views
from appliance.judge.beliefs import CAUGHT, VOTE, assess, beliefs_of
from appliance.judge.state import NightKill, Phase, Role, SeerCheck, Vote, WitchAct

# P1 villager, P2 seer, P3 villager, P4 werewolf, P5 witch, P6 werewolf, P7, P8 villagers
ROLES = (V, S, V, W, X, W, V, V)
NIGHT_1 = (
    ("P4", NightKill("P7")),
    ("P6", NightKill("P7")),
    ("P2", SeerCheck("P4")),
    ("P5", WitchAct(save=True, poison=None)),
)
DAY_1 = (
    ("P1", "I suspect P5."),
    ("P2", "I am the seer. My check found P4 is a werewolf. Vote P4 out."),
    ("P3", "I trust P2."),
    ("P4", "I suspect P8."),
    ("P5", "I suspect P4."),
    ("P6", "I am the real seer. My check found P2 is a werewolf."),
    ("P7", "I suspect P4 because P2 found them."),
    ("P8", "I suspect P6 because they claim the seer too."),
)
VOTE_1 = (
    ("P1", Vote("P4")),
    ("P2", Vote("P4")),
    ("P3", Vote("P4")),
    ("P4", Vote("P2")),
    ("P5", Vote("P4")),
    ("P6", Vote("P2")),
    ("P7", Vote("P4")),
    ("P8", Vote("P6")),
)


def test_claims_and_counter_claims_give_the_expected_suspicion_order():
    s = scripted(*NIGHT_1, *DAY_1, roles=ROLES)
    a = assess(beliefs(s, "P8"))
    # the first claimant's wolf, then the counter-claimant, then the first claimant
    # (whom the counter-claim names), then the seats nobody's claim is about
    assert a.ranked(a.score)[:3] == ["P4", "P6", "P2"]
    assert a.score["P4"] > 0.6 and a.score["P2"] < 0.5
    assert a.credibility == pytest.approx({"P2": 0.6, "P6": 0.4})
    assert max(a.score[s] for s in ("P1", "P3", "P5", "P7")) < a.score["P2"]


def test_votes_for_a_credible_seer_raise_suspicion():
    # one seer claim only; then P3 and P6 vote for the claimant, the others for P4
    day = (
        ("P1", "I suspect P3."),
        ("P2", "I am the seer. My check found P4 is a werewolf."),
        ("P3", "Hmm."),
        ("P4", "Hmm."),
        ("P5", "Hmm."),
        ("P6", "Hmm."),
        ("P7", "Hmm."),
        ("P8", "Hmm."),
    )
    votes = (
        ("P1", Vote("P4")),
        ("P2", Vote("P4")),
        ("P3", Vote("P2")),
        ("P4", Vote("P2")),
        ("P5", Vote("P4")),
        ("P6", Vote("P2")),
        ("P7", Vote("P4")),
        ("P8", Vote("P4")),
    )
    s = scripted(*NIGHT_1, *day, *votes, roles=ROLES)
    before = assess(beliefs(scripted(*NIGHT_1, *day, roles=ROLES), "P7"))
    after = assess(beliefs(s, "P7"))
    assert after.score["P3"] > before.score["P3"] and after.score["P6"] > before.score["P6"]
    assert after.score["P3"] > after.score["P1"]  # P1 voted with the seer, P3 against her
    assert after.score["P2"] < 0.2
    assert any(ev.kind == VOTE and ev.target == "P2" for w, ev in after.reasons["P3"] if w > 0)


def test_a_seat_catches_a_claimant_who_names_it():
    s = scripted(
        *NIGHT_1,
        ("P1", "Hmm."),
        ("P2", "Hmm."),
        ("P3", "Hmm."),
        ("P4", "I am the seer. My check found P5 is a werewolf."),
        roles=ROLES,
    )
    witch = assess(beliefs(s, "P5"))
    villager = assess(beliefs(s, "P3"))
    assert witch.credibility["P4"] < 0.01 and villager.credibility["P4"] == pytest.approx(0.85)
    assert witch.score["P4"] >= 0.85
    assert witch.reasons["P4"][0][1].kind == CAUGHT


def test_facts_of_each_role():
    s = scripted(*NIGHT_1, *DAY_1, *VOTE_1, roles=ROLES)
    seer, witch, wolf, villager = (beliefs(s, p) for p in ("P2", "P5", "P6", "P8"))
    assert seer.checks == ((1, "P4", True),) and seer.known() == {"P2": False, "P4": True}
    assert witch.attacked == ((1, "P7"),) and witch.saved == ((1, "P7"),)
    assert (witch.antidote, witch.poison) == (False, True)
    assert wolf.team == ("P4", "P6") and wolf.partners == ("P4",) and wolf.known()["P2"] is False
    assert wolf.proposals == ((1, "P4", "P7"), (1, "P6", "P7"))
    assert villager.known() == {"P8": False}
    assert (villager.team, villager.checks, villager.attacked, villager.antidote) == ((), (), (), None)
    # the public record is the same for all
    for b in (seer, witch, wolf, villager):
        assert b.seer_claimants() == ("P2", "P6")
        assert b.votes_in(1)["P4"] == "P2" and b.night_deaths == () and b.dead == ("P4",)
        assert b.exiled == ((1, "P4"),) and b.phase is Phase.NIGHT and b.round == 2


def test_seer_knows_she_is_the_seer_and_the_other_claimant_lies():
    s = scripted(*NIGHT_1, *DAY_1, roles=ROLES)
    a = assess(beliefs(s, "P2"))
    assert a.credibility["P2"] > 0.99 and a.score["P4"] == 1.0 and a.score["P6"] >= 0.85


def test_beliefs_fold_incrementally_and_purely():
    s = scripted(*NIGHT_1, *DAY_1[:4], roles=ROLES)
    early = beliefs(s, "P3")
    s2 = scripted(*NIGHT_1, *DAY_1, *VOTE_1, roles=ROLES)
    assert beliefs_of(views.view(s2, "P3"), early) == beliefs(s2, "P3")
    assert early == beliefs(s, "P3")  # unchanged: frozen, never mutated
    with pytest.raises(ValueError):
        beliefs_of(views.view(s2, "P4"), early)


def test_beliefs_from_the_log_lines_equal_beliefs_from_the_view():
    s = scripted(*NIGHT_1, *DAY_1, *VOTE_1, roles=ROLES)
    for seat in s.seats:
        v = views.view(s, seat)
        assert beliefs_of(views.from_lines(seat, v.lines())) == beliefs_of(v)


def test_a_log_is_rebuilt_incrementally_and_only_as_its_own_seat():
    early = scripted(*NIGHT_1, *DAY_1[:4], roles=ROLES)
    s = scripted(*NIGHT_1, *DAY_1, *VOTE_1, roles=ROLES)
    for seat in s.seats:
        lines = views.view(s, seat).lines()
        prior = views.from_lines(seat, views.view(early, seat).lines())
        assert views.from_lines(seat, lines, prior) == views.from_lines(seat, lines)
    with pytest.raises(ValueError, match="not P3's log"):
        views.from_lines("P3", views.view(s, "P1").lines())
    with pytest.raises(ValueError):
        views.from_lines("P3", views.view(early, "P3").lines(), views.from_lines("P3", views.view(s, "P3").lines()))


def test_roles_default_deal_is_supported():
    s = scripted(("P1", NightKill("P5")), ("P2", NightKill("P5")), roles=ROLES_8)
    b = beliefs(s, "P1")
    assert b.role is Role.WEREWOLF and b.seats == tuple(f"P{i}" for i in range(1, 9)) and b.wolves_in_play == 2
