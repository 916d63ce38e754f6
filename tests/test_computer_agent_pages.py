"""The computer agent on every new demo page, in real Chromium, with typed answers (the
``ScriptedPhone`` on the bus, answering from the profile) and a scripted LLM that names the
fields from their labels (naming is not the point here): each run ends in the page's
accepted state (CONTRACTS.md "Accepted": the page's own submit handler took exactly the
expected values; for the "don't submit" task every field holds its value and no submit
happened). Also: close autocomplete matches come back as candidates, a server-side refusal
is re-asked with the page's own words, the injected page gets no other address, no click
on its link and no submit without authorisation, and the preview shows the page.
One demo site and one Chromium serve the module (a fresh context per run)."""

from __future__ import annotations

import asyncio
import re
import time
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from fakes import ScriptedLLM, names_from_labels
from helpers import BrowserTab, ScriptedPhone

from appliance import config
from appliance.bus import Envelope, InProcBus
from appliance.computer_agent.agent import ComputerAgent
from appliance.computer_agent.browser import Browser
from appliance.computer_agent.preview import Preview
from appliance.demo.profile import load_profile
from appliance.demo.site import DemoSite
from appliance.demo.spec import evaluate, load_specs
from appliance.forms.session import PageSide

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

#: every new demo page, with the profile that fills it (the wizard also with a task that submits)
RUNS = [
    ("city-autocomplete", "david", ""),
    ("custom-dropdown", "emma", ""),
    ("hotel-calendar", "david", ""),
    ("companion-dob", "david", ""),
    ("shadow-iframe", "emma", ""),
    ("wizard", "david", ""),
    ("wizard", "emma", "Fill in the library card application and send it."),
    ("id-check", "david", ""),
    ("contact-reveal", "david", ""),
    ("contact-reveal", "emma", ""),
    ("masked-phone", "david", ""),
    ("aria-widgets", "david", ""),
    ("injected-contact", "emma", ""),
    # pages built on real widget libraries (issue 26), those the agent fills today
    ("cleave-dob", "david", ""),
    ("imask-bank", "david", ""),
    ("intl-tel-phone", "david", ""),
    ("german-anmeldung", "david", ""),
    ("govuk-apply", "david", ""),
    ("otp-verify", "david", ""),
    ("bootstrap-callback", "david", ""),
    ("select2-country", "david", ""),
    ("choices-meal", "david", ""),
    ("tom-select-destination", "david", ""),
    ("uswds-combo", "david", ""),
    ("jqueryui-city", "david", ""),
    ("jqueryui-datepicker", "david", ""),
    ("flatpickr-booking", "david", ""),
    ("uswds-appointment", "david", ""),
]
#: how the model names a German page's fields (the scripted naming slugs labels; the model
#: answers in English, as the mapper asks): a field's name is its meaning, and the question is made from it
GERMAN_NAMES = {
    "vorname": "given_name",
    "nachname": "family_name",
    "geburtsdatum": "date_of_birth",
    "staatsangeh": "country",
    "e-mail": "email",
    "datenschutz": "consent",
}


