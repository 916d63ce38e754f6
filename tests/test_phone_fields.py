"""What the phone agent says about fields and how it reads answers: read-backs that spell
only what is ambiguous, fields asked together, the summary before submit, the page's answer
after it, typed values. No model."""

from __future__ import annotations

import pytest

from appliance.phone_agent import fields
from appliance.protocol import ONE_TIME_CODE, FieldSpec

GIVEN = FieldSpec(name="given_name", label="Given name(s)", type="text", required=True)
FAMILY = FieldSpec(name="family_name", label="Family name", type="text", required=True)
PASSPORT = FieldSpec(name="passport_number", label="Passport number", type="text", required=True)
EMAIL = FieldSpec(name="email", label="Email", type="email", required=True)
DOB = FieldSpec(name="date_of_birth", label="Date of birth", type="date", required=True)
SEAT = FieldSpec(name="seat", label="Seat", type="radio", required=True, options=("Window", "Aisle"))
CONSENT = FieldSpec(name="consent", label="I accept the fare rules", type="checkbox", required=True)
DAY = FieldSpec(
    name="dob_day",
    label="Companion's date of birth Day",
    type="select",
    required=True,
    options=tuple(f"{d:02d}" for d in range(1, 32)),
)
MONTH = FieldSpec(
    name="dob_month",
    label="Companion's date of birth Month",
    type="select",
    required=True,
    options=("January", "February", "March"),
)
YEAR = FieldSpec(
    name="dob_year", label="Companion's date of birth Year", type="select", required=True, options=("1991", "1990")
)


@pytest.mark.parametrize(
    "spec, value, heard, spelled, said",
    [
        (FAMILY, "O'Neill", "", False, "I have O'Neill. Is that right?"),
        (
            FAMILY,
            "O'Neill",
            "",
            True,
            "For your family name, I have it as Oscar, apostrophe, November, Echo, India, Lima, Lima. Is that right?",
        ),
        (
            PASSPORT,
            "K47118639",
            "",
            False,
            "For your passport number, I have it as Kilo, four seven one, one eight six, three nine. Is that right?",
        ),
        (
            EMAIL,
            "davidmiller@example.com",
            "It's david miller at example dot com",
            False,
            "I have david miller, at example dot com. Is that right?",
        ),
        (
            EMAIL,
            "jo.m9@example.com",
            "jo dot m nine at example dot com",
            False,
            "I have jo dot m nine, at example dot com. Is that right?",
        ),  # the person's own words give it exactly
        (
            EMAIL,
            "jo.m9@example.com",
            "joe dot m nine at example dot com",
            False,
            "For your email, I have it as Juliett, Oscar, dot, Mike, nine, at example dot com. Is that right?",
        ),  # they do not: spelled
    ],
)
def test_read_backs_spell_only_what_is_ambiguous(spec, value, heard, spelled, said):
    assert fields.read_back(spec, value, heard, spelled) == said


def test_spellable_kinds_and_the_spelling_question():
    assert [fields.spellable(s) for s in (GIVEN, PASSPORT, EMAIL, DOB, SEAT)] == [True, True, True, False, False]
    assert fields.spell_question(FAMILY) == "Could you spell your family name for me, letter by letter?"
    assert fields.spell_question(EMAIL, or_type=True).endswith("Or type it in the box on your screen.")
    assert fields.parse_spelled(PASSPORT, "Kilo, four seven one, one eight six, three nine") == "K47118639"
    assert fields.parse(FAMILY, "It's O'Neill, spelled O apostrophe N E I double L.") == "O'Neill"


@pytest.mark.parametrize(
    "full, parts",
    [
        ("David Miller", ("David", "Miller")),
        ("Mary Ann Smith", ("Mary Ann", "Smith")),
        ("Ana de la Cruz", ("Ana", "de la Cruz")),
        ("Ludwig van Beethoven", ("Ludwig", "van Beethoven")),
        ("Madonna", None),
    ],
)
def test_split_name(full, parts):
    assert fields.split_name(full) == parts


