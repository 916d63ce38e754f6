"""The same pipeline over a WebSocket, from a WAV file (replay), and the local sound card's errors.

The two runs of the pipeline are e2e (real models); the transports' errors are fast."""

from __future__ import annotations

import asyncio
import json
import socket

import numpy as np
import pytest
import websockets
from helpers import make_wav, read_16k, word_recall
from server_helpers import bare_pipeline

from appliance import config, models
from appliance.bench.replay import replay
from appliance.voice.access import policy_for
from appliance.voice.pipeline import build_task, run_task
from appliance.voice.session import open_session
from appliance.voice.transports import LocalAudioTransport, TransportError, WavFileTransport, websocket_transport

CLIP = "arctic_a0009.wav"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _upgrade(port: int, path: str = "/", **headers) -> int:
    """The HTTP status of a WebSocket upgrade to 127.0.0.1:``port`` with ``headers`` (they
    replace the defaults, ``Host`` included; 101: it was accepted)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        h = {
            "Host": f"127.0.0.1:{port}",
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version": "13",
            **headers,
        }
        lines = [f"GET {path} HTTP/1.1", *(f"{k}: {v}" for k, v in h.items()), "", ""]
        writer.write("\r\n".join(lines).encode())
        return int((await reader.readline()).split()[1])
    finally:
        writer.close()


@pytest.mark.parametrize(
    "server, path, headers, status",
    [
        ({}, "/", {}, 101),  # our own programmatic client on this machine: no Origin
        ({}, "/", {"Origin": "http://evil.test"}, 403),  # any page the person visits may try ws://127.0.0.1
        ({"allowed_origins": ["http://tool.example"]}, "/", {"Origin": "http://tool.example"}, 101),
        ({}, "/", {"Host": "evil.test"}, 403),  # DNS rebinding
        ({"token": "s3cret-token-0123456789"}, "/", {}, 401),
        ({"token": "s3cret-token-0123456789"}, "/?token=wrong", {}, 403),
        ({"token": "s3cret-token-0123456789"}, "/?token=s3cret-token-0123456789", {}, 101),
        ({"token": "s3cret-token-0123456789"}, "/", {"Authorization": "Bearer s3cret-token-0123456789"}, 101),
    ],
)
async def test_the_websocket_transport_upgrade_passes_the_access_rules(server, path, headers, status):
    cfg = config.load(overrides={"server": {"port": _free_port(), **server}, "transport": {"kind": "websocket"}})
    transport = websocket_transport(cfg, policy_for(cfg.server))
    runner = asyncio.create_task(run_task(bare_pipeline(None, transport, None)))
    try:
        for _ in range(50):  # the server listens once the pipeline has started
            try:
                got = await _upgrade(cfg.server.port, path, **headers)
                break
            except OSError:
                await asyncio.sleep(0.1)
        assert got == status
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


@pytest.mark.e2e
async def test_websocket_client_talks_and_hears_the_bot(voice_cfg, runtime, arctic):
    cfg = voice_cfg.model_copy(
        update={
            "server": voice_cfg.server.model_copy(update={"port": _free_port()}),
            "transport": voice_cfg.transport.model_copy(update={"kind": "websocket"}),
        }
    )
    session = open_session(cfg, "ws-test", choose_later=True)
    task = build_task(runtime, websocket_transport(cfg, policy_for(cfg.server)), session)
    runner = asyncio.create_task(run_task(task))
    try:
        pcm = (
            (np.concatenate([np.zeros(8000, np.float32), read_16k(arctic[CLIP]), np.zeros(16000, np.float32)]) * 32767)
            .astype(np.int16)
            .tobytes()
        )
        received = bytearray()
        for _ in range(50):
            try:
                ws = await websockets.connect(f"ws://127.0.0.1:{cfg.server.port}/")
                break
            except OSError:
                await asyncio.sleep(0.1)

        async def reader():
            async for msg in ws:
                if isinstance(msg, bytes):
                    received.extend(msg)

        read_task = asyncio.create_task(reader())
        assert session.folder is None  # nothing stored before the client's choice
        await ws.send(json.dumps({"event": "format", "sample_rate_hz": 16_000, "channels": 1, "record": True}))
        for off in range(0, len(pcm), 640):  # 20 ms chunks, in real time
            await ws.send(pcm[off : off + 640])
            await asyncio.sleep(0.02)
        # then silence, as a client on a call sends, until the bot's reply has played (a loaded
        # machine answers later; 30 s bounds it)
        silence, deadline = bytes(640), asyncio.get_running_loop().time() + 30
        while _audible_windows(received) < 20 and asyncio.get_running_loop().time() < deadline:
            await ws.send(silence)
            await asyncio.sleep(0.02)
        await ws.close()
        read_task.cancel()
        await asyncio.gather(read_task, return_exceptions=True)
    finally:
        await task.cancel()
        await asyncio.gather(runner, return_exceptions=True)
    finals = [e["text"] for e in session.events.events if e["event"] == "final_transcript"]
    assert finals and word_recall(models.ARCTIC_TEXT[CLIP], finals[0]) >= 0.8, finals
    assert _audible_windows(received) >= 10, "no audible bot audio over the WebSocket"
    # issue 30: recorded from the client's choice on (its format event)
    assert session.folder is not None and "final_transcript" in (session.folder / "events.jsonl").read_text()


def _audible_windows(pcm: bytes | bytearray) -> int:
    """20 ms windows (16 kHz int16) of ``pcm`` louder than RMS 0.01."""
    bot = np.frombuffer(bytes(pcm[: len(pcm) // 640 * 640]), np.int16).astype(np.float32) / 32768
    return int((np.sqrt((bot.reshape(-1, 320) ** 2).mean(axis=1)) > 0.01).sum())


@pytest.mark.e2e
async def test_replay_feeds_recorded_input_through_the_pipeline(voice_cfg, runtime, arctic, tmp_path):
    folder = tmp_path / "session"
    folder.mkdir()
    make_wav(folder / "input.wav", [0.5, arctic[CLIP], 1.0], rate_hz=16_000)
    result = await replay(voice_cfg, folder)
    assert len(result["turns"]) == 1, result
    turn = result["turns"][0]
    assert word_recall(models.ARCTIC_TEXT[CLIP], turn["transcript"]) >= 0.8
    assert turn["reply"]
    for stage in ("final_transcript_ms", "llm_first_token_ms", "tts_first_audio_ms"):
        assert stage in turn, (stage, turn)
    assert 0 < result["asr_rtf"] < 1


async def test_replay_of_a_folder_without_input_is_a_clear_error(voice_cfg, tmp_path):
    with pytest.raises(TransportError, match="no input.wav"):
        await replay(voice_cfg, tmp_path)


def test_wav_transport_rejects_a_missing_file(tmp_path):
    with pytest.raises(TransportError, match="no such WAV"):
        WavFileTransport(tmp_path / "nope.wav")


def test_local_transport_without_a_sound_card_is_a_clear_error():
    import sounddevice as sd

    if sd.query_devices():
        pytest.skip("this machine has an audio device")
    with pytest.raises(TransportError, match="no usable audio device"):
        LocalAudioTransport()


# --- input formats (fast) -------------------------------------------------------------
def _tone(seconds: float, rate: int, hz: float = 440.0, channels: int = 1) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return np.repeat((0.3 * np.sin(2 * np.pi * hz * t))[:, None], channels, axis=1).astype(np.float32)


def _peak_hz(pcm: bytes, rate: int = 16_000) -> float:
    a = np.frombuffer(pcm, "<i2").astype(np.float32)
    return float(np.argmax(np.abs(np.fft.rfft(a))) * rate / len(a))


async def test_a_48_khz_stereo_wav_replayed_keeps_its_length_and_pitch(tmp_path):
    import soundfile as sf
    from pipecat.frames.frames import Frame, InputAudioRawFrame
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineWorker
    from pipecat.processors.frame_processor import FrameProcessor

    wav = tmp_path / "stereo48k.wav"
    sf.write(wav, _tone(2.0, 48_000, channels=2), 48_000, subtype="PCM_24")  # 24-bit too

    class Count(FrameProcessor):
        pcm = bytearray()

        async def process_frame(self, frame: Frame, direction):
            await super().process_frame(frame, direction)
            if isinstance(frame, InputAudioRawFrame):
                assert frame.sample_rate == 16_000 and frame.num_channels == 1
                self.pcm += frame.audio
            await self.push_frame(frame, direction)

    transport, count = WavFileTransport(wav, tail_s=0.0), Count()
    task = PipelineWorker(Pipeline([transport.input(), count, transport.output()]))
    runner = asyncio.create_task(run_task(task))
    await transport.finished.wait()
    await task.stop_when_done()
    await runner
    assert len(count.pcm) == 2 * 32_000  # 2.0 s at 16 kHz: the same length
    assert abs(_peak_hz(bytes(count.pcm)) - 440) < 2  # the same pitch


async def test_a_websocket_client_may_declare_its_format():
    from appliance.voice.transports import PCMSerializer

    ser = PCMSerializer()
    choice = await ser.deserialize('{"event": "format", "sample_rate_hz": 48000, "channels": 2}')
    assert choice.record is None  # no choice named: the operator's recording.enabled
    pcm = (_tone(1.0, 48_000, channels=2) * 32767).astype("<i2").tobytes()
    out = bytearray()
    for off in range(0, len(pcm), 1001):  # chunks that split samples and channels
        frame = await ser.deserialize(pcm[off : off + 1001])
        if frame is not None:
            assert frame.sample_rate == 16_000 and frame.num_channels == 1
            out += frame.audio
    assert abs(len(out) // 2 - 16_000) < 400  # the streaming resampler keeps ~20 ms back
    assert abs(_peak_hz(bytes(out)) - 440) < 3


async def test_websocket_audio_is_16_khz_mono_without_a_declaration_and_bad_ones_are_ignored():
    from appliance.voice.transports import PCMSerializer

    ser = PCMSerializer()
    for bad in (
        '{"event": "format", "sample_rate_hz": 5, "channels": 2}',
        "not json",
        '{"event": "hello"}',
        '{"event": "format", "record": "yes"}',
    ):
        assert await ser.deserialize(bad) is None
    frame = await ser.deserialize(bytes(640))
    assert frame.sample_rate == 16_000 and frame.audio == bytes(640)


@pytest.mark.parametrize(("record", "recorded"), [(True, True), (None, True), (False, False)])
async def test_a_websocket_session_stores_nothing_before_the_clients_choice_and_nothing_if_it_declines(
    tmp_path, record, recorded
):
    from pipecat.tests.utils import run_test

    from appliance import config
    from appliance.voice.decisions import RecordingChoiceFrame
    from appliance.voice.pipeline import RecordingConsent

    cfg = config.load(overrides={"recording": {"dir": str(tmp_path)}})
    session = open_session(cfg, "websocket", choose_later=True)
    session.events.emit("connected", pc_id="ws", mode="assistant")  # before the choice: never stored
    assert session.folder is None and list(tmp_path.iterdir()) == []
    await run_test(RecordingConsent(session), frames_to_send=[RecordingChoiceFrame(record)])
    assert (session.folder is not None) is recorded and session.pending is None
    notice = session.events.events[-1]
    assert notice["event"] == "recording_notice" and notice["recorded"] is recorded
    if recorded:
        logged = (session.folder / "events.jsonl").read_text()
        assert "recording_notice" in logged and "connected" not in logged
    else:
        assert list(tmp_path.iterdir()) == []
