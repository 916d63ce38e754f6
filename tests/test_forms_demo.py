"""The demo forms in real Chromium: HTML5 validation, server-side errors, a revealed field,
recorded submissions (profiles and specs alone: test_demo_profiles.py)."""

from __future__ import annotations

import pytest

from appliance import config
from appliance.computer_agent.browser import Browser
from appliance.computer_agent.page import perceive
from appliance.demo.profile import load_profile
from appliance.demo.site import DemoSite
from appliance.demo.spec import evaluate, spec_for_url

pytestmark = pytest.mark.e2e


@pytest.fixture
async def site_and_page():
    async with DemoSite() as site:
        b = Browser(config.Config().loopback().browser)
        page = await b.start()
        try:
            yield site, page
        finally:
            await b.close()
            assert b.processes() == []


async def _submit(page, selector: str) -> None:
    async with page.expect_navigation():
        await page.click(selector)


async def test_flight_form_validates_in_the_browser_and_records_submission(site_and_page):
    site, page = site_and_page
    await page.goto(site.urls["flight"])
    view = await perceive(page)
    live = {f.key: f for f in view.live_fields}
    assert len(live) >= 12 and all(f.required for f in live.values())
    assert live["seat"].kind == "radio" and [o.label for o in live["seat"].options] == ["Window", "Aisle", "Middle"]
    assert live["passport_number"].pattern and live["consent"].kind == "checkbox"
    await page.fill("#passport", "12345")
    await page.click("text=Book flight")  # the browser refuses: required fields empty, pattern broken
    assert site.submissions == []
    assert "format" in (await perceive(page)).by_ident()["passport_number"].error.lower()


async def test_registration_server_errors_and_revealed_postcode(site_and_page):
    site, page = site_and_page
    await page.goto(site.urls["register"])
    for sel, v in (
        ("#first_name", "David"),
        ("#last_name", "Miller"),
        ("#username", "davidmiller"),
        ("#email", "davidmiller@example.com"),
    ):
        await page.fill(sel, v)
    await _submit(page, "text=Next")
    err = (await perceive(page)).by_ident()["username"]
    assert "already taken" in err.error and err.value == "davidmiller"
    await page.fill("#username", "davidmiller84")
    await _submit(page, "text=Next")
    before = (await perceive(page)).by_ident()
    assert not before["postcode"].visible  # appears only once a country is chosen
    await page.select_option("#country", "GB")
    assert (await perceive(page)).by_ident()["postcode"].visible
    await page.fill("#postcode", "M1")
    await page.fill("#city", "Manchester")
    await _submit(page, "text=Next")
    assert "valid postcode" in (await perceive(page)).by_ident()["postcode"].error
    await page.fill("#postcode", "M1 1AE")
    await _submit(page, "text=Next")
    await page.check("input[value=email]")
    await page.check("#terms")
    await _submit(page, "text=Create account")
    assert "Account created" in await page.inner_text("main")
    [sub] = site.submissions_of("register")
    results = evaluate(spec_for_url(site.urls["register"]), load_profile("david"), sub.data)
    assert all(r.ok for r in results), results


async def test_injected_text_never_reaches_the_prompts(site_and_page):
    from appliance.computer_agent import decide, mapper

    site, page = site_and_page
    await page.goto(site.urls["flight-injected"])
    view = await perceive(page)
    assert "ignore all previous instructions" in view.text  # the page does carry the injection
    live = list(view.live_fields)
    assert "agent_notes" not in {f.key for f in live}  # the hidden field is not a field to fill
    for text in (mapper.describe(live), decide.prompt("Fill in the form.", {}, view, live)):
        assert "previous instructions" not in text and "/api/collect" not in text
