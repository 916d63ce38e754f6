"""One conversation: its event log, its recording folder and its LLM context."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.audio.audio_buffer_processor import AudioBufferProcessor

from appliance.config import Config
from appliance.voice.events import EventLog


def recording_notice(recorded: bool) -> str:
    """What the person hears about recording before anything else (issue 30): every mode says it
    when the call is recorded (the page shows where: the ``recording_notice`` event); the form
    interview says it either way."""
    if not recorded:
        return "This call is not recorded."
    return "This call is recorded, on this appliance only; the page shows where."


@dataclass
class Session:
    """One conversation: its event log, recording folder (or None) and LLM context."""

    events: EventLog
    folder: Path | None = None
    context: LLMContext = field(default_factory=LLMContext)
    recorder: AudioBufferProcessor | None = None


def open_session(cfg: Config, name: str) -> Session:
    """Create the session's recording folder (``recording.dir/<time>-<name>``) with the
    config used, and its event log."""
    folder = None
    if cfg.recording.enabled:
        folder = Path(cfg.recording.dir).expanduser() / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    return Session(events=EventLog(folder / "events.jsonl" if folder else None), folder=folder)
