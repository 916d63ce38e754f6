"""Never stuck in silence: both agents on the bus over a stand-in page (no Chromium), a
scripted person and a scripted LLM. A widget no strategy can operate is tried with a
different strategy, given up (an event in the recording), and the person hears what is
wrong and what they can do within 5 s — even while the phone agent waits for an answer;
a page with nothing to press, and a "don't submit" task, are said too. A browser that dies
mid-form is replaced, the person is told, and nothing they said is asked again."""

from __future__ import annotations

import asyncio
import time

import pytest
from fakes import FakeBrowser, FakePage, FakePageDriver, ScriptedLine, ScriptedLLM, names_from_labels, text_field

from appliance import config
from appliance.bus import Envelope, InProcBus
from appliance.computer_agent.agent import ComputerAgent
from appliance.computer_agent.page import ButtonView, FieldView, PageView
from appliance.phone_agent.agent import PhoneAgent
from appliance.phone_agent.sayings import REOPENING
from appliance.protocol import InfoCollected, StatusUpdate, SubmitAuthorized, Terminate


async def run_both(
    monkeypatch,
    page: FakePage,
    answers,
    *,
    task: str = "",
    until,
    deadline_s: float = 20,
    browser: FakeBrowser | None = None,
):
    """Both agents on ``page`` (in ``browser``; default: a browser holding it); ``until(events)``
    ends the session (terminate). Returns (computer outcome, phone outcome, line, events as
    (monotonic s, event, fields))."""
    cfg = config.Config().loopback()
    events: list[tuple[float, str, dict]] = []

    def emit(ev: str, **kw) -> None:
        events.append((time.monotonic(), ev, kw))

    async with InProcBus(None) as bus:
        line = ScriptedLine(answers)
        forms = cfg.forms.model_copy(update={"poll_ms": 50, "review_timeout_s": 60.0})
        computer = ComputerAgent(
            forms,
            bus,
            ScriptedLLM(json=[names_from_labels] * 5),
            page.url,
            task_id="t",
            emit=emit,
            task=task,
            browser=browser or FakeBrowser(page),
            driver=FakePageDriver(),
        )
        phone = PhoneAgent(
            bus, line, ScriptedLLM(), task_id="t", purpose="the address form", emit=emit, answer_timeout_s=30.0
        )  # long: only the give-up can cut the wait for an answer short
        runs = asyncio.gather(phone.run(), computer.run())  # the phone listens first, as in a session
        t0 = time.monotonic()
        while not until(events) and time.monotonic() - t0 < deadline_s:
            await asyncio.sleep(0.05)
        await bus.publish(Envelope.new(Terminate(reason="test over"), sender="test", recipient="*"))
        phone_done, done = await asyncio.wait_for(runs, 10)
    return done, phone_done, line, events


def _at(events, name: str, **match) -> tuple[float, dict]:
    return next((t, kw) for t, ev, kw in events if ev == name and all(kw.get(k) == v for k, v in match.items()))


async def test_a_widget_no_strategy_can_operate_is_explained_within_5_s_while_an_answer_is_awaited(monkeypatch):
    page = FakePage(
        [text_field("f1", "city", "Town or city", "autocomplete"), text_field("f2", "given_name", "First name")],
        broken={"autocomplete"},
    )
    # the town is read back and the person says nothing yet (None): the give-up arrives during that wait
    answers = ["Manchester.", None, "David.", "Yes."]

    def over(events):
        return any(
            ev == "bus_out"
            and kw["type"] == "info_collected"
            and kw["payload"]["field"] == "first_name"
            and kw["payload"]["confirmed"]
            for _, ev, kw in events
        )

    computer, phone, line, events = await run_both(monkeypatch, page, answers, until=over)
    # two different ways were tried on the town before giving up; the name went in at once
    assert [s for k, s in page.fills if k == "city"] == ["autocomplete", "autocomplete_slowly"]
    gave_up_at, gave_up = _at(events, "gave_up", problem="widget")
    assert gave_up["field"] == "town_or_city" and "suggestions" in gave_up["reason"]
    said_at, said = _at(events, "failure_explained")
    assert said["problem"] == "widget" and said_at - gave_up_at < 5.0
    explanation = next(s for s in line.said if "could not set Town or city" in s)
    assert "no list of suggestions came up" in explanation and "preview" in explanation
    # the wait for the read-back answer was cut short: the explanation came right after the question
    assert line.said.index(explanation) == line.said.index("I have Manchester. What is your first name?") + 1
    assert not any("still working" in s for s in line.said)
    # the town is the person's now: not asked again; the next field is
    assert line.said[line.said.index(explanation) + 1] == "What is your first name?"
    assert phone.explained_failures == 1 and computer.status == "terminated"
    assert computer.actions["fill"] == 2  # the name (as heard, then confirmed); the failed tries did nothing


