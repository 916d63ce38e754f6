"""The voice server's form mode without models or Chromium: the person's page on a running
form session through the mode's routes — the live preview (long-poll for a newer picture), a
typed value (the field by name or label) and a Submit from the page go on the bus as the
page, clicks and keys reach the form; errors name what was wrong — and the end of the call
when the task ends. The server is a stand-in with the mode's seams (``cfg``, ``runtime.llm``,
``app``, ``modes``, ``info``, ``end_session``); the form session is a stub."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from server_helpers import eventually

from appliance import config
from appliance.bus import InProcBus
from appliance.computer_agent.agent import Outcome
from appliance.forms import mode
from appliance.forms.mode import FormFeature
from appliance.forms.session import SessionResult
from appliance.phone_agent.agent import PhoneOutcome
from appliance.protocol import FieldSpec, InfoCollected, StatusUpdate, SubmitAuthorized
from appliance.voice.events import EventLog
from appliance.voice.session import Session

CITY = FieldSpec(name="city", label="Town or city", type="text", required=True)
EXTRAS = FieldSpec(name="extras", label="Extras", type="checkboxes", required=False, options=("a", "b", "c"))
EMAIL = FieldSpec(name="email", label="Email", type="email", required=True)


class FakeServer:
    def __init__(self) -> None:
        self.cfg = config.load()
        self.runtime = SimpleNamespace(llm=lambda name: None)
        self.app = web.Application()
        self.modes, self.offer_checks, self.info, self.ended, self.skills = {}, {}, {}, [], []

    async def end_session(self, pc_id: str) -> bool:
        self.ended.append(pc_id)
        return True


@pytest.fixture
async def running(monkeypatch):
    """A form session running in the mode (its run_session a stand-in that binds the page side
    to a bus, announces CITY, EXTRAS and EMAIL, and waits): (client, the page side, what the
    computer agent got, the run's args, the session's events, the server)."""
    ready, release, got, args = asyncio.Event(), asyncio.Event(), [], {}

    async def run_session(cfg, url, *, page_side, task, **kw):
        args.update(url=url, task=task, page_side=page_side)
        async with InProcBus(None) as bus:
            computer = bus.subscribe("computer")
            page_side.bind(bus, "t1")
            page_side.typed.known([CITY, EXTRAS, EMAIL])  # as the session does from need_info

            async def take():
                async for env in computer:
                    got.append(env)

            reader = asyncio.create_task(take())
            ready.set()
            await release.wait()
            reader.cancel()
            page_side.bind(None)
        return SessionResult(Outcome("not_submitted", "left for review", actions={"fill": 3}), None, "fixed")

    monkeypatch.setattr(mode, "run_session", run_session)
    server = FakeServer()
    feature = FormFeature(site=SimpleNamespace(urls={"flight": "http://127.0.0.1:9/flight"}))
    await feature.install(server)
    session = Session(events=EventLog(None))
    run = asyncio.create_task(
        server.modes["form"](
            server, "pc1", session, None, {"url": "http://127.0.0.1:9/form", "task": "don't submit it"}
        )
    )
    await asyncio.wait_for(ready.wait(), 5)
    async with TestClient(TestServer(server.app)) as client:
        yield client, args["page_side"], got, args, session.events.events, server
        release.set()
        await asyncio.wait_for(run, 5)
        finished = [e for e in session.events.events if e["event"] == "form_finished"]
        assert finished and finished[-1]["actions"] == 3
        await asyncio.sleep(0)  # the call is ended by itself, from its own task
        assert server.ended == ["pc1"]
        r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city", "value": "Leeds"})
        assert r.status == 404  # the session is over


async def test_typed_values_and_a_submit_from_the_page_go_on_the_bus_as_the_page(running):
    client, side, got, args, events, server = running
    assert args["task"] == "don't submit it" and server.ended == []  # the call stays up while the task runs
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city", "value": "Leeds"})
    assert r.status == 200 and (await r.json()) == {"status": "sent", "field": "city", "value": "Leeds"}
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "Email", "value": " jo@example.com "})
    assert r.status == 200 and (await r.json())["field"] == "email"  # named by its label, taken as the form takes it
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "extras", "value": ["a", "b"]})
    assert r.status == 200
    r = await client.post("/api/form/submit", json={"pc_id": "pc1"})  # mid-interview: the assistant asks first
    assert r.status == 409 and "not waiting for your review" in (await r.json())["error"]
    side.seen(StatusUpdate(state="review", message="filled in"))  # as the session does from the computer agent
    assert (await client.post("/api/form/submit", json={"pc_id": "pc1"})).status == 200
    await eventually(lambda: len(got) >= 4, 1, "the page's four messages to the computer agent")
    assert [(e.sender, e.payload) for e in got] == [
        ("page", InfoCollected(field="city", value="Leeds", confirmed=True)),
        ("page", InfoCollected(field="email", value="jo@example.com", confirmed=True)),
        ("page", InfoCollected(field="extras", value=("a", "b"), confirmed=True)),
        ("page", SubmitAuthorized()),
    ]
    assert any(
        e["event"] == "bus_out"
        and (e["agent"], e["type"], e["payload"])
        == ("page", "info_collected", {"field": "city", "value": "Leeds", "confirmed": True})
        for e in events
    )


async def test_the_routes_refuse_what_is_not_theirs(running):
    client, side, got, *_ = running
    r = await client.post("/api/form/value", json={"pc_id": "nobody", "field": "city", "value": "Leeds"})
    assert r.status == 404 and "no form task" in (await r.json())["error"]
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city"})
    assert r.status == 400 and "field, value" in (await r.json())["error"]
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city", "value": {"x": 1}})
    assert r.status == 400 and "not a field value" in (await r.json())["error"]
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "passport", "value": "X1"})
    assert r.status == 400 and "no field 'passport'" in (await r.json())["error"]  # not a field the form showed
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city", "value": "  "})
    assert r.status == 400 and "empty" in (await r.json())["error"]
    r = await client.post("/api/form/preview/key", json={"pc_id": "pc1", "key": "F13"})
    assert r.status == 400 and "not a character" in (await r.json())["error"]
    r = await client.post("/api/form/preview/click", json={"pc_id": "pc1", "x": 10, "y": 20})
    assert r.status == 409 and "not open" in (await r.json())["error"]  # the stand-in has no browser
    assert got == []


async def test_the_preview_answers_with_the_first_picture_newer_than_the_last_shown(running):
    client, side, *_ = running
    side.preview.put(b"\xff\xd8one", 1280, 720)
    side.preview.focus = {"field": "Town or city", "x": 8, "y": 40, "width": 200, "height": 24}
    r = await client.get("/api/form/preview", params={"pc_id": "pc1", "after": "0"})
    assert r.status == 200 and r.content_type == "image/jpeg" and await r.read() == b"\xff\xd8one"
    assert (r.headers["X-Frame-Seq"], r.headers["X-Viewport"]) == ("1", "1280x720")
    assert '"field": "Town or city"' in r.headers["X-Focus"]
    waiting = asyncio.create_task(client.get("/api/form/preview", params={"pc_id": "pc1", "after": "1"}))
    await asyncio.sleep(0.2)
    assert not waiting.done()  # nothing newer yet: the request waits for the next picture
    side.preview.put(b"\xff\xd8two", 1280, 720)
    r = await asyncio.wait_for(waiting, 2)
    assert r.headers["X-Frame-Seq"] == "2" and await r.read() == b"\xff\xd8two"


async def test_a_finished_task_ends_the_call_with_its_status(monkeypatch):
    async def session_stub(cfg, url, **kw):
        return SessionResult(Outcome("submitted", "Booking confirmed"), PhoneOutcome("submitted", 0), "fixed")

    monkeypatch.setattr(mode, "run_session", session_stub)
    srv = FakeServer()
    feature = FormFeature(site=SimpleNamespace(urls={"flight": "http://127.0.0.1:9/flight"}))
    await feature.install(srv)
    session = Session(events=EventLog(None))
    await srv.modes["form"](srv, "pc1", session, None, {})
    await asyncio.sleep(0)  # the call is ended from its own task
    assert srv.ended == ["pc1"]
    assert [e["reason"] for e in session.events.events if e["event"] == "call_ended"] == ["submitted"]


async def test_a_failed_form_session_also_ends_the_call(monkeypatch):
    async def failing(cfg, url, **kw):
        raise RuntimeError("the browser crashed")

    monkeypatch.setattr(mode, "run_session", failing)
    srv = FakeServer()
    feature = FormFeature(site=SimpleNamespace(urls={"flight": "http://127.0.0.1:9/flight"}))
    await feature.install(srv)
    session = Session(events=EventLog(None))
    try:
        await srv.modes["form"](srv, "pc1", session, None, {})
    except RuntimeError:
        pass
    await asyncio.sleep(0)
    assert srv.ended == ["pc1"]
