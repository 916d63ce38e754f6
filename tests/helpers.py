"""Helpers the tests share (fixtures are in conftest.py): transcripts, WAV files, the
network namespace, a scripted phone side for the computer agent, Chromium processes."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import ifaddr
import numpy as np
import soundfile as sf


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
    return all(ip.ip in ("127.0.0.1", ("::1", 0, 0)) or (isinstance(ip.ip, tuple) and ip.ip[0] == "::1")
               for a in ifaddr.get_adapters() for ip in a.ips)


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
    from appliance.voice.tts import resample

    audio, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return resample(audio.mean(axis=1), rate, 16_000)


# -- forms ----------------------------------------------------------------------------

class ScriptedPhone:
    """Stands in for the phone agent on the bus (tests of the computer agent alone).

    Answers each ``need_info`` field from ``answers`` (label substring → value, or a list of
    values given one per ask: the first answer, then the one after a ``format_invalid`` or
    ``fill_error``), always confirmed; authorises the submit when asked if ``authorise``.
    ``seen`` keeps every envelope it received; ``authorised_at_ms`` the submit_authorized ts.
    """

    def __init__(self, bus, answers: dict, authorise: bool):
        self.bus, self.answers, self.authorise = bus, answers, authorise
        self.seen: list = []
        self.authorised_at_ms: int | None = None
        self.asked: dict[str, int] = {}
        self.sub = bus.subscribe("phone")

    def _answer(self, field) -> object:
        key = next(k for k in self.answers if k.lower() in field.label.lower())
        n = self.asked[field.name] = self.asked.get(field.name, -1) + 1
        v = self.answers[key]
        return v[min(n, len(v) - 1)] if isinstance(v, list) else v

    async def run(self) -> None:
        from appliance.bus import Envelope

        specs: dict = {}

        async def send(type_: str, payload: dict) -> None:
            env = Envelope.new(type_, payload, sender="phone", recipient="computer")
            if type_ == "submit_authorized":
                self.authorised_at_ms = env.ts
            await self.bus.publish(env)

        async for env in self.sub:
            self.seen.append(env)
            p = env.payload
            if env.type == "need_info":
                for f in p.fields:
                    specs[f.name] = f
                    await send("info_collected", {"field": f.name, "value": self._answer(f), "confirmed": True})
            elif env.type in ("format_invalid", "fill_error") and p.field in specs:
                await send("info_collected", {"field": p.field, "value": self._answer(specs[p.field]),
                                              "confirmed": True})
            elif env.type == "status_update" and p.state == "auth-required" and self.authorise:
                await send("submit_authorized", {})


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
