"""A spoken recap: recognised only as a whole question, never parsed as a move, and answered
from the asking seat's own view only (the isolation audit over 1,000 seeded games)."""

import random

import pytest
from judge_helpers import scripted

from appliance.judge import isolation, recap, selfplay, tools, views
from appliance.judge.recap import Question
from appliance.judge.state import NightKill, Phase, SeerCheck, Speak, Vote, WitchAct
from appliance.judge.tools import ToolSpec
from appliance.judge.transcript import TranscriptRejected, parse

ASKED = [
    ("What happened last night?", Question("night")),
    ("Who died?", Question("night")),
    ("Um, did anyone die last night?", Question("night")),
    ("Who voted for whom?", Question("votes")),
    ("Who voted for player three?", Question("votes")),
    ("Okay, how did everyone vote?", Question("votes")),
    ("What were the ballots?", Question("votes")),
    ("Who claimed what?", Question("claims")),
    ("Who is claiming to be the seer?", Question("claims")),
    ("Can you tell me what player three said?", Question("claims", "P3")),
    ("What did P-5 say?", Question("claims", "P5")),
    ("Recap, please.", Question("table")),
    ("So, what happened so far?", Question("table")),
    ("Where are we?", Question("table")),
    ("Catch me up.", Question("table")),
    ("What's my role again?", Question("table")),
]


@pytest.mark.parametrize("text,question", ASKED)
def test_a_recap_question_is_recognised(text, question):
    assert recap.request(text) == question


@pytest.mark.parametrize(
    "text",
    [
        "I vote for player two.",
        "Attack player three.",
        "I abstain.",
        "I save, no poison.",
        "I check player five.",
        "I think player two is lying.",
        "What happened last night? I think P3 is lying.",  # a speech that asks the table: still a speech
        "Who died last night matters less than who lies. I suspect P4.",
        "um, the quiet one",
        "",
    ],
)
def test_moves_and_speeches_are_no_recap_question(text):
    assert recap.request(text) is None


TOOLS = [
    ToolSpec(tools.SPEAK, targets=("P1", "P3", "P5")),
    ToolSpec(tools.VOTE, targets=("P1", "P3", "P5"), can_abstain=True),
    ToolSpec(tools.NIGHT_KILL, targets=("P3", "P5")),
    ToolSpec(tools.SEER_CHECK, targets=("P1", "P3", "P5")),
    ToolSpec(tools.WITCH_ACT, targets=("P1", "P3", "P5"), victim="P3", can_poison=True),
]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
@pytest.mark.parametrize("text", [text for text, _ in ASKED])
def test_a_recap_question_is_never_parsed_as_a_move(tool, text):
    """Not as a speech (any words would be one), and "who voted for player three?" not as a vote for P3."""
    with pytest.raises(TranscriptRejected, match="recap"):
        parse(text, tool)


# P1, P2 werewolves; P3 seer; P4 witch; P5–P8 villagers (judge_helpers.ROLES_8)
NIGHT_1 = [("P1", NightKill("P5")), ("P2", NightKill("P5")), ("P3", SeerCheck("P1")), ("P4", WitchAct(False, None))]
DAY_1 = [
    ("P1", "I suspect P6."),
    ("P2", "Hmm."),
    ("P3", "I am the seer. My check found P1 is a werewolf. Vote P1 out."),
    ("P4", "I trust P3."),
    ("P6", "Pass."),
    ("P7", "P3 is lying."),
    ("P8", "I suspect P1."),
]
VOTE_1 = [("P1", Vote("P3")), ("P2", Vote("P3")), ("P3", Vote("P1")), ("P4", Vote("P1")), ("P6", Vote("P1"))]
ASK = {kind: Question(kind) for kind in ("night", "votes", "claims", "table")}


def test_last_night_is_the_seats_own_lines_of_that_night_and_the_dawn():
    s = scripted(*NIGHT_1)
    said = {seat: recap.answer(ASK["night"], views.view(s, seat)) for seat in ("P1", "P3", "P4", "P8")}
    dawn = "Dawn: P5 died during the night."
    assert said["P8"] == f"Last night was night 1. {dawn}"
    assert said["P3"] == f"Last night was night 1. Your check: P1 is a werewolf. {dawn}"
    assert said["P4"] == (
        "Last night was night 1. The werewolves attacked P5 tonight. You kept your antidote. You poisoned nobody. "
        + dawn
    )
    assert said["P1"] == (
        "Last night was night 1. Werewolf P1 proposes to attack P5. Werewolf P2 proposes to attack P5. "
        f"The werewolves attack P5 tonight. {dawn}"
    )
    assert recap.answer(ASK["night"], views.view(scripted(), "P8")) == "No night has ended yet."


