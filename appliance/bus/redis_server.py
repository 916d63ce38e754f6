"""Start and stop a throw-away ``redis-server`` on 127.0.0.1 (tests and ``appliance bench bus``).

By default the server keeps nothing on disk (``--save '' --appendonly no``) and listens on
a free loopback port::

    with RedisServer() as server:
        bus = RedisBus(server.url)

``RedisServer(appendonly=True)`` keeps an append-only file (``appendfsync everysec``, the
set-up the restart fault test and benchmark kill): :meth:`RedisServer.kill` SIGKILLs it
and :meth:`RedisServer.restart` starts it again on the same port from the same directory.

A SIGKILL alone loses nothing Redis acknowledged: it ``write(2)``s the AOF before it
replies, and the kernel keeps what was written (measured: 0 envelopes to re-send). What
``everysec`` risks is a power cut or kernel crash, which loses what was written since the
last fsync; ``kill(keep_aof_bytes=…)`` emulates that by cutting the AOF back to a size
read earlier with :meth:`RedisServer.aof_bytes` (Redis loads a truncated AOF,
``aof-load-truncated yes``).
"""

from __future__ import annotations

import logging
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A ``redis-server`` child process on 127.0.0.1.

    Args:
        binary: the ``redis-server`` to run (default: the one on ``PATH``).
        ready_timeout_s: how long to wait for it to answer PING, in seconds.
        appendonly: keep an AOF with ``appendfsync everysec`` (else nothing is persisted).

    Attributes: ``port`` (int), ``url`` (``redis://127.0.0.1:PORT/0``), ``process``.
    """

    def __init__(self, binary: str | None = None, ready_timeout_s: float = 10.0, appendonly: bool = False) -> None:
        self.binary = binary or shutil.which("redis-server") or "/usr/bin/redis-server"
        self.ready_timeout_s = ready_timeout_s
        self.appendonly = appendonly
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        """Start the server and wait until it answers PING; retries on a port taken meanwhile.

        Raises:
            RuntimeError: ``redis-server`` is not installed, or it did not come up.
        """
        if shutil.which(self.binary) is None:
            raise RuntimeError(f"{self.binary} not found: install Redis (Debian: apt-get install redis-server)")
        self._dir = tempfile.TemporaryDirectory(prefix="appliance-redis-")
        last = ""
        for _ in range(3):
            self.port = free_port()
            if self._spawn():
                return self
            last = self._kill(signal.SIGTERM)
        self._dir.cleanup()
        raise RuntimeError(f"redis-server did not start on 127.0.0.1: {last.strip()[-500:]}")

    def aof_bytes(self) -> int:
        """The size of the AOF's current incremental file, in bytes (``appendonly`` only).

        Raises:
            RuntimeError: the server keeps no AOF.
        """
        return self._incr_aof().stat().st_size

    def kill(self, keep_aof_bytes: int | None = None) -> None:
        """SIGKILL the server; :meth:`restart` brings it back.

        ``keep_aof_bytes``: then cut the AOF's incremental file back to this size, as a power
        cut would lose the writes not yet fsynced (see the module docstring).

        Raises:
            RuntimeError: ``keep_aof_bytes`` without ``appendonly``.
        """
        self._kill(signal.SIGKILL)
        if keep_aof_bytes is not None:
            aof = self._incr_aof()
            with aof.open("r+b") as f:
                f.truncate(min(keep_aof_bytes, aof.stat().st_size))

    def _incr_aof(self) -> Path:
        """The incremental AOF file Redis appends to now (the last ``type i`` one in its manifest)."""
        if not self.appendonly or self._dir is None:
            raise RuntimeError("this redis-server keeps no AOF (start it with appendonly=True)")
        folder = Path(self._dir.name) / "appendonlydir"
        incr = [
            line.split()[1]
            for line in (folder / "appendonly.aof.manifest").read_text().splitlines()
            if line.split()[-1:] == ["i"]
        ]
        return folder / incr[-1]

    def restart(self) -> None:
        """Start the server again on the same port, from its directory (its AOF, if any).

        Raises:
            RuntimeError: it did not come up (the port was taken meanwhile, or the AOF is unreadable).
        """
        if self.process is not None:
            self._kill(signal.SIGTERM)
        if not self._spawn():
            raise RuntimeError(
                f"redis-server did not restart on port {self.port}: {self._kill(signal.SIGTERM).strip()[-500:]}"
            )

    def _spawn(self) -> bool:
        """Start the process on ``self.port``; whether it answered PING in time."""
        assert self._dir is not None
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "everysec"] if self.appendonly else ["--appendonly", "no"]
        )
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                *persistence,
                "--dir",
                self._dir.name,
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
                "--logfile",
                str(self._log_path()),  # a file, not a pipe nobody reads while it runs (a full pipe stalls it)
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        if self._wait_ready():
            log.info("redis-server pid %d on %s", self.process.pid, self.url)
            return True
        return False

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    def _kill(self, sig: signal.Signals) -> str:
        """Stop the process with ``sig`` (SIGTERM: SIGKILL after 5 s); return what it printed."""
        p, self.process = self.process, None
        if p is None:
            return ""
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log_path = self._log_path()
        return log_path.read_text(errors="replace") if log_path.is_file() else ""

    def _log_path(self) -> Path:
        assert self._dir is not None
        return Path(self._dir.name) / "redis.log"

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and remove its directory."""
        self._kill(signal.SIGTERM)
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