def test_fields_asked_together():
    assert fields.question_together("name", (GIVEN, FAMILY)) == "What is your full name?"
    assert fields.parse_together("name", (GIVEN, FAMILY), "My name is Siobhan O'Neill.") == ("Siobhan", "O'Neill")
    assert fields.stated_together("name", (GIVEN, FAMILY), ("David", "Miller")) == "I have David Miller."
    parts = (DAY, MONTH, YEAR)
    assert fields.question_together("date", parts) == "What is your companion's date of birth?"
    values = fields.parse_together("date", parts, "the fourteenth of March, nineteen ninety")
    assert values == ("14", "March", "1990")  # as the options are labelled
    assert fields.stated_together("date", parts, values) == "I have the fourteenth of March, nineteen ninety."
    assert fields.parse_together("date", parts, "next Tuesday") is None


def test_summary_before_submit():
    specs = {s.name: s for s in (GIVEN, FAMILY, DOB, PASSPORT, EMAIL, SEAT, CONSENT)}
    values = {
        "given_name": "David",
        "family_name": "Miller",
        "date_of_birth": "1990-03-14",
        "passport_number": "512873946",
        "email": "d@example.com",
        "seat": "Window",
        "consent": True,
    }
    assert fields.summary(specs, values) == (
        "Here is what I'll submit: David Miller; the fourteenth of March, nineteen ninety; Window; and your "
        "passport number and email as you confirmed them."
    )
    assert fields.summary({}, {}) == "All the fields are filled in."


def test_the_pages_answer():
    assert fields.page_answer("Booking confirmed\nYour booking reference is SKY4F2A1B.\nThank you, David.") == (
        "The page says: Your booking reference is Sierra, Kilo, Yankee, four, Foxtrot, two, Alpha, one, Bravo. "
    )
    assert fields.page_answer("Account created\nWelcome, emma! Your account is ready.") == (
        "The page says: Account created. Welcome, emma! Your account is ready. "
    )
    assert fields.page_answer("") == ""


def test_typed_values():
    assert fields.typed_value(DOB, "14/03/1990") == "1990-03-14"
    assert fields.typed_value(DOB, "1990-03-14") == "1990-03-14"
    assert fields.typed_value(SEAT, "aisle") == "Aisle"
    assert fields.typed_value(CONSENT, "yes") is True
    assert fields.typed_value(FAMILY, "  Siobhán ") == "Siobhán"


def test_a_dates_question_says_date_where_its_label_does_not():
    assert fields.question(DOB) == "What is your date of birth?"
    check_in = FieldSpec(
        name="date_of_birth", label="Check-in", type="date", required=True
    )  # as the 0.5B model named it
    assert fields.question(check_in) == "What is your check-in date?"
    assert fields.question(FieldSpec(name="when", label="When do you travel?", type="date", required=True)) == (
        "When do you travel?"
    )
    assert (
        fields.question(FieldSpec(name="note", label="Check-in", type="text", required=True))
        == "What is your check-in?"
    )


def test_questions_leave_out_optional_and_agree_with_a_plural():
    """Bench, text person: "What is your how can we help? (optional)?" and "What is your notes for the crew (optional)?"."""

    def q(label, type_="text"):
        return fields.question(FieldSpec(name="x", label=label, type=type_, required=False))

    assert q("How can we help? (optional)") == "How can we help?"
    assert q("Notes for the crew (optional)") == "What are your notes for the crew?"
    assert q("Checked bags", "number") == "How many checked bags?"
    assert q("Email address", "email") == "What is your email address?"
    assert q("Status") == "What is your status?"


def test_an_item_of_a_repeating_group_is_asked_by_its_group_and_index():
    """CONTRACTS "Field spec": ``group`` and ``group_index`` tell the second passenger's first
    name from the first's, where the label alone does not."""

    def q(label, group=None, index=None):
        spec = FieldSpec(name="x", label=label, type="text", required=True, group=group, group_index=index)
        return fields.question(spec)

    assert q("First name", "Passenger", 2) == "What is the first name of passenger 2?"
    assert q("Passenger 2: First name", "Passenger", 2) == "What is the first name of passenger 2?"
    assert q("First name") == "What is your first name?"