def test_ballots_stay_secret_until_all_are_in():
    during = scripted(*NIGHT_1, *DAY_1, *VOTE_1)  # P7 and P8 have not voted yet
    assert during.phase is Phase.VOTE
    assert recap.answer(ASK["votes"], views.view(during, "P3")) == (
        "No ballots have been revealed yet. You voted for P1. The other ballots are revealed once everyone has voted."
    )
    assert recap.answer(ASK["votes"], views.view(during, "P8")) == (
        "No ballots have been revealed yet. Voting is under way: the ballots are revealed once everyone has voted."
    )
    after = scripted(*NIGHT_1, *DAY_1, *VOTE_1, ("P7", Vote(None)), ("P8", Vote("P1")))
    assert recap.answer(ASK["votes"], views.view(after, "P8")) == (
        "Vote 1. Ballots: P1 for P3, P2 for P3, P3 for P1, P4 for P1, P6 for P1, P7 abstained, P8 for P1. "
        "P1 was voted out with 4 votes."
    )


def test_claims_are_quoted_as_said_and_one_seat_is_its_last_speech():
    s = scripted(*NIGHT_1, *DAY_1)
    v = views.view(s, "P8")
    assert recap.answer(ASK["claims"], v) == (  # P2 and P6 claimed nothing
        'P1 said: "I suspect P6." P3 said: "I am the seer. My check found P1 is a werewolf. Vote P1 out." '
        'P4 said: "I trust P3." P7 said: "P3 is lying." P8 said: "I suspect P1."'
    )
    assert recap.answer(Question("claims", "P2"), v) == 'P2 said: "Hmm."'
    assert recap.answer(Question("claims", "P5"), v) == "P5 has not spoken yet."
    assert recap.answer(ASK["claims"], views.view(scripted(*NIGHT_1), "P8")) == "Nobody has claimed anything yet."


def test_the_table_says_where_the_game_stands_and_the_seats_own_role():
    s = scripted(*NIGHT_1, *DAY_1, *VOTE_1, ("P7", Vote(None)), ("P8", Vote("P1")))
    tail = "Dawn: P5 died during the night. P1 was voted out with 4 votes."
    assert recap.answer(ASK["table"], views.view(s, "P8")) == (
        f"Night 2. Alive: P2, P3, P4, P6, P7, P8. Dead: P1, P5. You are P8, the villager. {tail}"
    )
    assert recap.answer(ASK["table"], views.view(s, "P2")) == (
        f"Night 2. Alive: P2, P3, P4, P6, P7, P8. Dead: P1, P5. You are P2, the werewolf. Werewolf team: P1, P2. {tail}"
    )


#: speeches with claims, a quote and night words: the recap quotes them, the audit strips quotes
SPEECHES = (
    "I am the seer. My check found P3 is a werewolf. Vote P3 out.",
    "I trust P2. P4 is not a werewolf.",
    "P2 attacked nobody, I saved P4 with my potion.",
    'He said "P1 is the witch". I suspect P5.',
    "Hmm.",
)


def quick(view, tool, seed):
    """A fast legal policy for :func:`selfplay.states`: random targets, speeches from :data:`SPEECHES`."""
    rng = random.Random(f"{seed}:{view.seat}:{len(view.events)}")
    if tool.name == tools.SPEAK:
        return Speak(rng.choice(SPEECHES))
    return selfplay.random_action(tool, rng)


def _asked(seed: int):
    """``(state, kinds)``: the moments of one game (6–8 seats) at which an answer of those
    kinds changes, each asked only those: after each dawn, the night; in the last state of a
    vote (every ballot cast, none revealed) and once they are revealed, the votes; at the
    end, everything (every seat's last claim, the table, the last night and vote)."""
    last = None
    for s in selfplay.states(seed, 6 + seed % 3, quick):
        if last is not None and s.phase is not last.phase:
            if s.phase is Phase.DAY:
                yield s, ("night",)
            elif last.phase is Phase.VOTE:
                yield last, ("votes",)
                yield s, ("votes",)
        last = s
    yield last, tuple(ASK)


def test_the_recap_answers_from_the_asking_seats_view_only_over_1000_games():
    """Every seat asks every kind of question whenever its answer changes; the isolation
    audit (from the roles alone, not the views' audiences) finds no other seat's private
    fact in any answer. Each answer is also what the seat's own text log gives."""
    answers = 0
    for seed in range(1, 1001):
        texts: set[tuple[str, str]] = set()
        for s, kinds in _asked(seed):
            for seat in s.seats:
                v = views.view(s, seat)
                texts.update((seat, recap.answer(ASK[kind], v)) for kind in kinds)
        texts.update((seat, recap.answer(Question("claims", seat), views.view(s, seat))) for seat in s.seats)
        n, found = isolation.count_violations(sorted(texts), s)
        assert n == 0, (seed, found)
        answers += len(texts)
        if seed <= 20:  # the view rebuilt from its lines (what the seat was sent) answers the same
            for seat in s.seats:
                v = views.view(s, seat)
                rebuilt = views.from_lines(seat, v.lines())
                assert all(recap.answer(q, rebuilt) == recap.answer(q, v) for q in ASK.values())
    assert answers > 50_000
