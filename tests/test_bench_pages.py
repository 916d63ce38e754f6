"""``bench form --pages DIR``: a folder a user brings (``pages.json``, CONTRACTS): what is read
and refused, how a submission is compared, and the page's own record reaching the bench
through real Chromium (the instrumentation the agents never see)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from appliance import config
from appliance.bench.pages import PagesSite, load_pages, same
from appliance.computer_agent.browser import Browser

PAGES = Path(__file__).parent / "data" / "pages"


def test_the_bundled_example_folder_is_read():
    (page,) = load_pages(PAGES)
    assert page.id == "callback" and page.profile.facts["phone"] == "+442079460958"
    assert page.expected["when"] == "02/06/2027" and page.compare["tel"] == "phone" and len(page.checks) == 1


@pytest.mark.parametrize(
    "bad, why",
    [
        ({"pages": [{"id": "a", "file": "callback.html", "colour": "red"}]}, "keys not read by this bench: colour"),
        (
            {"pages": [{"id": "a", "file": "callback.html", "person": {"mood": "1"}}]},
            "keys not read by this bench: mood",
        ),
        ({"pages": [{"id": "a", "file": "callback.html", "compare": {"x": "fuzzy"}}]}, "compare fuzzy is not one of"),
        ({"pages": [{"id": "a", "file": "nowhere.html"}]}, "no file 'nowhere.html'"),
        ({"pages": [{"file": "callback.html"}]}, "malformed"),
    ],
)
def test_a_pages_json_it_cannot_read_fully_is_refused_naming_the_key(tmp_path, bad, why):
    (tmp_path / "callback.html").write_text("<p>x</p>")
    (tmp_path / "pages.json").write_text(json.dumps(bad))
    with pytest.raises(SystemExit, match=why):
        load_pages(tmp_path)


def test_the_persons_behaviour_keys_reach_the_simulated_persons_profile(tmp_path):
    """CONTRACTS "bench form": ``not_sure``, ``adds_at_summary`` and ``otp`` are read, never refused."""
    (tmp_path / "p.html").write_text("<p>x</p>")
    person = {"not_sure": ["middle_name"], "adds_at_summary": "Not yet: add my partner.", "otp": 428913}
    (tmp_path / "pages.json").write_text(json.dumps({"pages": [{"id": "a", "file": "p.html", "person": person}]}))
    (page,) = load_pages(tmp_path)
    assert page.profile.not_sure == ("middle_name",) and page.profile.adds_at_summary == "Not yet: add my partner."
    assert page.profile.facts["one_time_code"] == "428913"


def test_compare_modes():
    assert same("+442079460958", "+44 20 7946 0958", "phone") and not same("+442079460958", "+442079460959", "phone")
    assert same("GB29NWBK60161331926819", "GB29 NWBK 6016 1331 9268 19", "alnum")
    assert same("2027-06-02", "2027-06-02T00:00", "date") and not same("2027-06-02", "02/06/2027", "date")
    assert same("Ada", " ada ", "casefold") and not same("Ada", "ada", "exact") and same("60-16-13", "601613", "digits")


@pytest.mark.e2e
async def test_the_page_record_reaches_the_bench_after_the_browser_is_gone():
    (page,) = load_pages(PAGES)
    async with PagesSite(PAGES, [page]) as site:
        browser = Browser(config.Config().loopback().browser)
        tab = await browser.start()
        try:
            await tab.goto(site.url(page))
            assert await tab.locator("script").count() >= 1 and await tab.locator("input").count() == 3
            await tab.fill("#name", "Ada Lovelace")
            await tab.fill("#tel", "+44 20 7946 0958")
            await tab.fill("#when", "02/06/2027")
            await tab.click("button")
            await tab.wait_for_selector("text=Thank you")
            await asyncio.sleep(0.5)  # the recorder's next tick
        finally:
            await browser.close()
        verdict = site.verdict(page)
    assert verdict["accepted"] and verdict["checks"] == [True], verdict
    assert [f["ok"] for f in verdict["fields"]] == [True, True, True]