async def test_a_page_with_nothing_to_press_is_explained_and_not_repeated(monkeypatch):
    page = FakePage([text_field("f2", "given_name", "First name")], buttons=())

    def over(events):
        return any(ev == "failure_explained" for _, ev, _ in events) and len(events) > 0

    computer, phone, line, events = await run_both(monkeypatch, page, ["David.", "Yes."], until=over)
    gave_up_at, gave_up = _at(events, "gave_up")
    assert gave_up["problem"] == "no_control"
    said_at, _ = _at(events, "failure_explained", problem="no_control")
    assert said_at - gave_up_at < 5.0
    assert any(
        "can't find a button to go on or to send it" in s and "press it yourself in the preview" in s for s in line.said
    )
    assert [ev for _, ev, _ in events].count("gave_up") == 1


async def test_a_give_up_the_person_does_not_act_on_ends_the_call_unsent_after_the_reminders(monkeypatch):

    monkeypatch.setattr("appliance.phone_agent.agent.HOLD_S", 0.1)
    monkeypatch.setattr("appliance.phone_agent.agent.HANDS_REMINDERS", 2)
    page = FakePage([text_field("f2", "given_name", "First name")], buttons=())

    def over(events):
        return any(ev == "agent_finished" and kw["agent"] == "phone" for _, ev, kw in events)

    computer, phone, line, events = await run_both(monkeypatch, page, ["David.", "Yes."], until=over)
    reminders = [s for s in line.said if s.startswith("I'm waiting for you: ")]
    assert len(reminders) == 2 and "press it yourself in the preview" in reminders[0]
    assert line.said[-1].startswith("I'll stop here: nothing has changed, and the form is not submitted.")
    assert phone.status == "failed" and "did not act on" in phone.detail
    assert computer.status == "not_submitted" and "did not act on" in computer.detail  # the task ended with the call


async def test_dont_submit_fills_everything_and_leaves_it_for_review(monkeypatch):
    page = FakePage([text_field("f2", "given_name", "First name")])

    def over(events):
        return any(ev == "agent_finished" and kw["agent"] == "phone" for _, ev, kw in events)

    computer, phone, line, events = await run_both(
        monkeypatch,
        page,
        ["David.", "Yes."],
        task="Fill it in but don't submit it, I want to check it first.",
        until=over,
    )
    assert phone.status == "review"
    assert any("waiting for your review" in s and "I have not submitted it" in s for s in line.said)
    states = [kw["payload"]["state"] for _, ev, kw in events if ev == "bus_out" and kw["type"] == "status_update"]
    assert "review" in states and "auth-required" not in states
    assert not any(kw.get("what") == "press_final_submit" for _, ev, kw in events)
    # the call ended; the computer agent stayed in review (its browser up) until the test ended it
    assert computer.status == "terminated"


@pytest.mark.parametrize(
    "answer, value",
    [
        ("Manchester, United Kingdom", "Manchester, United Kingdom"),
        ("the one in New Hampshire", "Manchester, New Hampshire, United States"),
    ],
)
async def test_close_matches_are_asked_as_a_choice_and_the_pick_is_sent(answer, value):
    from appliance.protocol import FieldSpec, FormatInvalid

    city = FieldSpec(name="city", label="Town or city", type="text", required=True)
    candidates = ("Manchester, United Kingdom", "Manchester, New Hampshire, United States")
    async with InProcBus(None) as bus:
        line = ScriptedLine(["Manchester.", "Yes.", answer])
        phone = PhoneAgent(
            bus, line, ScriptedLLM(), task_id="t", purpose="p", emit=lambda *a, **k: None, fields=(city,)
        )
        computer = bus.subscribe("computer")
        run = asyncio.create_task(phone.run())
        got = []
        async with asyncio.timeout(10):
            async for env in computer:
                got.append(env.payload)
                if isinstance(env.payload, InfoCollected) and env.payload.confirmed and len(got) == 2:
                    await bus.publish(
                        Envelope.new(
                            FormatInvalid(
                                field="city", expected=" or ".join(candidates), got="Manchester", candidates=candidates
                            ),
                            sender="computer",
                            recipient="phone",
                        )
                    )
                if isinstance(env.payload, InfoCollected) and env.payload.value == value:
                    break
        await bus.publish(Envelope.new(StatusUpdate(state="canceled"), sender="computer", recipient="phone"))
        await asyncio.wait_for(run, 5)
    assert (
        "The page offers several for town or city: Manchester, United Kingdom; or Manchester, New Hampshire, "
        "United States. Which one do you mean?"
    ) in line.said
    assert got[-1] == InfoCollected(field="city", value=value, confirmed=True)  # a pick needs no read-back


