"""The JSONL write-ahead log of an in-process bus, and reading it back.

One line per record, UTF-8 JSON:

* an envelope, in its wire shape (see :mod:`appliance.bus.envelope`), written *before* it
  is delivered to anyone;
* ``{"_bus": "group", "group": NAME, "recipient": R | null, "types": [T, ...] | null}``
  when a durable group is created;
* ``{"_bus": "ack", "group": NAME, "id": ENVELOPE_ID}`` when a member of that group
  acknowledges an envelope.

Durability. Every record is handed to the kernel with one ``write(2)`` (no user-space
buffer) before the envelope is delivered, and ``fsync(2)`` runs at most every
``fsync_ms`` milliseconds (default 100) in a worker thread, and once more at close.

* A crash of the process (exception, ``kill -9``, OOM) loses nothing that was published:
  the kernel holds every line written.
* A power loss or kernel crash can lose the records written since the last completed
  fsync — at most ``fsync_ms`` plus the duration of one fsync, i.e. about the last 100 ms
  of traffic by default — and may leave a torn last line, which readers skip with a
  warning. Records are never reordered and a record that survives is whole, so a replay
  is always a prefix of what was published. With ``fsync_ms=0`` every record is fsynced
  before it is delivered (power-loss safe, but each publish then costs one fsync).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from appliance.bus.envelope import Envelope
from appliance.protocol.registry import EnvelopeError

log = logging.getLogger(__name__)


class LogError(ValueError):
    """A log file that cannot be read: names the file, the line and why."""


@dataclass(frozen=True)
class GroupCreated:
    """A ``{"_bus": "group"}`` record: durable group ``group`` with its filter."""

    group: str
    recipient: str | None
    types: frozenset[str] | None


@dataclass(frozen=True)
class Acked:
    """A ``{"_bus": "ack"}`` record: ``group`` acknowledged envelope ``id``."""

    group: str
    id: str


LogRecord = Envelope | GroupCreated | Acked


def group_line(group: str, recipient: str | None, types: frozenset[str] | None) -> bytes:
    """The log line (with newline) recording the creation of a durable group."""
    return (
        json.dumps(
            {
                "_bus": "group",
                "group": group,
                "recipient": recipient,
                "types": sorted(types) if types is not None else None,
            },
            separators=(",", ":"),
        ).encode()
        + b"\n"
    )


def ack_line(group: str, env_id: str) -> bytes:
    """The log line (with newline) recording that ``group`` acknowledged envelope ``env_id``."""
    return b'{"_bus":"ack","group":%s,"id":"%s"}\n' % (json.dumps(group).encode(), env_id.encode())


class EnvelopeLog:
    """An append-only JSONL log file with batched fsync (see the module docstring).

    ``append`` is synchronous (one ``write(2)``); call :meth:`open` inside a running event
    loop so the periodic fsync task can start, and :meth:`close` at the end.
    """

    def __init__(self, path: str | Path, fsync_ms: int = 100) -> None:
        if fsync_ms < 0:
            raise ValueError(f"fsync_ms must be >= 0, got {fsync_ms}")
        self.path = Path(path).expanduser()
        self.fsync_ms = fsync_ms
        self._fd: int | None = None
        self._written = 0  # bytes appended so far
        self._synced = 0  # bytes known to be on disk
        self._task: asyncio.Task[None] | None = None

    def open(self) -> None:
        """Create (or append to) the file and start the fsync task.

        Raises:
            OSError: the file or its directory cannot be created.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if not existed:  # make the new directory entry itself durable
            dfd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        if self.fsync_ms > 0:
            self._task = asyncio.get_running_loop().create_task(self._fsync_loop(), name=f"fsync {self.path.name}")

    def append(self, data: bytes) -> None:
        """Append ``data`` (whole lines, each ending in a newline) with one ``write(2)``.

        Raises:
            OSError: the write failed (disk full, ...); the caller must not deliver.
        """
        fd = self._fd
        if fd is None:
            raise OSError(f"{self.path}: log is not open")
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        self._written += len(data)
        if self.fsync_ms == 0:
            os.fsync(fd)
            self._synced = self._written

    async def _fsync_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.fsync_ms / 1000)
            mark = self._written
            if mark != self._synced and self._fd is not None:
                await loop.run_in_executor(None, os.fsync, self._fd)
                self._synced = mark

    async def close(self) -> None:
        """Stop the fsync task, fsync what is left and close the file."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self._synced = self._written


def iter_log(path: str | Path) -> Iterator[LogRecord]:
    """Read every record of a log file in order.

    A torn last line (no newline, as a power loss can leave) is skipped with a warning.

    Raises:
        LogError: the file is missing, or a complete line is not a valid record.
    """
    path = Path(path).expanduser()
    try:
        f = path.open("rb")
    except OSError as e:
        raise LogError(f"{path}: {e.strerror}") from None
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.endswith(b"\n"):
                log.warning("%s:%d: skipping a torn last line (%d bytes, no newline)", path, lineno, len(line))
                return
            if not line.strip():
                continue
            try:
                yield parse_record(line)
            except (EnvelopeError, ValueError, KeyError, TypeError) as e:
                raise LogError(f"{path}:{lineno}: {e}") from None


def parse_record(line: bytes) -> LogRecord:
    """One log line as a record.

    Raises:
        EnvelopeError: an invalid envelope line.
        ValueError, KeyError, TypeError: a malformed bus record.
    """
    if line.startswith(b'{"_bus"'):
        obj = json.loads(line)
        if obj["_bus"] == "ack":
            return Acked(obj["group"], obj["id"])
        if obj["_bus"] == "group":
            types = obj["types"]
            return GroupCreated(obj["group"], obj["recipient"], frozenset(types) if types is not None else None)
        raise ValueError(f"unknown bus record {obj['_bus']!r}")
    return Envelope.from_json(line)


def read_envelopes(path: str | Path) -> list[Envelope]:
    """The envelopes of a log in publish order (group and ack records left out).

    Raises:
        LogError: as :func:`iter_log`.
    """
    return [r for r in iter_log(path) if isinstance(r, Envelope)]
