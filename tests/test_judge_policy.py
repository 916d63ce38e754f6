"""Role strategies in code: scripted scenarios and properties over seeded self-play."""

import json

import pytest
from judge_helpers import S, V, W, X, beliefs, code_games, gbnf_regex, partner_ballots, scripted

from appliance.judge import claims, grounding, policy, tools, views
from appliance.judge.beliefs import Evidence
from appliance.judge.events import Speech, VoteCast, WitchAction, WitchInfo, WolfProposal
from appliance.judge.grounding import Cite
from appliance.judge.policy import ACCUSE, CLAIM_SEER, COUNTER_CLAIM, DEFEND
from appliance.judge.rules import next_turn
from appliance.judge.state import IllegalAction, NightKill, Role, SeerCheck, Vote, WitchAct
from appliance.judge.tools import ToolSpec

# ROLES_8: P1, P2 werewolves; P3 seer; P4 witch; P5–P8 villagers
NIGHT_1 = (
    ("P1", NightKill("P5")),
    ("P2", NightKill("P5")),
    ("P3", SeerCheck("P2")),
    ("P4", WitchAct(save=True, poison=None)),
)


def turn_of(state, seat):
    turn = next_turn(state)
    assert turn is not None and turn.seat == seat, turn
    return turn.tool


def speak(state, seat):
    tool = turn_of(state, seat)
    b = beliefs(state, seat)
    return policy.position(b, tool, 7), policy.choose(b, tool, 7)


def test_seer_with_a_found_wolf_claims_accuses_and_votes_it_the_next_day():
    s = scripted(*NIGHT_1, ("P1", "I suspect P6."), ("P2", "I suspect P6."))
    pos, action = speak(s, "P3")
    assert (pos.stance, pos.target, pos.checks) == (CLAIM_SEER, "P2", (("P2", True),))
    said = claims.read("P3", action.text, 1)
    assert claims.Claim(1, "P3", claims.SEER) in said and claims.Claim(1, "P3", claims.WOLF, "P2", True) in said
    s = scripted(*NIGHT_1, *[(f"P{i}", "Hmm.") for i in range(1, 9)])
    vote = ToolSpec(tools.VOTE, targets=("P1", "P2", "P4", "P5", "P6", "P7", "P8"), can_abstain=True)
    assert policy.choose(beliefs(s, "P3"), vote, 7) == Vote("P2")


def test_seer_reveals_her_earlier_checks_with_the_wolf():
    night_2 = (
        ("P1", NightKill("P6")),
        ("P2", NightKill("P6")),
        ("P3", SeerCheck("P2")),
        ("P4", WitchAct(save=False, poison=None)),
    )
    day_1 = [(f"P{i}", "Hmm.") for i in range(1, 9)]
    votes = [(f"P{i}", Vote(None)) for i in range(1, 9)]
    s = scripted(
        ("P1", NightKill("P5")),
        ("P2", NightKill("P5")),
        ("P3", SeerCheck("P7")),
        ("P4", WitchAct(save=True, poison=None)),
        *day_1,
        *votes,
        *night_2,
    )
    assert s.round == 2 and next_turn(s).seat == "P2"  # day 2 starts one seat later
    s = scripted(
        ("P1", NightKill("P5")),
        ("P2", NightKill("P5")),
        ("P3", SeerCheck("P7")),
        ("P4", WitchAct(save=True, poison=None)),
        *day_1,
        *votes,
        *night_2,
        ("P2", "Hmm."),
    )
    pos, action = speak(s, "P3")
    assert pos.stance == CLAIM_SEER and pos.target == "P2" and pos.checks == (("P7", False), ("P2", True))
    said = claims.read("P3", action.text, 2)
    assert {(c.kind, c.target) for c in said} >= {(claims.SEER, None), (claims.WOLF, "P2"), (claims.CLEAR, "P7")}


