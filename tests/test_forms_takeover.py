"""A form task taken over from a worker that died (issue 29): the history on the task's stream
(:mod:`appliance.computer_agent.takeover`), the fields named again by their announced names
without the LLM, every value put back without a question, and the task's submit mark."""

from __future__ import annotations

import asyncio
import time

from fakes import FakeBrowser, FakePage, FakePageDriver, ScriptedLLM, text_field

from appliance import config
from appliance.bus import Envelope, InProcBus
from appliance.computer_agent import fieldbook, takeover
from appliance.computer_agent.agent import ComputerAgent
from appliance.computer_agent.page import PageView
from appliance.computer_agent.verdict import unknown_outcome
from appliance.protocol import FieldSpec, InfoCollected, NeedInfo, Submitted, TaskTaken, Terminate

FIRST = text_field("f1", "given_name", "First name")
CITY = text_field("f2", "city", "Town or city")
#: a field of the form's second page, announced by the dead agent, not on the first page
LATER = FieldSpec(name="passport_number", label="Passport number", type="text", required=True)


def _env(payload, sender: str, recipient: str = "*", age_ms: int = 60_000) -> Envelope:
    env = Envelope.new(payload, sender=sender, recipient=recipient, task_id="t")
    return env.model_copy(update={"ts": env.ts - age_ms})


def _announced() -> tuple[FieldSpec, ...]:
    return (fieldbook.spec_for("first_name", FIRST), fieldbook.spec_for("town", CITY), LATER)


def test_the_history_of_a_task_taken_before_gives_its_announced_fields_and_confirmation():
    a, b, later = _announced()
    history = [
        _env(TaskTaken(worker="h:1"), "computer"),
        _env(NeedInfo(fields=(a, b)), "computer", "phone"),
        _env(InfoCollected(field="first_name", value="David", confirmed=True), "phone", "computer"),
        _env(NeedInfo(fields=(later,)), "computer", "phone"),
        _env(NeedInfo(fields=(FieldSpec(name="x", label="X", type="text", required=False),)), "page", "phone"),
    ]
    t = takeover.of(history)
    assert t is not None and t.fields == (a, b, later) and t.submitted is None
    assert takeover.of(history[1:]) is None  # nobody took the task before: a new task
    done = takeover.of([*history, _env(Submitted(confirmation="Booking ABC123"), "computer", "phone")])
    assert done.submitted == "Booking ABC123"


def test_a_field_takes_an_announced_name_only_when_its_spec_is_the_same():
    a, b, later = _announced()
    moved = text_field("f3", "email", "Email")
    relabelled = text_field("f2", "city", "City")  # the page changed: named afresh
    book, taken = fieldbook.inherit(fieldbook.FieldBook(), [FIRST, relabelled, moved], (a, b, later))
    assert taken == (a,) and fieldbook.name_of(book, FIRST) == "first_name"
    assert fieldbook.unnamed(book, [FIRST, relabelled, moved]) == (relabelled, moved)
    again, none = fieldbook.inherit(book, [FIRST, CITY], (a, b))  # "first_name" is taken already
    assert none == (b,) and fieldbook.name_of(again, CITY) == "town"


def test_the_words_for_an_unknown_outcome_quote_a_page_without_a_form():
    form = PageView("http://x/", "Apply", (FIRST,), (), document="d")
    done = PageView("http://x/", "Apply", (), (), document="d", headings=("Already applied",), text="We have it.")
    assert "can't tell whether" in unknown_outcome(form).reason and "says" not in unknown_outcome(form).reason
    assert "Already applied. We have it." in unknown_outcome(done).reason
    assert "won't send it again" in unknown_outcome(done).advice


