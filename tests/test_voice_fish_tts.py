"""Fish Audio TTS through the official SDK against a local fake of its API (the cloud is
the one thing outside the machine, so it alone is faked)."""

from __future__ import annotations

import numpy as np
import ormsgpack
from aiohttp import web
from pipecat.frames.frames import ErrorFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, TTSAudioRawFrame
from pipecat.tests.utils import run_test

from appliance import config
from appliance.voice.fish_tts import FishClauseTTSService
from appliance.voice.markers import SpeechStyle, StyledClauseFrame


async def _fake_fish(requests: list):
    async def tts(req: web.Request) -> web.Response:
        requests.append((req.headers.get("Authorization"), ormsgpack.unpackb(await req.read())))
        t = np.arange(22_050) / 44_100
        return web.Response(body=(np.sin(2 * np.pi * 220 * t) * 8000).astype(np.int16).tobytes())

    app = web.Application()
    app.router.add_post("/v1/tts", tts)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"


async def test_fish_speaks_clauses_with_emotion_references(tmp_path):
    (tmp_path / "happy.wav").write_bytes(b"RIFF-fake-clip")
    (tmp_path / "happy.txt").write_text("What a lovely day.")
    requests: list = []
    runner, url = await _fake_fish(requests)
    try:
        cfg = config.load(
            overrides={
                "tts": {
                    "provider": "fish",
                    "reference_id": "voice-123",
                    "base_url": url,
                    "voice_library": str(tmp_path),
                }
            }
        )
        tts = FishClauseTTSService(cfg.tts, api_key="secret")
        down, _ = await run_test(
            tts,
            frames_to_send=[
                LLMFullResponseStartFrame(),
                StyledClauseFrame(text="Hello there.", text_type="sentence", style=SpeechStyle()),
                StyledClauseFrame(text="Great news!", text_type="sentence", style=SpeechStyle(1.2, "happy", 0)),
                LLMFullResponseEndFrame(),
            ],
        )
    finally:
        await runner.cleanup()
    assert not [f for f in down if isinstance(f, ErrorFrame)]
    audio = b"".join(f.audio for f in down if isinstance(f, TTSAudioRawFrame))
    assert len(audio) > 0
    assert [r[1]["text"] for r in requests] == ["Hello there.", "Great news!"]
    assert requests[0][0] == "Bearer secret" and requests[0][1]["reference_id"] == "voice-123"
    assert requests[0][1]["format"] == "pcm"
    assert requests[1][1]["references"][0]["text"] == "What a lovely day."


async def test_fish_unreachable_is_reported_not_silent(tmp_path):
    cfg = config.load(
        overrides={"tts": {"provider": "fish", "reference_id": "v", "base_url": "http://127.0.0.1:9", "timeout_s": 2}}
    )
    tts = FishClauseTTSService(cfg.tts, api_key="secret", stop_frame_timeout_s=0.1)
    down, up = await run_test(tts, frames_to_send=[StyledClauseFrame(text="Hello.", text_type="sentence")])
    errors = [f.error for f in up if isinstance(f, ErrorFrame)]  # pipecat sends errors upstream
    assert any("Fish Audio TTS failed: ConnectError" in e for e in errors), errors
    assert not [f for f in down if isinstance(f, TTSAudioRawFrame)]
