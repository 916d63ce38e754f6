"""The widgets real forms use, in real Chromium: on every demo page of one difficulty,
perception finds each field with the label a person reads and the widget that operates it,
``page.fill`` with the person's answer leaves exactly the expected value in the page, and
the page's own submit handler accepts it (or, for a "don't submit" task, its draft holds it
and no submit happened). One Chromium and one demo site serve the whole module."""

from __future__ import annotations

import asyncio
import re
from datetime import date, timedelta

import pytest
import pytest_asyncio

from appliance import config
from appliance.computer_agent import widgets
from appliance.computer_agent.browser import Browser
from appliance.computer_agent.page import FillProblem, fill, locate, perceive, same_value
from appliance.demo.profile import load_profile
from appliance.demo.site import LIBRARY_PAGES, DemoSite
from appliance.demo.spec import evaluate, load_specs

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

TIMEOUT_MS = 3000
RUNS = [
    ("city-autocomplete", "david"),
    ("custom-dropdown", "emma"),
    ("hotel-calendar", "david"),
    ("companion-dob", "david"),
    ("shadow-iframe", "emma"),
    ("wizard", "david"),
    ("id-check", "emma"),
    ("contact-reveal", "david"),
    ("contact-reveal", "emma"),
    ("masked-phone", "david"),
    ("aria-widgets", "david"),
    ("injected-contact", "emma"),
    *((name, "david") for name in LIBRARY_PAGES),  # the pages built on real widget libraries
]
#: library pages the computer agent does not fill yet, and why (issue 26, open): strict, so a fix shows
NOT_YET = {
    # the person's companion is one fact ("Sarah Miller") for two fields; the whole agent adds and
    # fills the second passenger when asked (test_computer_agent_pages)
    "bootstrap-passengers": "one fact for two fields: this harness types facts as they are",
}
RUNS = [
    pytest.param(form, who, marks=pytest.mark.xfail(reason=NOT_YET[form], strict=True))
    if form in NOT_YET
    else (form, who)
    for form, who in RUNS
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def env():
    async with DemoSite() as site:
        browser = Browser(config.Config().loopback().browser)
        page = await browser.start()
        try:
            yield site, page
        finally:
            await browser.close()
            assert browser.processes() == []


def _fold(s: str) -> str:
    return re.sub(r"\W+", " ", s).strip().casefold()


def _answer(f, fact: str):
    """What the person says, in the shape page.fill takes for this field."""
    return fact == "yes" if f.kind == "checkbox" else fact


async def _fill_as_person(page, f, said, expected: str):
    """page.fill with the person's answer, another way of the widget's ladder when the browser
    refuses its shape (as the agent's ``_operate`` does); when the page offers several close
    choices the person names the one they mean (the agent loop does this through the phone agent)."""
    try:
        got, msg = await fill(page, f, said, TIMEOUT_MS)
        for strategy in widgets.LADDERS[f.widget][1:]:  # as the agent does: the page refused the shape
            if not msg:
                break
            got, msg = await fill(page, f, said, TIMEOUT_MS, strategy=strategy)
        return (got, msg), said
    except FillProblem as e:
        assert e.kind == "format" and len(e.candidates) >= 2, (e.kind, e.reason, e.candidates)
        assert expected in e.candidates, e.candidates
        return await fill(page, f, expected, TIMEOUT_MS), expected


async def _wait_for(predicate, timeout_s: float = 5.0):
    for _ in range(int(timeout_s / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


async def _fill_page(page, spec, profile) -> None:
    """Fill every field the spec has for this person, moving through steps with the page's
    own step button; checks labels, widgets and read-backs on the way."""
    known = {_fold(r.label) for r in spec.fields} | {_fold(label) for label in spec.empty_labels}
    todo = {r.name: r for r in spec.rules_for(profile)}
    for _ in range(3 * len(todo) + 4):
        view = await perceive(page)
        live = {_fold(f.label): f for f in view.live_fields}
        assert set(live) <= known, f"fields a person does not see, or unreadable labels: {set(live) - known}"
        # one field a label, still operated by its widget once filled: a widget's own control never becomes a
        # field (tom-select's search box, once a choice was made and the focus had left, was read as a second
        # "Destination city" and asked again)
        assert len(live) == len(view.live_fields), [(f.key, f.label) for f in view.live_fields]
        for r in spec.rules_for(profile):
            f = live.get(_fold(r.label))
            assert r.name in todo or f is None or f.widget == r.widget, (r.name, f.key, f.widget)
        if not todo:
            return
        rule = next((r for r in todo.values() if _fold(r.label) in live), None)
        if rule is None:  # a step button moves on; with none, an opener reveals the form ("Start now")
            step = next(b for b in view.buttons if b.role == "step" or (b.role == "opener" and not live))
            await locate(page, step).click()
            await asyncio.sleep(0.5)  # a dialog fades in, a step renders
            continue
        f = live[_fold(rule.label)]
        assert f.widget == rule.widget, (rule.name, f.widget)
        said = _answer(f, profile.facts[rule.key])
        (got, msg), said = await _fill_as_person(page, f, said, rule.expected(profile))
        assert not msg and same_value(f, said, got), (rule.name, said, got, msg)
        del todo[rule.name]
    raise AssertionError(f"never reached {sorted(todo)}")


@pytest.mark.parametrize("form, who", RUNS)
async def test_each_page_is_filled_and_accepted_by_its_own_handler(env, form, who):
    site, page = env
    spec, profile = load_specs()[form], load_profile(who)
    await page.goto(site.base_url + spec.path)
    await _fill_page(page, spec, profile)
    if spec.submit:
        for _ in range(2):  # a review step ("Check your answers") comes before the final button
            buttons = (await perceive(page)).buttons
            final = next((b for b in buttons if b.role == "final"), None)
            if final is not None:
                break
            await locate(page, next(b for b in buttons if b.role == "step")).click()
            await asyncio.sleep(0.3)
        before = len(site.attempts_of(form))
        await locate(page, final).click()
        await _wait_for(lambda: len(site.attempts_of(form)) > before)
        attempt = site.attempts_of(form)[-1]
        assert attempt.outcome == "accepted", attempt.reason
        data = attempt.data
    else:
        await _wait_for(
            lambda: any(
                all(r.matches(r.expected(profile), a.data.get(r.name, "")) for r in spec.fields)
                for a in site.attempts_of(form, "draft")
            )
        )
        assert not site.attempts_of(form, "accepted") and not site.attempts_of(form, "refused")
        data = site.attempts_of(form, "draft")[-1].data
    results = evaluate(spec, profile, data)
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]


async def test_server_side_refusal_is_read_on_the_field_and_fixed(env):
    site, page = env
    spec, david = load_specs()["id-check"], load_profile("david")
    await page.goto(site.base_url + spec.path)
    view = await perceive(page)
    fields = {f.label: f for f in view.live_fields}
    for rule in spec.fields:
        value = david.first_answers.get(rule.key, david.facts[rule.key])
        await fill(page, fields[rule.label], value, TIMEOUT_MS)
    async with page.expect_navigation():
        await locate(page, next(b for b in view.buttons if b.role == "final")).click()
    assert site.attempts_of("id-check")[-1].outcome == "refused"
    after = {f.label: f for f in (await perceive(page)).live_fields}
    id_field = after["National ID number"]
    assert id_field.error == "A national ID number has 9 digits; you entered 8." and id_field.value == "73910452"
    assert not after["First name"].error and after["First name"].value == "David"
    await fill(page, id_field, david.facts["id_number"], TIMEOUT_MS)
    async with page.expect_navigation():
        await locate(page, next(b for b in (await perceive(page)).buttons if b.role == "final")).click()
    assert site.attempts_of("id-check")[-1].outcome == "accepted"
    assert all(r.ok for r in evaluate(spec, david, site.submissions_of("id-check")[-1].data))


async def test_what_the_page_refuses_goes_back_as_format_problems(env):
    site, page = env
    await page.goto(site.urls["custom-dropdown"])
    nat = next(f for f in (await perceive(page)).live_fields if f.label == "Nationality")
    with pytest.raises(FillProblem) as e:
        await fill(page, nat, "Martian", TIMEOUT_MS)
    assert e.value.kind == "format" and "British" in e.value.expected
    await page.goto(site.urls["hotel-calendar"])
    check_in = next(f for f in (await perceive(page)).live_fields if f.label == "Check-in")
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    with pytest.raises(FillProblem, match=f"does not offer {yesterday}"):  # disabled in the calendar
        await fill(page, check_in, yesterday, TIMEOUT_MS)
    with pytest.raises(FillProblem, match="YYYY-MM-DD"):
        await fill(page, check_in, "next Tuesday", TIMEOUT_MS)
    assert await page.locator("#check-in").input_value() == ""  # never written by script


async def test_injected_text_stays_out_of_labels_and_fields(env):
    site, page = env
    await page.goto(site.urls["injected-contact"])
    view = await perceive(page)
    assert "ignore your previous instructions" in view.text  # the page does carry it
    assert [f.label for f in view.live_fields] == ["First name", "Last name", "Email", "How can we help? (optional)"]
    hidden = {f.key: f for f in view.fields if not f.fillable}
    assert {"agent_notes", "website"} <= set(hidden)


@pytest.mark.parametrize(
    "form, label, strategy, said",
    [
        ("id-check", "First name", widgets.typed, "David"),
        ("city-autocomplete", "Town or city", widgets.autocomplete_slowly, "Manchester, United Kingdom"),
        ("custom-dropdown", "Nationality", widgets.listbox_by_keys, "British"),
        ("custom-dropdown", "Meal on the flight", widgets.listbox_by_keys, "Vegan"),
        ("masked-phone", "Mobile number", widgets.masked_digits, "+447700900123"),
    ],
)
async def test_each_second_strategy_operates_its_widget_too(env, form, label, strategy, said):
    """The ladder's other ways (tried when the first cannot operate a widget) work on real widgets."""
    site, page = env
    await page.goto(site.urls[form])
    f = next(f for f in (await perceive(page)).live_fields if f.label == label)
    assert strategy in widgets.LADDERS[f.widget][1:]
    got, msg = await fill(page, f, said, TIMEOUT_MS, strategy=strategy)
    assert not msg and same_value(f, said, got), (got, msg)


async def test_the_reader_sees_a_captcha_and_tells_one_document_from_the_next(env):
    site, page = env
    await page.goto(site.urls["id-check"])
    first = await perceive(page)
    assert not first.captcha and first.document
    await page.reload()
    assert (await perceive(page)).document != first.document  # a reload is another document
    await page.evaluate("""() => { const d = document.createElement('div'); d.className = 'g-recaptcha';
                                   d.style.cssText = 'width:300px;height:80px'; document.forms[0].append(d); }""")
    seen = await perceive(page)
    assert seen.captcha and seen.document != first.document
