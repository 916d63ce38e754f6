"""Transports besides SmallWebRTC: WebSocket (programmatic clients), the local sound card
(``sounddevice``), and a WAV file (replay). All are pipecat transports, so the same
pipeline (:func:`appliance.voice.pipeline.build_task`) runs on each.

WebSocket protocol (``appliance serve --transport websocket``, ``ws://host:port/``;
``wss://`` with ``server.tls_cert``/``server.tls_key``):
client → server binary messages are the microphone, s16le, any chunk size: 16 kHz mono
unless the client first sends the text message ``{"event": "format", "sample_rate_hz": N,
"channels": C, "record": true|false}`` (``record``: the person's choice; absent: the
operator's ``recording.enabled``; nothing before this message is stored, and a client that
never sends it is not recorded) (interleaved channels are averaged to mono, N resampled to 16 kHz, with
one streaming resampler so chunk edges leave no clicks); server → client binary messages
are the bot's audio, s16le mono at 16 kHz, paced in real time; a text message
``{"event": "interruption"}`` tells the client to drop the bot audio it has buffered
(barge-in). One client at a time; each connection is a session. The upgrade passes the
appliance's access rules (:func:`appliance.voice.access.websocket_refusal`: Host, Origin and,
when ``server.host`` is not loopback, the token printed at start as ``ws://…/?token=…``); a
refused one gets the HTTP status and the reason as the handshake's answer.

A WAV file (replay) may have any rate, channel count and sample format soundfile reads:
it is averaged to mono and resampled to 16 kHz, keeping its pitch and length.
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    StartFrame,
    TTSSpeakFrame,
)
from pipecat.serializers.base_serializer import FrameSerializer
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams

from appliance.config import Config
from appliance.errors import ApplianceError
from appliance.voice.access import AccessPolicy, policy_for, websocket_refusal
from appliance.voice.decisions import RecordingChoiceFrame
from appliance.voice.tls import server_context

log = logging.getLogger(__name__)

SAMPLE_RATE_HZ = 16_000


class TransportError(ApplianceError, RuntimeError):
    """A transport cannot start (no audio device, a bad WAV file)."""


def _params(**extra) -> TransportParams:
    return TransportParams(
        audio_in_enabled=True,
        audio_out_enabled=True,
        audio_in_sample_rate=SAMPLE_RATE_HZ,
        audio_out_sample_rate=SAMPLE_RATE_HZ,
        **extra,
    )


# --- WebSocket ---------------------------------------------------------------------------
class PCMSerializer(FrameSerializer):
    """Raw s16le audio both ways (the client's in its declared format, ours 16 kHz mono);
    the format declaration and interruptions as JSON text messages (module docstring)."""

    MAX_RATE_HZ = 192_000
    MAX_CHANNELS = 8

    def __init__(self):
        super().__init__()
        self._rate, self._channels = SAMPLE_RATE_HZ, 1
        self._resampler = None
        self._rest = b""  # a partial sample frame (all channels) from the last message

    async def serialize(self, frame: Frame) -> str | bytes | None:
        if isinstance(frame, OutputAudioRawFrame):
            return frame.audio
        if isinstance(frame, InterruptionFrame):
            return json.dumps({"event": "interruption"})
        return None

    async def deserialize(self, data: str | bytes) -> Frame | None:
        if isinstance(data, str):
            return self._declare(data)
        pcm = self._to_16k_mono(self._rest + data)
        return InputAudioRawFrame(audio=pcm, sample_rate=SAMPLE_RATE_HZ, num_channels=1) if pcm else None

    def _declare(self, text: str) -> RecordingChoiceFrame | None:
        """The client's ``format`` event: its audio format from now on, and its choice about
        recording (the frame; ``record`` absent: None, the operator's default)."""
        try:
            msg = json.loads(text)
            if msg.get("event") != "format":
                raise ValueError(f"unknown event {msg.get('event')!r}")
            rate, channels = int(msg.get("sample_rate_hz", SAMPLE_RATE_HZ)), int(msg.get("channels", 1))
            if not (8_000 <= rate <= self.MAX_RATE_HZ and 1 <= channels <= self.MAX_CHANNELS):
                raise ValueError(f"unsupported format {rate} Hz × {channels}")
            record = msg.get("record")
            if record is not None and not isinstance(record, bool):
                raise ValueError(f"record must be true or false, not {record!r}")
        except (ValueError, TypeError, AttributeError) as e:
            log.warning("websocket: ignored a text message (%s): %.80s", e, text)
            return None
        import soxr

        self._rate, self._channels, self._rest = rate, channels, b""
        self._resampler = (
            None if rate == SAMPLE_RATE_HZ else soxr.ResampleStream(rate, SAMPLE_RATE_HZ, 1, dtype="float32")
        )
        log.info("websocket: the client's audio is %d Hz, %d channel(s); record: %s", rate, channels, record)
        return RecordingChoiceFrame(record)

    def _to_16k_mono(self, data: bytes) -> bytes:
        import numpy as np

        frame_bytes = 2 * self._channels
        whole = len(data) - len(data) % frame_bytes
        data, self._rest = data[:whole], data[whole:]
        if self._channels == 1 and self._resampler is None:
            return data
        audio = np.frombuffer(data, "<i2").reshape(-1, self._channels).astype(np.float32).mean(axis=1)
        if self._resampler is not None:
            audio = self._resampler.resample_chunk(audio)
        return np.clip(np.round(audio), -32768, 32767).astype("<i2").tobytes()


def websocket_transport(cfg: Config, policy: AccessPolicy) -> BaseTransport:
    """pipecat's single-client WebSocket server on ``server.host:port`` (PCM both ways),
    whose upgrades pass ``policy`` (:func:`appliance.voice.access.policy_for`)."""
    from pipecat.transports.websocket.server import (
        SingleClientWebsocketServerInputTransport,
        SingleClientWebsocketServerParams,
        SingleClientWebsocketServerTransport,
    )
    from websockets.asyncio.server import serve

    tls_context = server_context(cfg)  # wss:// with server.tls_cert

    class GuardedInput(SingleClientWebsocketServerInputTransport):
        async def _server_task_handler(self):  # pipecat's, with the access check on each upgrade and TLS
            async with serve(
                self._client_handler, self._host, self._port, process_request=self._check, ssl=tls_context
            ):
                await self._callbacks.on_websocket_ready()
                await self._stop_server_event.wait()

        @staticmethod
        def _check(connection, request):
            remote = connection.remote_address[0] if connection.remote_address else None
            refusal = websocket_refusal(policy, path=request.path, headers=request.headers, remote=remote)
            if refusal is None:
                return None
            log.warning("websocket: refused an upgrade from %s: %s", remote, refusal.error)
            return connection.respond(refusal.status, refusal.error + "\n")

    class GuardedTransport(SingleClientWebsocketServerTransport):
        def input(self):
            if not self._input:
                self._input = GuardedInput(
                    self, self._host, self._port, self._params, self._callbacks, name=self._input_name
                )
            return self._input

    return GuardedTransport(
        host=cfg.server.host,
        port=cfg.server.port,
        params=SingleClientWebsocketServerParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            audio_in_sample_rate=SAMPLE_RATE_HZ,
            audio_out_sample_rate=SAMPLE_RATE_HZ,
            serializer=PCMSerializer(),
        ),
    )


# --- local sound card (sounddevice) ------------------------------------------------------
def _close_stream(transport) -> None:
    """Stop and close a transport's sounddevice stream, if open."""
    if transport._stream is not None:
        transport._stream.stop()
        transport._stream.close()
        transport._stream = None


class _LocalInput(BaseInputTransport):
    def __init__(self, device, params: TransportParams):
        super().__init__(params)
        self._device = device
        self._stream = None

    async def start(self, frame: StartFrame):
        import sounddevice as sd

        await super().start(frame)
        loop = asyncio.get_running_loop()

        def callback(indata, _frames, _time, status):
            if status:
                log.debug("sounddevice input: %s", status)
            f = InputAudioRawFrame(audio=bytes(indata), sample_rate=SAMPLE_RATE_HZ, num_channels=1)
            asyncio.run_coroutine_threadsafe(self.push_audio_frame(f), loop)

        self._stream = sd.RawInputStream(
            samplerate=SAMPLE_RATE_HZ,
            channels=1,
            dtype="int16",
            blocksize=SAMPLE_RATE_HZ // 50,
            device=self._device,
            callback=callback,
        )
        self._stream.start()
        await self.set_transport_ready(frame)

    async def cleanup(self):
        await super().cleanup()
        _close_stream(self)


class _LocalOutput(BaseOutputTransport):
    def __init__(self, device, params: TransportParams):
        super().__init__(params)
        self._device = device
        self._stream = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speaker")

    async def start(self, frame: StartFrame):
        import sounddevice as sd

        await super().start(frame)
        self._stream = sd.RawOutputStream(samplerate=SAMPLE_RATE_HZ, channels=1, dtype="int16", device=self._device)
        self._stream.start()
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        if self._stream is None:
            return False
        await asyncio.get_running_loop().run_in_executor(self._executor, self._stream.write, frame.audio)
        return True

    async def cleanup(self):
        await super().cleanup()
        _close_stream(self)
        self._executor.shutdown(wait=True)


class LocalAudioTransport(BaseTransport):
    """The machine's microphone and speaker through ``sounddevice`` (PortAudio).

    Raises:
        TransportError: PortAudio is missing, or there is no input or output device.
    """

    def __init__(self, input_device=None, output_device=None):
        super().__init__()
        try:
            import sounddevice as sd
        except OSError as e:  # "PortAudio library not found"
            raise TransportError(f"local transport: {e} (install Debian's libportaudio2)") from None
        try:
            sd.check_input_settings(device=input_device, channels=1, dtype="int16", samplerate=SAMPLE_RATE_HZ)
            sd.check_output_settings(device=output_device, channels=1, dtype="int16", samplerate=SAMPLE_RATE_HZ)
        except (sd.PortAudioError, ValueError) as e:
            devices = sd.query_devices()
            raise TransportError(
                f"local transport: no usable audio device ({e}); this machine has "
                f"{len(devices)} audio device(s). Use --transport webrtc and a browser instead, "
                f"or set transport.input_device / transport.output_device."
            ) from None
        self._in = _LocalInput(input_device, _params())
        self._out = _LocalOutput(output_device, _params())

    def input(self):
        return self._in

    def output(self):
        return self._out


# --- WAV file (replay) ---------------------------------------------------------------------
def read_wav_16k(path: Path) -> bytes:
    """A WAV file (any rate, channels, sample format) as s16le mono 16 kHz PCM: channels
    averaged, resampled with soxr (pitch and length kept).

    Raises:
        TransportError: the file is not audio soundfile can read.
    """
    import numpy as np
    import soundfile as sf

    from appliance.voice.piper_synth import resample

    try:
        audio, rate = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError) as e:
        raise TransportError(f"{path}: not a readable WAV file ({e})") from None
    mono = resample(audio.mean(axis=1), rate, SAMPLE_RATE_HZ)
    return (np.clip(mono, -1, 1) * 32767).astype("<i2").tobytes()


