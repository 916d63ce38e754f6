"""Spoken → written normalisation on what Whisper actually writes for Piper speech."""

from __future__ import annotations

import pytest

from appliance.phone_agent import fields, normalise, spelling
from appliance.protocol import FieldSpec
from appliance.simulate import hearing
from appliance.simulate.call import asks
from appliance.simulate.person import mouth


@pytest.mark.parametrize(
    "said, want",
    [
        ("Alice Alice Alice Alice Alice Alice", "Alice"),
        ("It's Markin. It's Markin. It's Mark", "It's Markin."),
        ("My first name is Emma. My first name is Emma. My first name", "My first name is Emma."),
        ("yes yes yes yes yes yes", "yes"),
        ("Plus 4 4 7 7 0 0 9 0 0 1 2 3", "Plus 4 4 7 7 0 0 9 0 0 1 2 3"),
        ("No, that's wrong.", "No, that's wrong."),
        ("Yes, that's right. Yes, that right. Yes. That's", "Yes, that's right."),
        ("My last name is Miller. My last name as Miller. My name is Miller", "My last name is Miller."),
        ("No, it's Miller. It's spelled M I L L E R.", "No, it's Miller. It's spelled M I L L E R."),
        (
            "W, Whiskey, Oscar, Juliett, Charlie, India, Kilo, Dash, November, Oscar, Whiskey. Alpha, Kilo.",
            "W, Whiskey, Oscar, Juliett, Charlie, India, Kilo, Dash, November, Oscar, Whiskey. Alpha, Kilo.",
        ),  # bench
        (
            "The username David Miller is already taken. Please choose another. What is your username?",
            "The username David Miller is already taken. Please choose another. What is your username?",
        ),
    ],
)
def test_clean_collapses_asr_repetition_only(said, want):
    assert normalise.clean(said) == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("My phone number is plus 4 4 7 7 0 0 9 0 0 1 2 3", "+447700900123"),
        ("plus four four, seven seven double zero, nine oh oh, one two three", "+447700900123"),
        ("It's 07700 900123.", "07700900123"),
        ("zero seven seven zero zero nine zero zero one two three", "07700900123"),
        ("My number is twenty three.", None),
    ],
)
def test_phone(said, want):
    assert normalise.phone(said) == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("My email is dmiller at example dot com.", "dmiller@example.com"),
        ("My name is Emma Dot Johnson at example.org.", "emma.johnson@example.org"),
        ("It's d m i l l e r at example dot com", "dmiller@example.com"),
        ("emma underscore j at mail dot co dot uk", "emma_j@mail.co.uk"),
        ("My email is siobhan dot oneill seven at example dot com.", "siobhan.oneill7@example.com"),
        ("hoa dash ng eighty eight at example dot net", "hoa-ng88@example.net"),
        ("oh no at example dot com", "ohno@example.com"),  # "oh" is a letter unless after a number
        ("I don't have one.", None),
    ],
)
def test_email(said, want):
    assert normalise.email(said) == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("I was born on the 14th of March, 1990.", "1990-03-14"),
        ("on the 2nd of June 2027.", "2027-06-02"),
        ("The fourteenth of March, nineteen ninety.", "1990-03-14"),
        ("June the second, twenty twenty seven", "2027-06-02"),
        ("the twenty first of may two thousand and five", "2005-05-21"),
        ("14/03/1990", "1990-03-14"),
        ("1990-03-14", "1990-03-14"),
        ("the 31st of February 1990", None),
        ("I was born on the 40th March. 1990", "1990-03-14"),  # Whisper on Piper's "fourteenth" over Opus
        ("next Tuesday", None),
    ],
)
def test_date(said, want):
    assert normalise.date(said) == want


def test_numeric_date_order():
    assert normalise.date("03/04/1990", "MDY") == "1990-03-04" and normalise.date("03/04/1990", "DMY") == "1990-04-03"


@pytest.mark.parametrize(
    "said, want",
    [
        ("My first name is David.", "David"),
        ("It's Miller.", "Miller"),
        ("D-A-V-I-D", "David"),
        ("Miller, spelled M I L L E R.", "Miller"),
        ("Yes, it's Johnson", "Johnson"),
        ("I live in Manchester.", "Manchester"),
        ("Yes, please submit it.", None),
        # bench, tom-select-destination: "I have I'd Like To Fly. Is that right?"
        ("I'd like to fly to Rome.", "Rome"),
        ("I'm flying to Lisbon.", "Lisbon"),
    ],
)
def test_name(said, want):
    assert normalise.name(said) == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("My passport number is 512 873 946", "512873946"),
        ("It's P, 123, 45678.", "P12345678"),
        ("My postcode is M1, 1aE.", "M11AE"),
        ("K four seven, one one eight, six three nine", "K47118639"),
        ("double five one two", "5512"),
        # spelled with the spelling alphabet, as Whisper wrote Piper saying "M for Mike, one, one, A for Alpha, E for Echo"
        ("It's M for Mike, one, one, of her alpha, E for Echo.", "M11AE"),
        ("My postal code is Amazon Mike, one, one, as in alpha, he is an echo.", "M11AE"),
    ],
)
def test_code(said, want):
    assert normalise.code(said) == want


