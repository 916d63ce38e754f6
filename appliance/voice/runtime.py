"""The models every session shares: ASR, TTS voice and the LLM endpoint, loaded once."""

from __future__ import annotations

import logging
import os
import time
from typing import Callable

from appliance.config import Config
from appliance.llm.server import EmbeddedLLMServer, endpoint, warm
from appliance.voice.asr import WhisperASR
from appliance.voice.tts import PiperSynth

log = logging.getLogger(__name__)


class VoiceRuntime:
    """Models shared by every session: ASR, TTS voice, and the LLM endpoint.

    ``start`` loads them (and, for the embedded LLM, starts llama-server and warms the
    system prompt into its cache); ``stop`` releases them.

    Raises:
        ConfigError: a cloud provider's key variable is unset.
        ModelError: a model file is missing or has the wrong size.
    """

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.asr: WhisperASR | None = None
        self.synth: PiperSynth | None = None
        self.llm_server: EmbeddedLLMServer | None = None
        self.llm_base_url = ""
        self.llm_model = cfg.llm.model
        self.llm_api_key = "none"
        self.fish_api_key = ""

    def start(self, progress: Callable[[str], None] = log.info) -> "VoiceRuntime":
        cfg = self.cfg
        cfg.check_credentials()
        t0 = time.monotonic()
        progress("loading ASR (Whisper tiny.en)")
        self.asr = WhisperASR(cfg.asr)
        if cfg.tts.provider == "piper":
            progress("loading TTS (Piper)")
            self.synth = PiperSynth(cfg.tts.voice)
        else:
            self.fish_api_key = os.environ[cfg.tts.api_key_env]
        if cfg.llm.provider == "embedded":
            progress(f"starting embedded LLM ({cfg.llm.model})")
            self.llm_server = EmbeddedLLMServer(cfg.llm)
            self.llm_base_url = self.llm_server.start()
        else:
            self.llm_base_url, self.llm_model, self.llm_api_key = endpoint(cfg.llm)
        progress("warming the system prompt into the LLM cache")
        warm(self.llm_base_url, self.llm_model, cfg.llm.system_prompt, self.llm_api_key)
        progress(f"ready in {time.monotonic() - t0:.1f} s")
        return self

    def stop(self) -> None:
        if self.llm_server:
            self.llm_server.stop()
            self.llm_server = None
