"""The person's page on a running form session, through the form mode's routes: the live
preview (long-poll for a newer picture), a typed value and a Submit from the page go on the
bus as the page, clicks and keys reach the form; errors name what was wrong. The session
itself is a stand-in (no Chromium, no model)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from appliance import config
from appliance.bus import InProcBus
from appliance.computer_agent.agent import Outcome
from appliance.demo.site import DemoSite
from appliance.forms import mode
from appliance.forms.session import SessionResult
from appliance.protocol import InfoCollected, SubmitAuthorized


@pytest.fixture
async def running(monkeypatch):
    """A form session running in the mode (its run_session a stand-in that binds the page side
    to a bus and waits): (client, the page side, what the computer agent got, the run's args)."""
    ready, release, got, args = asyncio.Event(), asyncio.Event(), [], {}

    async def run_session(cfg, url, *, page_side, task, **kw):
        args.update(url=url, task=task, page_side=page_side)
        async with InProcBus(None) as bus:
            computer = bus.subscribe("computer")
            page_side.bind(bus, "t1")

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
    server = SimpleNamespace(app=web.Application(), info={}, modes={}, cfg=config.Config(),
                             runtime=SimpleNamespace(llm=None))
    feature = mode.FormFeature(site=DemoSite())
    await feature.install(server)
    events = []
    session = SimpleNamespace(events=SimpleNamespace(emit=lambda ev, **kw: events.append((ev, kw))), folder=None)
    run = asyncio.create_task(server.modes["form"](server, "pc1", session, None,
                                                   {"url": "http://127.0.0.1:9/form", "task": "don't submit it"}))
    await asyncio.wait_for(ready.wait(), 5)
    async with TestClient(TestServer(server.app)) as client:
        yield client, args["page_side"], got, args, events
    release.set()
    await asyncio.wait_for(run, 5)
    assert events[-1][0] == "form_finished" and events[-1][1]["actions"] == 3


async def test_typed_values_and_a_submit_from_the_page_go_on_the_bus_as_the_page(running):
    client, side, got, args, events = running
    assert args["task"] == "don't submit it"
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city", "value": "Leeds"})
    assert r.status == 200 and (await r.json()) == {"status": "sent"}
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "extras", "value": ["a", "b"]})
    assert r.status == 200
    assert (await client.post("/api/form/submit", json={"pc_id": "pc1"})).status == 200
    for _ in range(50):
        if len(got) == 3:
            break
        await asyncio.sleep(0.02)
    assert [(e.sender, e.payload) for e in got] == [
        ("page", InfoCollected(field="city", value="Leeds", confirmed=True)),
        ("page", InfoCollected(field="extras", value=("a", "b"), confirmed=True)), ("page", SubmitAuthorized())]
    assert ("bus_out", {"agent": "page", "type": "info_collected",
                        "payload": {"field": "city", "value": "Leeds", "confirmed": True}}) in events


async def test_the_routes_refuse_what_is_not_theirs(running):
    client, side, got, *_ = running
    r = await client.post("/api/form/value", json={"pc_id": "nobody", "field": "city", "value": "Leeds"})
    assert r.status == 404 and "no form task" in (await r.json())["error"]
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city"})
    assert r.status == 400 and "field, value" in (await r.json())["error"]
    r = await client.post("/api/form/value", json={"pc_id": "pc1", "field": "city", "value": {"x": 1}})
    assert r.status == 400 and "not a field value" in (await r.json())["error"]
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
