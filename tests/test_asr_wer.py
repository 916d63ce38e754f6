"""WER normalisation and counting (voice/asr/wer.py): the figures ``bench asr`` prints."""

from __future__ import annotations

import pytest

from appliance.bench.wer import normalise, wer, word_errors


@pytest.mark.parametrize(
    "text, words",
    [
        ("Set a timer for twelve minutes.", ["set", "a", "timer", "for", "1", "2", "minutes"]),
        ("SET a Timer, for 12 minutes!", ["set", "a", "timer", "for", "1", "2", "minutes"]),
        ("What's up?", ["whats", "up"]),
        ("Ok.", ["okay"]),
        ("one hundred and five", ["1", "0", "5"]),
        ("nineteen eighty four", ["1", "9", "8", "4"]),
        ("twenty one", ["2", "1"]),
        ("the twenty first of March", ["the", "21st", "of", "march"]),
        ("the twelfth", ["the", "12th"]),
        ("1,000 people", ["1", "0", "0", "0", "people"]),
        ("and then", ["and", "then"]),
        ("", []),
    ],
)
def test_normalise_lower_cases_drops_punctuation_and_writes_numbers_as_digits(text, words):
    assert normalise(text) == words


@pytest.mark.parametrize(
    "spoken, written",
    [
        ("My number is five five five, two three four, nine nine eight one.", "My number is 555-234-9981."),
        ("My number is five five five, two three four, nine nine eight one.", "my number is 5 5 5 2 3 4 9 9 8 1"),
        ("john dot smith at example dot com", "John.Smith@example.com"),
        ("Room four hundred and twelve.", "Room 412."),
        ("twenty twenty", "2020"),
        ("one thousand two hundred", "1200"),
        ("Flight two one five.", "flight 215"),
    ],
)
def test_spoken_and_written_forms_compare_equal(spoken, written):
    assert normalise(spoken) == normalise(written)
    assert word_errors(spoken, written) == (0, len(normalise(spoken)))


def test_word_errors_counts_substitutions_deletions_and_insertions():
    assert word_errors("call my sister", "call my sister") == (0, 3)
    assert word_errors("call my sister", "call her sister") == (1, 3)  # substitution
    assert word_errors("call my sister", "call sister") == (1, 3)  # deletion
    assert word_errors("call my sister", "please call my sister now") == (2, 3)  # insertions
    assert word_errors("Yes.", "") == (1, 1)  # a dropped one-word answer is a full error
    assert word_errors("", "hello") == (1, 0)


def test_wer_is_over_all_words_not_a_mean_of_utterances():
    pairs = [("yes", "no"), ("turn off the kitchen lights", "turn off the kitchen lights")]
    assert wer(pairs) == pytest.approx(1 / 6)  # a mean of per-utterance rates would say 0.5
    assert wer([]) == 0.0
