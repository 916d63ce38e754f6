"""An aiortc client that joins the appliance's page session as a browser would.

Simulated people (form filling, Werewolf) use it: they talk by :meth:`WebRTCClient.say`
(16 kHz mono speech, sent in real time over an Opus track; silence otherwise) and hear
the bot through :meth:`WebRTCClient.next_bot_utterance` (the received audio, cut into
utterances at ≥ ``gap_ms`` of silence; :attr:`WebRTCClient.last_span` says when the one
last taken was audible). A client made with ``pause_ms`` also hands over, through
:meth:`WebRTCClient.next_bot_audio`, the utterance so far at each pause of ``pause_ms`` inside
it (:class:`BotAudio` with ``final`` False): a listener gets ready to answer before the bot has
surely stopped, and takes the floor with :meth:`WebRTCClient.take`. Signalling is the page's own: ``POST /api/offer``.
No STUN/TURN (``iceServers=[]``); use it in a loopback-only namespace with
``transport.loopback_only`` as the tests do.
"""

from __future__ import annotations

import asyncio
import fractions
import logging
import time
from dataclasses import dataclass

import aiohttp
import av
import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from appliance.voice import rtp
from appliance.voice.piper_synth import resample

log = logging.getLogger(__name__)

RATE_HZ = 48_000
FRAME_SAMPLES = 960  # 20 ms at 48 kHz
AUDIBLE_RMS = 0.01


class MicTrack(MediaStreamTrack):
    """An outgoing audio track: queued speech, else silence, paced at 20 ms per frame."""

    kind = "audio"

    def __init__(self):
        super().__init__()
        self._pending = np.zeros(0, np.int16)
        self._pts = 0
        self._t0: float | None = None
        self.done = asyncio.Event()
        self.done.set()

    def queue(self, pcm48k: np.ndarray) -> None:
        self._pending = np.concatenate([self._pending, pcm48k])
        self.done.clear()

    async def recv(self) -> av.AudioFrame:
        if self._t0 is None:
            self._t0 = time.monotonic()
        wait = self._t0 + self._pts / RATE_HZ - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        chunk, self._pending = self._pending[:FRAME_SAMPLES], self._pending[FRAME_SAMPLES:]
        if len(chunk) < FRAME_SAMPLES:
            chunk = np.concatenate([chunk, np.zeros(FRAME_SAMPLES - len(chunk), np.int16)])
            self.done.set()
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = RATE_HZ
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, RATE_HZ)
        self._pts += FRAME_SAMPLES
        return frame


@dataclass(frozen=True)
class BotAudio:
    """The bot's audio as the client hands it over: ``audio`` float32 mono 16 kHz; ``span`` the
    wall-clock seconds (``time.time()``) of the arrival of its first and last audible 20 ms frame;
    ``mark`` the client's :attr:`WebRTCClient.mark` at its last audible frame; ``final`` True for
    an utterance ended by ``gap_ms`` of silence, False for the utterance so far at a pause of
    ``pause_ms``."""

    audio: np.ndarray
    span: tuple[float, float]
    mark: int
    final: bool


