"""The simulated person's ear (the simulation's oracle) and its words, on transcript strings
as Whisper writes them: exact read-backs are accepted, near misses rejected."""

from __future__ import annotations

import ast
import datetime as dt
import re
from pathlib import Path

import pytest
from fakes import ScriptedLLM

from appliance.demo.profile import load_profile
from appliance.simulate import hearing, speech
from appliance.simulate.person import mouth

Q = "Is that right?"


@pytest.mark.parametrize(
    "heard, value",
    [
        # names: the word, or its letters when spelled (the letters decide)
        ("I have Miller, spelled M I L L E R. Is that right?", "Miller"),
        ("I have Miller, spelled M-I-L-L-E-R. Is that right?", "Miller"),
        ("I have Miller, spelled M.I.L.L.E.R. Is that right?", "Miller"),
        ("I have Miller, spelt m i l l e r. Is that right?", "Miller"),
        ("I have M spelled e m m a. Is that right?", "Emma"),  # the name misheard, its letters not
        ("I have Emma, spelled EMMA. Is that right?", "Emma"),
        ("I have David, spelled dee A vee I D. Is that right?", "David"),
        ("I have Miller, spelled M I double L E R. Is that right?", "Miller"),
        ("I have Emma. Is that right?", "Emma"),
        ("I have O'Neil-Smith, spelled O, apostrophe, N E I L, dash, S M I T H. Is that right?", "O'Neil-Smith"),
        ("I have O Neil Smith. Is that right?", "O'Neil-Smith"),  # apostrophe and hyphen are not said
        ("I have New York, spelled N E W, Y O R K. Is that right?", "New York"),
        ("Thanks. I have Manchester, spelled M A N C H E S T E R. Is that right?", "Manchester"),
        ("I have Wiktor, spelled Whiskey India Kilo Tango Oscar Romeo. Is that right?", "Wiktor"),
        ("So that's Johnson, spelled J O H N S O N, correct?", "Johnson"),
        ("I have Manchester,", "Manchester"),  # a read-back whose question Whisper left out
        # codes: letters as said (ICAO words, "X for W", "as in"), digits in words or numerals
        ("I have M for Mike, one, one, A for Alpha, E for Echo. Is that right?", "M1 1AE"),
        ("I have M for Mike, one one for Alpha, he for Echo. Is that right?", "M1 1AE"),  # "A" unheard
        ("I have Mike, one, one, Alpha, Echo. Is that right?", "M1 1AE"),
        ("I have M4 Mike, 1-1, A4 Alpha, E4 Echo. Is that right?", "M1 1AE"),
        ("I have M as in Mike, 1, 1, A as in apple, E as in Echo. Is that right?", "M1 1AE"),
        ("I have M1 1AE. Is that right?", "M1 1AE"),
        ("I have K for Kilo, four seven one, one eight six, three nine. Is that right?", "K47118639"),
        ("I have K for Kilo, 471, 186, 39. Is that right?", "K47118639"),
        ("I have five one two, eight seven three, nine four six. Is that right?", "512873946"),
        ("I have five one two eight seven three nine for six. Is that right?", "512873946"),  # "for": four
        ("I have one zero one one five. Is that right?", "10115"),
        ("I have one oh one one five. Is that right?", "10115"),
        ("I have one double oh, one, one, five? Is that right?", "100115"),
        ("I have X-ray, Yankee, Zulu, nine. Is that right?", "XYZ9"),
        # phone numbers
        (
            "I have plus four four, seven seven zero zero, nine zero zero, one two three. Is that right?",
            "+447700900123",
        ),
        ("I have plus 44 7700 900123. Is that right?", "+447700900123"),
        ("I have +44 7700 900 123. Is that right?", "+447700900123"),
        (
            "I have plus four four, seven seven double zero, nine double zero, one two three. Is that right?",
            "+447700900123",
        ),
        ("I have oh seven seven zero zero, nine zero zero, one two three. Is that right?", "07700900123"),
        ("I have plus four nine, three zero one, two three four, five six. Is that right?", "+4930123456"),
        # e-mails and user names: at, dot, underscore, dash
        ("I have David Miller at example.com. Is that right?", "davidmiller@example.com"),
        ("I have david miller, at example dot com. Is that right?", "davidmiller@example.com"),
        ("I have D A V I D M I L L E R, at example dot com. Is that right?", "davidmiller@example.com"),
        ("I have davidmiller@example.com. Is that right?", "davidmiller@example.com"),
        ("I have anna dot kowalska 7, at mail dot example dot org. Is that right?", "anna.kowalska7@mail.example.org"),
        ("I have jean dash luc, at example dot fr. Is that right?", "jean-luc@example.fr"),
        ("I have emma underscore j eighty five, as one word. Is that right?", "emma_j85"),
        ("I have david miller 84, as one word. Is that right?", "davidmiller84"),
        # "as one word" as Whisper wrote it (CI): the instruction is not part of the value
        ("I have David Miller 84. That's one word. Is that right?", "davidmiller84"),
        ("I have David Miller 84. S one word. Is that right?", "davidmiller84"),
        ("I have David Miller 84. S1 word. Is that right?", "davidmiller84"),
        ("I have david miller eighty four. Is that right?", "davidmiller84"),
        ("I have D M I L L E R 8 4. Is that right?", "dmiller84"),
        # dates, in any form naming the same day
        ("I have the fourteenth of March, nineteen ninety. Is that right?", "1990-03-14"),
        ("I have the 14th of March, 1990. Is that right?", "1990-03-14"),
        ("I have the 40th of March, 1990. Is that right?", "1990-03-14"),  # Whisper's "fourteenth"
        ("I have the 40 to March, 1990. Is that right?", "1990-03-14"),  # Whisper's "fourteenth of"
        ("I have March fourteenth, nineteen ninety. Is that right?", "1990-03-14"),
        ("I have March 14, 1990. Is that right?", "1990-03-14"),
        ("I have 14 March 1990. Is that right?", "1990-03-14"),
        ("I have 14/03/1990. Is that right?", "1990-03-14"),
        ("I have 1990-03-14. Is that right?", "1990-03-14"),
        ("I have the twenty-second of July, nineteen eighty five. Is that right?", "1985-07-22"),
        ("I have the second of June, twenty twenty seven. Is that right?", "2027-06-02"),
        ("I have the second of June, 2020-7. Is that right?", "2027-06-02"),  # Whisper's "twenty twenty seven"
        ("I have 1990-3-14. Is that right?", "1990-03-14"),
        ("I have the fifteenth of September, 2027. Is that right?", "2027-09-15"),
        ("I have the first of January, two thousand and five. Is that right?", "2005-01-01"),
        ("I have the 3rd of May, nineteen oh five. Is that right?", "1905-05-03"),
        ("I have the thirty first of December, twenty ten. Is that right?", "2010-12-31"),
        # choices
        ("I have window. Is that right?", "window"),
        ("I have Gluten-free. Is that right?", "gluten free"),
        ("I have United Kingdom. Is that right?", "British"),
        ("I have Germany. Is that right?", "German"),
        ("I have yes. Is that right?", "yes"),
    ],
)
def test_a_read_back_of_the_value_is_accepted(heard, value):
    assert hearing.states(heard, value)