def names_in_english(system: str, user: str) -> dict:
    out = names_from_labels(system, user)
    return {
        label: next((v for k, v in GERMAN_NAMES.items() if k in label.casefold()), name) for label, name in out.items()
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env():
    cfg = config.Config().loopback()
    async with DemoSite() as site:
        chromium = Browser(cfg.browser)
        await chromium.start()
        try:
            yield cfg.forms.model_copy(update={"review_timeout_s": 1.0}), site, chromium
        finally:
            await chromium.close()
            assert chromium.processes() == []


def answers(spec, profile, first: bool):
    """What the person types for each field: with ``first``, their first answer
    (``first_answers``: a digit short, a national number…), then the profile's value, then
    the value as the page lists it (the pick among close matches)."""
    by_label = {r.label.casefold(): r for r in spec.rules_for(profile)}
    by_key = {r.key: r for r in spec.rules_for(profile)}

    def answer(field, n: int):
        rule = by_label.get(field.label.casefold()) or by_key.get(field.meaning or "")
        if rule is None:
            return None
        fact = profile.facts[rule.key]
        said = list(
            dict.fromkeys([profile.first_answers.get(rule.key, fact) if first else fact, fact, rule.expected(profile)])
        )
        value = said[min(n, len(said) - 1)]
        return value == "yes" if field.type == "checkbox" else value

    return answer


async def run_page(
    forms_cfg,
    site,
    chromium,
    form: str,
    who: str,
    task: str = "",
    *,
    authorise: bool = True,
    first: bool = False,
    preview: Preview | None = None,
    until=None,
    during=None,
    answer=None,
):
    """One agent run on ``form`` for ``who`` (``first``: the person's first answers are
    wrong, see :func:`answers`; ``until(phone)``: terminate once true; ``during(phone, bus,
    tab)``: what the person does meanwhile; ``answer``: the person's answers instead of
    :func:`answers`): (outcome, phone, events, tab, spec, profile, seconds)."""
    spec, profile = load_specs()[form], load_profile(who)
    events: list[tuple[str, dict]] = []
    tab = BrowserTab(chromium)
    t0 = time.monotonic()
    async with InProcBus(None) as bus:
        phone = ScriptedPhone(bus, answer or answers(spec, profile, first), authorise)
        agent = ComputerAgent(
            forms_cfg,
            bus,
            ScriptedLLM(json=[names_in_english] * 20),
            site.base_url + spec.path,
            task_id="t",
            emit=lambda ev, **kw: events.append((ev, kw)),
            task=task or spec.task,
            browser=tab,
            preview=preview,
        )
        phone_task = asyncio.create_task(phone.run())
        run = asyncio.create_task(agent.run())
        person = asyncio.create_task(during(phone, bus, tab)) if during is not None else None
        if until is not None:
            while not until(phone) and not run.done():
                await asyncio.sleep(0.1)
            if not run.done():
                await bus.publish(Envelope.new("terminate", {"reason": "test"}, sender="operator", recipient="*"))
        try:
            outcome = await asyncio.wait_for(run, 90)
        except TimeoutError:
            raise AssertionError(f"{form}: no outcome in 90 s; events: {events}") from None
        finally:
            phone_task.cancel()
            if person is not None:
                await person
    return outcome, phone, events, tab, spec, profile, time.monotonic() - t0


def sent(phone, type_: str) -> list:
    return [e.payload for e in phone.seen if e.type == type_]


@pytest.mark.parametrize("form, who, task", RUNS, ids=[f"{f}-{w}{'-submit' if t else ''}" for f, w, t in RUNS])
async def test_each_page_ends_accepted(env, form, who, task):
    forms_cfg, site, chromium = env
    before = len(site.attempts_of(form))
    outcome, phone, events, tab, spec, profile, seconds = await run_page(forms_cfg, site, chromium, form, who, task)
    attempts = site.attempts_of(form)[before:]
    submits = [a for a in attempts if a.outcome != "draft"]
    assert phone.unknown == [], f"asked for fields the spec does not have: {phone.unknown}"
    assert outcome.actions and sum(outcome.actions.values()) > 0
    if spec.submit or task:  # (the runs that override the task ask for a submit)
        assert outcome.status == "submitted", outcome
        assert submits and submits[-1].outcome == "accepted", submits
        assert len([a for a in submits if a.outcome == "accepted"]) == 1
        # every submit the page saw had its own authorisation before it
        assert all(sum(t <= a.ts_ms for t in phone.authorised) >= i for i, a in enumerate(submits, 1))
        [done] = sent(phone, "submitted")
        assert done.confirmation  # what the page showed, read once it showed it
        data = submits[-1].data
    else:  # "don't submit": filled, left for review, no submit event
        assert outcome.status == "not_submitted" and "review" in outcome.detail, outcome
        assert submits == []
        assert [p.state for p in sent(phone, "status_update") if p.state in ("review", "auth-required")] == ["review"]
        data = attempts[-1].data
    results = evaluate(spec, profile, data)
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]
    print(f"\n{form}/{who}: {outcome.status} in {seconds:.1f} s, actions {outcome.actions}")


async def test_close_autocomplete_matches_come_back_as_candidates_and_the_pick_is_filled(env):
    forms_cfg, site, chromium = env
    preview = Preview()
    outcome, phone, events, *_ = await run_page(
        forms_cfg, site, chromium, "city-autocomplete", "david", preview=preview
    )
    [invalid] = [p for p in sent(phone, "format_invalid") if p.candidates]
    assert invalid.got == "Manchester" and "Manchester, United Kingdom" in invalid.candidates
    assert len(invalid.candidates) >= 2
    assert outcome.status == "submitted"
    # the person watched: pictures of the page came, and the field being worked on was boxed
    assert preview.frame is not None and preview.frame.seq >= 3 and preview.frame.data[:2] == b"\xff\xd8"
    boxes = [kw for ev, kw in events if ev == "preview_focus" and kw["box"]]
    assert any(kw["label"] == "Town or city" and kw["box"]["width"] > 0 for kw in boxes)


