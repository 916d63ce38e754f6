"""The voice server's form mode without models or Chromium: the typed-value route and the
end of the call. The server is a stand-in with the mode's seams (``cfg``, ``runtime.llm``,
``app``, ``modes``, ``info``, ``end_session``); the form session is a stub."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from appliance import config
from appliance.computer_agent.agent import Outcome
from appliance.forms import mode as form_mode
from appliance.forms.mode import FormFeature
from appliance.forms.session import SessionResult
from appliance.phone_agent.agent import PhoneOutcome
from appliance.protocol import FieldSpec
from appliance.voice.events import EventLog
from appliance.voice.session import Session

EMAIL = FieldSpec(name="email", label="Email", type="email", required=True)


class FakeServer:
    def __init__(self) -> None:
        self.cfg = config.load()
        self.runtime = SimpleNamespace(llm=lambda name: None)
        self.app = web.Application()
        self.modes, self.info, self.ended = {}, {}, []

    async def end_session(self, pc_id: str) -> bool:
        self.ended.append(pc_id)
        return True


async def test_a_typed_value_is_taken_and_the_call_ends_by_itself_when_the_task_is_done(monkeypatch):
    release = asyncio.Event()
    seen = {}

    async def session_stub(cfg, url, *, typed, stop, **kw):
        typed.known([EMAIL])
        seen["typed"] = typed
        await release.wait()
        return SessionResult(Outcome("submitted", "Booking confirmed"), PhoneOutcome("submitted", 0), "fixed")

    monkeypatch.setattr(form_mode, "run_session", session_stub)
    srv = FakeServer()
    feature = FormFeature(site=SimpleNamespace(urls={"flight": "http://127.0.0.1:9/flight"}))
    await feature.install(srv)
    session = Session(events=EventLog(None))
    async with TestClient(TestServer(srv.app)) as http:
        run = asyncio.create_task(srv.modes["form"](srv, "pc1", session, None, {}))
        while "typed" not in seen:
            await asyncio.sleep(0.01)
        r = await http.post("/api/form/value", json={"pc_id": "pc1", "field": "Email", "value": "jo@example.com"})
        assert r.status == 200 and await r.json() == {"field": "email", "value": "jo@example.com"}
        r = await http.post("/api/form/value", json={"pc_id": "pc1", "field": "passport", "value": "X1"})
        assert r.status == 400 and "no field 'passport'" in (await r.json())["error"]
        r = await http.post("/api/form/value", json={"pc_id": "pc2", "field": "email", "value": "x"})
        assert r.status == 404
        assert seen["typed"]._queue.qsize() == 1  # published by the session's bus task
        assert srv.ended == []
        release.set()
        await asyncio.wait_for(run, 5)
        await asyncio.sleep(0)  # the call is ended from its own task
        assert srv.ended == ["pc1"]
        assert [e["reason"] for e in session.events.events if e["event"] == "call_ended"] == ["submitted"]
        r = await http.post("/api/form/value", json={"pc_id": "pc1", "field": "email", "value": "x"})
        assert r.status == 404  # the session is over


async def test_a_failed_form_session_also_ends_the_call(monkeypatch):
    async def failing(cfg, url, **kw):
        raise RuntimeError("the browser crashed")

    monkeypatch.setattr(form_mode, "run_session", failing)
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
