"""Spelling as people say it, decoded from transcript strings (many as Whisper tiny.en wrote
Piper's speech); the read-back of a spelled value. No model."""

from __future__ import annotations

import pytest

from appliance.phone_agent import spelling
from appliance.simulate import hearing


@pytest.mark.parametrize(
    "said, want",
    [
        # letters, as Whisper writes them
        ("S, I, O, B, H, A, N.", "Siobhan"),
        ("S-I-O-B-H-A-N.", "Siobhan"),
        ("s.i.o.b.h.a.n", "Siobhan"),
        ("N g u y e n.", "Nguyen"),
        ("W. Oh, J. C. I. K.", "Wojcik"),
        ("ess, eye, oh, bee, aitch, ay, en", "Siobhan"),
        ("SIOB HAN.", "Siobhan"),
        # "double", symbols, case
        ("Oh, apostrophe n e i double l.", "O'Neill"),
        ("O apostrophe N E I L L", "O'Neill"),
        ("M C capital D O N A L D", "McDonald"),
        ("W O J C I K dash N O W A K", "Wojcik-Nowak"),
        ("D, E, space, L, A, space, C, R, U, Z", "De La Cruz"),
        # words for letters
        ("Sierra, India, Oscar, Bravo, Hotel, Alpha, November.", "Siobhan"),
        ("Oscar, apostrophe, November, Echo, India, Lima, Lima.", "O'Neill"),
        ("Whiskey, Oscar, Juliet, Charlie, India, Kilo, dash, November, Oscar, Whiskey, Alpha, Kilo", "Wojcik-Nowak"),
        (
            "S as in Sierra, I as in India, O as in Oscar, B as in Bravo, H as in Hotel, A as in Alpha, N as in November",
            "Siobhan",
        ),
        (
            "S. is in Sierra, I is in India. Oh, is an Oscar, B. is in Bravo, H. is in Hotel, I. is in Alpha, "
            "N. is in November.",
            "Siobhan",
        ),  # Whisper's "as in"; the words decide ("I. is in Alpha" is an A)
        ("and for Mike, a for Apple, are for Romeo.", "Mar"),
        ("A for apple, D for dog, A for apple", "Ada"),
        (
            "S.S. and Sierra, Eisenhower, India, O.S. in Oskar, B.S. In Bravo, H.S. And Hotel, Alpha, November.",
            "Siobhan",
        ),  # bare letters beside the spelling words are noise
        ("double Lima, Oscar, Yankee, Delta", "Lloyd"),
        ("G, for Golf, Romeo, Tulu, Echo, Golf, Oscar, Romeo, Thulu", "Grzegorz"),  # bench: tiny.en's "Zulu"
        # lead-ins and the word before its spelling
        ("It's spelled S I O B H A N.", "Siobhan"),
        ("My last name is O'Neill, spelled O apostrophe N E I double L.", "O'Neill"),
        ("Siobhan, S I O B H A N.", "Siobhan"),
        ("The letters are N G U Y E N.", "Nguyen"),
        ("Victor, V I C T O R.", "Victor"),
    ],
)
def test_names(said, want):
    assert spelling.decode(said, "name") == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("Kilo, four seven one, one eight six, three nine.", "K47118639"),
        ("K, 471, 1-8-6, 3-9.", "K47118639"),
        ("Papa, X-ray, four, seven, two, nine, one, eight, three", "PX4729183"),
        ("P X 4 7 2 9 1 8 3", "PX4729183"),
        ("C, oh, one, X, double oh, T, four, seven", "C01X00T47"),  # "oh" is a zero in a code
        ("Charlie, zero, one, X-ray, zero, zero, Tango, four seven", "C01X00T47"),
        ("Z as in zebra, B as in Bravo, seven three oh one nine six four", "ZB7301964"),
        ("M for Mike, one, one, A as in Alpha, Echo", "M11AE"),
    ],
)
def test_codes(said, want):
    assert spelling.decode(said, "code") == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("Juliett, Oscar, Sierra, Echo, dot, Mike, nine, one, at example dot com", "jose.m91@example.com"),
        ("J O S E dot M 9 1 at example dot com", "jose.m91@example.com"),
        ("My email is J, O, S, E, dot, M, ninety one, at example dot org.", "jose.m91@example.org"),
        (
            "Sierra, India, Oscar, Bravo, Hotel, Alpha, November, dot, Oscar, November, Echo, India, Lima, Lima, seven, "
            "at example dot com",
            "siobhan.oneill7@example.com",
        ),
        ("g underscore w o j c i k at example dot India Echo", "g_wojcik@example.ie"),
        ("Hotel, Oscar, Alpha, dash, November, Golf, eight, eight at example dot net", "hoa-ng88@example.net"),
        (
            "G, for Golf, Dot, Whiskey, Oscar, Juliett, Charlie, India, Kilo, Free, at example.com.",
            "g.wojcik3@example.com",
        ),  # bench: tiny.en's "three" after a spelled letter
        (
            "A for Alpha, Oscar, India, Foxtrot, Echo, Dot, Delta, Alpha, Romel, Charlie, Enke, Five, at example.com.",
            "aoife.darcy5@example.com",
        ),  # bench: tiny.en's "Yankee"
        ("j o s e m at example", None),  # no domain ending
        ("Sierra, India, Oscar", None),  # no "at"
    ],
)
def test_emails(said, want):
    assert spelling.decode(said, "email") == want


