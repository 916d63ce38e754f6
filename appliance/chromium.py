"""Debian Chromium, offline: the one place its path and flags live (OFFLINE.md §4).

Every Chromium the appliance starts — the computer agent's, the test and benchmark
page clients — uses :data:`OFFLINE_ARGS`; the last flag is required: without it
Chromium looked up outside hosts even with every other switch set.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: The real binary (``/usr/bin/chromium`` is a wrapper script that adds flags).
CHROMIUM_PATH = "/usr/lib/chromium/chromium"

OFFLINE_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--no-pings", "--dns-prefetch-disable",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
]


def executable() -> str:
    """Path of Debian's Chromium binary.

    Raises:
        FileNotFoundError: Chromium is not installed (``apt-get install chromium``).
    """
    if Path(CHROMIUM_PATH).is_file():
        return CHROMIUM_PATH
    found = shutil.which("chromium")
    if not found:
        raise FileNotFoundError("Chromium not found: install Debian's package with `apt-get install chromium` "
                                "(scripts/install.sh does)")
    return found


def fake_microphone_args(wav: str | Path) -> list[str]:
    """Flags that make ``wav`` the microphone, played once (``%noloop``), with WebRTC on
    loopback allowed and autoplay on (OFFLINE.md §3–4)."""
    return ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={Path(wav).resolve()}%noloop",
            "--autoplay-policy=no-user-gesture-required", "--allow-loopback-in-peer-connection"]


def webaudio_microphone_args() -> list[str]:
    """Flags for a page whose microphone is WebAudio (the voice benchmark's hook): the
    permission prompt answered, WebRTC on loopback allowed, autoplay on."""
    return ["--use-fake-ui-for-media-stream", "--autoplay-policy=no-user-gesture-required",
            "--allow-loopback-in-peer-connection"]
