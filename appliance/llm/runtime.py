"""The LLM endpoint a process shares, and its clients by slot name.

:class:`LLMRuntime` is the one place that decides "embedded or remote, slot N": it starts
the embedded llama-server (or resolves the ``openai_compatible`` endpoint and its key) and
hands out :class:`~appliance.llm.client.LLM` clients by the name of the prompt they serve
(:data:`appliance.config.LLM_SLOTS`: ``"computer"``, ``"phone"``, ``"person"``,
``"P1"``…``"P8"``), pinned to that name's slot on the embedded server.
:class:`appliance.voice.runtime.VoiceRuntime` holds one beside the ASR and TTS models.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from appliance.config import LLM_SLOTS, Config
from appliance.llm.client import LLM
from appliance.llm.server import EmbeddedLLMServer, endpoint, warm

log = logging.getLogger(__name__)


class LLMRuntime:
    """The LLM side of a process: ``start`` → ``llm(name)`` … → ``stop``.

    The embedded server's log goes to ``log_path`` (default
    ``<recording.dir>/llm-<YYYYmmdd-HHMMSS>.log``).
    """

    def __init__(self, cfg: Config, log_path: Path | None = None):
        self.cfg = cfg
        self.log_path = log_path or Path(cfg.recording.dir).expanduser() / f"llm-{time.strftime('%Y%m%d-%H%M%S')}.log"
        self.server: EmbeddedLLMServer | None = None
        self.base_url = ""
        self.model = cfg.llm.model
        self.api_key = "none"

    def start(self, progress: Callable[[str], None] = log.info) -> "LLMRuntime":
        """Start the embedded server, or resolve the remote endpoint.

        Raises:
            ConfigError: the remote provider's key variable is unset.
            ModelError: the embedded model's file is missing or has the wrong size.
            LLMError: the embedded server did not come up.
        """
        llm = self.cfg.llm
        if llm.provider == "embedded":
            progress(f"starting embedded LLM ({llm.model})")
            self.server = EmbeddedLLMServer(llm, self.log_path)
            self.base_url = self.server.start()
        else:
            self.base_url, self.model, self.api_key = endpoint(llm)
        return self

    def stop(self) -> None:
        """Stop the embedded server (a remote endpoint needs nothing)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        self.base_url = ""

    def llm(self, name: str) -> LLM:
        """A client for the prompt ``name`` (a key of :data:`~appliance.config.LLM_SLOTS`),
        pinned to its slot on the embedded server; unpinned (JSON schema) on a remote one.

        Raises:
            RuntimeError: the runtime is not started.
            ValueError: ``name`` has no slot, or its slot is beyond ``llm.parallel_slots``
                (the config was not sized with the ``Config.for_*`` the command needs).
        """
        if not self.base_url:
            raise RuntimeError("LLMRuntime.llm() before start()")
        if name not in LLM_SLOTS:
            raise ValueError(f"no LLM slot named {name!r}; slots: {', '.join(LLM_SLOTS)}")
        llm = self.cfg.llm
        slot = None
        if self.server is not None:
            slot = LLM_SLOTS[name]
            if slot >= llm.parallel_slots:
                raise ValueError(f"LLM slot {name!r} is llama-server slot {slot} but llm.parallel_slots is "
                                 f"{llm.parallel_slots}; size the config with Config.for_forms() or for_werewolf()")
        return LLM(self.base_url, self.model, slot=slot, api_key=self.api_key, timeout_s=llm.request_timeout_s,
                   max_retries=llm.max_retries, retry_backoff_ms=llm.retry_backoff_ms,
                   on_warm=self.server.remember if self.server is not None else None)

    def warm(self, system: str) -> float:
        """Warm ``system`` into any slot (blocking; the embedded server warms it again after a
        restart); returns the seconds taken.

        Raises:
            OSError: the request failed.
        """
        if self.server is not None:
            return self.server.warm(system)
        return warm(self.base_url, self.model, system, self.api_key, timeout_s=self.cfg.llm.request_timeout_s)
