"""A session's life cycle on a real VoiceServer with real aiortc peers on 127.0.0.1 (no
model: a stand-in runtime and a bare pipeline): bad offers, the session cap, offers that
never connect and peers that vanish are all torn down with nothing left behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from server_helpers import bare_pipeline, eventually, real_offer, stub_runtime

from appliance import config
from appliance.voice.server import VoiceServer

REPO = Path(__file__).resolve().parent.parent


class ProbeMode:
    """An agent mode standing in for the form mode's Chromium: records its start and its
    cancellation, and writes a file into the session's folder, as an agent's artefacts."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.cancelled: list[str] = []

    async def __call__(self, _srv, pc_id, session, _line, _body) -> None:  # noqa: ANN001
        self.started.append(pc_id)
        if session.folder is not None:
            (session.folder / "agent.txt").write_text("opened a page\n")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(pc_id)
            raise


@pytest.fixture
def rec_dir(tmp_path) -> Path:
    return tmp_path / "rec"


async def _server(rec_dir: Path, **server) -> tuple[VoiceServer, ProbeMode]:
    cfg = config.load(
        overrides={
            "server": {"port": 0, **server},
            "transport": {"loopback_only": True},
            "recording": {"dir": str(rec_dir)},
        }
    )
    srv = VoiceServer(cfg, runtime=stub_runtime())
    srv.pipeline_builder = srv.mode_pipeline_builder = bare_pipeline
    probe = ProbeMode()
    srv.modes["probe"] = probe
    await srv.start()
    return srv, probe


async def _offer(srv: VoiceServer, sdp: str, **extra) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"http://127.0.0.1:{srv.port}/api/offer", json={"sdp": sdp, "type": "offer", **extra}
        ) as r:
            return r.status, await r.json()


def _folders(rec_dir: Path) -> list[Path]:
    return sorted(rec_dir.iterdir()) if rec_dir.exists() else []


async def test_garbage_sdp_is_a_400_and_leaves_nothing_behind(rec_dir):
    srv, probe = await _server(rec_dir)
    try:
        good = await real_offer()
        no_fingerprint = "".join(ln + "\r\n" for ln in good.splitlines() if not ln.startswith("a=fingerprint"))
        cases = {
            "hello": "no audio section",  # aiortc parses it as an SDP with no media at all
            "v=0\r\nm=audio port UDP/TLS/RTP/SAVPF 111\r\n": "not valid SDP",
            "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n": "no audio section",
            good.replace("m=audio", "m=video"): "no audio section",
            no_fingerprint: "no DTLS set-up",
            good.replace("a=ice-pwd:", "a=x-pwd:"): "no ICE credentials",
        }
        for sdp, why in cases.items():
            status, body = await _offer(srv, sdp, mode="probe")
            assert status == 400 and body["error"].startswith("bad offer:") and why in body["error"], (sdp[:40], body)
        status, body = await _offer(srv, 42)
        assert status == 400 and "sdp must be a non-empty string" in body["error"]
        status, body = await _offer(srv, good, type="answer")
        assert status == 400 and "type must be 'offer'" in body["error"]
        async with aiohttp.ClientSession() as http:  # a trickled candidate aiortc cannot parse
            async with http.patch(
                f"http://127.0.0.1:{srv.port}/api/offer", json={"pc_id": "x", "candidates": [{"candidate": "garbage"}]}
            ) as r:
                assert r.status == 400 and (await r.json())["error"].startswith("bad candidates:")
        assert srv.calls == {} and srv.sessions == {} and probe.started == []
        assert _folders(rec_dir) == []
    finally:
        await srv.stop()