async def test_a_sign_in_page_is_the_persons_and_no_password_is_ever_asked(monkeypatch):
    password = FieldView(**{**text_field("f3", "password", "Password").__dict__, "kind": "password"})
    sign_in = ButtonView(ref="b2", text="Sign in", type="submit", in_form=True, name="", formnovalidate=False)
    page = FakePage([text_field("f1", "email", "Email"), password], buttons=(sign_in,))

    def over(events):
        return any(ev == "failure_explained" for _, ev, _ in events)

    computer, phone, line, events = await run_both(monkeypatch, page, [], until=over)
    _, gave_up = _at(events, "gave_up")
    assert gave_up["problem"] == "login" and "sign in" in gave_up["reason"]
    assert any("sign in yourself in the preview" in s for s in line.said), line.said
    assert not any(ev == "bus_out" and kw["type"] == "need_info" for _, ev, kw in events)  # nothing asked
    assert page.fills == [] and not any("password" in s.lower() for s in line.said if s.startswith("What"))


class _MortalPage(FakePage):
    """A page that dies, as when Chromium is killed, after ``die_after`` fills (None: never)."""

    def __init__(self, browser: "_DyingBrowser", fields, die_after: int | None):
        super().__init__(fields)
        self.browser, self.die_after, self.dead = browser, die_after, False

    def _alive(self) -> None:
        if self.dead:
            from playwright.async_api import Error as PlaywrightError

            raise PlaywrightError("Target page, context or browser has been closed")

    async def wait_for_load_state(self, *a, **k) -> None:
        self._alive()

    async def perceive(self, page) -> PageView:
        self._alive()
        return await super().perceive(page)

    async def fill(self, page, f, value, timeout_ms, *, strategy=None, actions=None):
        self._alive()
        out = await super().fill(page, f, value, timeout_ms, strategy=strategy, actions=actions)
        if len(self.fills) == self.die_after:
            self.dead, self.browser.lost = True, "Chromium exited"
        return out


class _DyingBrowser(FakeBrowser):
    """Its first page dies after ``die_after`` fills; each later start opens the form afresh."""

    def __init__(self, fields, die_after: int):
        self.form, self.starts = fields, 0
        super().__init__(_MortalPage(self, fields, die_after))
        self.pages = [self.page]

    async def start(self) -> FakePage:
        self.starts += 1
        if self.starts > 1:
            self.lost, self.page = None, _MortalPage(self, self.form, None)
            self.pages.append(self.page)
        return self.page


async def test_a_browser_that_dies_mid_form_is_replaced_and_nothing_said_is_asked_again(monkeypatch):
    browser = _DyingBrowser(
        [text_field("f1", "given_name", "First name"), text_field("f2", "city", "Town or city")], die_after=2
    )  # "David" as heard, then confirmed: then the browser dies

    def values(page: FakePage) -> dict[str, str]:
        return {f.key: f.value for f in page.fields}

    def over(events):
        return len(browser.pages) == 2 and values(browser.pages[1]) == {"given_name": "David", "city": "Manchester"}

    computer, phone, line, events = await run_both(
        monkeypatch, browser.page, ["David.", "Yes.", "Manchester.", "Yes."], browser=browser, until=over
    )
    assert over(events), line.said
    _, lost = _at(events, "browser_lost")
    assert lost["values"] == ["first_name"] and lost["restart"] == 1 and browser.closes >= 1
    assert values(browser.pages[0]) == {"given_name": "David", "city": ""}  # the dead page had the name only
    # the person is told once, and the name is put back without being asked again
    assert line.said.count(REOPENING) == 1
    assert line.said.count("What is your first name?") == 1
    confirmed = [
        kw["payload"]["field"]
        for _, ev, kw in events
        if ev == "bus_out" and kw["type"] == "info_collected" and kw["payload"]["confirmed"]
    ]
    assert confirmed == ["first_name", "town_or_city"]
    assert ("given_name", "native") in browser.pages[1].fills
    assert computer.status == "terminated"


