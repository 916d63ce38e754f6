"""``appliance bench soak``: many sessions and bad offers against one ``appliance serve``.

The server is a real ``appliance serve`` child process (its page's form mode included),
with its config file's values except: a free port, strict loopback ICE, recordings in a
temporary folder, and ``server.connect_timeout_ms`` at ``ABANDON_TIMEOUT_MS`` so abandoned
offers are reaped within seconds. Then, with :class:`~appliance.simulate.webrtc_client.WebRTCClient`
(aiortc, as a browser joins):

1. warm-up: one plain and one form session (the first form session starts Playwright's
   driver and loads Chromium's files); 5 s settle; the **start** figures;
2. ``sessions`` sessions in turn, alternating plain (say a question, hear the answer) and
   form (the demo flight form: hear the bot's first question, say a name, hear what comes
   next), each connecting, answering one turn and disconnecting. While each one runs,
   ``bad_offers / sessions`` bad offers go in, alternating garbage SDP (must be answered
   400) and real offers whose peer never connects (answered 200, then reaped);
3. 5 s settle after the last call has been torn down, then until the fds hold still (10 s
   at most); the **end** figures.

Figures, read from ``/proc`` of the server process: ``rss_mb`` (VmRSS), ``fds`` (open file
descriptors), ``threads``, and ``chromium``: its live descendant processes whose command line
is Chromium's (:func:`appliance.chromium.descendants`). Result::

    {"sessions": {"run": int, "completed": int, "errors": [str]},
     "bad_offers": {"garbage": {"sent": int, "refused_400": int},
                    "abandoned": {"sent": int, "answered": int, "busy_503": int}},
     "start": FIGURES, "end": FIGURES, "rss_growth": float,
     "targets": {"rss_within_10_percent": bool, "fds_back": bool, "threads_back": bool,
                 "no_chromium_left": bool, "no_errors": bool},
     "duration_s": float}

Run it inside a loopback-only network namespace (``scripts/bench_soak.sh``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import yaml
from aiortc import RTCConfiguration, RTCPeerConnection
from aiortc.mediastreams import AudioStreamTrack

from appliance.chromium import alive, descendants
from appliance.simulate.webrtc_client import WebRTCClient
from appliance.voice import ice
from appliance.voice.piper_synth import PiperSynth

log = logging.getLogger(__name__)

ABANDON_TIMEOUT_MS = 2000  # the soak's server.connect_timeout_ms
SETTLE_S = 5.0  # before each reading of the figures
#: after the settle, the figures are read every second until the fds hold still for two readings in a row, for at most
#: this long (a loaded CI machine still closed a torn-down call's sockets after 5 s: fds 11 → 14, then back)
SETTLE_MORE_S = 10.0
START_TIMEOUT_S = 300.0  # the server's models loaded and listening
PLAIN_REPLY_S = 60.0  # longest wait for the plain assistant's answer
FORM_FIRST_S = 180.0  # longest wait for the form's first question (Chromium, page, LLM field mapping)
FORM_NEXT_S = 90.0  # and for what the bot says after the person's answer
QUESTION = "What is the capital of France?"
FORM_ANSWER = "My name is David Smith."
GARBAGE_SDP = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"  # parses, but has no audio section


async def audio_offer(*, candidates: bool = True) -> str:
    """A real aiortc audio offer's SDP; ``candidates=False`` strips its ICE candidates, so the
    server waits for trickled ones that never come, as after a tab closed right after posting
    its offer."""
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        pc.addTrack(AudioStreamTrack())
        await pc.setLocalDescription(await pc.createOffer())
        sdp = pc.localDescription.sdp
    finally:
        await pc.close()
    if candidates:
        return sdp
    return "".join(
        line + "\r\n" for line in sdp.splitlines() if not line.startswith(("a=candidate", "a=end-of-candidates"))
    )


def figures(pid: int) -> dict:
    """``{"rss_mb", "fds", "threads", "chromium"}`` of process ``pid`` now (Linux ``/proc``)."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    chromium = 0
    for child in descendants(pid):
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        chromium += b"chromium" in cmd and alive(child)
    return {
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": int(status["Threads"]),
        "chromium": chromium,
    }


