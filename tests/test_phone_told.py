"""What the person's request already told (issue 27, "nothing asked twice"): the LLM's copy of
the request's words per field is kept only where the request holds those words and the field's
parser takes them; the values are confirmed and said before the first question, never asked."""

from __future__ import annotations

from fakes import ScriptedLine, ScriptedLLM
from test_forms_phone import run_phone

from appliance.llm import decision
from appliance.phone_agent import told
from appliance.protocol import FieldSpec, InfoCollected, StatusUpdate

GIVEN = FieldSpec(name="given_name", label="First name", type="text", required=True)
FAMILY = FieldSpec(name="family_name", label="Last name", type="text", required=True)
EMAIL = FieldSpec(name="email", label="Email", type="email", required=True)
DOB = FieldSpec(name="date_of_birth", label="Date of birth", type="date", required=True)
TERMS = FieldSpec(name="terms", label="I accept the terms", type="checkbox", required=True, consent="required")
TASK = "Fill in this flight booking for me, I'm Ada Lovelace, my email is ada@example.com"


def answer(specs, **copies):
    model = told.decision_model(specs)
    return model.model_validate({k: copies.get(k) for k in decision.json_schema(model)["properties"]})


def test_only_words_the_request_holds_and_the_field_takes_are_kept():
    specs = (GIVEN, FAMILY, EMAIL, DOB)
    got = told.values(
        TASK,
        specs,
        answer(
            specs,
            **{
                "First name": "Ada",
                "Last name": "Lovelace",
                "Email": "ada@example.com",
                "Date of birth": "10 December 1815",
            },
        ),
    )
    assert got == {"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com"}  # no date was said
    # a guess in words the person never wrote, or a copy the field's parser refuses, is dropped
    assert told.values(TASK, (EMAIL,), answer((EMAIL,), Email="ada@example.org")) == {}
    assert told.values(TASK, (DOB,), answer((DOB,), **{"Date of birth": "Ada Lovelace"})) == {}


def test_a_whole_name_copied_for_both_name_fields_is_split():
    specs = (GIVEN, FAMILY)
    for copies in (
        {"First name": "Ada Lovelace", "Last name": "Ada Lovelace"},
        {"First name": "Ada Lovelace"},
        {"First name": "Ada Lovelace", "Last name": "null"},  # the 0.5B model writes null as a word too
    ):
        assert told.values(TASK, specs, answer(specs, **copies)) == {"given_name": "Ada", "family_name": "Lovelace"}


def test_consents_and_codes_are_never_taken_from_a_request():
    assert told.open_fields([GIVEN, TERMS, EMAIL]) == (GIVEN, EMAIL)
    assert told.request("Fill in the form and submit it.") == "" and told.request(TASK) == TASK


def test_the_statement_reads_the_values_back_in_one_sentence():
    specs = {"family_name": FAMILY, "email": EMAIL}
    said = told.statement(specs, {"family_name": "Lovelace", "email": "ada@example.com"})
    assert said == "From your request, I have your last name, Lovelace, and your email as you gave it."


async def test_what_the_request_said_is_not_asked_again():
    """At loop level: the request's name and e-mail are confirmed and said before the first
    question, which is the date of birth; the computer agent gets them confirmed."""

    async def computer(env, publish):
        if isinstance(env.payload, InfoCollected) and env.payload.field == "date_of_birth" and env.payload.confirmed:
            await publish(StatusUpdate(state="auth-required", message="ready to submit"))

    llm = ScriptedLLM(
        json=[{"First name": "Ada Lovelace", "Last name": None, "Email": "ada@example.com", "Date of birth": None}]
    )
    line = ScriptedLine(["The tenth of December 1990.", "Yes.", "No."])
    outcome, line, seen, _ = await run_phone([GIVEN, FAMILY, EMAIL, DOB], [], computer, llm=llm, line=line, task=TASK)
    questions = " ".join(line.said)
    assert "What is your first name" not in questions and "What is your email" not in questions
    assert line.said[1].startswith("From your request, I have your first name, Ada, your last name, Lovelace, and")
    assert line.said[1].endswith("What is your date of birth?")
    confirmed = [
        (e.payload.field, e.payload.value) for e in seen if isinstance(e.payload, InfoCollected) and e.payload.confirmed
    ]
    assert confirmed[:3] == [("given_name", "Ada"), ("family_name", "Lovelace"), ("email", "ada@example.com")]


def test_what_the_request_says_of_someone_else_or_a_companions_fields_is_not_the_persons():
    """The bootstrap-passengers task: "Book this for me and my partner Sarah Miller, born 5
    November 1992." gives the person neither a name nor a date of birth."""
    task = "Book this for me and my partner Sarah Miller, born 5 November 1992."
    specs = (GIVEN, FAMILY, DOB)
    copies = {"First name": "Sarah", "Last name": "Miller", "Date of birth": "5 November 1992"}
    assert told.values(task, specs, answer(specs, **copies)) == {}
    second = FieldSpec(name="companion_given_name", label="Passenger 2: First name", type="text", required=True)
    grouped = FieldSpec(name="x", label="First name", type="text", required=True, group="Passenger", group_index=2)
    assert told.open_fields([second, grouped, GIVEN]) == (GIVEN,)


