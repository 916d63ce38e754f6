"""Speech → claims: the phrasings our seats produce and common variants; nothing guessed."""

import pytest

from appliance.judge import claims
from appliance.judge.claims import CLEAR, SEER, SUSPECT, TRUST, WOLF


def said(text, speaker="P1"):
    return [(c.kind, c.target, c.checked) for c in claims.read(speaker, text, 1)]


@pytest.mark.parametrize(
    "text,expected",
    [
        # the simulated person's grammar (appliance.werewolf.seats.reason_grammar)
        ("I suspect P4 because they voted for P2.", [(SUSPECT, "P4", False)]),
        ("I trust P4 because they sound honest.", [(TRUST, "P4", False)]),
        ("I suspect P4 because they lie about being the seer.", [(SUSPECT, "P4", False)]),
        ("I am the seer. I suspect P4 because my check found a werewolf.", [(SEER, None, False), (WOLF, "P4", True)]),
        ("I am the seer. I trust P4 because my check cleared them.", [(SEER, None, False), (CLEAR, "P4", True)]),
        # the code policy's templates (appliance.judge.policy.template)
        (
            "I am the seer. My check found P3 is a werewolf. My check cleared P5 and P6. Vote P3 out.",
            [(SEER, None, False), (WOLF, "P3", True), (CLEAR, "P5", True), (CLEAR, "P6", True)],
        ),
        (
            "I am the real seer. My check found P2 is a werewolf. Vote P2 out.",
            [(SEER, None, False), (WOLF, "P2", True)],
        ),
        ("I suspect P5 because they were named a wolf by P3.", [(SUSPECT, "P5", False)]),
        ("I suspect P2 because P3 said: 'I am the seer.", [(SUSPECT, "P2", False)]),  # reported, in the reason
        # variants
        ("I'm the seer, and player three is a wolf!", [(SEER, None, False), (WOLF, "P3", False)]),
        ("As the seer I checked P-2: werewolf.", [(SEER, None, False), (WOLF, "P2", True)]),
        ("I checked P6 and they are not a werewolf.", [(SEER, None, False), (CLEAR, "P6", True)]),
        ("P5 is not a werewolf.", [(CLEAR, "P5", False)]),
        ("P5 is innocent. I believe P6.", [(CLEAR, "P5", False), (TRUST, "P6", False)]),
        ("Let's vote P7 out. P2 seems suspicious.", [(SUSPECT, "P7", False), (SUSPECT, "P2", False)]),
        ("I don't trust seat 4. Don't vote for P5.", [(SUSPECT, "P4", False), (TRUST, "P5", False)]),
        ("My vision showed P8.", [(SEER, None, False), (WOLF, "P8", True)]),
    ],
)
def test_phrasings(text, expected):
    assert said(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "P3 said P4 is a werewolf.",  # reported speech is P3's claim, not the speaker's
        "Hmm.",
        "Pass.",
        "I have nothing to add.",
        "I suspect nobody yet.",
    ],
)
def test_no_claim(text):
    assert said(text) == []


def test_the_speaker_claims_nothing_about_itself_but_the_seer():
    assert said("I trust P1. P1 is not a werewolf. I am the seer.", speaker="P1") == [(SEER, None, False)]


def test_claims_carry_speaker_and_day():
    (c,) = claims.read("P6", "I suspect P2.", 3)
    assert (c.speaker, c.round, c.kind, c.target) == ("P6", 3, SUSPECT, "P2")


def test_summary_says_a_speechs_claims_in_a_few_words_for_the_card():
    said = claims.read("P1", "I am the seer. My check found P3 is a werewolf. I trust P5. P2 seems suspicious.", 1)
    assert claims.summary(said) == "claims seer; P3 is a werewolf (checked); trusts P5; suspects P2"
    assert claims.summary(claims.read("P1", "P4 is not a werewolf.", 1)) == "P4 is not a werewolf"
    assert claims.summary(claims.read("P1", "Hmm.", 1)) == ""