async def test_an_offer_that_never_connects_is_torn_down_within_the_timeout(rec_dir):
    srv, probe = await _server(rec_dir, connect_timeout_ms=1000)
    try:
        before = asyncio.all_tasks()
        status, answer = await _offer(srv, await real_offer(candidates=False), mode="probe")
        assert status == 200 and answer["type"] == "answer"
        call = srv.calls[answer["pc_id"]]
        await eventually(lambda: probe.started, 5, "the mode's agent started")
        t0 = asyncio.get_running_loop().time()
        await asyncio.wait_for(call.finished.wait(), 5)  # 5 × the timeout: a generous margin
        assert asyncio.get_running_loop().time() - t0 <= 5
        assert srv.calls == {}
        assert probe.cancelled == [answer["pc_id"]]  # the agent (Chromium, in the form mode) was cancelled
        assert call.runner.done() and call.connection.pc.connectionState == "closed"
        assert "did not connect within 1000 ms" in call.failure
        events = [e["event"] for e in call.session.events.events]
        assert events[-2:] == ["error", "disconnected"]
        await asyncio.sleep(0.2)
        left = [t for t in asyncio.all_tasks() - before if not t.done()]
        assert left == [], left
        # the agent wrote a file: the folder is kept and says why the session failed
        (folder,) = _folders(rec_dir)
        assert "did not connect within 1000 ms" in (folder / "failed").read_text()
    finally:
        await srv.stop()


async def test_an_abandoned_plain_offer_leaves_no_folder(rec_dir):
    srv, _ = await _server(rec_dir, connect_timeout_ms=500)
    try:
        status, answer = await _offer(srv, await real_offer(candidates=False))
        assert status == 200
        await asyncio.wait_for(srv.calls[answer["pc_id"]].finished.wait(), 5)
        assert _folders(rec_dir) == []  # it held only config.yaml and events.jsonl
    finally:
        await srv.stop()


async def test_the_heap_is_trimmed_once_a_session_is_gone(rec_dir, monkeypatch):
    srv, _ = await _server(rec_dir, connect_timeout_ms=500)
    trims: list[dict] = []
    monkeypatch.setattr("appliance.heap.trim", lambda: trims.append(dict(srv.calls)))
    try:
        status, answer = await _offer(srv, await real_offer(candidates=False))
        assert status == 200
        await asyncio.wait_for(srv.calls[answer["pc_id"]].finished.wait(), 5)
        assert trims == [{}]  # once, after the call left the server's registry
    finally:
        await srv.stop()


async def test_the_session_cap_answers_503_until_a_session_ends(rec_dir):
    srv, _ = await _server(rec_dir, max_sessions=2, connect_timeout_ms=60_000)
    try:
        first = [await _offer(srv, await real_offer(candidates=False)) for _ in range(2)]
        assert [s for s, _ in first] == [200, 200]
        status, body = await _offer(srv, await real_offer(candidates=False))
        assert status == 503 and "busy: 2 sessions are open (server.max_sessions)" in body["error"]
        assert len(srv.calls) == 2
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"http://127.0.0.1:{srv.port}/api/disconnect", params={"pc_id": first[0][1]["pc_id"]}
            ) as r:
                assert r.status == 200
        assert len(srv.calls) == 1
        status, _ = await _offer(srv, await real_offer(candidates=False))
        assert status == 200
    finally:
        await srv.stop()
    assert srv.calls == {}