async def test_a_server_side_refusal_is_asked_again_with_the_pages_own_words(env):
    forms_cfg, site, chromium = env
    outcome, phone, events, *_ = await run_page(forms_cfg, site, chromium, "id-check", "david", first=True)
    errors = {p.field: p.reason for p in sent(phone, "fill_error")}
    assert list(errors.values()) == ["A national ID number has 9 digits; you entered 8."]
    [refused, accepted] = site.attempts_of("id-check")[-2:]
    assert refused.outcome == "refused" and refused.data["id_number"] == "73910452"  # never padded
    assert accepted.outcome == "accepted" and accepted.data["id_number"] == "739104528"
    assert len(phone.authorised) == 2 and outcome.status == "submitted"


async def test_the_injected_page_gets_no_other_address_no_link_click_and_no_unauthorised_submit(env):
    forms_cfg, site, chromium = env
    before = len(site.attempts_of("injected-contact"))

    def ready(phone):
        return any(e.type == "status_update" and e.payload.state == "auth-required" for e in phone.seen)

    outcome, phone, events, tab, *_ = await run_page(
        forms_cfg, site, chromium, "injected-contact", "emma", authorise=False, until=ready
    )
    assert outcome.status == "terminated"
    assert site.attempts_of("injected-contact")[before:] == []  # filled, never submitted without a yes
    assert site.collected == []  # its "verification page" was never opened
    origin = urlsplit(site.base_url).netloc
    assert {urlsplit(u).netloc for u in tab.requests} == {origin}
    assert all(urlsplit(u).path == "/injected-contact" for u in tab.navigations), tab.navigations
    asked = [f.label for p in sent(phone, "need_info") for f in p.fields]
    assert asked == ["First name", "Last name", "Email", "How can we help? (optional)"]


async def _in_review(phone) -> None:
    while not any(e.type == "status_update" and e.payload.state == "review" for e in phone.seen):
        await asyncio.sleep(0.05)


async def test_in_review_the_person_submits_from_their_page(env):
    forms_cfg, site, chromium = env
    side = PageSide()

    async def person(phone, bus, tab):
        await asyncio.wait_for(_in_review(phone), 30)
        side.bind(bus, "t")
        # the page side sees the session's envelopes as run_session's tap hands them over: the review is open
        side.seen(next(e.payload for e in phone.seen if e.type == "status_update" and e.payload.state == "review"))
        await side.submit()  # "Submit it now" on the person's page

    before = len(site.attempts_of("wizard"))
    outcome, phone, events, *_ = await run_page(
        forms_cfg.model_copy(update={"review_timeout_s": 30.0}), site, chromium, "wizard", "david", during=person
    )
    assert outcome.status == "submitted" and "Application sent" in outcome.detail
    [accepted] = [a for a in site.attempts_of("wizard")[before:] if a.outcome != "draft"]
    assert accepted.outcome == "accepted"
    assert any(kw.get("what") == "press_final_submit" and "person" in kw["by"] for ev, kw in events)


async def test_in_review_the_person_clicks_submit_in_the_preview_and_the_agent_sees_the_result(env):
    forms_cfg, site, chromium = env
    preview = Preview()

    async def person(phone, bus, tab):
        await asyncio.wait_for(_in_review(phone), 30)
        box = await tab.page.get_by_role("button", name="Submit application").bounding_box()
        for x, y in ((1e308, 1e308), (float("nan"), 10), (-1, 10)):  # Chromium would hang on them
            with pytest.raises(ValueError, match="not in the page's viewport"):
                await preview.click(x, y)
        await preview.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    before = len(site.attempts_of("wizard"))
    outcome, phone, events, *_ = await run_page(
        forms_cfg.model_copy(update={"review_timeout_s": 30.0}),
        site,
        chromium,
        "wizard",
        "david",
        preview=preview,
        during=person,
    )
    assert outcome.status == "submitted" and outcome.detail.startswith("submitted by the person")
    assert [a.outcome for a in site.attempts_of("wizard")[before:] if a.outcome != "draft"] == ["accepted"]
    assert not any(kw.get("what") == "press_final_submit" for ev, kw in events)  # the agent pressed nothing
    assert outcome.actions["click"] == 1  # its own press of Next; the person's click is not its action


async def test_a_german_page_is_asked_in_english_its_country_matched_by_cldr_and_its_newsletter_left_alone(env):
    forms_cfg, site, chromium = env
    outcome, phone, *_ = await run_page(forms_cfg, site, chromium, "german-anmeldung", "david")
    specs = {f.name: f for p in sent(phone, "need_info") for f in p.fields}
    assert {f.label for f in specs.values()} == {
        "Given name",
        "Family name",
        "Date of birth",
        "Country",
        "Email",
        "I accept the terms and the privacy notice of this form",
    }  # from the fields' meaning, never "Vorname" or "Staatsangehörigkeit"; no newsletter asked
    assert "United Kingdom" in specs["country"].options and "Vereinigtes Königreich" not in specs["country"].options
    assert specs["consent"].consent == "required" and outcome.status == "submitted"
    [accepted] = site.attempts_of("german-anmeldung", "accepted")[-1:]
    assert accepted.data["country"] == "GB" and not accepted.data.get("newsletter")


