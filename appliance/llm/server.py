"""The embedded LLM: llama.cpp's server (``xllamacpp``) in a child process on 127.0.0.1,
OpenAI-compatible; and endpoint/key resolution for ``openai_compatible``.

One server serves every agent of the process (voice loop, phone agent, computer agent,
Werewolf seats). llama-server keeps one KV cache per slot and picks a slot by longest
common prefix, so give it ``parallel_slots`` ≥ the number of distinct system prompts in
play; a byte-identical prefix is then reused and a warm request's time to first token is
~0.25 s for the 0.5B model on 2 cores.

The server runs in its own process (:mod:`appliance.llm.process`) so that llama.cpp's
native log lines go to a log file instead of the console (debug logging, ``-v``, mirrors
them to stderr) and so that a crash of llama.cpp is a child that exited, not the appliance:
:class:`EmbeddedLLMServer` starts it again on the same port and warms the prompts it had
warmed (:meth:`EmbeddedLLMServer.remember`). Requests during the restart (~3 s for 0.5B)
fail and are retried by the client (see :mod:`appliance.llm.client`).
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from appliance import models
from appliance.config import ConfigError, LLMConfig
from appliance.llm.base import LLMError

log = logging.getLogger(__name__)

#: model name (config ``llm.model``) → gguf file inside that model's cache folder
GGUF = {
    "qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}
#: the folder holding the ``appliance`` package, put on the child's PYTHONPATH so it runs this very code
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
STOP_GRACE_S = 5.0  # after closing the child's stdin, wait this long before killing it


class EmbeddedLLMServer:
    """llama-server in a child process, listening on 127.0.0.1 (a free port).

    ``start()`` blocks until the model is loaded (~3 s for 0.5B) and returns ``base_url``
    (``http://127.0.0.1:PORT/v1``). The child's stdout and stderr go to ``log_path``
    (appended; mirrored to stderr when this module logs at debug level). Each time the
    child exits on its own it is started again (one try) on the same port and every
    remembered prompt is warmed again (``restarts`` counts the restarts that came up; after
    a failed one, requests fail until the owner starts a new server). ``stop()`` ends the
    child and reaps it; it is safe to call more than once.

    Raises:
        ValueError: ``cfg.model`` is not an embedded model.
    """

    def __init__(self, cfg: LLMConfig, log_path: Path):
        if cfg.model not in GGUF:
            raise ValueError(f"llm.model {cfg.model!r} is not an embedded model; choose one of {sorted(GGUF)}")
        self.cfg = cfg
        self.log_path = log_path
        self.base_url: str | None = None
        self.restarts = 0
        self._gguf: Path | None = None
        self._port = 0
        self._proc: subprocess.Popen | None = None
        self._pumps: dict[int, threading.Thread] = {}  # child pid → the thread copying its output to the log
        self._supervisor: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._prompts: dict[tuple[int | None, str], None] = {}  # (slot, system) warmed, in order

    @property
    def pid(self) -> int | None:
        """The running child's process id (None before start and after stop)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> str:
        """Start the child and wait until it serves; returns ``base_url``.

        Raises:
            ModelError: the gguf file is missing or has the wrong size (before any child starts).
            LLMError: the child exited before serving, or did not serve within
                ``llm.start_timeout_s`` (the message ends with the last lines of its log).
        """
        self._gguf = models.path(self.cfg.model, GGUF[self.cfg.model])
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log.debug("embedded LLM: llama-server's log is %s", self.log_path)
        self._stopping.clear()
        t0 = time.monotonic()
        self.base_url = self._spawn(0)
        self._port = urllib.parse.urlsplit(self.base_url).port or 0
        self._supervisor = threading.Thread(target=self._supervise, name="llm-supervisor", daemon=True)
        self._supervisor.start()
        log.info(
            "embedded LLM %s ready at %s in %.1f s (pid %d)",
            self.cfg.model,
            self.base_url,
            time.monotonic() - t0,
            self._proc.pid,
        )
        return self.base_url

    def stop(self) -> None:
        """End the child (stdin closed, then killed after :data:`STOP_GRACE_S`) and reap it."""
        self._stopping.set()
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            self._end(proc)
        if self._supervisor is not None:
            self._supervisor.join()
            self._supervisor = None

    def remember(self, system: str, slot: int | None) -> None:
        """Note that ``system`` was warmed into ``slot`` (None: any slot), to warm it again
        after a restart. A pinned slot holds one prompt: the latest replaces the one before."""
        with self._lock:
            if slot is not None:
                for key in [k for k in self._prompts if k[0] == slot]:
                    del self._prompts[key]
            self._prompts[(slot, system)] = None

    def warm(self, system: str, slot: int | None = None) -> float:
        """Warm ``system`` into ``slot`` now and remember it; returns the seconds taken.

        Raises:
            OSError: the request failed (``urllib.error.URLError`` included).
        """
        took = warm(self.base_url or "", self.cfg.model, system, slot=slot, timeout_s=self.cfg.request_timeout_s)
        self.remember(system, slot)
        return took

    # ---- the child ---------------------------------------------------------------------

    def _spawn(self, port: int) -> str:
        """Start one child on ``port`` (0: any), register it, wait until it serves; returns its base URL."""
        read_fd, write_fd = os.pipe()
        cmd = [
            sys.executable,
            "-m",
            "appliance.llm.process",
            "--model",
            str(self._gguf),
            "--port",
            str(port),
            "--parallel",
            str(self.cfg.parallel_slots),
            "--ctx-per-slot",
            str(self.cfg.ctx_tokens),
            "--threads",
            str(self.cfg.threads),
            "--nice",
            str(self.cfg.nice),
            "--ready-fd",
            str(write_fd),
        ]
        path = os.pathsep.join(p for p in (str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")) if p)
        try:
            # its own session: the terminal's Ctrl-C goes to the appliance, which then stops the child
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
                env={**os.environ, "PYTHONPATH": path},
                start_new_session=True,
            )
        finally:
            os.close(write_fd)
        pump = threading.Thread(target=self._pump, args=(proc,), name=f"llm-log-{proc.pid}", daemon=True)
        pump.start()
        self._pumps[proc.pid] = pump
        with self._lock:
            stopping = self._stopping.is_set()
            if not stopping:
                self._proc = proc
        if stopping:
            self._end(proc)
            os.close(read_fd)
            raise LLMError("embedded LLM: stopped while starting")
        try:
            return self._wait_ready(proc, read_fd)
        except BaseException:
            with self._lock:
                if self._proc is proc:
                    self._proc = None
            self._end(proc)
            raise

    def _wait_ready(self, proc: subprocess.Popen, read_fd: int) -> str:
        deadline = time.monotonic() + self.cfg.start_timeout_s
        got = b""
        with os.fdopen(read_fd, "rb", buffering=0) as ready:
            while not got.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LLMError(
                        f"embedded LLM {self.cfg.model} did not serve within llm.start_timeout_s = "
                        f"{self.cfg.start_timeout_s} s{self._tail()}"
                    )
                if select.select([ready], [], [], left)[0]:
                    chunk = ready.read(512)
                    if not chunk:
                        code = proc.wait()
                        self._join_pump(proc)
                        raise LLMError(
                            f"embedded LLM {self.cfg.model} exited with code {code} before serving{self._tail()}"
                        )
                    got += chunk
        return got.decode().strip()

    def _pump(self, proc: subprocess.Popen) -> None:
        """Copy the child's output to the log file (and to stderr at debug level) until it exits."""
        mirror = log.isEnabledFor(logging.DEBUG)
        with open(self.log_path, "ab") as out:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                if mirror:
                    sys.stderr.buffer.write(line)
                    sys.stderr.flush()

    def _end(self, proc: subprocess.Popen) -> None:
        """Close the child's stdin (it exits), kill it after the grace time, reap it and its log pump."""
        try:
            proc.stdin.close()
        except OSError:  # the child is gone already: its pipe is broken, nothing to close
            pass
        try:
            proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            log.warning("embedded LLM (pid %d) did not exit within %.0f s; killing it", proc.pid, STOP_GRACE_S)
            proc.kill()
            proc.wait()
        self._join_pump(proc)

    def _join_pump(self, proc: subprocess.Popen) -> None:
        """Wait until the exited child's output is all in the log."""
        pump = self._pumps.pop(proc.pid, None)
        if pump is not None:
            pump.join()

    def _supervise(self) -> None:
        """Wait for the child; when it exits unasked, start it again on the same port and re-warm."""
        while True:
            with self._lock:
                proc = self._proc
            if proc is None:
                return
            code = proc.wait()
            if self._stopping.is_set():
                return
            log.warning("embedded LLM (pid %d) exited with code %s; starting it again", proc.pid, code)
            self._join_pump(proc)
            try:
                self._spawn(self._port)
                with self._lock:
                    prompts = list(self._prompts)
                for slot, system in prompts:
                    warm(self.base_url or "", self.cfg.model, system, slot=slot, timeout_s=self.cfg.request_timeout_s)
            except (LLMError, OSError) as e:  # logged: requests now fail with the client's own LLMError
                if not self._stopping.is_set():
                    log.error("embedded LLM: the restart failed: %s", e)
                return
            self.restarts += 1
            log.info("embedded LLM restarted (pid %d), %d prompts warmed again", self._proc.pid, len(prompts))

    def _tail(self, lines: int = 12) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return f"; last lines of {self.log_path}:\n" + "\n".join(text) if text else f"; see {self.log_path}"


def warm(
    base_url: str, model: str, system_prompt: str, api_key: str = "none", *, slot: int | None = None, timeout_s: float
) -> float:
    """Evaluate ``system_prompt`` once (in ``slot``; None: any) so its KV prefix is cached;
    returns seconds taken. Blocking HTTP, one chat request with ``max_tokens`` 1.

    Raises:
        OSError: the request failed (``urllib.error.URLError`` included).
    """
    body = {
        "model": model,
        "max_tokens": 1,
        "messages": [{"role": "system", "content": system_prompt}, {"role": "user", "content": "Hello."}],
    }
    if slot is not None:
        body |= {"id_slot": slot, "cache_prompt": True}
    req = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"},
    )
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=timeout_s) as r:
        r.read()
    return time.monotonic() - t0


def endpoint(cfg: LLMConfig) -> tuple[str, str, str]:
    """``(base_url, model, api_key)`` for an ``openai_compatible`` provider.

    Raises:
        ConfigError: the key variable is named but unset.
    """
    key = "none"
    if cfg.api_key_env:
        key = os.environ.get(cfg.api_key_env, "")
        if not key:
            raise ConfigError(f"llm.api_key_env: environment variable {cfg.api_key_env} is not set")
    return cfg.base_url or "", cfg.model, key