class _Server:
    """``appliance serve`` as a child process; its output goes to files (a full pipe would stall it)."""

    def __init__(self, operator_config: str | None, folder: Path) -> None:
        from appliance import config

        cfg = config.load(
            operator_config,
            {
                "server": {"port": 0, "connect_timeout_ms": ABANDON_TIMEOUT_MS},
                "transport": {"loopback_only": True},
                "recording": {"dir": str(folder / "recordings")},
            },
        )
        self.config_path = folder / "soak.yaml"
        self.config_path.write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
        self.out, self.err = folder / "serve.out", folder / "serve.err"
        self.process: subprocess.Popen | None = None
        self.url = ""

    async def start(self) -> None:
        """Start it and wait until its models are loaded. Raises: RuntimeError if it exits or is not ready in time."""
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "appliance.cli", "serve", "--config", str(self.config_path)],
                stdout=out,
                stderr=err,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while "ready at " not in self.out.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"appliance serve did not become ready: {self.err.read_text()[-2000:]}")
            await asyncio.sleep(0.2)
        self.url = self.out.read_text().split("ready at ", 1)[1].split()[0]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Soak:
    """One soak run against ``server`` (see the module docstring); ``run()`` returns the result."""

    def __init__(self, server: _Server, sessions: int, bad_offers: int) -> None:
        self.server, self.sessions, self.bad_offers = server, sessions, bad_offers
        synth = PiperSynth()
        self.rate_hz = synth.sample_rate_hz
        self.question = synth.synthesize(QUESTION)
        self.answer = synth.synthesize(FORM_ANSWER)
        self.form_url = ""
        self.errors: list[str] = []
        self.bad = {"garbage": {"sent": 0, "refused_400": 0}, "abandoned": {"sent": 0, "answered": 0, "busy_503": 0}}
        self._bad_sent = 0

    async def run(self) -> dict:
        t0 = time.monotonic()
        async with aiohttp.ClientSession() as http:
            async with http.get(self.server.url + "api/status") as r:
                self.form_url = (await r.json())["demo_forms"]["flight"]
            for kind in ("plain", "form"):
                await self._session(kind, http, warm_up=True)
            start = await self._settled()
            completed = 0
            for i in range(self.sessions):
                completed += await self._session("plain" if i % 2 == 0 else "form", http)
            end = await self._settled()
        growth = round(end["rss_mb"] / start["rss_mb"] - 1, 3)
        return {
            "sessions": {"run": self.sessions, "completed": completed, "errors": self.errors},
            "bad_offers": self.bad,
            "start": start,
            "end": end,
            "rss_growth": growth,
            "targets": {
                "rss_within_10_percent": growth <= 0.10,
                "fds_back": end["fds"] <= start["fds"],
                "threads_back": end["threads"] <= start["threads"],
                "no_chromium_left": end["chromium"] == 0,
                "no_errors": not self.errors,
            },
            "duration_s": round(time.monotonic() - t0, 1),
        }

    async def _settled(self) -> dict:
        """The figures once settled: abandoned offers reaped, :data:`SETTLE_S`, then until the fds
        hold still (:data:`SETTLE_MORE_S` at most). A leak stays in the figures: only fds still
        being closed are waited for."""
        await asyncio.sleep(ABANDON_TIMEOUT_MS / 1000 + SETTLE_S)
        now = figures(self.server.process.pid)
        for _ in range(int(SETTLE_MORE_S)):
            await asyncio.sleep(1.0)
            before, now = now, figures(self.server.process.pid)
            if now["fds"] == before["fds"]:
                break
        return now

    async def _session(self, kind: str, http: aiohttp.ClientSession, warm_up: bool = False) -> bool:
        """One session of ``kind``; whether it answered its turn (a failure is recorded in ``errors``)."""
        client = WebRTCClient(self.server.url)
        bad = None
        try:
            if kind == "plain":
                await client.connect()
                bad = asyncio.create_task(self._bad_offers(http, warm_up))
                await client.say(self.question, self.rate_hz)
                await client.next_bot_utterance(PLAIN_REPLY_S)
            else:
                await client.connect(mode="form", url=self.form_url)
                bad = asyncio.create_task(self._bad_offers(http, warm_up))
                await client.next_bot_utterance(FORM_FIRST_S)
                await client.say(self.answer, self.rate_hz)
                await client.next_bot_utterance(FORM_NEXT_S)
            return True
        except (TimeoutError, RuntimeError, aiohttp.ClientError) as e:
            self.errors.append(f"{'warm-up ' if warm_up else ''}{kind} session: {type(e).__name__}: {e}")
            log.warning("soak: %s", self.errors[-1])
            return False
        finally:
            await client.close()
            if bad is not None:
                await bad

    async def _bad_offers(self, http: aiohttp.ClientSession, warm_up: bool) -> None:
        """This session's share of the bad offers (none during warm-up), garbage and abandoned in turn."""
        if warm_up:
            return
        share = self.bad_offers // self.sessions + (self._bad_sent < self.bad_offers % self.sessions)
        self._bad_sent += 1
        for i in range(share):
            if i % 2 == 0:
                self.bad["garbage"]["sent"] += 1
                status = await self._post(http, GARBAGE_SDP)
                self.bad["garbage"]["refused_400"] += status == 400
            else:
                self.bad["abandoned"]["sent"] += 1
                status = await self._post(http, await audio_offer(candidates=False))
                self.bad["abandoned"]["answered"] += status == 200
                self.bad["abandoned"]["busy_503"] += status == 503
            await asyncio.sleep(0.1)

    async def _post(self, http: aiohttp.ClientSession, sdp: str) -> int:
        async with http.post(self.server.url + "api/offer", json={"sdp": sdp, "type": "offer"}) as r:
            await r.read()
            return r.status


async def run_soak(config: str | None, sessions: int = 50, bad_offers: int = 200) -> dict:
    """Run the soak (module docstring) with the operator config file ``config``.

    Raises:
        ValueError: ``sessions`` < 1 or ``bad_offers`` < 0.
        RuntimeError: the server did not start.
    """
    if sessions < 1 or bad_offers < 0:
        raise ValueError(f"--sessions must be ≥ 1 and --bad-offers ≥ 0, got {sessions} and {bad_offers}")
    ice.use_loopback_only(True)
    with tempfile.TemporaryDirectory(prefix="appliance-soak-") as d:
        server = _Server(config, Path(d))
        try:
            await server.start()
            return await Soak(server, sessions, bad_offers).run()
        finally:
            await asyncio.to_thread(server.stop)