def test_a_free_text_answer_keeps_the_persons_own_words():
    """Bench, text person: "Please call me after 5 pm." was read back as "call me after 5 pm"."""
    assert (
        fields.parse(
            FieldSpec(name="notes", label="Notes", type="text", required=False),
            "My message is Please call me after 5 pm..",
        )
        == "Please call me after 5 pm."
    )
    assert (
        fields.parse(FieldSpec(name="company", label="Company", type="text", required=False), "Um, it's Acme Ltd.")
        == "Acme Ltd"
    )  # a short value: no full stop
    assert (
        fields.parse(
            FieldSpec(name="q", label="Question", type="text", required=False), "Is there parking near the office?"
        )
        == "Is there parking near the office?"
    )


def test_a_pages_numbers_are_said_digit_by_digit():
    """Bench: the page's "e.g. +447700900123" was read as one huge number (a 14 s refusal)."""
    assert fields.spoken_text("International format: + and country code, digits only, e.g. +447700900123") == (
        "International format: + and country code, digits only, for example plus four four seven, seven zero zero, "
        "nine zero zero, one two three"
    )
    assert fields.spoken_text("A national ID number has 9 digits; you entered 8.") == (
        "A national ID number has 9 digits; you entered 8."
    )  # short numbers are said as numbers


def test_the_asr_context_is_the_persons_names_in_page_order():
    city = FieldSpec(name="city", label="Town or city", type="text", required=True)
    full = FieldSpec(name="full_name", label="Full name", type="text", required=True)
    email = FieldSpec(name="email", label="Email", type="email", required=True)
    specs = {s.name: s for s in (GIVEN, FAMILY, city, email)}
    values = {"family_name": "O'Neill", "city": "Cork", "email": "s@example.com", "given_name": "Siobhan"}
    assert fields.asr_context(specs, values) == "Siobhan O'Neill"  # not the city, not the e-mail
    assert fields.asr_context(specs, {"city": "Cork"}) == ""
    assert fields.asr_context({"full_name": full}, {"full_name": "Ana de la Cruz"}) == "Ana de la Cruz"


def test_the_asr_context_of_a_choice_holds_its_options_after_the_names():
    meal = FieldSpec(
        name="meal", label="Meal", type="select", required=True, options=["Standard", "Vegetarian", "Halal", "Kosher"]
    )
    country = FieldSpec(
        name="country",
        label="Country",
        type="select",
        required=True,
        options=[f"Country {i}" for i in range(fields.CONTEXT_OPTIONS + 1)],
    )
    specs = {s.name: s for s in (GIVEN, FAMILY, meal, country)}
    names = {"given_name": "Oluwaseun", "family_name": "Oyelaran"}
    assert fields.asr_context(specs, names, meal) == "Oluwaseun Oyelaran. Standard, Vegetarian, Halal, Kosher."
    assert fields.asr_context(specs, {}, meal) == "Standard, Vegetarian, Halal, Kosher."
    assert fields.asr_context(specs, names, country) == "Oluwaseun Oyelaran"  # too many: the names would be cut off
    assert fields.asr_context(specs, names, GIVEN) == "Oluwaseun Oyelaran"


def test_a_full_name_said_for_one_part_of_it_keeps_that_part():
    specs = {s.name: s for s in (GIVEN, FAMILY)}
    assert fields.own_part(GIVEN, "David Miller", specs, {"family_name": "Miller"}) == "David"
    assert fields.own_part(FAMILY, "David Miller.", specs, {"given_name": "David"}) == "Miller."
    assert fields.own_part(GIVEN, "Mary Ann Smith", specs, {"family_name": "smith"}) == "Mary Ann"
    assert fields.own_part(FAMILY, "de la Cruz", specs, {"given_name": "Ana"}) == "de la Cruz"  # no given name in it
    assert fields.own_part(GIVEN, "Miller", specs, {"family_name": "Miller"}) == "Miller"  # nothing would be left
    assert fields.own_part(GIVEN, "David Miller", specs, {}) == "David Miller"  # the family name is not known yet