async def _take_over(history: list[Envelope], mark: str | None, until) -> tuple[list, FakePage, object, list[Envelope]]:
    """A computer agent taking over task ``t`` whose stream held ``history`` (read by its own
    subscription from the start, as on Redis) and whose submit mark is ``mark``; the LLM has no
    answer at all (a naming call fails the test). Returns (events, page, outcome)."""
    page = FakePage([FIRST, CITY])
    events: list[tuple[str, dict]] = []
    async with InProcBus(None) as bus:
        if mark is not None:
            await bus.swap_mark(takeover.SUBMIT_MARK, mark)
        forms = config.Config().loopback().forms.model_copy(update={"poll_ms": 50})
        phone = bus.subscribe("phone")
        agent = ComputerAgent(
            forms,
            bus,
            ScriptedLLM(),
            page.url,
            task_id="t",
            emit=lambda ev, **kw: events.append((ev, kw)),
            browser=FakeBrowser(page),
            driver=FakePageDriver(),
            takeover=takeover.of(history),
        )
        run = asyncio.create_task(agent.run())
        t0 = time.monotonic()
        while not any(ev == "agent_started" for ev, _ in events):
            await asyncio.sleep(0.01)
        for env in history:  # the stream read from its start: the old envelopes come first
            if env.recipient in ("computer", "*") and env.type != "task_taken":
                await bus.publish(env)
        while not until(events, page) and time.monotonic() - t0 < 5:
            await asyncio.sleep(0.02)
        await bus.publish(Envelope.new(Terminate(reason="test over"), sender="test", recipient="*"))
        outcome = await asyncio.wait_for(run, 5)
        to_phone = []
        while phone_env := await _next(phone):
            if phone_env.sender == "computer":  # not the test's terminate (urgent: it overtakes the rest)
                to_phone.append(phone_env)
    return events, page, outcome, to_phone


async def _next(sub) -> Envelope | None:
    try:
        return await asyncio.wait_for(anext(sub), 0.05)
    except (TimeoutError, StopAsyncIteration):
        return None


def _history(*values: InfoCollected) -> list[Envelope]:
    return [
        _env(TaskTaken(worker="h:1"), "computer"),
        _env(NeedInfo(fields=_announced()), "computer", "phone"),
        *(_env(v, "phone", "computer") for v in values),
    ]


async def test_a_task_taken_over_puts_every_value_back_by_its_old_name_without_the_llm_or_a_question():
    history = _history(
        InfoCollected(field="first_name", value="Davd", confirmed=False),
        InfoCollected(field="first_name", value="David", confirmed=True),
        InfoCollected(field="town", value="Leeds", confirmed=True),
        InfoCollected(field="passport_number", value="123456789", confirmed=True),  # its page comes later
    )

    def filled(events, page) -> bool:
        return {f.key: f.value for f in page.fields} == {"given_name": "David", "city": "Leeds"}

    events, page, outcome, to_phone = await _take_over(history, None, filled)
    assert filled(events, page), page.fields
    [over] = [kw for ev, kw in events if ev == "task_taken_over"]
    assert over["fields"] == ["first_name", "town", "passport_number"] and not over["unknown_press"]
    assert {kw["name"]: kw["source"] for ev, kw in events if ev == "field_named"} == {
        "first_name": "taken_over",
        "town": "taken_over",
    }
    assert [kw["field"] for ev, kw in events if ev == "fill_deferred"] == ["passport_number"]
    # the phone agent hears that the form is opened again, is told no field anew and none is refused
    assert to_phone[0].payload.field == "page" and to_phone[0].payload.recovering
    assert not [e for e in to_phone if e.type == "need_info"]
    assert not [e for e in to_phone if e.type == "fill_error" and not e.payload.recovering], to_phone
    assert {e.payload.field for e in to_phone if e.type == "field_filled"} == {"first_name", "town"}
    assert outcome.status == "terminated"


async def test_a_submit_pressed_by_the_dead_agent_is_told_before_anything_else():
    history = _history(InfoCollected(field="first_name", value="David", confirmed=True))

    def told(events, page) -> bool:
        return any(ev == "fill" for ev, _ in events)

    events, page, outcome, to_phone = await _take_over(history, "e1 pressed", told)
    [over] = [kw for ev, kw in events if ev == "task_taken_over"]
    assert over["unknown_press"]
    said = [e.payload for e in to_phone if e.type == "step_failed"]
    assert said and said[0].problem == "no_result" and "can't tell whether" in said[0].reason
    # nothing is refilled before the person is told
    first_fill = next(i for i, (ev, _) in enumerate(events) if ev == "fill")
    assert next(i for i, (ev, _) in enumerate(events) if ev == "gave_up") < first_fill


async def test_a_task_whose_page_had_confirmed_the_submission_ends_without_a_browser():
    history = [*_history(), _env(Submitted(confirmation="Thank you"), "computer", "phone")]
    events, page, outcome, to_phone = await _take_over(history, "e1 pressed", lambda e, p: True)
    assert (outcome.status, outcome.detail) == ("submitted", "Thank you")
    assert not [ev for ev, _ in events if ev in ("page_loaded", "fill")] and to_phone == []
