"""The embedded LLM: llama.cpp's server (``xllamacpp``) on 127.0.0.1, OpenAI-compatible.

One process-wide server serves every agent (voice loop, phone agent, computer agent,
Werewolf seats). llama-server keeps one KV cache per slot and picks a slot by longest
common prefix, so give it ``parallel_slots`` ≥ the number of distinct system prompts in
play (OFFLINE.md §2); a byte-identical prefix is then reused and a warm request's
time to first token is ~0.25 s for the 0.5B model on 2 cores.
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.request

from appliance import models
from appliance.config import LLMConfig

log = logging.getLogger(__name__)

#: model name (config ``llm.model``) → gguf file inside that model's cache folder
GGUF = {
    "qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}


class EmbeddedLLMServer:
    """llama-server inside this process, listening on 127.0.0.1 (a free port).

    ``start()`` blocks until the model is loaded (~2.6 s for 0.5B); ``base_url`` is then
    ``http://127.0.0.1:PORT/v1``. Busy-polling is off (``poll = 0``): with another process
    on a core, polling threads collapsed generation to ~1 tok/s (OFFLINE.md §1).

    Raises:
        ModelError: the gguf file is missing or has the wrong size.
        ValueError: ``cfg.model`` is not an embedded model.
    """

    def __init__(self, cfg: LLMConfig):
        if cfg.model not in GGUF:
            raise ValueError(f"llm.model {cfg.model!r} is not an embedded model; choose one of {sorted(GGUF)}")
        self.cfg = cfg
        self._server = None
        self.base_url: str | None = None

    def start(self) -> str:
        import xllamacpp

        gguf = models.path(self.cfg.model, GGUF[self.cfg.model])
        p = xllamacpp.CommonParams()
        p.model.path = str(gguf)
        p.hostnames = ["127.0.0.1"]
        p.port = 0
        p.n_ctx = self.cfg.ctx_tokens * self.cfg.parallel_slots
        p.n_parallel = self.cfg.parallel_slots
        p.kv_unified = False
        p.cpuparams.n_threads = self.cfg.threads
        p.cpuparams_batch.n_threads = self.cfg.threads
        p.cpuparams.poll = 0
        p.cpuparams_batch.poll = 0
        p.cache_prompt = True
        p.warmup = True
        t0 = time.monotonic()
        self._server = xllamacpp.Server(p)
        addr = self._server.listening_address
        if isinstance(addr, bytes):
            addr = addr.decode()
        self.base_url = addr.rstrip("/") + "/v1" if addr.startswith("http") else f"http://{addr}/v1"
        log.info("embedded LLM %s ready at %s in %.1f s", self.cfg.model, self.base_url, time.monotonic() - t0)
        return self.base_url

    def stop(self) -> None:
        self._server = None  # xllamacpp stops the server when the object is collected

    def __enter__(self) -> "EmbeddedLLMServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def warm(base_url: str, model: str, system_prompt: str, api_key: str = "none") -> float:
    """Evaluate ``system_prompt`` once so its KV prefix is cached; returns seconds taken.

    Sends one chat request with ``max_tokens`` 1 (blocking HTTP on loopback).
    """
    body = json.dumps({"model": model, "max_tokens": 1, "messages": [
        {"role": "system", "content": system_prompt}, {"role": "user", "content": "Hello."}]}).encode()
    req = urllib.request.Request(base_url + "/chat/completions", data=body,
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
    return time.monotonic() - t0


def endpoint(cfg: LLMConfig) -> tuple[str, str, str]:
    """``(base_url, model, api_key)`` for an ``openai_compatible`` provider.

    Raises:
        ConfigError: the key variable is named but unset.
    """
    from appliance.config import ConfigError

    key = "none"
    if cfg.api_key_env:
        key = os.environ.get(cfg.api_key_env, "")
        if not key:
            raise ConfigError(f"llm.api_key_env: environment variable {cfg.api_key_env} is not set")
    return cfg.base_url or "", cfg.model, key
