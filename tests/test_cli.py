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


def test_simulate_form_refuses_an_autonomous_launch_with_a_typist_before_any_model_loads(capsys):
    from appliance import cli

    argv = ["simulate", "form", "--url", "demo:flight", "--profile", "david", "--autonomous", "--person", "text"]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "error: --autonomous needs --person audio: the autonomous launch calls the person by voice\n"
    )