@pytest.mark.parametrize(
    "heard, value",
    [
        # one letter wrong, missing, extra or swapped; the right word with the wrong letters
        ("I have Miller, spelled M I L E R. Is that right?", "Miller"),
        ("I have Miller, spelled M I L L A R. Is that right?", "Miller"),
        ("I have Miller, spelled M I L L E R S. Is that right?", "Miller"),
        ("I have Miller, spelled M I L L R E. Is that right?", "Miller"),
        ("I have M spelled E M M. Is that right?", "Emma"),
        ("I have Emma, spelled E M N A. Is that right?", "Emma"),
        ("I have David spelled D they V ID is that right", "David"),
        ("I have David, spelled D A V I T. Is that right?", "David"),
        ("I have Millar. Is that right?", "Miller"),
        ("I have Millers. Is that right?", "Miller"),  # a longer word is not the value
        ("I have Mill. Is that right?", "Miller"),
        ("I have Miller, spelled. Is that right?", "Miller"),  # the letters were not heard
        ("Is that right?", "Miller"),
        ("I have Emma Johnson. Is that right?", "Emma"),
        ("I have Manchester, spelled M A N C H E S T E R. Is that right?", "Manchaster"),
        # a spelling says a name's apostrophe and hyphen: one left out is a letter missing (bench, aoife)
        ("I have O'Neil-Smith, spelled O N E I L, dash, S M I T H. Is that right?", "O'Neil-Smith"),
        (
            "I have it as Delta, Alpha, Romeo, Charlie, Yankee, dash, Bravo, Yankee, Romeo, November, Echo. Is that right?",
            "D'Arcy-Byrne",
        ),
        (
            "I have it as Delta, apostrophe, Alpha, Romeo, Charlie, Yankee, Bravo, Yankee, Romeo, November, Echo. Is that "
            "right?",
            "D'Arcy-Byrne",
        ),
        # codes
        ("I have M for Mike, one, one, A for Alpha, F for Foxtrot. Is that right?", "M1 1AE"),
        ("I have M for Mike, one, A for Alpha, E for Echo. Is that right?", "M1 1AE"),
        ("I have N for November, one, one, A for Alpha, E for Echo. Is that right?", "M1 1AE"),
        ("I have K for Kilo, four seven one, one eight six, three nine, nine. Is that right?", "K47118639"),
        ("I have K for Kilo, four seven one, one six eight, three nine. Is that right?", "K47118639"),
        ("I have five one two, eight seven three, nine six four. Is that right?", "512873946"),
        ("I have five one two, eight seven three, nine four. Is that right?", "512873946"),
        ("I have five one two, eight seven three, nine four six, six. Is that right?", "512873946"),
        # phone numbers
        ("I have plus 447 7000 9000 123 is that right?", "+447700900123"),
        ("I have plus 44 7700 900132. Is that right?", "+447700900123"),
        ("I have four four, seven seven zero zero, nine zero zero, one two three. Is that right?", "+447700900123"),
        ("I have plus four four, seven seven zero zero, nine zero zero, one two. Is that right?", "+447700900123"),
        ("I have oh seven seven zero zero, nine zero zero, one two three. Is that right?", "+447700900123"),
        # e-mails and user names
        ("I have david miller, at example dot org. Is that right?", "davidmiller@example.com"),
        ("I have david miller, at examples dot com. Is that right?", "davidmiller@example.com"),
        ("I have david, at example dot com. Is that right?", "davidmiller@example.com"),
        ("I have david miller example dot com. Is that right?", "davidmiller@example.com"),
        ("I have david dot miller, at example dot com. Is that right?", "davidmiller@example.com"),
        ("I have emma j 85. Is that right?", "emma_j85"),
        ("I have emma underscore j eighty six. Is that right?", "emma_j85"),
        ("I have david miller 48, as one word. Is that right?", "davidmiller84"),
        ("I have David Miller 48. That's one word. Is that right?", "davidmiller84"),
        ("I have david miller. Is that right?", "davidmiller84"),
        # dates: a wrong day, month or year; not one clear date
        ("I have the fifteenth of March, nineteen ninety. Is that right?", "1990-03-14"),
        ("I have the 4th of March, 1990. Is that right?", "1990-03-14"),
        ("I have the 13th of March, 1990. Is that right?", "1990-03-14"),
        ("I have the fourteenth of May, nineteen ninety. Is that right?", "1990-03-14"),
        ("I have the fourteenth of March, nineteen ninety one. Is that right?", "1990-03-14"),
        ("I have the fourteenth of March, nineteen nineteen. Is that right?", "1990-03-14"),
        ("I have the second of June, 2020-8. Is that right?", "2027-06-02"),
        ("I have the fourteenth of March. Is that right?", "1990-03-14"),
        ("I have the fourteenth of March, 1990, or the 15th. Is that right?", "1990-03-14"),
        ("I have 15/03/1990. Is that right?", "1990-03-14"),
        ("I have 03/04/1990. Is that right?", "1990-03-04"),  # the person writes day first: 3 April
        ("I have the second of July, twenty twenty seven. Is that right?", "2027-06-02"),
        ("I have the thirty first of February, twenty ten. Is that right?", "2010-02-28"),
        # choices
        ("I have aisle. Is that right?", "window"),
        ("I have window seat. Is that right?", "window"),
        ("I have Ireland. Is that right?", "British"),
        ("I have Germany. Is that right?", "Austrian"),
        ("I have no. Is that right?", "yes"),
    ],
)
def test_a_near_miss_is_rejected(heard, value):
    assert not hearing.states(heard, value)


def _near_misses(value: str) -> list[str]:
    """``value`` with one character changed: each letter or digit replaced by its neighbour."""
    out = []
    for i, c in enumerate(value):
        if c.isdigit():
            out.append(value[:i] + str((int(c) + 1) % 10) + value[i + 1 :])
        elif c.isalpha():
            other = "b" if c.lower() == "a" else "a"
            out.append(value[:i] + (other.upper() if c.isupper() else other) + value[i + 1 :])
    return out


_PROFILES = [load_profile(name) for name in ("david", "emma")]
_EXACT = [
    (p.name, k, v)
    for p in _PROFILES
    for k, v in p.facts.items()
    if k
    not in ("consent", "seat_preference", "meal", "contact_method", "nationality", "country", "destination", "message")
]  # choices and free text are not judged letter by letter