async def _go_ahead(env: Envelope) -> tuple[list[tuple[str, dict]], object]:
    """A computer agent on a one-field fake page gets ``env`` (a ``submit_authorized``) once it
    reads the page; returns its events and outcome once it decided on it (or 5 s passed)."""
    page = FakePage([text_field("f1", "given_name", "First name")])
    events: list[tuple[str, dict]] = []
    async with InProcBus(None) as bus:
        forms = config.Config().loopback().forms.model_copy(update={"poll_ms": 50})
        agent = ComputerAgent(
            forms,
            bus,
            ScriptedLLM(json=[names_from_labels]),
            page.url,
            task_id="t",
            emit=lambda ev, **kw: events.append((ev, kw)),
            browser=FakeBrowser(page),
            driver=FakePageDriver(),
        )
        run = asyncio.create_task(agent.run())
        t0 = time.monotonic()
        while not any(ev == "page_state" for ev, _ in events) and time.monotonic() - t0 < 5:
            await asyncio.sleep(0.02)  # the agent is on the bus and reading the page
        await bus.publish(env)
        while not any(kw.get("what") == "submit_authorized_ignored" for _, kw in events) and time.monotonic() - t0 < 5:
            await asyncio.sleep(0.02)
        await bus.publish(Envelope.new(Terminate(reason="test over"), sender="test", recipient="*"))
        outcome = await asyncio.wait_for(run, 5)
    return events, outcome


async def test_a_submit_from_the_page_is_ignored_unless_the_form_waits_for_a_review():
    events, outcome = await _go_ahead(Envelope.new(SubmitAuthorized(), sender="page", recipient="computer"))
    decisions = [(kw["what"], kw.get("sender")) for ev, kw in events if ev == "decision"]
    assert ("submit_authorized_ignored", "page") in decisions, decisions
    assert not [d for d in decisions if d[0] == "submit_authorized_received"]
    assert outcome.status == "terminated"


async def test_a_go_ahead_given_before_the_agent_started_is_not_a_go_ahead_for_it():
    """A pool task taken over from a worker that died: the new agent reads the task's stream from
    its start, and the old ``submit_authorized`` (for the dead worker's page) must not submit."""
    old = Envelope.new(SubmitAuthorized(), sender="phone", recipient="computer")
    events, outcome = await _go_ahead(old.model_copy(update={"ts": old.ts - 60_000}))
    decisions = [(kw["what"], kw.get("why")) for ev, kw in events if ev == "decision"]
    assert ("submit_authorized_ignored", "given before this agent started") in decisions, decisions
    assert not [d for d in decisions if d[0] == "submit_authorized_received"]
    assert outcome.status == "terminated"


class _CrashingPage(FakePage):
    """A page whose reading throws inside the agent, as a page script's TypeError once did."""

    async def perceive(self, page) -> PageView:
        if self.fills:
            raise RuntimeError("TypeError: Cannot read properties of undefined (reading 'getAttribute') at page.js:42")
        return await super().perceive(page)


async def test_an_internal_failure_is_one_plain_sentence_never_the_error(monkeypatch):
    from appliance.computer_agent.verdict import INTERNAL_FAILURE

    page = _CrashingPage([text_field("f1", "given_name", "First name"), text_field("f2", "city", "Town")])
    computer, phone, line, events = await run_both(
        monkeypatch, page, ["David.", "Yes."], until=lambda evs: sum(ev == "agent_finished" for _, ev, _ in evs) == 2
    )
    assert computer.status == "failed" and "TypeError" in computer.detail  # kept for the log and the recording
    assert any(ev == "internal_error" and "getAttribute" in kw["error"] for _, ev, kw in events)
    heard = " ".join(line.said)
    assert INTERNAL_FAILURE in heard
    assert not any(w in heard for w in ("TypeError", "getAttribute", "page.js", "Traceback", "undefined"))


class _RefusingPage(FakePage):
    """A page that keeps something else than what is typed into its IBAN field, every time."""

    async def fill(self, page, f, value, timeout_ms, *, strategy=None, actions=None):
        got, msg = await super().fill(page, f, value, timeout_ms, strategy=strategy, actions=actions)
        return ("NOTSURE" if f.key == "iban" else got), msg


async def test_the_same_refusal_twice_tries_another_way_then_hands_the_field_over(monkeypatch):
    page = _RefusingPage([text_field("f1", "iban", "IBAN"), text_field("f2", "given_name", "First name")])
    answers = ["GB29 NWBK 6016 1331 9268 19.", "Yes.", "GB29 NWBK 6016 1331 9268 19.", "Yes.", "David.", "Yes."]
    computer, phone, line, events = await run_both(
        monkeypatch, page, answers, until=lambda evs: any(ev == "gave_up" for _, ev, _ in evs), deadline_s=15
    )
    tries = [s for k, s in page.fills if k == "iban"]
    assert tries[:2] == ["native", "typed"]  # another way of typing before the person hears of it
    gave_up = next(kw for _, ev, kw in events if ev == "gave_up")
    assert gave_up["field"] == "iban" and "would not keep" in gave_up["reason"]
    assert len(tries) == 4  # two values heard, each typed two ways; never a third time
    refusals = [kw for _, ev, kw in events if ev == "bus_out" and kw["type"] in ("fill_error", "format_invalid")]
    assert len(refusals) == 1  # the person was asked again once, then the field was theirs