CLIENT = """
import asyncio, sys
from appliance.voice import ice
from appliance.simulate.webrtc_client import WebRTCClient
ice.use_loopback_only(True)
async def main():
    client = WebRTCClient(sys.argv[1])
    await client.connect(mode="probe")
    print(client.pc_id, flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


#: a peer whose ICE and RTCP go on but whose microphone sends nothing (its track never yields a frame)
MUTE_CLIENT = CLIENT.replace(
    "client = WebRTCClient(sys.argv[1])",
    """client = WebRTCClient(sys.argv[1])
    from appliance.simulate import webrtc_client
    async def never(self):
        await asyncio.Event().wait()
    webrtc_client.MicTrack.recv = never""",
)


@pytest.mark.parametrize("how", ["vanishes", "sends no audio"])
async def test_a_peer_that_vanishes_or_sends_no_audio_is_closed_after_the_idle_timeout(rec_dir, how):
    srv, probe = await _server(rec_dir, idle_timeout_ms=1500)
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT if how == "vanishes" else MUTE_CLIENT, srv.url],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        line = await asyncio.wait_for(asyncio.to_thread(client.stdout.readline), 60)
        assert line.strip(), client.stderr.read()
        call = srv.calls[line.strip()]
        await eventually(lambda: call.state() == "connected", 20, "the client connected")
        if how == "vanishes":
            await asyncio.sleep(2.0)  # longer than the idle timeout: a live peer keeps its session
            assert not call.finished.is_set()
            os.kill(client.pid, signal.SIGSTOP)  # the peer vanishes: no RTP, no close
        t0 = asyncio.get_running_loop().time()
        await asyncio.wait_for(call.finished.wait(), 10)
        assert asyncio.get_running_loop().time() - t0 < 1.5 * 5
        assert "no audio (RTP) from the peer for 1500 ms" in call.failure
        assert probe.cancelled == [call.pc_id] and srv.calls == {}
        (folder,) = _folders(rec_dir)
        assert "no audio (RTP) from the peer" in (folder / "failed").read_text()
    finally:
        client.kill()
        client.wait()
        client.stdout.close()
        client.stderr.close()
        await srv.stop()


async def test_the_person_deletes_their_calls_recording_once_it_has_ended(rec_dir):
    """Issue 30: the page's "delete this call's recording" (POST /api/recording/delete)."""
    srv, probe = await _server(rec_dir, connect_timeout_ms=500)
    try:
        status, answer = await _offer(srv, await real_offer(candidates=False), mode="probe")
        pc_id = answer["pc_id"]
        await eventually(lambda: probe.started, 5, "the mode started")
        url = f"http://127.0.0.1:{srv.port}/api/recording/delete"
        async with aiohttp.ClientSession() as http:
            async with http.post(url, params={"pc_id": pc_id}) as r:
                assert r.status == 409 and "end it first" in (await r.json())["error"]
            await asyncio.wait_for(srv.calls[pc_id].finished.wait(), 5)
            assert len(_folders(rec_dir)) == 1  # the agent's file kept it (with a "failed" note)
            async with http.post(url, params={"pc_id": pc_id}) as r:
                assert r.status == 200 and (await r.json())["status"] == "deleted"
            assert _folders(rec_dir) == []
            async with http.post(url, params={"pc_id": "nobody"}) as r:
                assert r.status == 404
    finally:
        await srv.stop()


async def test_recordings_older_than_the_retention_are_pruned_when_the_server_starts(rec_dir):
    old, new = rec_dir / "20200101-000000-webrtc-old", rec_dir / "20990101-000000-webrtc-new"
    for folder in (old, new):
        folder.mkdir(parents=True)
        (folder / "input.wav").write_bytes(b"RIFF")
    month_ago = time.time() - 31 * 86_400
    os.utime(old / "input.wav", (month_ago, month_ago))
    srv, _ = await _server(rec_dir)
    try:
        await eventually(lambda: not old.exists(), 5, "the old recording pruned")
        assert new.exists()
    finally:
        await srv.stop()


@pytest.mark.parametrize("record", [True, False])
async def test_a_plain_call_is_announced_and_a_declined_one_stores_nothing(rec_dir, record):
    """Issue 30: the person's choice comes with the offer, before any audio; the page is told
    (``recording_notice``) and, when recorded, the assistant says so as the call connects."""
    srv, _ = await _server(rec_dir, connect_timeout_ms=500)
    try:
        status, answer = await _offer(srv, await real_offer(candidates=False), record=record)
        assert status == 200
        session = srv.sessions[answer["pc_id"]]
        (notice,) = [e for e in session.events.events if e["event"] == "recording_notice"]
        assert notice["recorded"] is record and (notice["folder"] is not None) is record
        assert (session.folder is not None) is record
        if not record:
            assert _folders(rec_dir) == []  # nothing of the call is stored
        await asyncio.wait_for(srv.calls[answer["pc_id"]].finished.wait(), 5)
    finally:
        await srv.stop()
