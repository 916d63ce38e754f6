"""The phone agent on its text interface (a scripted person) with the embedded LLM, against a
scripted computer side on the bus: corrections, side questions, re-asks, no waiting on the
browser, declined authorisation; and the computer agent on a page that does not load."""

from __future__ import annotations

import asyncio

import pytest

from appliance.bus import Envelope, InProcBus
from appliance.protocol import FieldSpec
from appliance.computer_agent.agent import ComputerAgent
from appliance.phone_agent.agent import PhoneAgent, QueueLine

pytestmark = pytest.mark.slow

PHONE = FieldSpec(name="phone", label="Phone number", type="tel", required=True, pattern=r"\+[0-9]{8,15}",
                  format_hint="International format: + and country code")
NAME = FieldSpec(name="family_name", label="Family name", type="text", required=True)
SEAT = FieldSpec(name="seat_preference", label="Seat preference", type="radio", required=True,
                 options=("Window", "Aisle", "Middle"))


class ScriptedPerson(QueueLine):
    """Answers each bot turn with the next scripted line (when the bot starts listening);
    a None line is silence."""

    def __init__(self, answers: list[str | None]):
        super().__init__()
        self.answers, self.said = list(answers), []

    async def say(self, text: str) -> None:
        self.said.append(text)

    async def hear(self) -> str:
        if self.answers:
            answer = self.answers.pop(0)
            if answer is not None:
                self.heard(answer)
        return await super().hear()


async def run_phone(forms_cfg, llm, fields, answers, on_info):
    """Run a PhoneAgent with ``fields`` already known; ``on_info(env, publish)`` plays the computer side."""
    async with InProcBus(None) as bus:
        line = ScriptedPerson(answers)
        seen: list[Envelope] = []
        agent = PhoneAgent(bus, line, llm, task_id="t",
                           purpose="the test form", emit=lambda *a, **k: None, fields=tuple(fields),
                           answer_timeout_s=5)
        computer = bus.subscribe("computer")

        async def publish(type_: str, payload: dict) -> None:
            await bus.publish(Envelope.new(type_, payload, sender="computer", recipient="phone"))

        async def computer_side() -> None:
            async for env in computer:
                seen.append(env)
                await on_info(env, publish)

        side = asyncio.create_task(computer_side())
        outcome = await asyncio.wait_for(agent.run(), 120)
        side.cancel()
    return outcome, line, seen


async def test_correction_side_question_reask_and_submit(forms_cfg, forms_runtime):
    async def computer(env, publish):
        p = env.payload
        if env.type == "info_collected" and p.field == "phone" and not p.value.startswith("+"):
            await publish("format_invalid", {"field": "phone", "expected": "international format: + and country code",
                                             "got": p.value})
        if env.type == "info_collected" and p.field == "seat_preference" and p.confirmed:
            await publish("status_update", {"state": "auth-required", "message": "ready to submit"})
        if env.type == "submit_authorized":
            await publish("submitted", {"confirmation": "Booking confirmed"})

    answers = ["Why do you need my surname?", "It's Millar.", "No, it's Miller, spelled M I L L E R.", "Yes.",
               "It's 07700 900123.", "Yes, that's right.", "Plus four four, seven seven double zero, "
               "nine zero zero, one two three.", "Yes.", "A window seat, please.", "Yes, go ahead."]
    outcome, line, seen = await run_phone(forms_cfg, forms_runtime.llm("phone"), [NAME, PHONE, SEAT], answers, computer)
    assert outcome.status == "submitted" and outcome.waits_on_browser == 0
    confirmed = {e.payload.field: e.payload.value for e in seen if e.type == "info_collected" and e.payload.confirmed}
    assert confirmed == {"family_name": "Miller", "phone": "+447700900123", "seat_preference": "Window"}
    # the side question got an answer (from the LLM) and the question was asked again after it
    after_side = line.said[line.said.index("What is your family name?") + 1]
    assert after_side.endswith("What is your family name?") and len(after_side) > len("What is your family name?")
    assert any("did not accept" in s and "country code" in s for s in line.said)  # re-asked with the reason
    kinds = [e.type for e in seen]
    assert kinds.index("submit_authorized") > max(i for i, k in enumerate(kinds) if k == "info_collected")
    assert kinds[-1] == "task_completed"


async def test_silence_then_presence_reasks_and_declined_authorisation_sends_no_submit(forms_cfg, forms_runtime):
    async def computer(env, publish):
        if env.type == "info_collected" and env.payload.confirmed:
            await publish("status_update", {"state": "auth-required", "message": "ready to submit"})

    outcome, line, seen = await run_phone(forms_cfg, forms_runtime.llm("phone"), [SEAT],
                                          [None, "Yes, I'm here.", "Aisle.", "No, don't send it."], computer)
    # "Yes, I'm here." answered "Are you still there?", not the seat question: the question again
    question = "What is your seat preference: Window, Aisle or Middle?"
    assert line.said[1:4] == [question, "Are you still there?", question]
    assert [(e.payload.field, e.payload.value) for e in seen if e.type == "info_collected"] == [
        ("seat_preference", "Aisle")]
    assert outcome.status == "not_submitted"
    kinds = [e.type for e in seen]
    assert "submit_authorized" not in kinds and kinds[-2:] == ["status_update", "task_completed"]
    assert seen[-2].payload.state == "canceled"


async def test_page_that_does_not_load_is_reported(forms_cfg, forms_runtime):
    async with InProcBus(None) as bus:
        phone = bus.subscribe("phone")
        agent = ComputerAgent(forms_cfg.forms.model_copy(update={"page_load_timeout_ms": 3000}), bus,
                              forms_runtime.llm("computer"), "http://127.0.0.1:9/form",
                              task_id="t", emit=lambda *a, **k: None)
        outcome = await asyncio.wait_for(agent.run(), 60)
        got = []
        while len(got) < 2:
            got.append(await asyncio.wait_for(phone.__anext__(), 5))
    assert outcome.status == "failed" and "did not load" in outcome.detail
    assert got[0].type == "fill_error" and got[0].payload.field == "page"
    assert got[1].type == "status_update" and got[1].payload.state == "failed"
    assert agent.browser.processes() == []