@pytest.mark.parametrize(
    "text, asked, named",
    [
        ("My username is David Miller.", "given_name", "username"),
        ("Yes, my e-mail address is d@example.com.", "username", "email"),
        ("My first name is David.", "family_name", "given_name"),
        ("My name is David Miller.", "given_name", None),  # fits the field asked
        ("My family name is Miller.", "family_name", None),
        ("My postal code is M1 1AE.", "postcode", None),  # no field is called that: not out of step
        ("It's Miller.", "family_name", None),
    ],
)
def test_an_answer_that_names_another_field_is_told_apart(text, asked, named):
    username = FieldSpec(name="username", label="Username", type="text", required=True)
    email = FieldSpec(name="email", label="Email address", type="email", required=True)
    postcode = FieldSpec(name="postcode", label="Postcode", type="text", required=True)
    specs = {s.name: s for s in (GIVEN, FAMILY, username, email, postcode)}
    got = fields.named_field(text, specs[asked], specs)
    assert (got.name if got else None) == named


def test_a_code_said_twice_is_one_value_where_only_one_copy_fits_the_pattern():
    """Bench: the correction "No, it's Papa, X-ray, 472, 9183, P for Papa, X-ray, 4, 7, …" was
    decoded as PX4729183PX4729183 and read back so."""
    passport = PASSPORT.model_copy(update={"pattern": "[A-Z0-9]{9}"})
    spelled = "Papa, X-ray, 472, 9183, P for Papa, X-ray, 4, 7, 2, 9, 1, 8, 3."
    assert fields.parse_spelled(passport, spelled) == "PX4729183"
    assert fields.parse(passport, "My passport number is PX4729183 PX4729183.") == "PX4729183"
    assert fields.once(passport, "PX4729183") == "PX4729183"
    long_code = passport.model_copy(update={"pattern": "[A-Z0-9]{18}"})  # the doubled value fits: as it is
    assert fields.parse_spelled(long_code, spelled) == "PX4729183PX4729183"
    no_pattern = passport.model_copy(update={"pattern": None})  # nothing tells a doubled value from a long one
    assert fields.parse_spelled(no_pattern, spelled) == "PX4729183PX4729183"
    assert fields.once(passport, "PX47PX47") == "PX47PX47"  # one copy does not fit either


def test_the_field_a_correction_names():
    specs = {s.name: s for s in (GIVEN, FAMILY, DOB, EMAIL)}
    assert fields.field_named("No, my family name is Millar.", specs) == FAMILY
    assert fields.field_named("No, my surname is Millar.", specs) == FAMILY
    assert fields.field_named("No, my date of birth is the 2nd of June.", specs) == DOB
    assert fields.field_named("My name is David Millar.", specs) is None  # names both parts of the name
    assert fields.field_named("No.", specs) is None


def test_a_yes_to_a_code_question_is_no_code():
    """Bench, otp-verify (audio): "Yes, I accept." to "What is your security code?" was read
    back as "yes" and typed into the code boxes."""
    code = FieldSpec(name="security_code", label="Security code", type="text", required=True)
    assert fields.kind(code) == "code"
    assert fields.parse(code, "Yes, I accept.") is None and fields.parse(code, "The code is 428913.") == "428913"


def test_a_one_time_code_holds_a_digit():
    """Bench, audio: "Yes, I accept." spelled back as Y, E, S was typed into the code boxes."""
    otp = FieldSpec(name="code", label="Security code", type="text", required=True, meaning=ONE_TIME_CODE)
    assert fields.parse_spelled(otp, "Yankee, Echo, Sierra.") is None
    assert fields.parse_spelled(otp, "Four, two, eight, nine, one, three.") == "428913"
