"""The person's page in form mode, in real Chromium, against a stand-in server (no models, no
WebRTC): the session's events draw the list of values with their state (heard, confirmed,
in the page, refused, yours to set, typed), the live preview shows the agent's pictures with
the field being worked on boxed, the box the phone agent offers for a misheard value is
that field's own, and the person's typed value, clicks, keys and "Submit it now" reach the routes in the shape the form mode takes (``POST /api/form/value {pc_id, field,
value}`` …)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp import web

from appliance import config
from appliance.computer_agent.browser import Browser

pytestmark = pytest.mark.e2e

PAGE_DIR = Path(__file__).resolve().parents[1] / "webrtc_page"


async def _stand_in(jpeg: bytes):
    posted: list[tuple[str, dict]] = []
    previews: list[dict] = []

    async def index(_req):
        return web.FileResponse(PAGE_DIR / "index.html")

    async def status(_req):
        return web.json_response({"ready": True, "modes": ["form"], "demo_forms": {"flight": "http://127.0.0.1:9/f"}})

    async def preview(req):
        previews.append(dict(req.query))
        if int(req.query.get("after", "0")) >= 1:
            await asyncio.sleep(2)
            return web.Response(status=204)
        return web.Response(
            body=jpeg,
            content_type="image/jpeg",
            headers={
                "X-Frame-Seq": "1",
                "X-Viewport": "1280x720",
                "X-Focus": '{"field": "Town or city", "x": 320, "y": 180, "width": 640, "height": 36}',
            },
        )

    def recorder(name):
        async def post(req):
            posted.append((name, await req.json()))
            return web.json_response({"status": "ok"})

        return post

    app = web.Application()
    app.add_routes(
        [
            web.get("/", index),
            web.static("/static", PAGE_DIR),
            web.get("/api/status", status),
            web.get("/api/form/preview", preview),
            *(web.post(f"/api/form/{n}", recorder(n)) for n in ("value", "submit", "preview/click", "preview/key")),
        ]
    )
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/", posted, previews


def _out(agent, type_, payload):
    return {"event": "bus_out", "agent": agent, "type": type_, "payload": payload}


async def test_the_form_card_shows_values_states_and_the_live_preview_and_sends_what_the_person_does():
    browser = Browser(config.Config().loopback().browser)
    page = await browser.start()
    jpeg = await page.screenshot(type="jpeg")
    runner, url, posted, previews = await _stand_in(jpeg)
    try:
        await page.goto(url)
        await page.wait_for_selector("#form-card:not([hidden])")
        town = {"name": "town_or_city", "label": "Town or city", "type": "text", "required": True}
        news = {"name": "news", "label": "Send me news", "type": "checkbox", "required": False}
        events = [
            {"event": "form_started", "url": "http://127.0.0.1:9/f", "task": ""},
            _out(
                "computer",
                "need_info",
                {"fields": [town, news, {"name": "email", "label": "Email", "type": "email", "required": True}]},
            ),
            _out("phone", "info_collected", {"field": "email", "value": "a@b.co", "confirmed": False}),
            _out("phone", "info_collected", {"field": "news", "value": True, "confirmed": True}),
            _out("computer", "field_filled", {"field": "news", "value_read_back": True}),
            _out(
                "computer",
                "format_invalid",
                {
                    "field": "town_or_city",
                    "expected": "A or B",
                    "got": "Paris",
                    "candidates": ["Paris, France", "Paris, Texas"],
                },
            ),
            {
                "event": "preview_focus",
                "agent": "computer",
                "field": "town_or_city",
                "label": "Town or city",
                "box": {"field": "Town or city", "x": 0, "y": 0, "width": 128, "height": 72},
            },
        ]
        await page.evaluate("(evs) => { window.appliancePcId = 'pc1'; evs.forEach(onEvent); }", events)
        rows = await page.eval_on_selector_all(
            "#form-values tbody tr", "rs => rs.map(r => [...r.cells].slice(0, 3).map(c => c.innerText.trim()))"
        )
        assert rows == [
            ["Town or city", "", "REFUSED\npick one: Paris, France · Paris, Texas"],
            ["Send me news", "yes", "IN THE PAGE"],
            ["Email", "a@b.co", "HEARD"],
        ]
        # progress in words above the table; the raw event log folded away behind its toggle
        assert await page.inner_text("#form-progress") == "1 of 3 fields filled in."
        assert not await page.is_visible("#activity") and await page.eval_on_selector(
            "#activity", "a => a.parentElement.tagName === 'DETAILS' && !a.parentElement.open"
        )
        # the live picture arrives, and the field worked on is boxed over it (as a share of the viewport)
        await page.wait_for_function(
            "document.getElementById('preview-img').complete && document.getElementById('preview-img').naturalWidth > 0"
        )
        box = await page.eval_on_selector("#preview-focus", "b => [b.hidden, b.style.left, b.style.width]")
        assert box == [False, "25%", "50%"]
        assert previews[0] == {"pc_id": "pc1", "after": "0"}
        # the person types the town, clicks into the picture and presses a key there
        await page.fill("#form-values tbody tr:first-child input", "Paris, France")
        await page.click("#form-values tbody tr:first-child button")
        await page.fill("#form-values tbody tr:nth-child(2) input", "no")
        await page.press("#form-values tbody tr:nth-child(2) input", "Enter")
        img = await page.query_selector("#preview-img")
        b = await img.bounding_box()
        await page.mouse.click(b["x"] + b["width"] / 2, b["y"] + b["height"] / 4)
        await page.keyboard.press("x")
        # the task is left for review: the page says so and offers the person's own submit
        await page.evaluate(
            "(e) => onEvent(e)", _out("computer", "status_update", {"state": "review", "message": "Filled in"})
        )
        assert await page.is_visible("#form-submit")
        await page.click("#form-submit")
        await page.evaluate(
            "(e) => onEvent(e)", {"event": "form_finished", "status": "submitted", "detail": "Application sent."}
        )
        assert await page.inner_text("#form-review-text") == "Submitted: Application sent."
        for _ in range(50):
            if len(posted) == 5:
                break
            await asyncio.sleep(0.05)
        assert posted[0] == ("value", {"pc_id": "pc1", "field": "town_or_city", "value": "Paris, France"})
        assert posted[1] == ("value", {"pc_id": "pc1", "field": "news", "value": False})  # a checkbox: yes/no
        click = posted[2]
        assert click[0] == "preview/click" and abs(click[1]["x"] - 640) <= 2 and abs(click[1]["y"] - 180) <= 2
        assert posted[3:] == [("preview/key", {"pc_id": "pc1", "key": "x"}), ("submit", {"pc_id": "pc1"})]
        row = await page.inner_text("#form-values tbody tr:first-child")
        assert "Paris, France" in row and "TYPED BY YOU" in row
        # a value misheard twice: the phone agent offers the box (type_requested), its row is marked and focused
        await page.evaluate(
            "(e) => onEvent(e)", {"event": "type_requested", "agent": "phone", "field": "email", "label": "Email"}
        )
        marked = await page.eval_on_selector(
            "#form-values tbody tr:nth-child(3)",
            "r => [r.classList.contains('asked'), r.contains(document.activeElement), r.innerText]",
        )
        assert marked[0] and marked[1] and "Type it here" in marked[2]
    finally:
        await browser.close()
        await runner.cleanup()
