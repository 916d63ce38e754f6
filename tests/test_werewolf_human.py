"""The human user seat of Werewolf through the real voice pipeline, without a browser.

An aiortc client joins the server's ``werewolf`` mode as the page would and plays the
person: it hears the judge's question (real Piper audio over WebRTC, transcribed by
Whisper), answers by voice (Piper in another voice → Opus → the server's VAD and
Whisper), and the game applies only what the transcript says. Seed 1 with 6 seats puts
the user at P4, the first werewolf, so the game's first turn is the user's night attack.
Runs in a loopback-only network namespace (scripts/test.sh).
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from conftest import loopback_only_network, words

from appliance.judge import page_mode
from appliance.judge.state import Role, deal
from appliance.voice.server import VoiceServer
from appliance.voice.tts import PiperSynth, VoiceStyle
from appliance.voice.webrtc_client import WebRTCClient

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(
    not loopback_only_network(), reason="WebRTC on 127.0.0.1 needs a loopback-only namespace: run scripts/test.sh")]

SEED, SEATS = 1, 6


def test_seed_seats_the_user_as_the_first_werewolf():
    g = deal(SEED, SEATS)
    assert g.user_seat == "P4" and g.seats_with(Role.WEREWOLF)[0] == "P4" and g.role("P3") is Role.VILLAGER


def test_question_names_the_choices():
    from appliance.judge.tools import ToolSpec

    q = page_mode.question(ToolSpec("seer_check", targets=("P2", "P3", "P5")), 1)
    assert q == "Night 1. Choose a player to check: P2, P3 or P5."
    assert "abstain" in page_mode.question(ToolSpec("vote", targets=("P1", "P2"), can_abstain=True), 2)


async def _event(session, name: str, timeout_s: float, **match) -> dict:
    """The first event ``name`` whose fields include ``match`` (waits up to ``timeout_s``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while True:
        for e in session.events.events:
            if e["event"] == name and all(e.get(k) == v for k, v in match.items()):
                return e
        if loop.time() > end:
            seen = [e["event"] for e in session.events.events]
            raise TimeoutError(f"no {name} {match} within {timeout_s} s; events: {seen}")
        await asyncio.sleep(0.1)


async def _heard_bot(client: WebRTCClient, runtime, first_timeout_s: float) -> str:
    """Everything the bot said until it falls silent, transcribed."""
    parts = [await client.next_bot_utterance(first_timeout_s)]
    while True:
        try:
            parts.append(await client.next_bot_utterance(3.0))
        except TimeoutError:
            break
    return runtime.asr.transcribe(np.concatenate(parts)).text


async def test_human_seat_is_asked_again_then_its_spoken_choice_is_applied(voice_cfg, runtime):
    server = VoiceServer(voice_cfg, runtime=runtime)
    await page_mode.install(server)
    await server.start()
    client = WebRTCClient(server.url)
    synth = PiperSynth()
    person = VoiceStyle(pitch_semitones=-3)
    try:
        await client.connect(mode="werewolf", seats=SEATS, seed=SEED)
        for _ in range(100):
            if server.sessions:
                break
            await asyncio.sleep(0.05)
        (session,) = server.sessions.values()

        first = await _event(session, "ww_table", 30)
        assert (first["seat"], first["role"], first["phase"], first["round"]) == ("P4", "werewolf", "night", 1)
        assert first["alive"] == [f"P{i}" for i in range(1, 7)]
        await _event(session, "ww_ask", 120, attempt=0, tool="night_kill")
        asked = words(await _heard_bot(client, runtime, 30))
        assert "attack" in asked and "player" in asked, asked

        # Not a legal action: asked again, nothing applied
        await client.say(synth.synthesize("Um, the quiet one.", person), synth.sample_rate_hz)
        heard = await _event(session, "ww_heard", 60, attempt=0)
        assert "quiet" in heard["transcript"].lower(), heard
        await _event(session, "ww_retry", 30, attempt=1)
        await _event(session, "ww_ask", 60, attempt=1)
        assert not [e for e in session.events.events if e["event"] == "ww_applied"]
        again = words(await _heard_bot(client, runtime, 30))
        assert "sorry" in again, again

        # A legal spoken choice: applied as said
        await client.say(synth.synthesize("I attack player three.", person), synth.sample_rate_hz)
        applied = await _event(session, "ww_applied", 60)
        assert applied["tool"] == "night_kill" and applied["action"] == {"target": "P3"}, applied
        (heard_ok,) = [e for e in session.events.events if e["event"] == "ww_heard" and e["attempt"] == 1]
        assert "3" in heard_ok["transcript"] or "three" in heard_ok["transcript"].lower()

        # The page saw only the user seat's own view: no other seat's role
        shown = json.dumps([e for e in session.events.events if e["event"].startswith("ww_")])
        assert "seer" not in shown and "witch" not in shown, shown
    finally:
        await client.close()
        await server.stop()