@pytest.mark.parametrize("spell", [False, True])
@pytest.mark.parametrize("who, key, value", _EXACT)
def test_the_person_accepts_its_own_words_and_no_value_one_character_off(who, key, value, spell):
    said = mouth(value, vocabulary=[value] if key in ("given_name", "family_name", "city") else (), spell=spell)
    assert hearing.states(f"I have {said}. {Q}", value), said
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):  # a date, whatever its key
        day = dt.date.fromisoformat(value)
        misses = [
            d.isoformat()
            for d in (
                day + dt.timedelta(days=1),
                day - dt.timedelta(days=1),
                day.replace(year=day.year + 1),
                day.replace(month=day.month % 12 + 1),
            )
        ]
    else:
        misses = _near_misses(value)
        for miss in misses:  # the right word, spelled with one letter or digit wrong
            assert not hearing.states(f"I have {value}, spelled {' '.join(miss)}. {Q}", value), miss
    for miss in misses:
        said = mouth(miss, spell=spell)
        assert not hearing.states(f"I have {said}. {Q}", value), (miss, said)


def test_only_a_choice_in_other_words_goes_to_the_persons_judgement_of_meaning():
    assert hearing.may_mean("I have United States. Is that right?", "Brazilian") is False  # in the ear's table
    assert hearing.may_mean("I have Republic of Ruritania. Is that right?", "Ruritanian") is True
    assert hearing.may_mean("I have Iceland. Is that right?", "Ireland") is False  # a country in the table
    assert hearing.country_names("Irish") == hearing.country_names("Ireland") == ("ireland",)
    assert hearing.country_names("UK") == hearing.country_names("British") and hearing.country_names("Ruritania") == ()
    assert hearing.may_mean("I have Mueller, spelled M U E L L E R. Is that right?", "Müller") is False
    assert hearing.may_mean("I have K for Kilo. Is that right?", "Kay") is False
    assert hearing.may_mean("I have 12. Is that right?", "K47118639") is False


@pytest.mark.parametrize(
    "heard, want",
    [
        ("I have Miller, spelled M I L L E R. Is that right?", "Miller, spelled M I L L E R"),
        ("Thanks. I have Manchester. Is that right?", "Manchester"),
        ("Sorry, the form needs a plus. I have plus four four. Is that right?", "plus four four"),
        (
            "I have Emma. Is that right? Sorry. I've got Emma, spelled E M M A. Is that correct?",
            "Emma, spelled E M M A",
        ),
        ("So Rome, is that right?", "Rome"),
        ("So that's window, correct?", "window"),
        ("You said vegetarian. Did I get that right?", "vegetarian"),
        ("I had 077. 009, 001, 23, is that right?", "077. 009, 001, 23"),  # Whisper's "I have", in CI
    ],
)
def test_the_value_part_of_a_read_back(heard, want):
    assert hearing.read_back(heard) == want


@pytest.mark.parametrize(
    "said, want",
    [
        ("Alice Alice Alice Alice", "Alice"),
        ("It's Martin. It's Martin. It's Mar", "It's Martin."),
        ("Yes, that's right. Yes, that right. Yes. That's", "Yes, that's right."),
        ("Alice Alice", "Alice Alice"),  # a one-word phrase must come three times
        (
            "What is your username? It is already taken. Please choose another. What is your username?",
            "What is your username? It is already taken. Please choose another. What is your username?",
        ),
        ("  I have Emma. Is that right?  ", "I have Emma. Is that right?"),
        (
            "I have W for Whiskey, Oscar, Kilo, Oscar, Whiskey. Alpha, Kilo. Is that right?",
            "I have W for Whiskey, Oscar, Kilo, Oscar, Whiskey. Alpha, Kilo. Is that right?",
        ),  # spelling repeats
    ],
)
def test_clean_undoes_whisper_repetition_loops_only(said, want):
    assert hearing.clean(said) == want


def test_the_persons_words_for_numbers_dates_and_codes():
    assert [speech.say_number(n) for n in (0, 7, 13, 40, 84)] == ["zero", "seven", "thirteen", "forty", "eighty four"]
    assert [speech.say_ordinal(d) for d in (1, 2, 14, 20, 22, 30, 31)] == [
        "first",
        "second",
        "fourteenth",
        "twentieth",
        "twenty second",
        "thirtieth",
        "thirty first",
    ]
    assert [speech.say_year(y) for y in (1990, 1905, 1900, 2000, 2007, 2010, 2027)] == [
        "nineteen ninety",
        "nineteen oh five",
        "nineteen hundred",
        "two thousand",
        "two thousand and seven",
        "twenty ten",
        "twenty twenty seven",
    ]
    assert speech.say_digits("512873946") == "five one two, eight seven three, nine four six"
    assert speech.say_digits("4930") == "four nine three zero"
    assert speech.say_date("1990-03-14") == "the fourteenth of March, nineteen ninety"
    assert speech.say_icao("M1 1AE") == "Mike, one, one, Alpha, Echo"


def test_the_simulation_shares_no_code_with_the_phone_agent():
    """The oracle must not import what it checks: no module of appliance/simulate imports
    appliance.phone_agent."""
    folder = Path(hearing.__file__).parent
    offenders = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [f"{node.module}.{a.name}" for a in node.names]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("appliance.phone_agent")]
    assert len(list(folder.glob("*.py"))) >= 6 and not offenders, offenders


_AGENT_FIELDS = {  # profile key → the field the phone agent reads it back for
    "given_name": ("given_name", "text"),
    "family_name": ("family_name", "text"),
    "city": ("city", "text"),
    "email": ("email", "email"),
    "phone": ("phone", "tel"),
    "date_of_birth": ("date_of_birth", "date"),
    "travel_date": ("travel_date", "date"),
    "passport_number": ("passport_number", "text"),
    "postcode": ("postcode", "text"),
    "username": ("username", "text"),
}


@pytest.mark.parametrize("who, key, value", [x for x in _EXACT if x[1] in _AGENT_FIELDS])
def test_the_person_understands_the_phone_agents_read_backs(who, key, value):
    """The two sides written apart agree on the bundled profiles: the agent's read-back of
    the value is a yes, its read-back of a value one character off is a no."""
    from appliance.phone_agent.fields import read_back
    from appliance.protocol import FieldSpec

    name, type_ = _AGENT_FIELDS[key]
    spec = FieldSpec(name=name, label=name.replace("_", " ").capitalize(), type=type_, required=True)
    assert hearing.states(read_back(spec, value), value), read_back(spec, value)
    if type_ != "date":
        for miss in _near_misses(value):
            assert not hearing.states(read_back(spec, miss), value), read_back(spec, miss)


class AgreeingLLM(ScriptedLLM):
    """The persona's LLM at its seam: names the topic it is told to (``topic``, asked with
    ``said: <question>``), picks ``option`` from the choices it is given (``Options: …``)
    and, asked whether two values mean the same, always says yes (the most lenient judge
    there is). :meth:`asked` counts the requests of each kind."""

    def __init__(self, topic: str, option: str = "none"):
        super().__init__(json=[self._answer] * 50)
        self.topic, self.option = topic, option

    def _answer(self, system: str, user: str) -> dict:
        if user.startswith("said: "):
            return {"topic": self.topic}
        return {"option": self.option} if user.startswith("Options: ") else {"same": True}

    def asked(self, key: str) -> int:
        """Requests whose answer is an object with ``key`` (``topic``, ``option`` or ``same``)."""
        return sum(key in c.options["schema"]["properties"] for c in self.calls)


