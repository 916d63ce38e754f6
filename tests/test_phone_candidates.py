"""Picking one of the page's close matches from what the person said: no model, no audio."""

import pytest

from appliance.phone_agent.candidates import pick, question

PARIS = ("Paris, France", "Paris, Texas, United States", "Paris, Ontario, Canada")


@pytest.mark.parametrize(
    "said, picked",
    [
        ("Paris, France, please.", "Paris, France"),
        ("France", "Paris, France"),
        ("The one in Texas.", "Paris, Texas, United States"),
        ("Canada, Ontario", "Paris, Ontario, Canada"),
        ("the second one", "Paris, Texas, United States"),
        ("The last one.", "Paris, Ontario, Canada"),
        ("Paris", None),
        ("I don't know", None),
        ("the United States one or Canada", None),
    ],
)
def test_the_pick_is_the_candidate_named_by_what_sets_it_apart(said, picked):
    assert pick(said, PARIS) == picked


def test_filler_words_set_nothing_apart():
    town = ("Manchester, United Kingdom", "Manchester-by-the-Sea, Massachusetts, United States")
    assert pick("the one by the sea", town) == town[1]
    assert pick("the one in the", town) is None


def test_the_question_parts_candidates_that_hold_commas():
    assert question("Town or city", PARIS[:2]) == (
        "The page offers several for town or city: Paris, France; or "
        "Paris, Texas, United States. Which one do you mean?"
    )
    many = tuple(f"Springfield, State {i}" for i in range(7))
    assert question("City:", many).endswith("Springfield, State 4 or another one. Which one do you mean?")
