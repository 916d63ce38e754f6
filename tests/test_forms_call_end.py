"""The call ends by itself when the form task ends: the real voice server in form mode, a
WebRTC client as the page, the form session a stub (no Chromium) that says one line and
finishes. The peer connection is closed from the server side and the recording finalised."""

from __future__ import annotations

import asyncio

import pytest

from appliance.computer_agent.agent import Outcome
from appliance.forms import mode
from appliance.forms.mode import FormFeature
from appliance.forms.session import SessionResult
from appliance.phone_agent.agent import PhoneOutcome
from appliance.simulate.webrtc_client import WebRTCClient
from appliance.voice.server import VoiceServer

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("record", [True, False])
async def test_the_call_closes_itself_when_the_task_is_done(forms_cfg, forms_runtime, demo_site, monkeypatch, record):
    async def session_stub(cfg, url, *, line, folder, **kw):
        await line.say("Done! The form has been submitted. Thank you, goodbye.")
        return SessionResult(
            Outcome("submitted", "Booking confirmed"), PhoneOutcome("submitted", 0), "fixed", folder=folder
        )

    monkeypatch.setattr(mode, "run_session", session_stub)
    cfg = forms_cfg.for_simulation()
    server = VoiceServer(cfg, forms_runtime)
    feature = FormFeature(demo_site)
    await feature.install(server)
    await server.start()
    client = WebRTCClient(server.url)
    try:
        await client.connect(mode="form", url=demo_site.urls["flight"], record=record)
        result = await asyncio.wait_for(feature.result(client.pc_id), 60)
        for _ in range(200):  # the server ends the call: the peer connection closes on the client too
            if client.pc.connectionState in ("closed", "failed"):
                break
            await asyncio.sleep(0.1)
        assert client.pc.connectionState in ("closed", "failed")
        assert client.bot_audio_s > 1  # the goodbye was heard before the end
        if record:
            assert result.folder is not None
            for _ in range(50):  # written when the pipeline ends
                if (result.folder / "output.wav").exists():
                    break
                await asyncio.sleep(0.1)
            assert (result.folder / "output.wav").stat().st_size > 1000
            assert '"event": "call_ended"' in (result.folder / "events.jsonl").read_text()
        else:
            assert result.folder is None  # the person switched recording off for this call
    finally:
        await client.close()
        await server.stop()