async def _check(facts: dict, topic: str, question: str, read_back: str) -> tuple[str, int]:
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM(topic)
    person = SimulatedPerson(Profile("p", facts), llm, emit=lambda *a, **k: None)
    await person.respond(question)
    return await person.respond(read_back), llm.asked("same")


@pytest.mark.parametrize(
    "facts, topic, question, read_back, want, judged_by_llm",
    [
        (
            {"family_name": "Miller"},
            "family_name",
            "What is your last name?",
            "I have Miller, spelled M I L E R. Is that right?",
            "No, it's Miller.",
            0,
        ),
        (
            {"family_name": "Miller"},
            "family_name",
            "What is your last name?",
            "I have Millar. Is that right?",
            "No, it's Miller.",
            0,
        ),
        (
            {"family_name": "Miller"},
            "family_name",
            "What is your last name?",
            "I have Miller, spelled M I L L E R. Is that right?",
            "Yes, that's right.",
            0,
        ),
        (
            {"seat_preference": "window"},
            "seat_preference",
            "What is your seat preference: Window, Aisle or Middle?",
            "I have Aisle. Is that right?",
            "No, it's window.",
            0,
        ),
        (
            {"nationality": "British"},
            "nationality",
            "What is your nationality?",
            "I have United Kingdom. Is that right?",
            "Yes, that's right.",
            0,
        ),
        (
            {"nationality": "British"},
            "nationality",
            "What is your nationality?",
            "I have Ireland. Is that right?",
            "No, it's British.",
            0,
        ),
        (
            {"nationality": "Ruritanian"},
            "nationality",
            "What is your nationality?",
            "I have Ruritania. Is that right?",
            "Yes, that's right.",
            1,
        ),  # a demonym the ear has no table for
    ],
)
async def test_the_person_says_yes_only_to_its_own_value(facts, topic, question, read_back, want, judged_by_llm):
    assert await _check(facts, topic, question, read_back) == (want, judged_by_llm)


@pytest.mark.parametrize(
    "said, want",
    [
        ("I have Millar. What is your date of birth?", "No, it's Miller."),  # the wrong one is put right first
        ("Thanks. I have Miller. What is your date of birth?", "I was born on 1990-03-14."),
        ("I have Miller, what is your date of birth?", "I was born on 1990-03-14."),  # Whisper's comma
        # bench: a garbled name heard as a question passed unchecked, and the form was submitted with it
        ("I have Miller like curse what? What is your date of birth?", "No, it's Miller."),
        ("I have Miller What is your date of birth?", "I was born on 1990-03-14."),  # no full stop: bench
        ("I have Millar What is your date of birth?", "No, it's Miller."),
        ("I ask you Millar, when were you born?", "No, it's Miller."),  # tiny.en's "I have" on the call (bench)
        ("I had Millar. What is your date of birth?", "No, it's Miller."),
    ],
)
async def test_a_value_read_back_with_the_next_question_is_judged_before_the_question_is_answered(said, want):
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("family_name")
    person = SimulatedPerson(
        Profile("p", {"family_name": "Miller", "date_of_birth": "1990-03-14"}), llm, emit=lambda *a, **k: None
    )
    assert await person.respond("What is your last name?") == "My last name is Miller."
    llm.topic = "date_of_birth"
    assert await person.respond(said) == want
    assert person.turns[-1].kind == ("check" if want.startswith("No") else "ask")


async def test_the_person_spells_when_asked_and_in_its_correction_after_a_second_failure():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"given_name": "Siobhan", "family_name": "O'Neill"}),
        AgreeingLLM("family_name"),
        emit=lambda *a, **k: None,
    )
    spelled = "O for Oscar, apostrophe, November, Echo, India, Lima, Lima"
    assert await person.respond("What is your last name?") == "My last name is O'Neill."
    assert await person.respond("I have O'Neil. Is that right?") == "No, it's O'Neill."
    assert await person.respond("Could you spell your last name for me, letter by letter?") == f"{spelled}."
    assert await person.respond("I have Oscar, apostrophe, November, Echo, India, Lima. Is that right?") == (
        f"No, it's O'Neill: {spelled}."
    )  # words failed twice: the correction is spelled
    assert await person.respond(f"I have {spelled}. Is that right?") == "Yes, that's right."


async def test_a_request_to_spell_is_about_the_detail_last_asked_however_whisper_wrote_its_name():
    """CI: "Could you spell your post good for me?" (Whisper's "postcode"): the persona's LLM
    named no detail, the person asked to hear it again, four times, and the form failed."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("postcode")
    person = SimulatedPerson(Profile("p", {"postcode": "M1 1AE", "town": "Manchester"}), llm, emit=lambda *a, **k: None)
    assert await person.respond("What is your postcode?") == "My postal code is M1 1AE."
    llm.topic = "none"  # the LLM no longer recognises the detail
    assert await person.respond("I have M for Mike, 111 Alpha Echo, is that right?") == "No, it's M1 1AE."
    spelled = await person.respond("Could you spell your post good for me? Letter by letter or type it in the box.")
    assert spelled.startswith("M for Mike") and "Echo" in spelled, spelled
    llm.topic = "town"  # a request that names another detail (CI: the e-mail, asked again later) is about that one
    assert (await person.respond("Could you spell your town for me?")).startswith("M for Mike, Alpha")


async def test_a_read_back_that_names_its_detail_is_judged_against_that_detail_not_the_last_one_given():
    """Bench, joaquin: a late spelling of the first name was read back as "I have it as
    Juliett, …" after the family name was asked; the person judged it against its first name,
    said yes, and the form got Joaquin for the family name. Named, it is a no."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"given_name": "Joaquin", "family_name": "Etxeberria"}),
        AgreeingLLM("given_name"),
        emit=lambda *a, **k: None,
    )
    joaquin = "Juliett, Oscar, Alpha, Quebec, Uniform, India, November"
    assert await person.respond("What is your first name?") == "My first name is Joaquin."
    assert (
        await person.respond(f"For your family name, I have it as {joaquin}. Is that right?") == "No, it's Etxeberria."
    )
    assert person.turns[-1].topic == "family_name"
    given_yes = f"For your given name, I have it as {joaquin}. Is that right?"
    assert await person.respond(given_yes) == "Yes, that's right."
    assert await person.respond(f"for your family name. I have it as {joaquin}. Is that right?") == (
        "No, it's Etxeberria: E for Echo, Tango, X-ray, Echo, Bravo, Echo, Romeo, Romeo, India, Alpha."
    )  # Whisper's
    assert await person.respond(given_yes) == "Yes, that's right."
    assert (
        await person.respond(f"Thanks. For your family name. I have it as {joaquin}. What is your date of birth?")
    ).startswith("No, it's Etxeberria: E for Echo")  # with the next question too