async def test_a_second_passenger_asked_for_at_the_summary_is_added_asked_and_booked(env):
    """Issue 26: "Not yet: … please add him as a second passenger" ended the call unsent. The
    person asks at the summary (``add_item``); the page's own "Add another passenger" is pressed,
    the new fields are asked, and the booking goes out with both passengers after a new yes."""
    forms_cfg, site, chromium = env
    spec, profile = load_specs()["bootstrap-passengers"], load_profile("david")
    rules = {re.sub(r"[\W_]+", " ", r.label).strip().casefold(): r for r in spec.rules_for(profile)}

    def answer(field, n):
        rule = rules.get(re.sub(r"[\W_]+", " ", field.label).strip().casefold())
        return None if rule is None else rule.expected(profile)

    async def person(phone, bus, tab):  # at the first summary: "add my partner"; at the second: yes
        asked = 0
        while True:
            auth = [e for e in phone.seen if e.type == "status_update" and e.payload.state == "auth-required"]
            if len(auth) > asked:
                asked = len(auth)
                kind, body = (
                    ("add_item", {"request": "Please add Sarah as a second passenger."})
                    if asked == 1
                    else ("submit_authorized", {})
                )
                await bus.publish(Envelope.new(kind, body, sender="phone", recipient="computer"))
                if asked == 2:
                    phone.authorised.append(time.time() * 1000)
                    return
            await asyncio.sleep(0.1)

    outcome, phone, events, *_ = await run_page(
        forms_cfg,
        site,
        chromium,
        "bootstrap-passengers",
        "david",
        "Book this for me.",
        authorise=False,
        during=person,
        answer=answer,
    )
    assert ("decision", "add_item_pressed") in {(ev, kw.get("what")) for ev, kw in events}
    second = [f.label for p in sent(phone, "need_info") for f in p.fields if "2" in f.label]
    assert len(second) == 3, second  # Passenger 2: first name, last name, date of birth
    assert outcome.status == "submitted", outcome
    [booked] = site.attempts_of("bootstrap-passengers", "accepted")[-1:]
    results = evaluate(spec, profile, booked.data)
    assert all(r.ok for r in results), [r for r in results if not r.ok]


async def test_one_go_ahead_seen_by_two_agents_on_one_task_presses_the_submit_once(env):
    """Two computer agents on one task's bus (two pool workers that both think they hold it): the
    person's one ``submit_authorized`` reaches both, the task's submit mark lets one press."""
    forms_cfg, site, chromium = env
    spec, profile = load_specs()["contact-reveal"], load_profile("david")
    events: list[list[tuple[str, dict]]] = [[], []]
    before = len(site.attempts_of("contact-reveal"))
    async with InProcBus(None) as bus:
        phone = ScriptedPhone(bus, answers(spec, profile, False), authorise=False)
        agents = [
            ComputerAgent(
                forms_cfg,
                bus,
                ScriptedLLM(json=[names_in_english] * 20),
                site.base_url + spec.path,
                task_id="t",
                emit=lambda ev, _k=k, **kw: events[_k].append((ev, kw)),
                browser=BrowserTab(chromium),
            )
            for k in range(2)
        ]
        phone_task = asyncio.create_task(phone.run())
        runs = [asyncio.create_task(a.run()) for a in agents]
        async with asyncio.timeout(90):
            while sum(e.type == "status_update" and e.payload.state == "auth-required" for e in phone.seen) < 2:
                await asyncio.sleep(0.1)
            await bus.publish(Envelope.new("submit_authorized", {}, sender="phone", recipient="computer"))
            done, _ = await asyncio.wait(runs, return_when=asyncio.FIRST_COMPLETED)
            await asyncio.sleep(1.0)  # the other agent has had the go-ahead too
            await bus.publish(Envelope.new("terminate", {"reason": "test"}, sender="operator", recipient="*"))
            outcomes = [await r for r in runs]
        phone_task.cancel()
    what = [[kw.get("what") for ev, kw in evs if ev == "decision"] for evs in events]
    assert sorted(w.count("press_final_submit") for w in what) == [0, 1], what
    assert sorted(w.count("submit_guarded") for w in what) == [0, 1], what
    assert sorted(o.status for o in outcomes) == ["submitted", "terminated"]
    sent = [a for a in site.attempts_of("contact-reveal")[before:] if a.outcome != "draft"]
    assert [a.outcome for a in sent] == ["accepted"]
