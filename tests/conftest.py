"""Shared fixtures. Each feature keeps its fixtures self-contained in its own section."""

from __future__ import annotations

import re
from collections.abc import Iterator
import subprocess
from pathlib import Path

import ifaddr
import numpy as np
import pytest
import soundfile as sf

from appliance import config, models


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


@pytest.fixture(scope="session")
def arctic() -> dict[str, Path]:
    """The two CMU ARCTIC clips (OFFLINE.md §1): name → path."""
    return {name: models.path("arctic", name) for name in models.ARCTIC_TEXT}


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


@pytest.fixture(scope="session")
def voice_cfg(tmp_path_factory) -> config.Config:
    """Default config on a free port, strict loopback, recordings in a temp folder."""
    rec = tmp_path_factory.mktemp("recordings")
    return config.load(overrides={"server": {"port": 0}, "transport": {"loopback_only": True},
                                  "recording": {"dir": str(rec)}})


@pytest.fixture(scope="session")
def runtime(voice_cfg):
    """The real models (Whisper tiny.en, Piper joe, Qwen-Coder 0.5B on llama-server), loaded once."""
    from appliance.voice.pipeline import VoiceRuntime

    rt = VoiceRuntime(voice_cfg).start()
    yield rt
    rt.stop()


def read_16k(path: Path) -> np.ndarray:
    """A WAV as float32 mono 16 kHz."""
    from appliance.voice.tts import resample

    audio, rate = sf.read(str(path), dtype="float32", always_2d=True)
    return resample(audio.mean(axis=1), rate, 16_000)


# -- bus: a real redis-server on loopback ---------------------------------------------------

@pytest.fixture(scope="session")
def redis_server() -> Iterator["RedisServer"]:  # noqa: F821
    """A throw-away ``redis-server`` on 127.0.0.1 (free port, no persistence) for the session.

    Its ``url`` attribute is ``redis://127.0.0.1:PORT/0``. Tests share it: use unique
    stream names (see ``redis_url``) rather than assuming an empty server.
    """
    from appliance.bus.redis_server import RedisServer

    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server) -> str:  # noqa: ANN001
    """The URL of the session's redis-server, emptied (FLUSHALL) before the test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server.url