class WebRTCClient:
    """One WebRTC session with the appliance (``url`` = the page's base URL).

    ``connect()`` negotiates and starts receiving; ``close()`` ends it. ``gap_ms``: the silence
    that ends an utterance; ``pause_ms``: a shorter one at which the utterance so far is handed
    over too (None: never).
    """

    def __init__(self, url: str, gap_ms: int = 900, pause_ms: int | None = None):
        self.url = url.rstrip("/")
        self.gap_ms, self.pause_ms = gap_ms, pause_ms
        self.pc = None
        self.pc_id: str | None = None
        self._mic = None
        self._heard: asyncio.Queue[BotAudio] = asyncio.Queue()
        self._recv_task: asyncio.Task | None = None
        self._current: list[np.ndarray] = []  # the utterance being received (48 kHz frames)
        self._rate = RATE_HZ
        self.bot_audio_s = 0.0
        #: audible 20 ms frames received so far: a :class:`BotAudio`'s ``mark`` is stale once it has grown
        self.mark = 0
        #: the silence (ms) since the last audible frame of the utterance being received (0 while it is audible)
        self.silent_ms = 0.0
        #: (first, last) audible 20 ms frame of the utterance last taken (:meth:`next_bot_audio`,
        #: :meth:`next_bot_utterance`), as wall-clock seconds (``time.time()``) of their arrival
        self.last_span: tuple[float, float] | None = None

    async def connect(self, **offer_extra) -> None:
        """Negotiate; ``offer_extra`` joins the offer body (e.g. ``mode="form", url=…``).

        Raises: RuntimeError when the server refuses the offer."""
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self._mic = MicTrack()
        self.pc.addTrack(self._mic)
        got_track = asyncio.Event()

        @self.pc.on("track")
        def _on_track(track):
            if track.kind == "audio" and self._recv_task is None:
                self._recv_task = asyncio.create_task(self._receive(track))
                got_track.set()

        await self.pc.setLocalDescription(await self.pc.createOffer())
        rtp.receive_at_once(self.pc)  # hears the bot without aiortc's 80 ms prefetch, as a browser would
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"{self.url}/api/offer",
                json={"sdp": self.pc.localDescription.sdp, "type": self.pc.localDescription.type, **offer_extra},
            ) as r:
                body = await r.json()
                if r.status != 200:
                    raise RuntimeError(f"offer refused ({r.status}): {body}")
        self.pc_id = body["pc_id"]
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type=body["type"]))
        await asyncio.wait_for(got_track.wait(), 10)

    async def _receive(self, track) -> None:
        first = last = 0.0  # wall-clock arrival of the current utterance's first and last audible frame
        try:
            while True:
                frame = await track.recv()
                pcm = frame.to_ndarray().reshape(-1, len(frame.layout.channels)).mean(axis=1) / 32768
                self._rate = frame.sample_rate
                ms = len(pcm) / self._rate * 1000
                loud = float(np.sqrt(np.mean(pcm**2))) > AUDIBLE_RMS if len(pcm) else False
                if loud:
                    last = time.time()
                    if not self._current:
                        first = last
                    self._current.append(pcm.astype(np.float32))
                    self.silent_ms = 0.0
                    self.mark += 1
                    self.bot_audio_s += ms / 1000
                elif self._current:
                    self._current.append(pcm.astype(np.float32))
                    paused = self.pause_ms is not None and self.silent_ms < self.pause_ms <= self.silent_ms + ms
                    self.silent_ms += ms
                    if self.silent_ms >= self.gap_ms:
                        self._heard.put_nowait(BotAudio(self._so_far(), (first, last), self.mark, True))
                        self._current, self.silent_ms = [], 0.0
                    elif paused:
                        self._heard.put_nowait(BotAudio(self._so_far(), (first, last), self.mark, False))
        except (MediaStreamError, asyncio.CancelledError):
            return

    def _so_far(self) -> np.ndarray:
        return resample(np.concatenate(self._current), self._rate, 16_000)

    @property
    def receiving(self) -> bool:
        """Whether an utterance is being received (audible audio since the last one ended)."""
        return bool(self._current)

    def take(self, mark: int) -> bool:
        """Take the floor after the utterance handed over at ``mark`` (a pause of it): True, and
        that utterance is over (no final :class:`BotAudio` follows for it), when no audible audio
        has come since; False when the bot went on."""
        if mark != self.mark or not self._current:
            return False
        self._current, self.silent_ms = [], 0.0
        return True

    async def next_bot_audio(self, timeout_s: float) -> BotAudio:
        """The next utterance, or the utterance so far at a pause of ``pause_ms``.
        Raises: TimeoutError after ``timeout_s``."""
        heard = await asyncio.wait_for(self._heard.get(), timeout_s)
        self.last_span = heard.span
        return heard

    async def next_bot_utterance(self, timeout_s: float) -> np.ndarray:
        """The next bot utterance (pauses skipped). Raises: TimeoutError after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not (heard := await self.next_bot_audio(deadline - time.monotonic())).final:
            pass
        return heard.audio

    async def say(self, audio: np.ndarray, rate_hz: int, wait: bool = True) -> None:
        """Speak ``audio`` (int16 or float32 mono at ``rate_hz``) into the session;
        ``wait``: return once it has all been sent."""
        if audio.dtype != np.int16:
            audio = (np.clip(audio, -1, 1) * 32767).astype(np.int16)
        self._mic.queue(resample(audio, rate_hz, RATE_HZ))
        if wait:
            await self._mic.done.wait()

    async def close(self) -> None:
        if self._recv_task is not None:
            self._recv_task.cancel()
            await asyncio.gather(self._recv_task, return_exceptions=True)
        if self.pc is not None:
            await self.pc.close()
        if self.pc_id:
            try:
                async with aiohttp.ClientSession() as http:
                    await http.post(f"{self.url}/api/disconnect", params={"pc_id": self.pc_id})
            except aiohttp.ClientError:
                pass
