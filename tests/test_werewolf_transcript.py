"""The user seat's transcript → action parser fails closed: never a guess, never a default."""

import pytest

from appliance.judge import tools
from appliance.judge.state import NightKill, SeerCheck, Speak, Vote, WitchAct
from appliance.judge.tools import ToolSpec
from appliance.judge.transcript import TranscriptRejected, normalise, parse

# P2 and P6 are dead: not among the targets
VOTE = ToolSpec(tools.VOTE, targets=("P1", "P3", "P4", "P5", "P7"), can_abstain=True)
KILL = ToolSpec(tools.NIGHT_KILL, targets=("P3", "P4", "P5"))
WITCH = ToolSpec(tools.WITCH_ACT, targets=("P1", "P3", "P5"), victim="P3", can_poison=True)


@pytest.mark.parametrize(
    "text,seat",
    [
        ("P3", "P3"),
        ("I vote for P3.", "P3"),
        ("player three", "P3"),
        ("Vote for seat 3.", "P3"),
        ("I vote for player 5. I vote for player 5.", "P5"),
        ("P-4", "P4"),
        ("Number seven!", "P7"),
        ("My vote goes to Player Four.", "P4"),
        ("I at that place 3", "P3"),  # CI: Whisper's "I attack player three"
        ("I attack play 3.", "P3"),  # CI again
    ],
)
def test_vote_targets(text, seat):
    assert parse(text, VOTE) == Vote(seat)


@pytest.mark.parametrize("text", ["I abstain.", "Skip", "none", "I vote for nobody", "No one.", "abstaining"])
def test_abstain_only_when_said(text):
    assert parse(text, VOTE) == Vote(None)


@pytest.mark.parametrize(
    "text",
    [
        "P1 is not",  # a negation, not an abstention
        "um, the quiet one",  # no seat marker: "one" is not P1
        "I vote for 3",  # a bare number is not a seat
        "player two",  # dead seat
        "seat 6",  # dead seat
        "P9",  # no such seat
        "P3 or P4",  # two seats
        "not P3",
        "I abstain, P3",  # both
        "",
        "for player for",  # homophones are never read as numbers
    ],
)
def test_vote_rejections(text):
    with pytest.raises(TranscriptRejected):
        parse(text, VOTE)


def test_night_tools_never_abstain():
    assert parse("Attack player five.", KILL) == NightKill("P5")
    assert parse("I check player 3.", ToolSpec(tools.SEER_CHECK, targets=("P3",))) == SeerCheck("P3")
    for text in ("nobody", "skip", "don't attack P4", "player one"):
        with pytest.raises(TranscriptRejected):
            parse(text, KILL)


@pytest.mark.parametrize(
    "text,action",
    [
        ("I save them, and I poison player five.", WitchAct(True, "P5")),
        ("No save, no poison.", WitchAct(False, None)),
        ("I do not save. I poison nobody.", WitchAct(False, None)),
        ("Save P3 and keep the poison", WitchAct(True, None)),
        ("I keep the antidote, poison P1", WitchAct(False, "P1")),
    ],
)
def test_witch(text, action):
    assert parse(text, WITCH) == action


@pytest.mark.parametrize(
    "text",
    [
        "I save them.",  # poison not mentioned
        "Poison player five.",  # save not mentioned
        "Save P1, no poison",  # only tonight's victim can be saved
        "I save them and poison player two",  # dead seat
        "Save. Don't poison P5.",  # negated poison with a seat
        "Save, poison P5, no poison",  # contradiction
        "save them, P5",  # a seat outside any clause
    ],
)
def test_witch_rejections(text):
    with pytest.raises(TranscriptRejected):
        parse(text, WITCH)


def test_witch_without_antidote_rejects_a_save():
    poison_only = ToolSpec(tools.WITCH_ACT, targets=("P1",), can_poison=True)
    assert parse("No poison.", poison_only) == WitchAct(False, None)
    with pytest.raises(TranscriptRejected):
        parse("I save them, no poison", poison_only)


def test_speech_is_the_transcript():
    speak = ToolSpec(tools.SPEAK, max_chars=21)
    assert parse("  I trust player  three. ", speak) == Speak("I trust player three.")
    assert parse("one two three four five six seven", speak) == Speak("one two three four")
    with pytest.raises(TranscriptRejected):
        parse("...", speak)


def test_normalise():
    assert normalise("I vote for P-3, Player Five!") == "i vote for p 3, player 5!"
    assert normalise("No one, the quiet one") == "nobody, the quiet 1"