def test_spelled_code_reads_back_and_parses_again():
    said = spelling.say("M11AE", "code")
    assert said == "Mike, one one, Alpha, Echo"
    assert normalise.code(said) == "M11AE"
    spoken = mouth("No, it's M1 1AE.", spell=True)
    assert spoken == "No, it's Mike, one, one, Alpha, Echo."
    assert normalise.code(spoken) == "M11AE"
    assert mouth("My postal code is M1 1AE.") == "My postal code is M, one one, A E."


@pytest.mark.parametrize(
    "heard, want",
    [
        ("Thanks, What is your last name?", True),
        ("Sorry, I didn't get that. The form once 320 lowercase letters, digits or what is your username", True),
        ("I have David spelled D they V ID is that right", True),
        ("I have Manchester,", True),
        ("How should we contact you. Email. Phone were post.", True),
        ("Thanks, country, United Kingdom, Ireland, United States, Germany, France, or Portugal.", True),
        ("Hello, I'm your assistant for the web form. I'll ask you a few questions.", False),
        ("Hello?", False),
        # a greeting and the first question heard as one piece: Whisper left out the punctuation (bench)
        (
            "This call is recorded on this appliance only the page shows where what is your full name Name.",
            True,
        ),  # a long greeting's first words heard alone (bench: answered "My username is …")
        ("Hello? What is your full name?", True),
        ("One moment, I'm working on the form.", False),
        ("Done! The form has been submitted. Thank you, goodbye.", False),
        (
            "Thanks, one moment, I'm working on the form. Here's what I'll submit. David Miller, United Kingdom, "
            "Manchester, Email, and your username, Email address and postcode as you confirmed them.",
            False,
        ),
        # the summary's closing question as Whisper wrote it (bench)
        ("Email address and postcode as you confirm them. Ciao I submit the form now.", True),
        ("Email address and postcode as you confirm them. Show I submit the form now.", True),
    ],
)
def test_simulated_person_answers_only_questions(heard, want):
    assert asks(heard) is want


@pytest.mark.parametrize(
    "said, want", [("My username is D Miller 84.", "dmiller84"), ("emma underscore j eighty five", "emma_j85")]
)
def test_username(said, want):
    assert normalise.username(said) == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("Yes, that's right.", True),
        ("Yeah.", True),
        ("Correct.", True),
        ("Yes, I accept.", True),
        ("No.", False),
        ("No, that's wrong.", False),
        ("That's not right.", False),
        ("Hmm, what?", None),
    ],
)
def test_yes_no(said, want):
    assert normalise.yes_no(said) == want


def test_choice():
    seats = ("Window", "Aisle", "Middle")
    assert normalise.choice("A window seat, please.", seats) == "Window"
    assert normalise.choice("I'd like to fly to New York.", ("York", "New York", "Paris")) == "New York"
    assert normalise.choice("I'm British.", ("United Kingdom", "Ireland")) == "United Kingdom"
    assert normalise.choice("Somewhere warm.", ("United Kingdom", "Ireland")) is None
    assert normalise.choice("I'd like to fly to roam.", ("Lisbon", "Madrid", "Paris", "Rome")) == "Rome"  # by sound
    assert normalise.soundex("Robert") == normalise.soundex("Rupert") == "R163"


def test_a_read_back_without_its_question_yet_is_unfinished():
    from appliance.simulate.call import unfinished

    assert unfinished("I have Papa.") and unfinished("Thanks. I have Sierra, India,")
    assert not unfinished("I have Papa, X-ray. Is that right?") and not unfinished("What is your email?")
    assert not unfinished("Here is what I'll submit: Siobhan. Shall I submit the form now?")


def test_a_code_after_asrs_lead_in():
    assert normalise.code("my passport numbers px. 4.7.2. 9183") == "PX4729183"


