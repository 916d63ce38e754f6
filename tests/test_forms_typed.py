"""The person's hands: a value typed on the page (``POST /api/form/value``) or the terminal
(``=field value``) becomes a confirmed value, published by the session's page side and
accepted without a read-back. No model, no Chromium."""

from __future__ import annotations

import asyncio

import pytest
from fakes import ScriptedLine, ScriptedLLM
from server_helpers import eventually

from appliance.bus import Envelope, InProcBus
from appliance.forms.session import PageSide
from appliance.forms.typed import TypedValues, UnknownField, is_typed_line
from appliance.phone_agent.agent import PhoneAgent
from appliance.protocol import FieldSpec, FormatInvalid, InfoCollected, StatusUpdate, Terminate

EMAIL = FieldSpec(name="email", label="Email address", type="email", required=True)
FAMILY = FieldSpec(name="family_name", label="Family name", type="text", required=True)
DOB = FieldSpec(name="date_of_birth", label="Date of birth", type="date", required=True)
EXTRAS = FieldSpec(name="extras", label="Extras", type="checkboxes", required=False, options=("Meal", "Bag"))
NEWS = FieldSpec(name="newsletter", label="Send me news", type="checkbox", required=False)


def test_typed_values_name_a_field_by_name_or_label_and_take_the_forms_form():
    typed = TypedValues()
    with pytest.raises(UnknownField, match="none yet"):
        typed.payload("email", "a@b.c")
    typed.known([EMAIL, FAMILY, DOB, EXTRAS, NEWS])
    assert typed.payload("email", " jo.m91@example.com ") == InfoCollected(
        field="email", value="jo.m91@example.com", confirmed=True
    )
    assert typed.payload("FAMILY NAME", "O'Neill").field == "family_name"
    assert typed.payload("date_of_birth", "14/03/1990").value == "1990-03-14"
    assert typed.payload_line("=Family name Nic Giolla Phádraig").value == "Nic Giolla Phádraig"
    assert typed.payload_line("=email a@b.c").field == "email"
    assert typed.payload("extras", [" Meal ", "Bag"]).value == ("Meal", "Bag")  # several choices, as the page sends
    assert typed.payload("newsletter", True).value is True and typed.payload("newsletter", "no").value is False
    with pytest.raises(UnknownField, match=r"email \(Email address\)"):
        typed.payload("passport", "X1")
    with pytest.raises(ValueError, match="empty"):
        typed.payload("email", "  ")
    with pytest.raises(ValueError, match="empty"):
        typed.payload("extras", [])
    with pytest.raises(ValueError, match="900,000 characters; a field takes at most 5,000"):
        typed.payload("family_name", "x" * 900_000)
    with pytest.raises(ValueError):  # pydantic's ValidationError: not a field value at all
        typed.payload("email", {"x": 1})
    assert is_typed_line("=email a@b.c") and not is_typed_line("my email is a at b dot c")


async def test_a_typed_value_is_published_to_both_agents_and_accepted_without_a_read_back():
    """The phone agent is asking for the e-mail when the person types it: the question ends,
    the value is confirmed as typed, and the computer side gets it as a confirmed value."""
    async with InProcBus(None) as bus:
        side = PageSide()
        side.bind(bus, "t")
        side.typed.known([EMAIL])
        line = ScriptedLine([])  # the person says nothing: the value comes from the keyboard
        agent = PhoneAgent(
            bus,
            line,
            ScriptedLLM(),
            task_id="t",
            purpose="the test form",
            emit=lambda *a, **k: None,
            fields=(EMAIL,),
            answer_timeout_s=5,
        )
        computer = bus.subscribe("computer")
        run = asyncio.create_task(agent.run())
        await eventually(lambda: "What is your email address?" in line.said, 5, "the question")
        await side.value("Email address", "jo.m91@example.com")
        got = []
        async for env in computer:
            got.append((env.sender, env.payload))
            if isinstance(env.payload, InfoCollected):
                await bus.publish(
                    Envelope.new(
                        StatusUpdate(state="canceled", message="test over"), sender="computer", recipient="phone"
                    )
                )
                break
        outcome = await asyncio.wait_for(run, 5)
    assert got == [("page", InfoCollected(field="email", value="jo.m91@example.com", confirmed=True))]
    assert line.said[-2] == "Thanks, I have what you typed."  # no read-back of a typed value
    assert agent.state.confirmed == {"email": "jo.m91@example.com"} and outcome.stats.typed == ("email",)
    assert not any("Is that right" in s for s in line.said)


async def test_a_terminal_line_goes_on_the_bus_as_the_terminal():
    async with InProcBus(None) as bus:
        hands = PageSide(sender="terminal")
        with pytest.raises(RuntimeError, match="no form session"):
            await hands.value_line("=email a@b.c")
        hands.bind(bus, "t")
        hands.typed.known([EMAIL])
        computer = bus.subscribe("computer")
        payload = await hands.value_line("=Email address jo@example.com")
        env = await anext(computer)
    assert (env.sender, env.recipient, env.payload) == ("terminal", "*", payload)
    assert payload == InfoCollected(field="email", value="jo@example.com", confirmed=True)


async def test_a_typed_value_the_page_refuses_is_asked_again_with_the_pages_reason():
    """The person types the e-mail, the page refuses it: the field is asked again (the typed
    value no longer stands), the page's reason first."""

    def said(what: str) -> bool:
        return any(what in s for s in line.said)

    async with InProcBus(None) as bus:
        side = PageSide()
        side.bind(bus, "t")
        side.typed.known([EMAIL])
        line = ScriptedLine([None, None])  # silent: the value is typed, then the field is asked again
        agent = PhoneAgent(
            bus,
            line,
            ScriptedLLM(),
            task_id="t",
            purpose="the test form",
            emit=lambda *a, **k: None,
            fields=(EMAIL,),
            answer_timeout_s=5,
        )
        run = asyncio.create_task(agent.run())
        try:
            await eventually(lambda: said("What is your email address?"), 5, "the question")
            await side.value("email", "jo@example")
            await eventually(lambda: said("Thanks, I have what you typed."), 5, "the typed value taken")
            await bus.publish(
                Envelope.new(
                    FormatInvalid(field="email", expected="an e-mail address", got="jo@example"),
                    sender="computer",
                    recipient="phone",
                )
            )
            await eventually(lambda: said("did not accept"), 5, "the field asked again with the page's reason")
        finally:
            await bus.publish(Envelope.new(Terminate(reason="test over"), sender="test", recipient="*"))
            await asyncio.wait_for(run, 5)
    refused = next(s for s in line.said if "did not accept" in s)
    assert refused == "Sorry, the form did not accept that: it needs an e-mail address. What is your email address?"
    assert "email" not in agent.state.typed and "email" not in agent.state.confirmed
