"""The embedded LLM server killed mid-reply, in a real voice session (aiortc client over
WebRTC on loopback, the session runtime's real models): the person hears an apology, the
runtime starts llama-server again with its prompts re-warmed, and the next turn is answered."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from helpers import loopback_only_network

from appliance.simulate.webrtc_client import WebRTCClient
from appliance.voice.apology import APOLOGY
from appliance.voice.piper_synth import PiperSynth
from appliance.voice.server import VoiceServer

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not loopback_only_network(), reason="WebRTC on 127.0.0.1 needs a loopback-only namespace: run scripts/test.sh"
    ),
]


async def _event(session, name: str, after: int, timeout_s: float, **match) -> dict:
    """The first event ``name`` (fields as ``match``) at index ≥ ``after`` of the session's log."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        for e in session.events.events[after:]:
            if e["event"] == name and all(e.get(k) == v for k, v in match.items()):
                return e
        await asyncio.sleep(0.02)
    raise AssertionError(
        f"no {name} {match or ''} within {timeout_s} s: {[e['event'] for e in session.events.events[after:]]}"
    )


async def test_the_llm_killed_mid_reply_is_apologised_for_and_the_next_turn_is_answered(voice_cfg, runtime):
    llama = runtime.llms.server
    synth = PiperSynth()
    srv = VoiceServer(voice_cfg.without_recording(), runtime=runtime)  # no spoken recording notice before the turn
    await srv.start()
    client = WebRTCClient(srv.url)
    try:
        await client.connect()
        (session,) = [s for s in srv.sessions.values() if s.events.events]
        restarts, pid = llama.restarts, llama.pid
        # a long answer every time (the embedded coder model refuses a story at times; see test_voice_e2e)
        await client.say(synth.synthesize("Tell me about the history of the city of Rome."), synth.sample_rate_hz)
        await _event(session, "bot_text", 0, 60)  # the reply's first clause is out: the LLM is still streaming
        os.kill(pid, signal.SIGKILL)
        apology = await _event(session, "llm_apology", 0, 30)
        assert apology["error"]
        said = await _event(session, "bot_text", 0, 30, text=APOLOGY)
        t0 = time.monotonic()
        while llama.restarts == restarts and time.monotonic() - t0 < 60:
            await asyncio.sleep(0.2)
        assert llama.restarts == restarts + 1 and llama.pid != pid
        after = session.events.events.index(said) + 1
        await asyncio.sleep(1.0)  # the apology has been played
        await client.say(synth.synthesize("What is the capital of France?"), synth.sample_rate_hz)
        reply = await _event(session, "llm_reply", after, 60)
        assert reply["text"].strip() and not reply.get("interrupted")
        assert not [e for e in session.events.events[after:] if e["event"] == "llm_apology"]
    finally:
        await client.close()
        await srv.stop()
