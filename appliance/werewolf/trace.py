"""``--trace``: every prompt each seat's LLM received, one JSONL file per seat.

Each line: ``{"seat", "round", "phase", "tool", "attempt", "messages", "grammar",
"response", "prompt_tokens", "cached_tokens", "completion_tokens", "ms"}``. The same
records stay in memory for the end-of-game isolation audit.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any


class Tracer:
    """Collects prompt records; writes ``<dir>/<seat>.jsonl`` (flushed per line) when ``dir`` is set."""

    def __init__(self, dir: Path | None = None):
        self.dir = dir
        self.records: list[dict[str, Any]] = []
        self._files: dict[str, IO[str]] = {}
        self._lock = threading.Lock()
        if dir is not None:
            dir.mkdir(parents=True, exist_ok=True)

    def record(self, seat: str, entry: dict[str, Any]) -> None:
        rec = {"seat": seat, **entry}
        with self._lock:
            self.records.append(rec)
            if self.dir is not None:
                f = self._files.get(seat)
                if f is None:
                    f = self._files[seat] = open(self.dir / f"{seat}.jsonl", "a", encoding="utf-8")
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()

    def prompts(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """``(seat, text)`` of every prompt each seat's LLM received: (user messages,
        system prompts), as :func:`appliance.judge.isolation.count_violations` takes them."""
        return _split(self.records)

    def close(self) -> None:
        with self._lock:
            for f in self._files.values():
                f.close()
            self._files.clear()


def read_prompts(dir: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(user messages, system prompts) as ``(seat, text)`` from a trace folder written by :class:`Tracer`."""
    records = [
        json.loads(line)
        for path in sorted(dir.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return _split(records)


def _split(records: list[dict[str, Any]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    user, system = [], {}
    for r in records:
        for m in r["messages"]:
            if m["role"] == "system":
                system[(r["seat"], m["content"])] = None
            else:
                user.append((r["seat"], m["content"]))
    return user, list(system)
