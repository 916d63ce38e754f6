"""Speeches that cite what happened: the public facts of a log, and the check of a speech's
cites and words against them (no model)."""

from judge_helpers import ROLES_8, beliefs, scripted

from appliance.judge import grounding, policy, tools, views
from appliance.judge.grounding import Cite, check, public_facts
from appliance.judge.rules import act, advance, new_game, next_turn
from appliance.judge.state import NightKill, Phase, SeerCheck, Vote, WitchAct

NIGHT_1 = (("P1", NightKill("P5")), ("P2", NightKill("P5")), ("P3", SeerCheck("P2")), ("P4", WitchAct(False, None)))
DAY_1 = tuple((f"P{i}", "Hmm.") for i in (1, 2, 3, 4, 6, 7)) + (("P8", "I suspect P6."),)
# P5 died in night 1; day 1: P8 accused P6; vote 1: P6 out (P7 for P1); then night 2 and day 2 opens
VOTE_1 = tuple((f"P{i}", Vote("P7" if i == 6 else "P1" if i == 7 else "P6")) for i in (1, 2, 3, 4, 6, 7, 8))
NIGHT_2 = (("P1", NightKill("P8")), ("P2", NightKill("P8")), ("P3", SeerCheck("P7")), ("P4", WitchAct(False, None)))


def day_2(seat="P2"):
    """Day 2 of a scripted 8-seat game, at ``seat``'s speech: its view's events."""
    s = scripted(*NIGHT_1, *DAY_1, *VOTE_1, *NIGHT_2, roles=ROLES_8)
    assert s.round == 2 and s.phase is Phase.DAY and next_turn(s).seat == seat
    return s, views.view(s, seat).events


def test_the_public_log_gives_ballots_speeches_and_deaths_never_a_private_fact():
    _, log = day_2()
    facts = public_facts(log)
    assert Cite("vote", 1, "P7", "P1") in facts and Cite("vote", 1, "P1", "P6") in facts
    assert Cite("accusation", 1, "P8", "P6") in facts
    assert Cite("death", 1, None, "P5") in facts and Cite("death", 1, None, "P6") in facts
    assert Cite("death", 2, None, "P8") in facts
    assert facts[Cite("death", 1, None, "P6")] == "P6 was voted out on day 1."
    # P2's log holds its team, the night's proposals and victims: none is a fact to cite
    assert not {c for c in facts if c.kind == "claim"}
    assert all(c.day <= 2 for c in facts)


def test_a_speech_citing_a_vote_that_never_happened_fails():
    _, log = day_2("P2")
    words = "I suspect P7 because they voted for P3 on day 1."
    assert check("P2", words, [Cite("vote", 1, "P7", "P3")], log, 2) == (
        "cites a vote that never happened (vote on day 1 by P7 of P3)"
    )
    assert check("P2", words, [Cite("vote", 3, "P7", "P1")], log, 2).startswith("cites a vote that never happened")
    # the true ballot cited, the words still lie about it
    assert check("P2", words, [Cite("vote", 1, "P7", "P1")], log, 2) == "names P3 beyond what it cites"
    assert (
        check("P2", "I suspect P7 because they voted for P1 on day 1.", [Cite("vote", 1, "P7", "P1")], log, 2) is None
    )


def test_a_wolf_may_lie_about_its_own_role_and_night_never_about_a_public_vote():
    _, log = day_2("P2")  # P2 is a werewolf
    vote = Cite("vote", 1, "P7", "P1")
    lie_about_self = "I am the seer. My check found P7 is a werewolf. They voted for P1 on day 1."
    assert check("P2", lie_about_self, [vote], log, 2) is None
    assert check("P2", "I am a villager and P7 voted for P1 yesterday.", [vote], log, 2) is None
    lie_about_vote = "I am the seer. My check found P7 is a werewolf. P7 voted for P3 on day 1."
    assert check("P2", lie_about_vote, [vote], log, 2) == "names P3 beyond what it cites"
    assert check("P2", lie_about_vote, [vote, Cite("vote", 1, "P7", "P3")], log, 2).startswith(
        "cites a vote that never happened"
    )
    assert check("P2", "I suspect P4 because P4 voted for P6 on day 1.", [Cite("vote", 1, "P7", "P1")], log, 2) == (
        "names P6 beyond what it cites"
    )


