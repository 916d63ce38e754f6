"""The recordings in ``recording.dir``: list, delete, and prune those older than
``recording.retention_days``.

A recording is one entry directly under ``recording.dir``: a session's folder
(``<YYYYmmdd-HHMMSS>-<name>``: ``events.jsonl``, ``config.yaml``, ``input.wav``/``output.wav``,
a form's or a game's files) or a file a process wrote beside them (an embedded LLM's
``llm-….log``). Its id is its name; its age is the time of its newest file (a call that ran
for an hour is as old as its end). Nothing outside ``recording.dir`` is ever touched: an id
with a path separator, ``..`` or a leading dot is refused.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

DAY_S = 86_400
AUDIO_FILES = frozenset({"input.wav", "output.wav"})


@dataclass(frozen=True)
class Recording:
    """One recording: ``id`` (its name in the folder), ``path``, ``modified`` (its newest
    file's mtime, Unix s), ``size_bytes`` (all its files) and ``audio`` (it holds the
    person's or the bot's voice)."""

    id: str
    path: Path
    modified: float
    size_bytes: int
    audio: bool

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "modified": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.modified)),
            "size_bytes": self.size_bytes,
            "audio": self.audio,
        }


def _files(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]


def _recording(path: Path) -> Recording:
    files = _files(path)
    stats = [f.stat() for f in files]
    return Recording(
        id=path.name,
        path=path,
        modified=max([s.st_mtime for s in stats], default=path.stat().st_mtime),
        size_bytes=sum(s.st_size for s in stats),
        audio=any(f.name in AUDIO_FILES or f.suffix == ".wav" for f in files),
    )


def list_recordings(folder: Path) -> list[Recording]:
    """Every recording in ``folder`` (``recording.dir``, expanded), oldest first; [] when the folder is missing."""
    if not folder.is_dir():
        return []
    return sorted((_recording(p) for p in folder.iterdir() if not p.name.startswith(".")), key=lambda r: r.modified)


def _entry(folder: Path, rec_id: str) -> Path:
    if not rec_id or "/" in rec_id or "\\" in rec_id or rec_id.startswith(".") or rec_id in {".", ".."}:
        raise ValueError(f"{rec_id!r} is not a recording id (a name from `appliance recordings list`)")
    path = folder / rec_id
    if not path.exists():
        raise ValueError(f"no recording {rec_id!r} in {folder}")
    return path


def delete(folder: Path, rec_id: str) -> None:
    """Delete the recording ``rec_id`` from ``folder``.

    Raises:
        ValueError: ``rec_id`` is not a plain name of an entry of ``folder``.
    """
    path = _entry(folder, rec_id)
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def prune(folder: Path, days: int, now: float | None = None) -> list[str]:
    """Delete the recordings of ``folder`` whose newest file is more than ``days`` days old
    (at ``now``, Unix s; default: the clock); ``days`` 0 keeps everything. Returns the ids deleted."""
    if days <= 0:
        return []
    cutoff = (time.time() if now is None else now) - days * DAY_S
    old = [r for r in list_recordings(folder) if r.modified < cutoff]
    for r in old:
        delete(folder, r.id)
    return [r.id for r in old]