async def test_the_person_gives_its_full_name_as_one_detail():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("full_name")
    person = SimulatedPerson(
        Profile("p", {"given_name": "Siobhan", "family_name": "O'Neill", "email": "x@y.com"}),
        llm,
        emit=lambda *a, **k: None,
    )
    assert "full_name (full name" in person._system
    assert await person.respond("What is your full name?") == "My name is Siobhan O'Neill."
    assert await person.respond("I have Siobhan O'Neil. Is that right?") == "No, it's Siobhan O'Neill."
    assert await person.respond("I have Siobhan O'Neill. Is that right?") == "Yes, that's right."


def test_the_ear_takes_whispers_spelling_of_the_spelling_alphabet_and_o_for_oscar():
    assert hearing.states(
        "I have O for Oscar, apostrophe, November, Echo, India, Lena, Lena. Is that right?", "O'Neill"
    )
    assert not hearing.states("I have O for Oscar, November, Echo, India, Lena, Lena. Is that right?", "O'Neill x")
    assert not hearing.states("I have O for Oscar, apostrophe, November, Echo, India, Lena. Is that right?", "O'Neill")


def test_amid_a_spelling_the_ear_takes_a_word_close_to_a_spelling_alphabet_word():
    """CI: the bot's correct spelled read-back of davidmiller@example.com came through tiny.en as
    "…Alpha, Vicker, …, Lena, Lena, Echo, Romato…"; the person said no twice and the form failed."""
    heard = (
        "I have D for Delta, Alpha, Vicker, India, Delta, Mike, India, Lena, Lena, Echo, Romato at example.com. "
        "Is that right?"
    )
    assert hearing.states(heard, "davidmiller@example.com")
    assert not hearing.states(heard, "davidmiler@example.com")
    assert not hearing.states(heard.replace("Vicker", "Bicker"), "davidmiller@example.com")  # B is not V
    assert not hearing.states("I have Vicker. Is that right?", "V")  # only amid a spelling


class _Hands:
    """The person's hands at their seam: the page takes what is typed when ``takes``."""

    def __init__(self, takes: bool):
        self.takes, self.typed = takes, []

    async def __call__(self, value: str) -> bool:
        self.typed.append(value)
        return self.takes


async def test_offered_the_box_on_the_screen_the_person_types_the_value_there_and_says_nothing():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    events = []
    person = SimulatedPerson(
        Profile("p", {"postcode": "M1 1AE"}), AgreeingLLM("postcode"), emit=lambda e, **k: events.append((e, k))
    )
    offer = "Could you spell your postcode for me, letter by letter? Or type it in the box on your screen."
    hands = _Hands(takes=True)
    assert await person.respond(offer, type_in=hands) is None
    assert hands.typed == ["M1 1AE"] and ("person_typed", {"topic": "postcode", "value": "M1 1AE"}) in events
    refused = _Hands(takes=False)  # no box offered, or the page refused it: the person spells it
    assert (await person.respond(offer, type_in=refused)).startswith("M for Mike") and refused.typed == ["M1 1AE"]
    assert (await person.respond("Could you spell your postcode?", type_in=hands)).startswith("M for Mike")
    assert hands.typed == ["M1 1AE"]  # asked to spell only: no box to type in


async def test_told_the_form_refused_its_first_answer_the_person_types_or_spells_the_right_value():
    """CI: the person's first user name (taken on the server) was typed in the box; told "The
    username davidmiller is already taken", it typed davidmiller again, and the form was never sent."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"username": "davidmiller84"}, {"username": "davidmiller"}),
        AgreeingLLM("username"),
        emit=lambda e, **k: None,
    )
    hands = _Hands(takes=True)
    offer = "Could you spell your username for me, letter by letter, or type it in the box on your screen."
    assert await person.respond(offer, type_in=hands) is None and hands.typed == ["davidmiller"]
    refused = "Sorry, the form did not accept that: The username davidmiller is already taken. Please choose another. "
    assert await person.respond(refused + offer, type_in=hands) is None
    assert hands.typed == ["davidmiller", "davidmiller84"]
    assert (await person.respond("Could you spell your username for me, letter by letter?")).endswith("eight, four.")


async def test_the_persons_screen_types_in_the_box_the_phone_agent_offers():
    """:class:`Screen` against a stand-in for the server's routes: the box comes from the
    session's ``type_requested`` event; typing posts the value for that field, once."""
    import asyncio

    from aiohttp import web
    from aiohttp.test_utils import TestServer

    from appliance.simulate.call import Screen

    posted, offered = [], asyncio.Event()

    async def events(req):
        ws = web.WebSocketResponse()
        await ws.prepare(req)
        assert req.query["pc_id"] == "pc1"
        await ws.send_json({"event": "heard", "text": "M for Mike"})
        await ws.send_json({"event": "type_requested", "field": "postcode", "label": "Postcode"})
        offered.set()
        await ws.receive()
        return ws

    async def value(req):
        posted.append(await req.json())
        return web.json_response({"status": "sent"})

    app = web.Application()
    app.router.add_get("/api/events", events)
    app.router.add_post("/api/form/value", value)
    emitted = []
    async with TestServer(app) as srv:
        screen = Screen(str(srv.make_url("/")), "pc1", lambda e, **k: emitted.append(e))
        watching = asyncio.create_task(screen.run())
        await asyncio.wait_for(offered.wait(), 5)
        for _ in range(100):
            if screen.box:
                break
            await asyncio.sleep(0.02)
        assert await screen.type_in("M1 1AE")
        assert posted == [{"pc_id": "pc1", "field": "postcode", "value": "M1 1AE"}]
        assert not await screen.type_in("M1 1AE")  # typed once; no box offered now
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
    assert emitted == []


async def test_the_persona_asks_its_llm_about_the_question_alone_and_ends_with_one_full_stop():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("message")
    person = SimulatedPerson(Profile("p", {"message": "Please call me after 5 pm."}), llm, emit=lambda *a, **k: None)
    said = await person.respond(
        "Let's try again. What are your notes for the crew? Or type it in the box on your screen."
    )
    assert [c.user for c in llm.calls] == ["said: What are your notes for the crew?"]
    assert said == "My message is Please call me after 5 pm."
    # the page's reason before the question is not the question (bench: "national" was taken for the nationality)
    await person.respond(
        "Okay, submitting. Sorry, the form did not accept that: A national ID number has 9 digits; "
        "you entered 8. What is your national ID number?"
    )
    await person.respond("Thanks. What is your seat preference: Window, Aisle or Middle?")
    assert [c.user for c in llm.calls][1:] == [
        "said: What is your national ID number?",
        "said: What is your seat preference: Window, Aisle or Middle?",
    ]


