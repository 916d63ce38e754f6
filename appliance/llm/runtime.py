"""The LLM endpoints a process shares, and their clients by slot name.

:class:`LLMRuntime` is the one place that decides "embedded or remote, slot N": it starts
the embedded llama-server (or resolves the ``openai_compatible`` endpoint and its key) and
hands out clients (:class:`~appliance.llm.client.OpenAICompatibleClient`) by the name of
the prompt they serve (:data:`appliance.config.LLM_SLOTS`: ``"computer"``, ``"phone"``,
``"person"``, ``"ack"``, ``"P1"``…``"P8"``), pinned to that name's slot on the embedded server.
:class:`appliance.voice.runtime.VoiceRuntime` holds one beside the ASR and TTS models.

``llm`` serves every prompt; when ``werewolf.llm`` is set and differs from ``llm``, a second
endpoint serves the Werewolf seats ``P1``…``P8`` (say the bundled 1.5B model, or any
OpenAI-compatible server); when ``llm.slow`` is set, a third one (:attr:`LLMRuntime.slow`)
answers the plain assistant while ``llm`` acknowledges (``"ack"``). All are started and
stopped together.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from appliance.config import LLM_SLOTS, MAX_SEATS, Config, LLMConfig
from appliance.llm.client import OpenAICompatibleClient
from appliance.llm.server import EmbeddedLLMServer, endpoint, warm

log = logging.getLogger(__name__)

#: the prompt names served by ``werewolf.llm`` when it is set
SEAT_NAMES = tuple(f"P{i}" for i in range(1, MAX_SEATS + 1))


class Endpoint:
    """One LLM endpoint: an embedded llama-server (a child process) or a remote
    OpenAI-compatible server; ``key`` names its config (``llm``, ``llm.slow`` or ``werewolf.llm``)."""

    def __init__(self, cfg: LLMConfig, key: str, log_path: Path):
        self.cfg = cfg
        self.key = key
        self.log_path = log_path
        self.server: EmbeddedLLMServer | None = None
        self.base_url = ""
        self.model = cfg.model
        self.api_key = "none"

    def start(self, progress: Callable[[str], None]) -> None:
        """Raises: ConfigError, ModelError, LLMError (see :meth:`LLMRuntime.start`)."""
        if self.cfg.provider == "embedded":
            progress(f"starting embedded LLM ({self.cfg.model}) for {self.key}")
            self.server = EmbeddedLLMServer(self.cfg, self.log_path)
            self.base_url = self.server.start()
        else:
            self.base_url, self.model, self.api_key = endpoint(self.cfg)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        self.base_url = ""

    def describe(self) -> dict[str, str]:
        """``{"provider", "model"}`` (and ``base_url`` for a remote server): what a report names."""
        out = {"provider": self.cfg.provider, "model": self.model}
        if self.cfg.provider != "embedded":
            out["base_url"] = self.base_url or (self.cfg.base_url or "")
        return out


class LLMRuntime:
    """The LLM side of a process: ``start`` → ``llm(name)`` … → ``stop``.

    The embedded server's log goes to ``log_path`` (default
    ``<recording.dir>/llm-<YYYYmmdd-HHMMSS>.log``; the seats' server, when there is one,
    logs beside it to ``llm-werewolf-…``).
    """

    def __init__(self, cfg: Config, log_path: Path | None = None):
        self.cfg = cfg
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.log_path = log_path or Path(cfg.recording.dir).expanduser() / f"llm-{stamp}.log"
        self.main = Endpoint(cfg.llm, "llm", self.log_path)
        slow = cfg.llm.slow
        #: ``llm.slow``'s endpoint (the plain assistant's answers while ``llm`` acknowledges), or None
        self.slow = (
            Endpoint(slow, "llm.slow", self.log_path.with_name(f"llm-slow-{stamp}.log")) if slow is not None else None
        )
        seats = cfg.werewolf.llm
        self.seats = (
            Endpoint(seats, "werewolf.llm", self.log_path.with_name(f"llm-werewolf-{stamp}.log"))
            if seats is not None and seats != cfg.llm
            else None
        )

    # the main endpoint, as the voice loop's pipecat LLM service needs it
    @property
    def server(self) -> EmbeddedLLMServer | None:
        return self.main.server

    @property
    def base_url(self) -> str:
        return self.main.base_url

    @property
    def model(self) -> str:
        return self.main.model

    @property
    def api_key(self) -> str:
        return self.main.api_key

    def start(self, progress: Callable[[str], None] = log.info) -> "LLMRuntime":
        """Start the embedded server(s), or resolve the remote endpoint(s).

        Raises:
            ConfigError: a remote provider's key variable is unset.
            ModelError: an embedded model's file is missing or has the wrong size.
            LLMError: an embedded server did not come up.
        """
        started: list[Endpoint] = []
        try:
            for e in (self.main, self.slow, self.seats):
                if e is not None:
                    e.start(progress)
                    started.append(e)
        except BaseException:
            for e in reversed(started):
                e.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the embedded server(s) (a remote endpoint needs nothing)."""
        for e in (self.seats, self.slow, self.main):
            if e is not None:
                e.stop()

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint that serves the prompt ``name``: ``werewolf.llm``'s for a seat when set, else ``llm``'s."""
        return self.seats if self.seats is not None and name in SEAT_NAMES else self.main

    def describe(self, name: str) -> dict[str, str]:
        """What serves the prompt ``name``: ``{"config", "provider", "model"[, "base_url"]}``."""
        e = self.endpoint(name)
        return {"config": e.key, **e.describe()}

    def llm(self, name: str) -> OpenAICompatibleClient:
        """A client for the prompt ``name`` (a key of :data:`~appliance.config.LLM_SLOTS`),
        pinned to its slot on an embedded server; unpinned (JSON schema) on a remote one.

        Raises:
            RuntimeError: the runtime is not started.
            ValueError: ``name`` has no slot, or its slot is beyond ``parallel_slots``
                (the config was not sized with the ``Config.for_*`` the command needs).
        """
        if name not in LLM_SLOTS:
            raise ValueError(f"no LLM slot named {name!r}; slots: {', '.join(LLM_SLOTS)}")
        e = self.endpoint(name)
        if not e.base_url:
            raise RuntimeError("LLMRuntime.llm() before start()")
        slot = None
        if e.server is not None:
            slot = LLM_SLOTS[name]
            if slot >= e.cfg.parallel_slots:
                raise ValueError(
                    f"LLM slot {name!r} is llama-server slot {slot} but {e.key}.parallel_slots is "
                    f"{e.cfg.parallel_slots}; size the config with Config.for_forms() or for_werewolf()"
                )
        return OpenAICompatibleClient(
            e.base_url,
            e.model,
            slot=slot,
            api_key=e.api_key,
            timeout_s=e.cfg.request_timeout_s,
            max_retries=e.cfg.max_retries,
            retry_backoff_ms=e.cfg.retry_backoff_ms,
            on_warm=e.server.remember if e.server is not None else None,
        )

    def warm(self, system: str, name: str | None = None) -> float:
        """Warm ``system`` into the main endpoint: into the slot of the prompt ``name``
        (:data:`~appliance.config.LLM_SLOTS`), or any slot when None (blocking; the embedded
        server warms it again after a restart); returns the seconds taken.

        Raises:
            OSError: the request failed.
        """
        slot = LLM_SLOTS[name] if name is not None else None
        if self.main.server is not None:
            return self.main.server.warm(system, slot)
        return warm(
            self.main.base_url, self.main.model, system, self.main.api_key, timeout_s=self.cfg.llm.request_timeout_s
        )