PHONE = FieldSpec(name="phone", label="Phone", type="tel", required=True)


async def test_a_value_said_before_its_question_is_not_asked_again():
    """Issue 27, at loop level: the e-mail answer also gives the phone number (the LLM's copy of
    its words); both are read back together, once, with the next question, and the phone
    number is never asked."""

    async def computer(env, publish):
        if isinstance(env.payload, InfoCollected) and env.payload.field == "date_of_birth" and env.payload.confirmed:
            await publish(StatusUpdate(state="auth-required", message="ready to submit"))

    said = "My email is ada@example.com. And my phone number is plus 44 7700 900123."
    llm = ScriptedLLM(json=[{"Email": "ada@example.com", "Phone": "plus 44 7700 900123", "Date of birth": None}])
    line = ScriptedLine([said, "Yes.", "The tenth of December 1990.", "Yes.", "No."])
    _, line, seen, _ = await run_phone([EMAIL, PHONE, DOB], [], computer, llm=llm, line=line)
    assert not any("What is your phone" in s for s in line.said), line.said
    together = [s for s in line.said if s.startswith("I have your email, ada, at example dot com and your phone, plus")]
    assert len(together) == 1 and together[0].endswith("What is your date of birth?"), line.said
    confirmed = [
        (e.payload.field, e.payload.value) for e in seen if isinstance(e.payload, InfoCollected) and e.payload.confirmed
    ]
    assert confirmed[:2] == [("email", "ada@example.com"), ("phone", "+447700900123")]


def test_a_request_gives_a_name_only_where_it_introduces_the_person():
    """Bench, german-anmeldung (audio): "Melde mich bitte für den Deutschkurs an …" gave the
    first name "Melde Mich Bitte" and the family name "Bitte", confirmed and submitted."""
    task = "Melde mich bitte für den Deutschkurs an (sign me up for the German course); no newsletter."
    specs = (GIVEN, FAMILY)
    assert told.values(task, specs, answer(specs, **{"First name": "Melde mich bitte", "Last name": "bitte"})) == {}
    ok = "Please book it, my name is Ada Lovelace."
    assert told.values(ok, specs, answer(specs, **{"First name": "Ada", "Last name": "Lovelace"})) == {
        "given_name": "Ada",
        "family_name": "Lovelace",
    }
    notes = FieldSpec(name="notes", label="Notes", type="text", required=False)
    assert told.open_fields([notes, EMAIL]) == (EMAIL,)  # free text takes any words: never from a request


def test_a_default_task_gives_no_town_from_a_name_nor_a_postcode_from_its_address():
    """Bench, city-autocomplete (text): "Fill in and submit the form at http://127.0.0.1:42915/…
    for David Miller." gave the town "David Miller" and the postcode 42915, submitted."""
    task = told.request("Fill in and submit the form at http://127.0.0.1:42915/city-autocomplete for David Miller.")
    assert "42915" not in task
    city = FieldSpec(name="city", label="Town or city", type="text", required=True)
    postcode = FieldSpec(name="postcode", label="Postcode", type="text", required=True)
    specs = (city, postcode)
    assert told.values(task, specs, answer(specs, **{"Town or city": "David Miller", "Postcode": "David"})) == {}
    said = "Deliver it to me in Manchester, my postcode is M1 1AE."
    assert told.values(said, specs, answer(specs, **{"Town or city": "Manchester", "Postcode": "M1 1AE"})) == {
        "postcode": "M11AE"
    }


def test_a_field_whose_value_the_words_cannot_hold_is_not_given_to_the_llm():
    """Bench (audio): the LLM's copy of a default task over 11 fields kept the first question
    waiting 13 s; none of them could come from "… for David Miller."."""
    task = told.request("Fill in and submit the form at http://127.0.0.1:42915/flight for David Miller.")
    specs = (GIVEN, FAMILY, EMAIL, PHONE, DOB)
    assert [s.name for s in specs if told.may_give(task, s, request=True)] == []
    said = "I'm Ada Lovelace, ada at example dot com, born on the 10th of December 1990"
    assert [s.name for s in specs if told.may_give(said, s, request=True)] == [
        "given_name",
        "family_name",
        "email",
        "phone",  # six digits (of the date): it may, the LLM's copy and the parser decide
        "date_of_birth",
    ]
    assert told.may_give("my phone is 07700 900123", PHONE, request=True)
    assert told.may_give("And my name is Ada.", GIVEN, request=False)  # an answer needs no introduction
