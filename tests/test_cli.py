"""The console script: a quiet console unless ``-v``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _stderr(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "appliance.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stderr


def test_the_console_shows_no_library_banner_unless_verbose():
    assert _stderr("--help") == ""  # pipecat logs its banner at import, before any command runs
    assert "Pipecat" in _stderr("-v", "bus", "--help")