def test_seer_without_a_find_keeps_quiet_until_accused():
    night = (
        ("P1", NightKill("P5")),
        ("P2", NightKill("P5")),
        ("P3", SeerCheck("P7")),
        ("P4", WitchAct(save=True, poison=None)),
    )
    quiet = scripted(*night, ("P1", "Hmm."), ("P2", "Hmm."))
    pos, action = speak(quiet, "P3")
    assert pos.stance == ACCUSE and not any(c.kind == claims.SEER for c in claims.read("P3", action.text, 1))
    pressed = scripted(*night, ("P1", "I suspect P3."), ("P2", "P3 is a werewolf."))
    pos, _ = speak(pressed, "P3")
    assert pos.stance == CLAIM_SEER and pos.checks == (("P7", False),)


def test_the_named_wolf_counter_claims_and_its_hidden_partner_votes_it_out():
    s = scripted(
        *NIGHT_1,
        ("P1", "Hmm."),
        ("P2", "Hmm."),
        ("P3", "I am the seer. My check found P2 is a werewolf. Vote P2 out."),
        ("P4", "I trust P3."),
        ("P5", "I suspect P2."),
        ("P6", "I suspect P2."),
        ("P7", "Hmm."),
        ("P8", "Hmm."),
    )
    vote = turn_of(s, "P1")

    def ballot(wolf):
        tool = ToolSpec(vote.name, tuple(t for t in s.seats if t != wolf), can_abstain=True)
        return policy.choose(beliefs(s, wolf), tool, 7)

    assert ballot("P1") == Vote("P2")  # the table believes P3: P2 goes out anyway, P1 buses it
    assert ballot("P2").target not in ("P1", "P3", "P5")  # not the partner, the believed seer or the saved seat
    speak = ToolSpec(tools.SPEAK, targets=("P1", "P3", "P4", "P5", "P6", "P7", "P8"))
    pos = policy.position(beliefs(s, "P2"), speak, 7)  # on the next day the named wolf counter-claims
    assert (pos.stance, pos.target) == (COUNTER_CLAIM, "P3")
    said = claims.read("P2", policy.template(pos), 2)
    assert {(c.kind, c.target) for c in said} >= {(claims.SEER, None), (claims.WOLF, "P3")}
    assert not any(c.target == "P1" for c in said)
    speak = ToolSpec(tools.SPEAK, targets=("P2", "P3", "P4", "P5", "P6", "P7", "P8"))
    pos = policy.position(beliefs(s, "P1"), speak, 7)  # its partner stays hidden
    assert pos.stance == ACCUSE and pos.target not in ("P2", "P3", "P5")


def test_a_wolf_the_table_suspects_most_claims_the_seer_and_its_partner_does_not():
    roles = (X, S, V, V, V, V, W, W)  # P7, P8 werewolves
    night = (("P7", NightKill("P3")), ("P8", NightKill("P3")), ("P2", SeerCheck("P4")), ("P1", WitchAct(True, None)))
    day = [("P1", "I suspect P8."), ("P2", "Hmm."), ("P3", "I suspect P8."), ("P4", "P8 is a werewolf.")]
    s = scripted(*night, *day, ("P5", "I suspect P8."), ("P6", "I suspect P8."), roles=roles)
    pos = policy.position(beliefs(s, "P7"), turn_of(s, "P7"), 7)
    assert pos.stance == ACCUSE and pos.target not in ("P8", "P3")  # never its partner nor its saved victim
    s = scripted(*night, *day, ("P5", "I suspect P8."), ("P6", "I suspect P8."), ("P7", "I suspect P5."), roles=roles)
    pos, action = speak(s, "P8")
    assert pos.stance == CLAIM_SEER and pos.target not in ("P7", "P3")
    said = claims.read("P8", action.text, 1)
    assert {(c.kind, c.target) for c in said} >= {(claims.SEER, None), (claims.WOLF, pos.target)}