class _WavInput(BaseInputTransport):
    """Plays a WAV into the pipeline in real time (20 ms frames), then ``tail_s`` of
    silence so the last turn can finish; ``finished`` is set at the end."""

    def __init__(self, path: Path, tail_s: float, params: TransportParams):
        super().__init__(params)
        self._path = path
        self._tail_s = tail_s
        self._task: asyncio.Task | None = None
        self.finished = asyncio.Event()

    async def start(self, frame: StartFrame):
        await super().start(frame)
        await self.set_transport_ready(frame)
        self._task = self.create_task(self._play())

    async def _play(self):
        pcm = read_wav_16k(self._path) + bytes(int(self._tail_s * SAMPLE_RATE_HZ) * 2)
        step = SAMPLE_RATE_HZ // 50 * 2
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for i, off in enumerate(range(0, len(pcm), step)):
            await self.push_audio_frame(InputAudioRawFrame(pcm[off : off + step], SAMPLE_RATE_HZ, 1))
            await asyncio.sleep(max(0.0, t0 + (i + 1) * 0.02 - loop.time()))
        self.finished.set()

    async def cleanup(self):
        await super().cleanup()
        if self._task is not None:
            await self.cancel_task(self._task)


class _PacedNullOutput(BaseOutputTransport):
    """Consumes bot audio at real-time pace (as a speaker would), keeping nothing."""

    async def start(self, frame: StartFrame):
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        await asyncio.sleep(len(frame.audio) / 2 / frame.sample_rate / max(1, frame.num_channels))
        return True


