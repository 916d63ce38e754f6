"""Helpers the tests share (fixtures are in conftest.py): transcripts, WAV files, the
network namespace, a scripted phone side for the computer agent, Chromium processes, the
bot's audio frames as a pipeline's end sees them."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from pathlib import Path

import ifaddr
import numpy as np
import soundfile as sf
from pipecat.frames.frames import Frame, TTSAudioRawFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor


# --- voice -------------------------------------------------------------------------
def words(text: str) -> list[str]:
    """Lower-case words without punctuation, for comparing transcripts."""
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


def word_recall(expected: str, got: str) -> float:
    """Share of ``expected``'s words found in ``got`` (order-free; 1.0 = all)."""
    exp, have = words(expected), set(words(got))
    return sum(w in have for w in exp) / max(1, len(exp))


def loopback_only_network() -> bool:
    """True inside a loopback-only network namespace (how scripts/test.sh runs pytest)."""
    return all(
        ip.ip in ("127.0.0.1", ("::1", 0, 0)) or (isinstance(ip.ip, tuple) and ip.ip[0] == "::1")
        for a in ifaddr.get_adapters()
        for ip in a.ips
    )


def make_wav(path: Path, parts: list, rate_hz: int = 48_000) -> Path:
    """Concatenate WAV files and silences (float seconds) into one mono 16-bit WAV (sox)."""
    pieces = []
    for i, part in enumerate(parts):
        piece = path.with_name(f"{path.stem}.part{i}.wav")
        if isinstance(part, (int, float)):
            cmd = ["sox", "-n", "-r", str(rate_hz), "-c", "1", "-b", "16", str(piece), "trim", "0", str(part)]
        else:
            cmd = ["sox", str(part), "-r", str(rate_hz), "-c", "1", "-b", "16", str(piece)]
        subprocess.run(cmd, check=True)
        pieces.append(str(piece))
    subprocess.run(["sox", *pieces, str(path)], check=True)
    return path


def read_16k(path: Path) -> np.ndarray:
    """A WAV as float32 mono 16 kHz."""
    from appliance.voice.piper_synth import resample

    audio, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return resample(audio.mean(axis=1), rate, 16_000)


# -- forms ----------------------------------------------------------------------------


class ScriptedPhone:
    """Stands in for the phone agent on the bus (tests of the computer agent alone).

    Answers each ``need_info`` field from ``answers`` — a mapping label → value, or a list of
    values given one per ask (the first answer, then the one after a ``format_invalid`` or
    ``fill_error``), the label matched exactly (case ignored) else as a substring; or a
    function ``(field_spec, n) -> value`` (``n``: 0 for the first ask) —, always confirmed;
    authorises the submit when asked if ``authorise``. A field it has no answer for is kept
    in ``unknown`` and left unanswered. ``seen`` keeps every envelope it received;
    ``authorised`` the ts of each submit_authorized (``authorised_at_ms``: the last).
    """

    def __init__(self, bus, answers, authorise: bool):
        self.bus, self.answers, self.authorise = bus, answers, authorise
        self.seen: list = []
        self.authorised: list[int] = []
        self.asked: dict[str, int] = {}
        self.unknown: list[str] = []
        self.sub = bus.subscribe("phone")

    @property
    def authorised_at_ms(self) -> int | None:
        return self.authorised[-1] if self.authorised else None

    def _answer(self, field) -> object:
        n = self.asked[field.name] = self.asked.get(field.name, -1) + 1
        if callable(self.answers):
            return self.answers(field, n)
        label = field.label.lower()
        key = next((k for k in self.answers if k.lower() == label), None) or next(
            (k for k in self.answers if k.lower() in label), None
        )
        if key is None:
            return None
        v = self.answers[key]
        return v[min(n, len(v) - 1)] if isinstance(v, list) else v

    async def run(self) -> None:
        from appliance.bus import Envelope

        specs: dict = {}

        async def send(type_: str, payload: dict) -> None:
            env = Envelope.new(type_, payload, sender="phone", recipient="computer")
            if type_ == "submit_authorized":
                self.authorised.append(env.ts)
            await self.bus.publish(env)

        async def answer(f) -> None:
            value = self._answer(f)
            if value is None:
                self.unknown.append(f.label)
                return
            await send("info_collected", {"field": f.name, "value": value, "confirmed": True})

        async for env in self.sub:
            self.seen.append(env)
            p = env.payload
            if env.type == "need_info":
                for f in p.fields:
                    specs[f.name] = f
                    await answer(f)
            elif env.type in ("format_invalid", "fill_error") and p.field in specs:
                await answer(specs[p.field])
            elif env.type == "status_update" and p.state == "auth-required" and self.authorise:
                await send("submit_authorized", {})


class BrowserTab:
    """Stands in for :class:`appliance.computer_agent.browser.Browser` on a shared Chromium:
    each agent run gets a fresh context and page of the one Chromium ``chromium`` (a started
    Browser) and closes only those. ``requests``: every URL the page asked for;
    ``navigations``: every URL its main frame went to."""

    def __init__(self, chromium) -> None:
        self.chromium = chromium
        self.context = self.page = None
        self.requests: list[str] = []
        self.navigations: list[str] = []
        self.lost: str | None = None

    async def start(self):
        self.context = await self.chromium.context.browser.new_context()
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = await self.context.new_page()
        self.page.on("framenavigated", lambda fr: fr == self.page.main_frame and self.navigations.append(fr.url))
        return self.page

    def processes(self) -> list[int]:
        return []

    async def close(self) -> None:
        if self.context is not None:
            await self.context.close()
            self.context = None


def chromium_processes() -> list[int]:
    """Live descendants of this test process whose command line is Chromium's."""
    from appliance.chromium import alive, descendants

    out = []
    for pid in descendants(os.getpid()):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if b"chromium" in cmd and alive(pid):
            out.append(pid)
    return out


class AudioSink(FrameProcessor):
    """The end of a pipeline under test: ``audio`` = each ``TTSAudioRawFrame`` passing, with its loop time."""

    def __init__(self):
        super().__init__()
        self.audio: list[tuple[float, TTSAudioRawFrame]] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio.append((asyncio.get_running_loop().time(), frame))
        await self.push_frame(frame, direction)


def answer_audio(seconds: float, rate_hz: int, level: int = 1) -> list[TTSAudioRawFrame]:
    """An answer's audio as the TTS pushes it: 40 ms chunks of ``level``."""
    n = rate_hz * 40 // 1000
    return [TTSAudioRawFrame(np.full(n, level, np.int16).tobytes(), rate_hz, 1) for _ in range(round(seconds * 25))]