def test_wolves_attack_a_claimed_seer_first_and_follow_a_partners_proposal():
    day = [
        ("P1", "Hmm."),
        ("P2", "Hmm."),
        ("P3", "I am the seer. My check cleared P6."),
        *[(f"P{i}", "Hmm.") for i in range(4, 9)],
    ]
    votes = [(f"P{i}", Vote(None)) for i in range(1, 9)]
    s = scripted(*NIGHT_1, *day, *votes)
    kill = turn_of(s, "P1")
    assert policy.choose(beliefs(s, "P1"), kill, 7) == NightKill("P3")
    s = scripted(*NIGHT_1, *day, *votes, ("P1", NightKill("P7")))
    assert policy.choose(beliefs(s, "P2"), turn_of(s, "P2"), 7) == NightKill("P7")


def test_witch_saves_on_night_1_and_poisons_nobody_without_evidence():
    s = scripted(("P1", NightKill("P5")), ("P2", NightKill("P5")), ("P3", SeerCheck("P6")))
    assert policy.choose(beliefs(s, "P4"), turn_of(s, "P4"), 7) == WitchAct(save=True, poison=None)


def test_witch_poisons_the_wolf_a_credible_seer_named_when_it_survives_the_vote():
    day = [
        ("P1", "Hmm."),
        ("P2", "Hmm."),
        ("P3", "I am the seer. My check found P2 is a werewolf."),
        *[(f"P{i}", "Hmm.") for i in range(4, 9)],
    ]
    votes = [(f"P{i}", Vote(None)) for i in range(1, 9)]  # nobody voted P2 out
    s = scripted(*NIGHT_1, *day, *votes, ("P1", NightKill("P6")), ("P2", NightKill("P6")), ("P3", SeerCheck("P1")))
    tool = turn_of(s, "P4")
    assert tool.victim is None and tool.can_poison
    assert policy.choose(beliefs(s, "P4"), tool, 7) == WitchAct(save=False, poison="P2")


def test_witch_never_poisons_on_a_plain_accusation():
    day = [
        ("P1", "P6 is a werewolf."),
        ("P2", "I suspect P6."),
        ("P3", "I suspect P6."),
        *[(f"P{i}", "I suspect P6.") for i in range(4, 9) if i != 6],
        ("P6", "Hmm."),
    ]
    day.sort(key=lambda x: int(x[0][1:]))
    votes = [(f"P{i}", Vote(None)) for i in range(1, 9)]
    s = scripted(*NIGHT_1, *day, *votes, ("P1", NightKill("P7")), ("P2", NightKill("P7")), ("P3", SeerCheck("P1")))
    assert policy.choose(beliefs(s, "P4"), turn_of(s, "P4"), 7).poison is None


def test_villagers_follow_the_first_claimant_over_the_counter_claim():
    day = [
        ("P1", "Hmm."),
        ("P2", "Hmm."),
        ("P3", "I am the seer. My check found P2 is a werewolf."),
        ("P4", "Hmm."),
        ("P5", "Hmm."),
        ("P6", "Hmm."),
        ("P7", "Hmm."),
        ("P8", "Hmm."),
    ]
    s = scripted(*NIGHT_1, *day[:2])
    s = scripted(
        *NIGHT_1,
        *day[:3],
        ("P4", "Hmm."),
        ("P5", "Hmm."),
        ("P6", "Hmm."),
        ("P7", "I am the seer. My check found P3 is a werewolf."),
        ("P8", "Hmm."),
    )
    vote = ToolSpec(tools.VOTE, targets=tuple(t for t in s.seats if t != "P8"), can_abstain=True)
    assert policy.choose(beliefs(s, "P8"), vote, 7) == Vote("P2")
    pos = policy.position(beliefs(s, "P6"), ToolSpec(tools.SPEAK, targets=("P1", "P2", "P3", "P4", "P5", "P7")), 7)
    assert pos.stance in (ACCUSE, DEFEND) and pos.target == "P2"
    assert pos.evidence and pos.evidence[0].seat == "P3"  # cites the seer's claim


