"""The person's hands: a value typed on the page (``POST /api/form/value``) or the terminal
(``=field value``) is published as a confirmed value and accepted without a read-back. No
model, no Chromium."""

from __future__ import annotations

import asyncio

import pytest

from appliance.bus import Envelope, InProcBus
from appliance.forms.typed import TypedValues, UnknownField, is_typed_line
from appliance.phone_agent.agent import PhoneAgent
from appliance.protocol import FieldSpec, InfoCollected, NeedInfo, StatusUpdate
from fakes import ScriptedLLM, ScriptedLine

EMAIL = FieldSpec(name="email", label="Email address", type="email", required=True)
FAMILY = FieldSpec(name="family_name", label="Family name", type="text", required=True)
DOB = FieldSpec(name="date_of_birth", label="Date of birth", type="date", required=True)


def test_typed_values_name_a_field_by_name_or_label_and_take_the_forms_form():
    typed = TypedValues()
    with pytest.raises(UnknownField, match="none yet"):
        typed.put("email", "a@b.c")
    typed.known([EMAIL, FAMILY, DOB])
    assert typed.put("email", " jo.m91@example.com ") == InfoCollected(field="email", value="jo.m91@example.com",
                                                                       confirmed=True)
    assert typed.put("FAMILY NAME", "O'Neill").field == "family_name"
    assert typed.put("date_of_birth", "14/03/1990").value == "1990-03-14"
    assert typed.put_line("=Family name Nic Giolla Phádraig").value == "Nic Giolla Phádraig"
    assert typed.put_line("=email a@b.c").field == "email"
    with pytest.raises(UnknownField, match=r"email \(Email address\)"):
        typed.put("passport", "X1")
    with pytest.raises(ValueError, match="empty"):
        typed.put("email", "  ")
    assert is_typed_line("=email a@b.c") and not is_typed_line("my email is a at b dot c")


async def test_a_typed_value_is_published_to_both_agents_and_accepted_without_a_read_back():
    """The phone agent is asking for the e-mail when the person types it: the question ends,
    the value is confirmed as typed, and the computer side gets it as a confirmed value."""
    async with InProcBus(None) as bus:
        typed = TypedValues()
        typed.known([EMAIL])
        line = ScriptedLine([])  # the person says nothing: the value comes from the keyboard
        agent = PhoneAgent(bus, line, ScriptedLLM(), task_id="t", purpose="the test form",
                           emit=lambda *a, **k: None, fields=(EMAIL,), answer_timeout_s=5)
        computer = bus.subscribe("computer")
        publisher = asyncio.create_task(typed.publish(bus, "t"))
        run = asyncio.create_task(agent.run())
        while "What is your email address?" not in line.said:
            await asyncio.sleep(0.01)
        typed.put("Email address", "jo.m91@example.com")
        got = []
        async for env in computer:
            got.append((env.sender, env.payload))
            if isinstance(env.payload, InfoCollected):
                await bus.publish(Envelope.new(StatusUpdate(state="canceled", message="test over"),
                                               sender="computer", recipient="phone"))
                break
        outcome = await asyncio.wait_for(run, 5)
        publisher.cancel()
    assert got == [("page", InfoCollected(field="email", value="jo.m91@example.com", confirmed=True))]
    assert line.said[-2] == "Thanks, I have what you typed."  # no read-back of a typed value
    assert agent.state.confirmed == {"email": "jo.m91@example.com"} and outcome.stats.typed == ("email",)
    assert not any("Is that right" in s for s in line.said)
