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