def test_every_choice_is_checked_and_nothing_illegal_is_guessed():
    s = scripted(("P1", NightKill("P5")))
    only_partner = ToolSpec(tools.NIGHT_KILL, targets=("P1",))
    with pytest.raises(IllegalAction):
        policy.choose(beliefs(s, "P2"), only_partner, 7)
    nobody = ToolSpec(tools.VOTE, targets=("P2",), can_abstain=False)
    with pytest.raises(IllegalAction):
        policy.choose(beliefs(s, "P1"), nobody, 7)  # a werewolf's only choice is its partner


def test_conforms_accepts_wordings_of_the_position_and_rejects_others():
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."))
    tool = turn_of(s, "P3")
    b = beliefs(s, "P3")
    pos = policy.position(b, tool, 7)
    assert policy.conforms("As the seer I checked P2 and they are a werewolf. Vote P2 out!", pos, b, tool) is None
    assert policy.conforms(policy.template(pos), pos, b, tool) is None
    assert policy.conforms("I suspect P2.", pos, b, tool) == "does not claim the seer"
    assert policy.conforms("I am the seer. I trust P6.", pos, b, tool) == "does not accuse P2"
    assert "not at the table" in policy.conforms("I am the seer. P9 is a werewolf. P2 is a wolf.", pos, b, tool)
    wolf = beliefs(s, "P1")
    wpos = policy.Position(ACCUSE, "P6")
    assert policy.conforms("I suspect P6. I trust P2.", wpos, wolf, tool) == "names a partner"
    assert policy.conforms("I am the seer. I suspect P6.", wpos, wolf, tool) == "claims the seer without that stance"


def test_brief_states_the_position_without_private_words_about_others():
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."))
    b = beliefs(s, "P3")
    text = policy.brief(policy.position(b, turn_of(s, "P3"), 7), b)
    assert text.startswith("Your position today: say you are the seer")
    assert "Your check: P2 is a werewolf." in text and "Your target: P2." in text
    wolf = beliefs(s, "P1")
    text = policy.brief(policy.Position(ACCUSE, "P6"), wolf)
    reads = text.split("Your reads, most doubtful first: ")[1]
    assert "P2" not in reads  # a werewolf is never nudged towards its partner
    # a small model's brief: no reads, only the sentence that makes the cited claim
    s = scripted(
        *NIGHT_1,
        ("P1", "Hmm."),
        ("P2", "Hmm."),
        ("P3", "I am the seer. My check found P2 is a werewolf."),
        ("P4", "Hmm."),
    )
    b = beliefs(s, "P5")
    pos = policy.position(b, turn_of(s, "P5"), 7)
    short = policy.brief(pos, b, reads=False, short_quotes=True)
    assert 'P3 said: "My check found P2 is a werewolf."' in short and "I am the seer" not in short
    assert "Your reads" not in short and "I am the seer" in policy.brief(pos, b)
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."), ("P3", "Hmm."), ("P4", "I suspect P6 because they hid."))
    b = beliefs(s, "P5")
    pos = policy.Position(
        ACCUSE, "P6", (policy.Evidence("claim", 1, "P4", "P6", claims.Claim(1, "P4", claims.SUSPECT, "P6")),)
    )
    assert "Evidence: on day 1 P4 accused P6." in policy.brief(pos, b, reads=False, short_quotes=True)


# --- properties over seeded self-play -------------------------------------------------------


def test_a_wolf_never_proposes_or_accuses_its_partner_and_votes_it_out_only_when_lost_over_1000_games():
    votes = buses = decisive = 0
    for final, *_ in code_games():
        wolves = set(final.seats_with(Role.WEREWOLF))
        for e in final.events:
            match e.what:
                case VoteCast(seat=seat) if seat in wolves:
                    votes += 1
                case Speech(seat=seat, text=text) if seat in wolves:
                    said = claims.read(seat, text, e.round)
                    assert not any(c.target in wolves and c.kind in (claims.WOLF, claims.SUSPECT) for c in said), (
                        final.seed,
                        e,
                    )
        proposals = {}
        for e in final.events:
            if isinstance(e.what, WolfProposal):
                proposals.setdefault(e.round, set()).add(e.what.target)
        assert all(len(t) == 1 for t in proposals.values()), final.seed  # the pack agrees every night
        n, d = partner_ballots(final)
        buses, decisive = buses + n, decisive + d
    assert votes > 3000
    # bussing: a wolf votes for its partner when the village votes it out anyway — its ballot
    # (a prediction before the secret ballots are revealed) almost never decides the vote
    assert buses > 100 and decisive <= 0.01 * buses, (buses, decisive)