def test_a_sentences_closing_full_stop_is_not_pronounced():
    """Bench, text person: "I have Please call me after 5 pm. Is that right?" was refused for the value
    "Please call me after 5 pm." (its full stop was compared)."""
    assert hearing.states("I have Please call me after 5 pm. Is that right?", "Please call me after 5 pm.")
    assert not hearing.states("I have Please call me after 6 pm. Is that right?", "Please call me after 5 pm.")
    assert not hearing.states("I have call me after 5 pm. Is that right?", "Please call me after 5 pm.")


async def test_a_question_that_names_a_detail_is_understood_without_the_llm():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("contact_method")
    facts = {
        "date_of_birth": "1990-03-14",
        "passport_number": "512873946",
        "email": "davidmiller@example.com",
        "phone": "+447700900123",
        "seat_preference": "window",
        "contact_method": "email",
    }
    person = SimulatedPerson(Profile("p", facts), llm, emit=lambda *a, **k: None)
    assert await person.respond("What is your passport number?") == "My passport number is 512873946."
    assert (
        await person.respond("I have five one two, eight seven three, nine four six. What's your email address?")
        == "My email is davidmiller@example.com."
    )
    assert (
        await person.respond("What is your seat preference: Window, Aisle or Middle?")
        == "My seat preference is window."
    )
    assert llm.asked("topic") == 0
    # a question that names two details, or none word for word, goes to the LLM
    assert await person.respond("How should we contact you? Email, Phone or Post?") == "Please contact me by email."
    assert llm.asked("topic") == 1


async def test_a_read_back_after_thanks_is_judged_too():
    said, _ = await _check(
        {"date_of_birth": "1990-03-14", "passport_number": "512873946"},
        "date_of_birth",
        "What is your date of birth?",
        "Thanks, I have the 14th of March 1991. What is your passport number?",
    )
    assert said == "No, it's 1990-03-14."

    # the person's own typing acknowledged is no read-back to judge (however Whisper wrote "typed")
    facts = {"date_of_birth": "1990-03-14", "passport_number": "512873946"}
    for typed in ("typed", "type"):
        said, _ = await _check(
            facts,
            "passport_number",
            "What is your date of birth?",
            f"Thanks, I have what you {typed}. What is your passport number?",
        )
        assert said == "My passport number is 512873946."


async def test_a_request_to_submit_and_for_consent_however_whisper_wrote_them():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"consent": "yes", "meal": "vegetarian"}), AgreeingLLM("none"), emit=lambda *a, **k: None
    )  # an LLM that finds no topic
    assert await person.respond("Do you accept the fair rules and the privacy? Notice...") == "Yes, I accept."
    assert (
        await person.respond("Here's what I'll submit: Vegetarian. Ciao I submit the form now.")
        == "Yes, please submit it."
    )


async def test_a_request_to_spell_is_about_the_detail_just_talked_about_whatever_the_llm_would_say():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"postcode": "M1 1AE", "message": "Please call me after 5 pm."}),
        AgreeingLLM("message"),
        emit=lambda *a, **k: None,
    )  # the LLM's wrong topic
    person._previous = "postcode"  # a postcode read-back was just rejected
    said = await person.respond("Sorry about that. Could you spell your post good for me, letter by letter?")
    assert said.startswith("M for Mike"), said


@pytest.mark.parametrize("heard", ["What is your data? Birth.", "What is your day to birth?"])
async def test_the_person_knows_how_whisper_writes_date_of_birth(heard):
    """Bench: "What is your data? Birth." was taken for the destination."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"date_of_birth": "1990-03-14", "destination": "Paris"}),
        AgreeingLLM("destination"),
        emit=lambda *a, **k: None,
    )
    assert await person.respond(heard) == "I was born on 1990-03-14."


async def test_the_person_expects_to_hear_back_the_detail_it_last_gave_in_plain_words():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("meal")
    person = SimulatedPerson(
        Profile("p", {"meal": "halal", "nationality": "Irish", "email": "a.b@example.com"}),
        llm,
        emit=lambda *a, **k: None,
    )
    assert person.expecting() == ""  # nothing said yet
    await person.respond("What is your meal?")
    assert person.expecting() == "halal."
    llm.topic = "nationality"
    await person.respond("What is your nationality?")
    assert person.expecting() == "Irish, Ireland."
    llm.topic = "email"
    await person.respond("What is your email?")
    assert person.expecting() == ""  # an e-mail's read-back is judged as heard


@pytest.mark.parametrize(
    "key, value, want",
    [
        ("nationality", "Irish", "Irish, Ireland."),
        ("destination", "New York", "New York."),
        ("meal", "halal", "halal."),
        ("country", "Ireland", "Ireland."),
        ("given_name", "Oluwaseun", ""),
        ("family_name", "Oyelaran", ""),
        ("username", "seunoye92", ""),
        ("date_of_birth", "1992-05-30", ""),
        ("passport_number", "ZB7301964", ""),
        ("email", "seun.oyelaran2@example.org", ""),
        ("phone", "+447911123456", ""),
        ("postcode", "SE15 4QL", ""),
        ("consent", True, ""),
    ],
)
def test_the_words_a_person_expects_back_are_its_worded_answers_not_names_codes_or_dates(key, value, want):
    assert hearing.own_words(key, value) == want


def test_a_spelling_read_back_as_it_is_said_is_judged_letter_by_letter():
    assert hearing.states("I have it as Golf, Romeo, Thulu, Echo, Golf, Oscar, Romeo, Tulu, is that right?", "Grzegorz")
    assert hearing.states("I have it as Lena, Kilo, 083, 9215. Is that right?", "LK0839215")
    assert not hearing.states("I have it as Golf, Romeo, Echo, Golf, Oscar, Romeo, Tulu, is that right?", "Grzegorz")
    assert hearing.states(
        "I have it as Delta, apostrophe, Alpha, Romeo, Charlie, Yankee, dash, Bravo, Yankee, Romeo, "
        "November, Echo. Is that right?",
        "D'Arcy-Byrne",
    )


@pytest.mark.parametrize("value", ["D'Arcy-Byrne", "O'Neill", "Nguyen-Tran", "Jean-Luc", "Hoa"])
def test_the_phone_agents_spelled_read_back_of_a_name_is_judged_with_its_symbols(value):
    """The phone agent's spelled read-back of a name with an apostrophe or a hyphen is a yes;
    the same read-back with that symbol (or a letter) left out is a no."""
    from appliance.phone_agent.fields import read_back
    from appliance.protocol import FieldSpec

    spec = FieldSpec(name="family_name", label="Family name", type="text", required=True)
    assert hearing.states(read_back(spec, value, spelled=True), value), read_back(spec, value, spelled=True)
    for miss in [value.replace("'", "", 1), value.replace("-", "", 1), value[:-1]]:
        if miss != value:
            assert not hearing.states(read_back(spec, miss, spelled=True), value), read_back(spec, miss, spelled=True)


@pytest.mark.parametrize(
    "facts, heard, want, asked",
    [
        # bench: "My nationality is Irish." came back "My nationality desires." three times; told the choices, a
        # person names the one that means its answer: a nationality or a country by the person's own table
        (
            {"nationality": "Irish"},
            "Sorry, I didn't get that. The choices are Australia. Brazil, Canada, Ireland, or "
            "United States. What is your nationality?",
            "My nationality is Ireland.",
            0,
        ),
        # bench, aoife: "Ireland" heard as "island"; the LLM picked France. The person names its own country
        (
            {"nationality": "Irish"},
            "Sorry, I didn't get that. The choices are France, India. island, Italy, or Japan. "
            "What is your nationality?",
            "My nationality is Ireland.",
            0,
        ),
        (
            {"country": "United Kingdom"},
            "Sorry, I didn't get that. The choices are France, UK, or Spain. What is your country?",
            "My country is UK.",
            0,
        ),
        (
            {"nationality": "Irish"},
            "Sorry, I didn't get that. The choices are Irish, Other. What is your nationality?",
            "My nationality is Irish.",
            0,
        ),  # its own word is listed: no need to ask
        ({"nationality": "Irish"}, "What is your nationality?", "My nationality is Irish.", 0),  # no choices told
        # a value the person has no table for: the LLM's pick
        (
            {"contact_method": "phone"},
            "Sorry, I didn't get that. The choices are Telephone, E-mail, or Post. How should we contact you?",
            "Please contact me by Telephone.",
            1,
        ),
    ],
)
async def test_told_the_choices_the_person_names_the_one_that_means_its_answer(facts, heard, want, asked):
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM(next(iter(facts)), option="Telephone")
    person = SimulatedPerson(Profile("p", facts), llm, emit=lambda *a, **k: None)
    assert await person.respond(heard) == want
    assert llm.asked("option") == asked


async def test_asked_which_of_the_pages_close_matches_the_person_picks_one_for_the_detail_asked():
    """Bench, tom-select-destination: asked "The page offers several for destination city: Rome,
    Italy; or Rome, Georgia, United States. Which one do you mean?", the person's LLM took it
    for the country and said "My country is United Kingdom"; the call handed the field over.
    The question is about the detail last asked; the person names one of the candidates."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("country", option="Rome, Italy")  # the LLM would take any question for the country
    person = SimulatedPerson(
        Profile("p", {"destination": "Rome", "country": "United Kingdom"}), llm, emit=lambda *a, **k: None
    )
    assert await person.respond("What is your destination?") == "I'd like to fly to Rome."
    said = await person.respond(
        "The page offers several for destination city: Rome, Italy; or Rome, Georgia, United States. "
        "Which one do you mean?"
    )
    assert said == "I'd like to fly to Rome, Italy."
    # as Whisper wrote it on the audio bench
    heard = "The page offers several for destination city. Rome, Italy, or Rome, Georgia, United States. Which one?"
    assert await person.respond(heard) == "I'd like to fly to Rome, Italy."
    assert llm.asked("option") == 2 and llm.asked("topic") == 0


