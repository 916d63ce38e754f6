"""An agent speaking and listening through the voice pipeline (LineProcessor)."""

from __future__ import annotations

import asyncio

import pytest
from helpers import make_wav, word_recall

from appliance import models
from appliance.voice.line import LineProcessor
from appliance.voice.pipeline import build_task, run_task
from appliance.voice.session import open_session
from appliance.voice.transports import WavFileTransport

pytestmark = pytest.mark.e2e  # Whisper, Piper, the LLM and an ARCTIC clip


async def test_agent_says_then_hears_the_person(voice_cfg, runtime, arctic, tmp_path):
    clip = "arctic_a0009.wav"
    wav = make_wav(tmp_path / "mic.wav", [4.0, arctic[clip], 1.0], rate_hz=16_000)
    line = LineProcessor()
    session = open_session(voice_cfg, "line-test")
    transport = WavFileTransport(wav)
    task = build_task(runtime, transport, session, line=line)
    runner = asyncio.create_task(run_task(task))

    async def agent():
        await line.say("Hello. [EMO:happy] Please say something.")
        return await asyncio.wait_for(line.hear(), 30)

    heard = await agent()
    await transport.finished.wait()
    await task.stop_when_done()
    await runner
    assert word_recall(models.ARCTIC_TEXT[clip], heard) >= 0.8, heard
    spoken = " ".join(e["text"] for e in session.events.events if e["event"] == "bot_text")
    assert "Please say something" in spoken and "EMO" not in spoken
    assert any(e["event"] == "tts_first_audio" for e in session.events.events)
