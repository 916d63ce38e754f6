"""Start and stop a throw-away ``redis-server`` on 127.0.0.1 (tests and ``appliance bench bus``).

The server keeps nothing on disk (``--save '' --appendonly no``) and listens on a free
loopback port::

    with RedisServer() as server:
        bus = RedisBus(server.url)
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import tempfile
import time

log = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A ``redis-server`` child process on 127.0.0.1.

    Attributes: ``port`` (int), ``url`` (``redis://127.0.0.1:PORT/0``), ``process``.
    """

    def __init__(self, binary: str | None = None, ready_timeout_s: float = 10.0) -> None:
        self.binary = binary or shutil.which("redis-server") or "/usr/bin/redis-server"
        self.ready_timeout_s = ready_timeout_s
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
            self.process = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", self._dir.name, "--daemonize", "no", "--loglevel", "warning"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if self._wait_ready():
                log.info("redis-server pid %d on %s", self.process.pid, self.url)
                return self
            last = self._kill()
        self._dir.cleanup()
        raise RuntimeError(f"redis-server did not start on 127.0.0.1: {last.strip()[-500:]}")

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

    def _kill(self) -> str:
        """Kill the process; return what it printed."""
        p, self.process = self.process, None
        if p is None:
            return ""
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        out = p.stdout.read().decode(errors="replace") if p.stdout else ""
        if p.stdout:
            p.stdout.close()
        return out

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s) and remove its directory."""
        self._kill()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