def test_the_witch_never_poisons_without_evidence_over_1000_games():
    """Independent oracle on the public record before the poisoning night: a seat that
    claimed the seer named the target a werewolf, or the target claimed the seer against
    another claimant, or the target named the Witch or her saved seat a werewolf."""
    poisons = 0
    for final, *_ in code_games():
        witch = final.seats_with(Role.WITCH)[0]
        for i, e in enumerate(final.events):
            if not isinstance(e.what, WitchAction) or not e.what.poison:
                continue
            poisons += 1
            target = e.what.poison
            said = [
                c
                for x in final.events[:i]
                if isinstance(x.what, Speech)
                for c in claims.read(x.what.seat, x.what.text, x.round)
            ]
            claimants = {c.speaker for c in said if c.kind == claims.SEER}
            clear = {witch} | {x.what.victim for x in final.events[:i] if isinstance(x.what, WitchInfo)}
            named_by_claimant = any(
                c.kind == claims.WOLF and c.target == target and c.speaker in claimants for c in said
            )
            counter = target in claimants and len(claimants) > 1
            caught = any(c.speaker == target and c.kind == claims.WOLF and c.target in clear for c in said)
            assert named_by_claimant or counter or caught, (final.seed, target)
    # a named werewolf counter-claims and its partner stays hidden, so hard evidence is rare:
    # 7 poisons in these games (42 when the werewolves' partner counter-claimed instead)
    assert poisons > 5


def test_template_speeches_conform_to_their_positions_over_1000_games():
    games = code_games()
    assert sum(len(g.briefs) for g in games) > 10_000
    assert [m for g in games for m in g.misfits] == []


def compact(args):
    """A speech's arguments as the model writes them (citing nothing unless ``cites`` is given)."""
    return json.dumps({"cites": args.get("cites", []), "text": args["text"]}, separators=(",", ":"))


