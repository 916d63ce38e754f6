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
    """One conversation: its event log, recording folder (or None) and LLM context.
    ``pending``: the config to record with once the person chooses (a WebSocket client, in
    its ``format`` event: :meth:`choose`); None when nothing waits for a choice."""

    events: EventLog
    folder: Path | None = None
    context: LLMContext = field(default_factory=LLMContext)
    recorder: AudioBufferProcessor | None = None
    pending: Config | None = None
    name: str = ""

    def choose(self, record: bool | None) -> bool:
        """The person's choice, made after the session opened: ``record`` (None: the
        operator's default, which ``pending`` holds) opens the folder now, and the events and
        audio from now on are stored; nothing before is. Returns whether the session records."""
        cfg, self.pending = self.pending, None
        if cfg is not None and record is not False and self.folder is None:
            self.folder = _folder(cfg, self.name)
            self.events.attach(self.folder / "events.jsonl")
        return self.folder is not None


def _folder(cfg: Config, name: str) -> Path:
    folder = Path(cfg.recording.dir).expanduser() / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    return folder


def open_session(cfg: Config, name: str, choose_later: bool = False) -> Session:
    """The session's event log and recording folder (``recording.dir/<time>-<name>``, with
    the config used) when ``recording.enabled``; ``choose_later``: the person chooses after
    it opens (:meth:`Session.choose`), so no folder yet and nothing stored until then."""
    if choose_later:
        return Session(events=EventLog(None), pending=cfg if cfg.recording.enabled else None, name=name)
    folder = _folder(cfg, name) if cfg.recording.enabled else None
    return Session(events=EventLog(folder / "events.jsonl" if folder else None), folder=folder, name=name)
