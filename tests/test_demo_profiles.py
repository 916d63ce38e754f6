"""The demo profiles and form specs load and evaluate (no browser)."""

from __future__ import annotations

import pytest

from appliance.demo.profile import ProfileError, load_profile
from appliance.demo.spec import evaluate, load_specs


def test_profiles_and_specs():
    specs = load_specs()
    assert {"flight", "register", "flight-injected"} <= set(specs)
    david = load_profile("david")
    assert david.facts["date_of_birth"] == "1990-03-14" and david.first_answers["username"] == "davidmiller"
    flight = specs["flight"]
    exp = {r.name: r.expected(david) for r in flight.fields}
    assert exp["nationality"] == "GB" and exp["consent"] == "on" and exp["seat"] == "window"
    assert not any(r.ok for r in evaluate(flight, david, None))
    assert [r.field for r in evaluate(flight, david, {"agent_notes": "x"}) if r.field == "agent_notes"]
    with pytest.raises(ProfileError):
        load_profile("no-such-person")


HARD = ("siobhan", "oluwaseun", "hoa", "grzegorz", "joaquin", "aoife", "xiaoling")


@pytest.mark.parametrize("name", HARD)
def test_hard_profiles_hold_values_the_flight_form_takes(name):
    """Names and addresses tiny.en gets wrong (issue 12), in values the flight page accepts."""
    import re

    flight = load_specs()["flight"]
    p = load_profile(name)
    exp = {r.name: r.expected(p) for r in flight.fields}
    assert re.fullmatch(r"[A-Z0-9]{9}", exp["passport_number"]) and re.search(r"\d", exp["passport_number"])
    assert re.fullmatch(r"\+[0-9]{8,15}", exp["phone"])
    assert re.fullmatch(r"[a-z0-9]+(?:[._-][a-z0-9]+)+@example\.(?:com|org|net)", exp["email"])
    assert re.search(r"\d", exp["email"])  # an e-mail with digits and a dot
    mapped = {r.name: r for r in flight.fields if r.values}
    for field, rule in mapped.items():
        assert exp[field] in rule.values.values(), (field, exp[field])
    assert p.facts["travel_date"] > "2027-01-01"


def test_a_first_wrong_answer_is_played_only_on_the_pages_made_to_refuse_it():
    """Bench, text person: on shadow-iframe (a phone field that takes any format) the national number
    David gives first for the flight form stayed in the page, and the run failed on the profile."""
    from appliance.demo.spec import load_specs

    specs, david = load_specs(), load_profile("david")
    assert specs["flight"].person(david).first_answers == {"phone": "07700900123"}
    assert specs["register"].person(david).first_answers == {"username": "davidmiller"}
    assert specs["id-check"].person(david).first_answers == {"id_number": "73910452"}
    assert specs["shadow-iframe"].person(david).first_answers == {}
    assert specs["shadow-iframe"].person(david).facts == david.facts
