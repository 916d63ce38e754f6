"""Isolation: no seat's view, turn prompt or beliefs state another seat's private facts.

Property tests over 1,000+ seeded games with random legal actions and with the code
policy (no LLM), plus positive controls showing the checker does catch each kind of leak.
"""

import random

from judge_helpers import code_games

from appliance.judge import isolation, tools, views
from appliance.judge.beliefs import beliefs_of
from appliance.judge.events import RoleAssigned, SeerResult, WitchAction, WitchInfo, WolfProposal, WolfTeam
from appliance.judge.rules import act, advance, check_win, new_game, next_turn
from appliance.judge.state import NightKill, Phase, Role, SeerCheck, Speak, Vote, WitchAct

TOOL_OF = {
    (Phase.NIGHT, Role.WEREWOLF): tools.NIGHT_KILL,
    (Phase.NIGHT, Role.SEER): tools.SEER_CHECK,
    (Phase.NIGHT, Role.WITCH): tools.WITCH_ACT,
    Phase.DAY: tools.SPEAK,
    Phase.VOTE: tools.VOTE,
}
SPEECHES = [
    "I am the seer and P3 is a werewolf.",
    "P2 attacked nobody, I saved P4 with my potion.",
    "Hmm.",
    'He said "P1 is the witch".',
]


def random_action(rng, turn):
    t = turn.tool
    if t.name == tools.SPEAK:
        return Speak(rng.choice(SPEECHES))
    if t.name == tools.VOTE:
        return Vote(rng.choice(list(t.targets) + [None]))
    if t.name == tools.WITCH_ACT:
        return WitchAct(
            save=t.victim is not None and rng.random() < 0.5,
            poison=rng.choice(list(t.targets) + [None] * 3) if t.can_poison else None,
        )
    return (NightKill if t.name == tools.NIGHT_KILL else SeerCheck)(rng.choice(t.targets))


def random_game(seed):
    """Play one game with random legal actions; returns the final state and every turn's
    instruction as ``(seat, text)``."""
    rng = random.Random(seed)
    s = new_game(seed, 6 + seed % 3)
    prompts = []
    while s.phase is not Phase.OVER:
        turn = next_turn(s)
        if turn is None:
            s = advance(s)
            continue
        # only a werewolf gets night_kill, only the Seer seer_check, only the Witch witch_act
        assert turn.tool.name == TOOL_OF[(s.phase, s.role(turn.seat)) if s.phase is Phase.NIGHT else s.phase]
        prompts.append((turn.seat, views.instruction(turn, s.round)))
        s = act(s, turn.seat, random_action(rng, turn))
    return s, prompts


def test_no_private_fact_reaches_another_seat_in_1000_games():
    total = 0
    rounds = set()
    for seed in range(1000):
        final, prompts = random_game(seed)
        assert final.winner == check_win(final)
        rounds.add(final.complete_rounds)
        # Views are append-only, so a seat's final log contains every view it was ever sent.
        texts = [(seat, "\n".join(views.view(final, seat).lines())) for seat in final.seats] + prompts
        n, found = isolation.count_violations(texts, final)
        assert n == 0, (seed, found)
        total += len(texts)
    assert total > 20_000 and max(rounds) >= 3


def _state_with_everything():
    final, _ = random_game(11)
    while not (
        any(isinstance(e.what, SeerResult) for e in final.events)
        and any(isinstance(e.what, WitchInfo) for e in final.events)
    ):
        final, _ = random_game(final.seed + 1000)
    return final


def test_checker_catches_each_kind_of_leak():
    final = _state_with_everything()
    villagers = final.seats_with(Role.VILLAGER)
    wolf = final.seats_with(Role.WEREWOLF)[0]
    for kind in (SeerResult, WolfTeam, WolfProposal, WitchInfo, WitchAction, RoleAssigned):
        ev = next(
            e
            for e in final.events
            if isinstance(e.what, kind) and not (isinstance(e.what, RoleAssigned) and e.what.seat == villagers[0])
        )
        leaked = "\n".join(views.view(final, villagers[0]).lines() + [views.render_event(ev)])
        assert isolation.scan(leaked, villagers[0], final), kind
    # a werewolf must not learn the Seer's or the Witch's role either
    seer = final.seats_with(Role.SEER)[0]
    assert isolation.scan(f"Note: {seer} is the seer.", wolf, final)
    # speech is public whatever it claims
    assert not isolation.scan(f'{seer} said: "I am the seer, {wolf} is a werewolf."', villagers[0], final)


def test_each_seat_sees_its_own_private_facts():
    final = _state_with_everything()
    seer = final.seats_with(Role.SEER)[0]
    witch = final.seats_with(Role.WITCH)[0]
    wolves = final.seats_with(Role.WEREWOLF)
    assert any("Your check:" in line for line in views.view(final, seer).lines())
    assert any("attacked" in line for line in views.view(final, witch).lines())
    assert f"Werewolf team: {', '.join(wolves)}." in views.view(final, wolves[1]).lines()
    for seat in final.seats:
        assert not isolation.scan("\n".join(views.view(final, seat).lines()), seat, final)


def test_table_line_does_not_hint_at_the_deal():
    lines = {views.view(new_game(seed, 8), "P1").lines()[0] for seed in range(30)}
    assert lines == {
        "Table: P1, P2, P3, P4, P5, P6, P7, P8. Roles in play: 2 werewolves, 1 seer, 1 witch, 4 villagers."
    }


def _entitled_facts(final, seat):
    """What ``seat`` may know for certain, from the roles and the events, independently of
    the view builder: seat → is a werewolf."""
    role = final.role(seat)
    facts = {seat: role is Role.WEREWOLF}
    if role is Role.WEREWOLF:
        facts.update({s: final.role(s) is Role.WEREWOLF for s in final.seats})
    for e in final.events:
        match e.what:
            case SeerResult(target=target) if role is Role.SEER:
                facts[target] = final.role(target) is Role.WEREWOLF
            case WitchInfo(victim=victim) if role is Role.WITCH:
                facts[victim] = False
    return facts


def test_beliefs_hold_no_other_seats_private_fact_in_1000_games():
    for seed in range(1000):
        final, _ = random_game(seed)
        wolves = final.seats_with(Role.WEREWOLF)
        public = None
        for seat in final.seats:
            role = final.role(seat)
            log = views.view(final, seat).lines()
            b = beliefs_of(views.view(final, seat))
            # the beliefs come from the seat's text log alone, which the audit above scans
            assert beliefs_of(views.from_lines(seat, log)) == b
            assert b.role is role
            assert b.known() == _entitled_facts(final, seat), (seed, seat)
            assert b.team == (wolves if role is Role.WEREWOLF else ())
            assert bool(b.proposals) == (role is Role.WEREWOLF)
            assert bool(b.checks) == (role is Role.SEER and any(isinstance(e.what, SeerResult) for e in final.events))
            if role is not Role.WITCH:
                assert (b.antidote, b.poison, b.saved, b.poisoned) == (None, None, (), ())
            if role not in (Role.WEREWOLF, Role.WITCH):
                assert b.attacked == ()
            record = (b.speeches, b.claims, b.ballots, b.night_deaths, b.exiled, b.dead, b.winner)
            assert public is None or record == public  # the public record is the same for every seat
            public = record


def test_position_briefs_state_no_private_fact_in_1000_code_games():
    total = 0
    for game in code_games():
        n, found = isolation.count_violations(game.briefs, game.final)
        assert n == 0, (game.final.seed, found)
        total += len(game.briefs)
    assert total > 10_000