def test_the_words_name_nothing_beyond_the_cites_and_the_speakers_own_statements():
    _, log = day_2("P2")
    death = Cite("death", 2, None, "P8")
    assert check("P2", "I suspect P7.", [], log, 2) == "cites nothing"
    assert check("P2", "I suspect P7. P8 died last night.", [death], log, 2) is None
    assert check("P2", "I suspect P7 because they voted with the crowd.", [death], log, 2) == (
        "speaks of a vote it does not cite"
    )
    assert check("P2", "I suspect P7, P3 said so.", [death], log, 2) == "names P3 beyond what it cites"
    assert check("P2", "I suspect P7 because of what was said.", [death], log, 2) == (
        "speaks of what was said without citing it"
    )
    assert check("P2", "I suspect P7 since day 1.", [death], log, 2) == "names day 1 beyond what it cites"
    assert check("P2", "I suspect P7, they claim the seer.", [death], log, 2) == "speaks of a claim it does not cite"
    assert check("P2", "I suspect P7. P8 was the witch.", [death], log, 2) == "names the witch beyond what it cites"
    assert check("P2", "I suspect P7 because they sound like a werewolf.", [death], log, 2) is None
    # the speaker's own stance names seats freely: an opinion, not a fact
    assert check("P2", "I trust P3. Vote P7 out, P7 is a werewolf.", [death], log, 2) is None


def test_a_death_stated_must_be_the_death_cited():
    """A real game (seed 102): "I suspect P3 because he died in the night before day 1.",
    citing that nobody died that night, passed the check before this rule."""
    _, log = day_2("P2")
    p5, p8 = Cite("death", 1, None, "P5"), Cite("death", 2, None, "P8")
    assert check("P2", "I suspect P7. P8 died last night.", [p8], log, 2) is None
    assert check("P2", "I suspect P7 because P5 was killed on day 1.", [p5], log, 2) is None
    assert check("P2", "I suspect P7 because P7 died on day 1.", [p5], log, 2) == (
        "says P7 died without citing that death"
    )
    s = scripted(
        ("P1", NightKill("P5")), ("P2", NightKill("P5")), ("P3", SeerCheck("P2")), ("P4", WitchAct(True, None))
    )
    log = views.view(s, "P6").events
    nobody = Cite("death", 1, None, None)
    assert nobody in public_facts(log)
    assert check("P6", "I suspect P3 because he died in the night before day 1.", [nobody], log, 1) == (
        "says someone died where its cite says nobody did"
    )
    assert check("P6", "I suspect P3 because nobody died in the night before day 1.", [nobody], log, 1) is None


def test_every_grounded_fallback_passes_the_check_over_100_code_games():
    speeches = 0
    for seed in range(1, 101):
        s = new_game(seed, 6 + seed % 3)
        while s.phase is not Phase.OVER:
            turn = next_turn(s)
            if turn is None:
                s = advance(s)
                continue
            b = beliefs(s, turn.seat)
            action = policy.choose(b, turn.tool, seed)
            if turn.tool.name == tools.SPEAK:
                log = views.view(s, turn.seat).events
                pos = policy.position(b, turn.tool, seed)
                text, cites = policy.grounded(pos, b, grounding.public_facts(log), turn.tool.max_chars, seed)
                assert check(turn.seat, text, cites, log, s.round) is None, (seed, turn.seat, text, cites)
                assert policy.conforms(text, pos, b, turn.tool) is None, (seed, text)
                turn.tool.to_action({"text": text, "cites": [c.to_json() for c in cites]})
                speeches += 1
            s = act(s, turn.seat, action)
    assert speeches > 1000