async def test_the_person_is_not_sure_of_what_its_profile_says_and_adds_at_the_summary_once():
    """Profile ``not_sure`` and ``adds_at_summary`` (CONTRACTS "bench form", ``person``)."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    profile = Profile(
        "p", {"given_name": "Ada"}, not_sure=("middle_name",), adds_at_summary="Not yet: add my partner Sarah, please."
    )
    person = SimulatedPerson(profile, AgreeingLLM("middle_name"), emit=lambda *a, **k: None)
    assert await person.respond("What is your middle name?") == "I'm not sure."
    assert await person.respond("Shall I submit the form now?") == "Not yet: add my partner Sarah, please."
    assert await person.respond("Shall I submit the form now?") == "Yes, please submit it."


async def test_asked_the_first_of_its_answers_together_the_person_gives_them_all_once():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    profile = Profile(
        "p", {"email": "emma@example.com", "phone": "+4930123456"}, answers_together=(("email", "phone"),)
    )
    person = SimulatedPerson(profile, AgreeingLLM("email"), emit=lambda *a, **k: None)
    said = await person.respond("What is your email?")
    assert said == "My email is emma@example.com. And my phone number is +4930123456."
    assert await person.respond("What is your email?") == "My email is emma@example.com."  # once


@pytest.mark.parametrize(
    "facts, asked, reminder, want",
    [
        (  # bench, otp-verify (audio): "Sorry, could you say that again?" six times; a person with a screen types
            {"one_time_code": "428913"},
            "What is your security code?",
            "I'm waiting for you: You can type it in the box on your screen, or set it yourself in the preview.",
            "428913",
        ),
        (  # bench, xiaoling: the given name was handed over; reminded of it after the e-mail was asked
            {"given_name": "Xiaoling", "email": "xl@example.com"},
            "What is your email?",
            "I'm waiting for you to set your given name: You can type it in the box on your screen, or set it"
            " yourself in the preview on your page.",
            "Xiaoling",
        ),
    ],
)
async def test_told_to_type_a_detail_the_person_types_the_one_named_else_the_one_last_asked(
    facts, asked, reminder, want
):
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    typed: list[str] = []

    async def type_in(value: str) -> bool:
        typed.append(value)
        return True

    person = SimulatedPerson(Profile("p", facts), AgreeingLLM("none"), emit=lambda *a, **k: None)
    await person.respond(asked)
    assert await person.respond(reminder, type_in) is None and typed == [want]


async def test_offered_a_box_for_one_detail_and_asked_another_the_person_types_the_boxs_and_answers_the_other():
    """Bench, xiaoling: the given name's box was offered with the hand-over, and the next question
    (the nationality) came in the same breath: the person typed "Canadian" in the name's box, and
    it was sent."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    typed: list[str] = []

    async def type_in(value: str) -> bool:
        typed.append(value)
        return True

    person = SimulatedPerson(
        Profile("p", {"given_name": "Xiaoling", "nationality": "Canadian"}),
        AgreeingLLM("none"),
        emit=lambda *a, **k: None,
    )
    said = await person.respond(
        "Let's leave your given name for now: I couldn't get it in. You can type it in the box on your screen, or set"
        " it yourself in the preview on your page. What is your nationality?",
        type_in,
        box="Given name(s)",
    )
    assert typed == ["Xiaoling"] and said == "My nationality is Canadian."