class WavFileTransport(BaseTransport):
    """A WAV file as the microphone (real time) and a paced sink as the speaker.
    ``finished`` is set once the file (and its tail of silence) has been played."""

    def __init__(self, path: str | Path, tail_s: float = 6.0):
        super().__init__()
        path = Path(path)
        if not path.is_file():
            raise TransportError(f"{path}: no such WAV file")
        self._in = _WavInput(path, tail_s, _params())
        self._out = _PacedNullOutput(_params())
        self.finished = self._in.finished

    def input(self):
        return self._in

    def output(self):
        return self._out


async def serve_single(cfg: Config) -> None:
    """``appliance serve`` for the WebSocket and local transports: one session at a time
    (WebSocket: a new session per client connection), until Ctrl-C.

    Raises:
        TransportError: the local transport has no audio device.
    """
    from appliance.voice.pipeline import build_task, run_task
    from appliance.voice.runtime import VoiceRuntime
    from appliance.voice.session import open_session, recording_notice

    if cfg.transport.kind == "local":
        transport = LocalAudioTransport(cfg.transport.input_device, cfg.transport.output_device)
    policy = policy_for(cfg.server)
    runtime = VoiceRuntime(cfg).start(lambda stage: print(f"appliance: {stage}", flush=True))
    try:
        while True:
            if cfg.transport.kind == "websocket":
                transport = websocket_transport(cfg, policy)
                token = f"?token={policy.token}" if policy.token else ""
                scheme = "wss" if cfg.server.tls_cert else "ws"
                print(
                    f"appliance: waiting for a WebSocket client at {scheme}://{cfg.server.host}:{cfg.server.port}/{token}",
                    flush=True,
                )
            else:
                print("appliance: listening on the local microphone (Ctrl-C to stop)", flush=True)
            # a WebSocket client chooses in its format event (nothing before it is stored)
            session = open_session(cfg, cfg.transport.kind, choose_later=cfg.transport.kind == "websocket")
            task = build_task(runtime, transport, session)
            if cfg.transport.kind == "local" and session.folder is not None:  # said before anything else (issue 30)
                print(f"appliance: this session is recorded in {session.folder} (--no-record: not)", flush=True)
                await task.queue_frame(TTSSpeakFrame(recording_notice(True), append_to_context=False))

            if cfg.transport.kind == "websocket":

                @transport.event_handler("on_client_disconnected")
                async def _gone(_t, _c, task=task):
                    await task.cancel()

            await run_task(task)
            session.events.close()
            if cfg.transport.kind == "local":
                return
    finally:
        runtime.stop()