def test_usernames_and_addresses():
    assert spelling.decode("Sierra, underscore, Oscar, November, one, two", "username") == "s_on12"
    assert spelling.decode("oh, n, e, i, l, l", "username") == "oneill"  # a letter here, not a zero
    assert spelling.decode("one two, space, R U E, space, D U, space, L A C", "address") == "12 Rue Du Lac"


@pytest.mark.parametrize(
    "said",
    [
        "My name is David Miller.",
        "Yes, that's right.",
        "I'd like a window seat.",
        "My first name is Victor.",
        "It's a secret.",
        "",
    ],
)
def test_words_that_are_not_spelling(said):
    assert not spelling.looks_spelled(said)
    assert spelling.decode(said, "name") is None or said.startswith("My first name is Victor")


def test_spelling_is_recognised():
    assert spelling.looks_spelled("S, I, O, B, H, A, N.")
    assert spelling.looks_spelled("Sierra, India, Oscar")
    assert spelling.looks_spelled("It's spelled Miller")


@pytest.mark.parametrize(
    "value, kind, said",
    [
        ("O'Neill", "name", "Oscar, apostrophe, November, Echo, India, Lima, Lima"),
        (
            "Wojcik-Nowak",
            "name",
            "Whiskey, Oscar, Juliett, Charlie, India, Kilo, dash, November, Oscar, Whiskey, Alpha, Kilo",
        ),
        ("K47118639", "code", "Kilo, four seven one, one eight six, three nine"),
        ("jose.m91@example.com", "email", "Juliett, Oscar, Sierra, Echo, dot, Mike, nine, one, at example dot com"),
    ],
)
def test_spelled_read_back(value, kind, said):
    assert spelling.say(value, kind) == said
    assert spelling.decode(said, kind) == value  # the agent would read its own read-back back
    # and the simulated person's own ear hears exactly its value in it
    assert hearing.states(f"I have {said}. Is that right?", value)
    assert not hearing.states(f"I have {spelling.say(value[:-1] + 'x', kind)}. Is that right?", value)


@pytest.mark.parametrize(
    "said, kind, want",
    [
        # as the pipeline writes a spelling cut into VAD segments (each its own transcript)
        ("Oscar Oscar Oscar Oscar apostrophe. November, Echo, India. Lena, Lena.", "name", "O'Neill"),
        ("Sierra and here. Oscar. Bravo, Hotel, Alpha. November. November. November", "name", "Siobhan"),
        ("Tier, India, Oscar, Bravo, Hotel, Alpha, November.", "name", "Siobhan"),
        ("Papa x-ray. Bar. 7, 2 9. One. Hey. Free.", "code", "PX4729183"),
        ("Apple x-ray for 72918-free", "code", "X4729183"),  # the P is lost, the digits are not
        (
            "Sierra India Oscar Bravo Hotel Alpha November Dot Oscar November Echo India Lena Lena seven at example calm",
            "email",
            "siobhan.oneill7@example.com",
        ),
    ],
)
def test_spelling_as_the_pipeline_writes_it(said, kind, want):
    assert spelling.decode(said, kind) == want


def test_a_letter_and_its_word_run_together():
    assert spelling.decode("S. Fursière, India, Oscar, Rhevo, Hotel, Alpha, November.", "name") == "Siobhan"
    assert spelling.decode("Foxtrot, India, Oscar, November, Alpha", "name") == "Fiona"  # a spelling word stays one


@pytest.mark.parametrize(
    "said, kind, want",
    [
        # a correction says the value, then spells it (bench: both were decoded as one, "4729183PX4729183")
        ("it's PX 472 9183, P for Papa, X-ray, 4, 7, 2, 9, 1, 8, 3.", "code", "PX4729183"),
        ("it's LK 083 9215. L for Lima, Kilo, zero, eight, three, nine, two, one, five.", "code", "LK0839215"),
        ("it's Nuyin. N for November, Golf, Uniform, Yankee, Echo, November.", "name", "Nguyen"),
        (
            "it's aoife.darcy5@example.com: A for Alpha, Oscar, India, Foxtrot, Echo, dot, Delta, Alpha, Romeo, Charlie, "
            "Yankee, five, at example dot com.",
            "email",
            "aoife.darcy5@example.com",
        ),
        # the first part is spelling too: all of it counts
        ("it's P for Papa, X-ray, four, seven, two, nine, one, eight, three.", "code", "PX4729183"),
        ("it's Alpha, Oscar, dot, Delta, at example dot com", "email", "ao.d@example.com"),
    ],
)
def test_a_value_said_then_spelled_is_the_spelling(said, kind, want):
    assert spelling.decode(said, kind) == want