async def test_a_question_whose_last_word_whisper_dropped_is_about_the_detail_it_starts():
    """Bench, otp-verify (audio): "What is your security?" (for "… security code?") was taken for
    the consent, and "Yes, I accept." was the answer."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"consent": "yes", "one_time_code": "428913"}), AgreeingLLM("consent"), emit=lambda *a, **k: None
    )
    assert await person.respond("What is your security?") == "The code is 428913."


async def test_the_iban_as_whisper_writes_it_is_asked_for_the_iban():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"given_name": "David", "iban": "GB29NWBK60161331926819"}),
        AgreeingLLM("given_name"),
        emit=lambda *a, **k: None,
    )
    assert await person.respond("I have David Miller. What is your Ivan?") == "My iban is GB29NWBK60161331926819."


@pytest.mark.parametrize(
    "read_back, want",
    [
        (
            "I have your email, emma at example dot com and your phone, plus four nine, three zero one, two three"
            " four five six. What is your date of birth?",
            None,
        ),
        (
            "I have your email, emma at example dot com and your phone, plus four nine, three zero one, two three"
            " four five seven. What is your date of birth?",
            "No, my phone number is +4930123456.",
        ),  # the second of the values said together is wrong: named, so the assistant knows which
        (
            "I have your email, emma at example dot org, and your phone, plus four nine, three zero one, two three"
            " four five six. Is that right?",
            "No, my email is emma@example.com.",
        ),
        (  # bench, aoife: the person's ear dropped the e-mail's own part, and a yes sent a misheard e-mail
            "I have your email. at example dot com in your phone number. Plus 4 9 3 0 1 Two three four five six."
            " Is that right?",
            "No, my email is emma@example.com.",
        ),
        (  # … or the whole value: a label heard alone confirms nothing
            "I have your email, and your phone number, plus four nine, three zero one, two three four five six."
            " Is that right?",
            "No, my email is emma@example.com.",
        ),
    ],
)
async def test_values_read_back_together_are_each_judged_against_their_own_detail(read_back, want):
    """Issue 27 item 7: the person objects to a garbled value inside a read-back of several
    values as it does to one read back alone."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    profile = Profile(
        "p",
        {"email": "emma@example.com", "phone": "+4930123456", "date_of_birth": "1990-03-14"},
        answers_together=(("email", "phone"),),
    )
    llm = AgreeingLLM("email")
    person = SimulatedPerson(profile, llm, emit=lambda *a, **k: None)
    await person.respond("What is your email?")
    llm.topic = "date_of_birth"
    said = await person.respond(read_back)
    if want is None:
        assert said in ("I was born on 1990-03-14.", "Yes, that's right.") and person.turns[-1].kind != "check"
    else:
        assert said == want and person.turns[-1].kind == "check"


_PASSPORT = {"given_name": "Ada", "passport_number": "X12345678"}
_DATES = {"date_of_birth": "1995-06-11", "travel_date": "2027-06-28"}


@pytest.mark.parametrize(
    "facts, stated, want",
    [
        # issue 27 item 3: a value left to the summary is confirmed there: the person says no to a wrong one
        (
            _PASSPORT,
            "Ada; your passport number, X-ray, one two three, four five six, seven eight",
            "Yes, please submit it.",
        ),
        (
            _PASSPORT,
            "Ada; your passport number, X-ray, one two three, four five six, seven nine",
            "No, my passport number is X12345678.",
        ),
        # bench, joaquin: a date read with the values after it was taken for a wrong date
        (
            _DATES,
            "Joaquin. Your date of birth, the 11th of June. 1995, Spain, Rome. 28 June, 2027",
            "Yes, please submit it.",
        ),
        (
            _DATES,
            "Joaquin. Your date of birth, the 12th of June. 1995, Spain, Rome. 28 June, 2027",
            "No, I was born on 1995-06-11.",
        ),
    ],
)
async def test_each_value_a_summary_states_for_the_first_time_is_checked_before_the_yes(facts, stated, want):
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(Profile("p", facts), AgreeingLLM("none"), emit=lambda *a, **k: None)
    assert await person.respond(f"Here is what I'll submit: {stated}. Shall I submit the form now?") == want


async def test_asked_for_two_details_in_one_question_the_person_gives_both():
    """Issue 27 item 1: one question for a section's details ("What are your full name and date of birth?")."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("none")
    profile = Profile("p", {"given_name": "Ada", "family_name": "Lovelace", "date_of_birth": "1990-12-10"})
    person = SimulatedPerson(profile, llm, emit=lambda *a, **k: None)
    said = await person.respond("What are your full name and date of birth?")
    assert said == "My name is Ada Lovelace. And I was born on 1990-12-10."
    assert llm.asked("topic") == 0
    assert await person.respond("What is your date of birth?") == "I was born on 1990-12-10."  # one at a time again


async def test_details_a_summary_names_as_confirmed_are_not_taken_for_wrong_values():
    """Bench, text: "…; and your passport number, email, and phone number as you confirmed
    them" was taken for the passport number "email" and corrected 1,000 times."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"passport_number": "512873946", "email": "d@example.com", "phone": "+447700900123"}),
        AgreeingLLM("none"),
        emit=lambda *a, **k: None,
    )
    summary = (
        "Here is what I'll submit: David Miller; Window; and your passport number, email, and phone number"
        " as you confirmed them. Shall I submit the form now?"
    )
    assert await person.respond(summary) == "Yes, please submit it."
    assert person._several_asked("email and phone number") == ("email", "phone")


@pytest.mark.parametrize(
    "heard, want",
    [
        (
            "I have 512. 873 946, is that right?",
            "Yes, that's right.",
        ),  # bench: its last group was cut off as a question
        (
            "Here's what I'll submit, David Miller, Window. Vegetarian and your passport number, email and phone"
            " number as you confirm them. cell I submit the form now.",
            "Yes, please submit it.",
        ),  # Whisper's "as you confirm them" and "cell I submit"
    ],
)
async def test_read_backs_and_summaries_as_whisper_wrote_them_on_the_bench(heard, want):
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    person = SimulatedPerson(
        Profile("p", {"passport_number": "512873946", "email": "d@example.com", "phone": "+447700900123"}),
        AgreeingLLM("passport_number"),
        emit=lambda *a, **k: None,
    )
    await person.respond("What is your passport number?")
    assert await person.respond(heard) == want


async def test_a_joint_read_back_whose_and_whisper_wrote_as_in_is_judged_item_by_item():
    """Bench: "I have David Miller in your date of birth, the 14th of March, 1990." was taken for the name "David Miller in"."""
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    llm = AgreeingLLM("none")
    profile = Profile("p", {"given_name": "David", "family_name": "Miller", "date_of_birth": "1990-03-14"})
    person = SimulatedPerson(profile, llm, emit=lambda *a, **k: None)
    await person.respond("What are your full name and date of birth?")
    llm.topic = "passport_number"
    said = await person.respond(
        "I have David Miller in your date of birth, the 14th of March, 1990. What is your passport number?"
    )
    assert person.turns[-1].kind != "check", said


async def test_asked_two_details_together_the_person_gives_each_ones_first_answer():
    from appliance.demo.profile import Profile
    from appliance.simulate.person import SimulatedPerson

    profile = Profile(
        "p",
        {"email": "d@example.com", "phone": "+447700900123"},
        first_answers={"phone": "07700900123"},
    )
    person = SimulatedPerson(profile, AgreeingLLM("none"), emit=lambda *a, **k: None)
    said = await person.respond("What are your email and phone number?")
    assert said == "My email is d@example.com. And my phone number is 07700900123."