@pytest.mark.parametrize(
    "spec, value, said",
    [
        (
            FieldSpec(name="family_name", label="Family name", type="text", required=True),
            "Miller",
            "I have Miller. Is that right?",
        ),
        (
            FieldSpec(name="email", label="Email", type="email", required=True),
            "davidmiller@example.com",
            "I have david miller, at example dot com. Is that right?",
        ),
        (FieldSpec(name="phone", label="Phone", type="tel", required=True), "+447700900123", None),
        (FieldSpec(name="dob", label="Date of birth", type="date", required=True), "1990-03-14", None),
    ],
)
def test_read_back_is_what_the_persons_own_ear_accepts(spec, value, said):
    """The bot's read-back text states the value for the simulated person's ear (which shares
    no code with the phone agent), and not a neighbouring value. A name is said as written:
    Piper's spoken letters come back from Whisper garbled."""
    text = fields.read_back(spec, value, heard="My email is David Miller at example dot com.")
    if said:
        assert text == said
    assert hearing.states(text, value)
    other = {
        "Miller": "Millar",
        "davidmiller@example.com": "davidmilner@example.com",
        "+447700900123": "+447700900124",
        "1990-03-14": "1990-03-15",
    }[value]
    assert not hearing.states(text, other)


def test_a_long_utterance_is_cut_at_its_longest_middle_pause():
    import numpy as np

    from appliance.simulate.call import _halves

    tone = 0.1 * np.sin(np.arange(16_000) / 3).astype(np.float32)
    audio = np.concatenate([tone, np.zeros(1600, np.float32), tone, np.zeros(6400, np.float32), tone, tone])
    first, second = _halves(audio)
    assert 16_000 + 1600 + 16_000 < len(first) < 16_000 + 1600 + 16_000 + 6400
    assert len(first) + len(second) == len(audio)
    assert _halves(np.tile(tone, 3)) is None  # no pause: nothing to cut at


def test_a_long_utterance_is_heard_in_pieces_cut_at_its_pauses():
    import numpy as np

    from appliance.simulate.call import pieces

    tone = 0.1 * np.sin(np.arange(16_000) / 3).astype(np.float32)  # 1 s of "speech"
    pause = np.zeros(3200, np.float32)
    audio = np.concatenate([x for _ in range(18) for x in (tone, pause)])  # 21.6 s: a long summary
    got = pieces(audio, max_s=8.0)
    assert len(got) >= 3 and all(len(p) <= 8 * 16_000 for p in got)
    assert np.array_equal(np.concatenate(got), audio)  # nothing lost, nothing doubled, in order
    assert len(pieces(audio[: 5 * 16_000], max_s=8.0)) == 1  # short: heard whole
    assert len(pieces(np.tile(tone, 12), max_s=8.0)) == 1  # no pause to cut at: whole


def test_the_last_clause_of_an_utterance_is_what_follows_its_last_pause():
    import numpy as np

    from appliance.simulate.call import last_clause

    tone = 0.1 * np.sin(np.arange(16_000) / 3).astype(np.float32)
    short, long_ = np.zeros(1600, np.float32), np.zeros(4800, np.float32)  # 100 ms, 300 ms
    audio = np.concatenate([tone, long_, tone, short, tone[:8000], np.zeros(8000, np.float32)])
    tail = last_clause(audio)
    assert len(audio) - 16_000 - 1600 - 8000 - 8000 - 2400 <= len(tail) < len(audio) - 16_000 - 1600
    assert last_clause(np.tile(tone, 3)) is None
    # a short last clause (0.5 s after 120 ms) is heard with what came before it: 2 s at least
    audio = np.concatenate([tone, long_, tone, tone, np.zeros(1920, np.float32), tone[:8000], short])
    assert abs(len(last_clause(audio)) - (len(audio) - 16_000 - 2400)) <= 320  # mid-pause, to a 20 ms window
    assert abs(len(last_clause(audio, min_s=0.5)) - (8000 + 1600 + 960)) <= 320