def test_speech_grammar_starts_with_the_claim_and_names_no_partner():
    s = scripted(*NIGHT_1, ("P1", "Hmm."), ("P2", "Hmm."))
    tool = turn_of(s, "P3")
    seer = beliefs(s, "P3")
    pos = policy.position(seer, tool, 7)
    g = gbnf_regex(policy.speech_grammar(pos, seer, tool))
    ok = "I am the seer. My check found P2 is a werewolf. I checked P2 last night, so vote P2 out."
    assert g.fullmatch(compact({"text": ok}))
    assert not g.fullmatch(compact({"text": ok + " P1 too maybe."}))  # a seat neither checked nor cited
    assert policy.conforms(ok, pos, seer, tool) is None
    assert not g.fullmatch(compact({"text": "I suspect P6 because they are quiet."}))  # no claim
    assert not g.fullmatch(compact({"text": ok + " P9 too."}))  # no such seat
    wolf = beliefs(s, "P1")
    wpos = policy.Position(ACCUSE, "P6")
    g = gbnf_regex(policy.speech_grammar(wpos, wolf, tool, max_chars=80))
    assert g.fullmatch(compact({"text": "I suspect P6 because they are too quiet."}))
    assert not g.fullmatch(compact({"text": "I suspect P6 because they voted for P4."}))  # P4: not cited
    assert not g.fullmatch(compact({"text": "I suspect P6 because they voted for P2."}))  # the partner
    assert not g.fullmatch(compact({"text": "I suspect P6 because " + "x" * 80}))  # too long
    # whatever it allows is a legal speech
    longest = "I suspect P6 because " + "P6" * ((80 - 21) // 2)
    assert g.fullmatch(compact({"text": longest})) and tool.to_action({"text": longest, "cites": []})
    empty = policy.Position(ACCUSE, None)
    g = gbnf_regex(policy.speech_grammar(empty, seer, tool))
    assert g.fullmatch('{"cites":[],"text":"Nothing yet."}') and not g.fullmatch('{"cites":[],"text":" "}')
    one = gbnf_regex(policy.speech_grammar(pos, seer, tool, max_chars=120, one_sentence=True))
    assert one.fullmatch(compact({"text": "I am the seer. My check found P2 is a werewolf. Vote P2 out today!"}))
    assert not one.fullmatch(compact({"text": "I am the seer. My check found P2 is a werewolf. Vote. P2 out."}))
    assert not one.fullmatch(compact({"text": "I am the seer. My check found P2 is a werewolf. Vote P2 out"}))


def test_speech_grammar_cites_one_offered_fact_and_the_fallback_cites_what_it_says():
    quiet = [(f"P{i}", "Hmm.") for i in range(1, 5)]
    s = scripted(*NIGHT_1, *quiet, ("P5", "I suspect P6."), ("P6", "I trust P4."), ("P7", "Hmm."))
    tool = turn_of(s, "P8")
    b = beliefs(s, "P8")
    facts = grounding.public_facts(views.view(s, "P8").events)
    accusation, defence = Cite("accusation", 1, "P5", "P6"), Cite("defence", 1, "P6", "P4")
    assert {accusation, defence, Cite("death", 1, None, None)} <= set(facts)
    pos = policy.Position(ACCUSE, "P6")  # no evidence of its own: the latest thing P6 did comes first
    offer = policy.offered(pos, b, facts)
    assert offer[0] == defence and set(offer) == set(facts)
    g = gbnf_regex(policy.speech_grammar(pos, b, tool, offer=offer))
    words = "I suspect P6 because they defended P4."
    assert g.fullmatch(compact({"text": words, "cites": [defence.to_json()]}))
    assert not g.fullmatch(compact({"text": words, "cites": [defence.to_json(), accusation.to_json()]}))
    assert not g.fullmatch(compact({"text": words}))  # a speech cites something
    assert not g.fullmatch(compact({"text": words, "cites": [Cite("vote", 1, "P6", "P4").to_json()]}))
    # the only other digits: the cite's day, once
    on_day = {"text": "I suspect P6 because they defended P4 on day 1.", "cites": [defence.to_json()]}
    assert g.fullmatch(compact(on_day))
    assert not g.fullmatch(compact({**on_day, "text": "I suspect P6 because they defended P4 on day 2."}))
    assert not g.fullmatch(compact({**on_day, "text": "I suspect P6 because on day 1 they defended P4 on day 1."}))
    assert not g.fullmatch(compact({**on_day, "text": "I suspect P6 because they defended P4 3 times."}))
    # the first fact offered is the one cited; the words name only its seats and the target
    assert not g.fullmatch(compact({"text": "I suspect P6 because P5 accused them.", "cites": [accusation.to_json()]}))
    assert not g.fullmatch(compact({"text": "I suspect P6 because they defended P5.", "cites": [defence.to_json()]}))
    # a werewolf is offered nothing that names its partner
    wolf = beliefs(s, "P2")
    assert all("P1" not in (c.by, c.target) for c in policy.offered(pos, wolf, facts))
    # the fallback: the template, then the fact it cites
    text, cites = policy.grounded(pos, b, facts, salt=7)
    assert text.endswith(" On day 1 P6 defended P4.") and cites == (defence,)
    assert grounding.check("P8", text, cites, views.view(s, "P8").events, 1) is None
    text, cites = policy.grounded(
        policy.Position(ACCUSE, "P5", (Evidence("claim", 1, "P5", "P6", claims.read("P5", "I suspect P6.", 1)[0]),)),
        b,
        facts,
    )
    assert (text, cites) == ("I suspect P5 because they accused P6.", (accusation,))
