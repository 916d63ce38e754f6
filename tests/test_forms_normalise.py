"""Spoken → written normalisation on what Whisper actually writes for Piper speech."""

from __future__ import annotations

import pytest

from appliance.phone_agent import normalise as n


@pytest.mark.parametrize("said, want", [
    ("Alice Alice Alice Alice Alice Alice", "Alice"),
    ("It's Markin. It's Markin. It's Mark", "It's Markin."),
    ("My first name is Emma. My first name is Emma. My first name", "My first name is Emma."),
    ("yes yes yes yes yes yes", "yes"),
    ("Plus 4 4 7 7 0 0 9 0 0 1 2 3", "Plus 4 4 7 7 0 0 9 0 0 1 2 3"),
    ("No, that's wrong.", "No, that's wrong."),
    ("Yes, that's right. Yes, that right. Yes. That's", "Yes, that's right."),
    ("My last name is Miller. My last name as Miller. My name is Miller", "My last name is Miller."),
    ("No, it's Miller. It's spelled M I L L E R.", "No, it's Miller. It's spelled M I L L E R."),
])
def test_clean_collapses_asr_repetition_only(said, want):
    assert n.clean(said) == want


@pytest.mark.parametrize("said, want", [
    ("My phone number is plus 4 4 7 7 0 0 9 0 0 1 2 3", "+447700900123"),
    ("plus four four, seven seven double zero, nine oh oh, one two three", "+447700900123"),
    ("It's 07700 900123.", "07700900123"),
    ("zero seven seven zero zero nine zero zero one two three", "07700900123"),
    ("My number is twenty three.", None),
])
def test_phone(said, want):
    assert n.phone(said) == want


@pytest.mark.parametrize("said, want", [
    ("My email is dmiller at example dot com.", "dmiller@example.com"),
    ("My name is Emma Dot Johnson at example.org.", "emma.johnson@example.org"),
    ("It's d m i l l e r at example dot com", "dmiller@example.com"),
    ("emma underscore j at mail dot co dot uk", "emma_j@mail.co.uk"),
    ("I don't have one.", None),
])
def test_email(said, want):
    assert n.email(said) == want


@pytest.mark.parametrize("said, want", [
    ("I was born on the 14th of March, 1990.", "1990-03-14"),
    ("on the 2nd of June 2027.", "2027-06-02"),
    ("The fourteenth of March, nineteen ninety.", "1990-03-14"),
    ("June the second, twenty twenty seven", "2027-06-02"),
    ("the twenty first of may two thousand and five", "2005-05-21"),
    ("14/03/1990", "1990-03-14"),
    ("1990-03-14", "1990-03-14"),
    ("the 31st of February 1990", None),
    ("next Tuesday", None),
])
def test_date(said, want):
    assert n.date(said) == want


def test_numeric_date_order():
    assert n.date("03/04/1990", "MDY") == "1990-03-04" and n.date("03/04/1990", "DMY") == "1990-04-03"


@pytest.mark.parametrize("said, want", [
    ("My first name is David.", "David"),
    ("It's Miller.", "Miller"),
    ("D-A-V-I-D", "David"),
    ("Miller, spelled M I L L E R.", "Miller"),
    ("Yes, it's Johnson", "Johnson"),
    ("I live in Manchester.", "Manchester"),
    ("Yes, please submit it.", None),
])
def test_name(said, want):
    assert n.name(said) == want


@pytest.mark.parametrize("said, want", [
    ("My passport number is 512 873 946", "512873946"),
    ("It's P, 123, 45678.", "P12345678"),
    ("My postcode is M1, 1aE.", "M11AE"),
    ("K four seven, one one eight, six three nine", "K47118639"),
    ("double five one two", "5512"),
])
def test_code(said, want):
    assert n.code(said) == want


@pytest.mark.parametrize("said, want", [
    ("My username is D Miller 84.", "dmiller84"),
    ("emma underscore j eighty five", "emma_j85"),
])
def test_username(said, want):
    assert n.username(said) == want


@pytest.mark.parametrize("said, want", [
    ("Yes, that's right.", True), ("Yeah.", True), ("Correct.", True), ("Yes, I accept.", True),
    ("No.", False), ("No, that's wrong.", False), ("That's not right.", False), ("Hmm, what?", None),
])
def test_yes_no(said, want):
    assert n.yes_no(said) == want


def test_choice():
    seats = ("Window", "Aisle", "Middle")
    assert n.choice("A window seat, please.", seats) == "Window"
    assert n.choice("I'd like to fly to New York.", ("York", "New York", "Paris")) == "New York"
    assert n.choice("I'm British.", ("United Kingdom", "Ireland")) == "United Kingdom"
    assert n.choice("Somewhere warm.", ("United Kingdom", "Ireland")) is None
    assert n.choice("I'd like to fly to roam.", ("Lisbon", "Madrid", "Paris", "Rome")) == "Rome"  # by sound
    assert n.soundex("Robert") == n.soundex("Rupert") == "R163"