@pytest.mark.parametrize(
    "plain, with_alphabet, want",
    [
        # recorded read-backs (bench, Aoife): the spelling heard again after the alphabet
        (
            "I have a for alpha, Oscar, India, Fox strut, at home, is that right?",
            "I have a for Alpha, Oscar, India, Foxtrot, Echo, is that right?",
            "I have a for Alpha, Oscar, India, Foxtrot, Echo, is that right?",
        ),
        # heard again cut short: the first pass stays
        ("I have D for Delta, Alpha, Romeo, Charlie.", "I have D.", "I have D for Delta, Alpha, Romeo, Charlie."),
        ("I have aoife.darcy5 at example.com.", "never asked", "I have aoife.darcy5 at example.com."),  # not spelled
    ],
)
async def test_the_person_hears_a_spelling_again_as_a_listener_who_knows_the_spelling_alphabet(
    plain, with_alphabet, want
):
    from types import SimpleNamespace

    import numpy as np

    from appliance.simulate.call import ALPHABET_CONTEXT, PersonOnCall
    from appliance.voice.asr.base import Transcript

    class Ear:
        contexts: list[str] = []

        def transcribe(self, audio, context=""):
            self.contexts.append(context)
            return Transcript(with_alphabet if context == ALPHABET_CONTEXT else plain, 0.0, len(audio) / 16_000, 0.0)

    ear, nobody = Ear(), SimpleNamespace(profile=SimpleNamespace(facts={}), expecting=lambda: "")
    call = PersonOnCall(nobody, None, None, ear, style=None, emit=lambda *a, **k: None)
    assert await call._transcribe_piece(np.zeros(16_000 * 3, np.float32)) == (want, plain)
    assert ear.contexts == (["", ALPHABET_CONTEXT] if with_alphabet != "never asked" else [""])


@pytest.mark.parametrize(
    "plain, primed, want",
    [
        # the bench's "I have Halal. Is that right?", heard by a person who had just said "halal"
        ("I have hell. Is that right?", "I have halal. Is that right?", "I have halal. Is that right?"),
        # the context made Whisper stop early: the whole line stays
        ("I have halal. What is your phone number?", "I have halal.", "I have halal. What is your phone number?"),
    ],
)
async def test_the_person_hears_a_read_back_again_expecting_the_words_it_just_said(plain, primed, want):
    from types import SimpleNamespace

    import numpy as np

    from appliance.simulate.call import PersonOnCall
    from appliance.voice.asr.base import Transcript

    class Ear:
        def transcribe(self, audio, context=""):
            return Transcript(primed if context == "halal." else plain, 0.0, len(audio) / 16_000, 0.0)

    person = SimpleNamespace(profile=SimpleNamespace(facts={}), expecting=lambda: "halal.")
    call = PersonOnCall(person, None, None, Ear(), style=None, emit=lambda *a, **k: None)
    assert await call._transcribe_piece(np.zeros(16_000 * 2, np.float32)) == (want, plain)


@pytest.mark.parametrize(
    "heard, want",
    [
        # bench (david): the summary's closing question dropped in its pieces, heard in its last 2 s alone
        (
            [
                "Here is what I'll submit: David Miller;",
                "the second of June, twenty twenty seven;",
                "and your email as you confirmed them.",
                "them. Cell I submit the form now.",
            ],
            "Here is what I'll submit: David Miller; the second of June, twenty twenty seven; and your email as you "
            "confirmed them. Cell I submit the form now.",
        ),
        # only the question is added, not the words before it heard twice
        (
            ["I have the second", "of June,", "twenty twenty seven.", "twenty seven. Is that right?"],
            "I have the second of June, twenty twenty seven. Is that right?",
        ),
        (
            ["I have the second", "of June,", "twenty twenty seven.", "I have twenty seven. Is that right?"],
            "I have the second of June, twenty twenty seven. Is that right?",
        ),  # nor a read-back's frame again
        (
            ["I have the second", "of June,", "twenty twenty seven, is that right?"],  # asked already: no tail heard
            "I have the second of June, twenty twenty seven, is that right?",
        ),
    ],
)
async def test_a_long_utterance_heard_without_its_closing_question_has_its_end_heard_again_alone(heard, want):
    from types import SimpleNamespace

    import numpy as np

    from appliance.simulate.call import PersonOnCall
    from appliance.simulate.webrtc_client import BotAudio
    from appliance.voice.asr.base import Transcript

    class Ear:
        def __init__(self):
            self.said = list(heard)

        def transcribe(self, audio, context=""):
            return Transcript(self.said.pop(0), 0.0, 0.0, 0.0)

    tone = 0.1 * np.sin(np.arange(16_000) / 3).astype(np.float32)
    pause = [np.zeros(1920, np.float32)]  # 120 ms
    audio = np.concatenate(
        [
            np.tile(tone, 6),
            np.zeros(4800, np.float32),
            np.tile(tone, 6),
            *pause,
            tone,
            tone[:8000],
            *pause,
            tone,
            np.zeros(3200, np.float32),
        ]
    )
    ear, person = Ear(), SimpleNamespace(profile=SimpleNamespace(facts={}), expecting=lambda: "")
    call = PersonOnCall(person, None, None, ear, style=None, emit=lambda *a, **k: None)
    assert (await call._hear(BotAudio(audio, (0.0, 1.0), 1, True)))[0] == want
    assert ear.said == []  # every transcript heard, the tail only when the pieces asked nothing
