"""Whole games in code: the random baseline, the code policy and the benchmark's rates."""

import random
from functools import cache

import pytest
from judge_helpers import S, V, W, X, scripted

from appliance.judge import selfplay, tools
from appliance.judge.events import Speech
from appliance.judge.rules import check_win
from appliance.judge.state import NightKill, Phase, SeerCheck, Vote, WitchAct
from appliance.judge.tools import ToolSpec


def test_random_baseline_plays_legal_seeded_games():
    finals = [selfplay.play(seed, 6 + seed % 3, selfplay.RANDOM) for seed in range(1, 301)]
    for final in finals:
        assert final.phase is Phase.OVER and final.winner == check_win(final)
        speeches = [e.what.text for e in final.events if isinstance(e.what, Speech)]
        assert set(speeches) <= {selfplay.EMPTY_SPEECH}
    assert selfplay.play(5, 7, selfplay.RANDOM) == selfplay.play(5, 7, selfplay.RANDOM)
    assert len({f.winner for f in finals}) == 2 and max(f.complete_rounds for f in finals) >= 3


def test_random_action_draws_from_every_legal_value():
    rng = random.Random(0)
    witch = ToolSpec(tools.WITCH_ACT, targets=("P1", "P2"), victim="P3", can_poison=True)
    seen = {selfplay.random_action(witch, rng) for _ in range(300)}
    assert seen == {WitchAct(save, poison) for save in (True, False) for poison in ("P1", "P2", None)}
    vote = ToolSpec(tools.VOTE, targets=("P1", "P2"), can_abstain=True)
    assert {selfplay.random_action(vote, rng) for _ in range(100)} == {Vote("P1"), Vote("P2"), Vote(None)}
    spent = ToolSpec(tools.WITCH_ACT, targets=("P1",), victim=None, can_poison=False)
    assert selfplay.random_action(spent, rng) == WitchAct(False, None)


def test_policies_mix_per_seat_and_accept_a_function():
    calls = []

    def abstainer(view, tool, seed):
        calls.append(view.seat)
        return selfplay.random_action(tool, random.Random(seed))

    final = selfplay.play(3, 7, {"P1": abstainer, "P2": selfplay.RANDOM})
    assert final.phase is Phase.OVER and set(calls) == {"P1"}


@cache
def code_rates() -> dict:
    """The benchmark's figure ``code_villager_win_rate`` and its companions: our policy on
    every seat, seeds 1..1000, 7 seats (played once for the tests that read it)."""
    return selfplay.bench(1000, 7, selfplay.CODE)


def test_code_policy_beats_the_random_baseline():
    ours = code_rates()
    base = selfplay.bench(200, 7, selfplay.RANDOM)
    assert ours["villager_win_rate"] >= base["villager_win_rate"] + 0.15
    assert ours["seer_revealed_by_next_day_rate"] == 1.0 and base["seer_revealed_by_next_day_rate"] == 0.0
    assert ours["seer_exiled_by_villagers_rate"] <= 0.05
    lo, hi = ours["villager_win_rate_95"]
    assert lo < ours["villager_win_rate"] < hi


def test_the_code_policy_against_itself_lands_in_the_balanced_band():
    """Both sides play to win: our policy on every seat over 1,000 seeded games at the
    benchmark's 7 seats (the villagers won 0.796 of them before the werewolves did)."""
    rates = code_rates()
    assert rates["games"] == 1000 and 0.35 <= rates["villager_win_rate"] <= 0.65, rates


# P1, P2 werewolves; P3 seer; P4 witch; P5–P8 villagers
ROLES = (W, W, S, X, V, V, V, V)
NIGHT = (
    ("P1", NightKill("P5")),
    ("P2", NightKill("P5")),
    ("P3", SeerCheck("P2")),
    ("P4", WitchAct(save=True, poison=None)),
)


def test_stats_count_the_seer_reveal_and_a_village_exile_of_the_seer():
    day = [(f"P{i}", "Hmm.") for i in range(1, 9)]
    day[2] = ("P3", "I am the seer. My check found P2 is a werewolf.")
    # P3 is voted out by P1, P2 (werewolves) and P5, P6, P7 (villagers): 3 of 5 village votes
    votes = [
        ("P1", Vote("P3")),
        ("P2", Vote("P3")),
        ("P3", Vote("P2")),
        ("P4", Vote("P2")),
        ("P5", Vote("P3")),
        ("P6", Vote("P3")),
        ("P7", Vote("P3")),
        ("P8", Vote("P2")),
    ]
    st = selfplay.stats(scripted(*NIGHT, *day, *votes, roles=ROLES))
    assert st.seer_found_wolf and st.seer_revealed and st.seer_exiled_by_villagers
    # the same, but the werewolves' votes are the majority against her, and she only hints
    day[2] = ("P3", "I suspect P2.")
    votes[3:8] = [("P4", Vote("P1")), ("P5", Vote("P3")), ("P6", Vote("P2")), ("P7", Vote("P4")), ("P8", Vote("P1"))]
    final = scripted(*NIGHT, *day, *votes, roles=ROLES)
    assert "P3" not in final.alive  # 3 votes: P1, P2 and P5
    st = selfplay.stats(final)
    assert st.seer_found_wolf and not st.seer_revealed and not st.seer_exiled_by_villagers


def test_wilson_interval():
    assert selfplay.wilson(0, 0) == (0.0, 1.0)
    lo, hi = selfplay.wilson(500, 1000)
    assert lo == pytest.approx(0.469, abs=1e-3) and hi == pytest.approx(0.531, abs=1e-3)
