"""The models every session shares: ASR, TTS voice and the LLM endpoint, loaded once."""

from __future__ import annotations

import logging
import os
import time
from typing import Callable

from appliance.config import Config
from appliance.llm.base import LLM
from appliance.llm.runtime import LLMRuntime
from appliance.voice.acks import ACK_PROMPT
from appliance.voice.asr import ASREngine, load_asrs
from appliance.voice.markers import spoken_prompt
from appliance.voice.piper_synth import PiperSynth

log = logging.getLogger(__name__)


class VoiceRuntime:
    """Models shared by every session: ASR (``asr``: the conversation's engine; ``spelling_asr`` and
    ``interim_asr``: the spelling pass's and the barge-in ear's, the same object where the config names the
    same engine), TTS voice, and the LLM endpoint with its slots.

    ``start`` loads them (and, for the embedded LLM, starts llama-server and warms the
    voice assistant's system prompt into its cache); ``llm(name)`` hands out the client of
    one prompt by slot name (see :class:`~appliance.llm.runtime.LLMRuntime`); ``stop``
    releases them. Size ``cfg`` with the ``Config.for_*`` derivation of the command.

    Raises:
        ConfigError: a cloud provider's key variable is unset.
        ModelError: a model file is missing or has the wrong size.
        LLMError: the embedded LLM did not come up.
    """

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.asr: ASREngine | None = None
        self.spelling_asr: ASREngine | None = None
        self.interim_asr: ASREngine | None = None
        self.synth: PiperSynth | None = None
        self.llms = LLMRuntime(cfg)
        self.fish_api_key = ""
        self._ack: tuple[bytes, int] | None = None

    @property
    def llm_base_url(self) -> str:
        """The OpenAI-compatible base URL (the voice loop's pipecat LLM service uses it)."""
        return self.llms.base_url

    @property
    def llm_model(self) -> str:
        return self.llms.model

    @property
    def llm_api_key(self) -> str:
        return self.llms.api_key

    def llm(self, name: str) -> LLM:
        """The client of the prompt ``name`` (``"phone"``, ``"computer"``, ``"person"``, ``"P3"``…).

        Raises:
            ValueError: no such slot, or the config has too few slots for it.
        """
        return self.llms.llm(name)

    def describe_llm(self, name: str) -> dict[str, str]:
        """What serves the prompt ``name``: ``{"config", "provider", "model"[, "base_url"]}``
        (``config``: ``llm``, or ``werewolf.llm`` for a seat when that is set)."""
        return self.llms.describe(name)

    def ack_audio(self) -> tuple[bytes, int] | None:
        """``turn.ack_text`` said by the TTS voice: (s16 mono PCM, sample rate), made once;
        None without an embedded voice (Fish TTS: no acknowledgements)."""
        if self._ack is None and self.synth is not None:
            self._ack = (self.synth.synthesize(self.cfg.turn.ack_text).tobytes(), self.synth.sample_rate_hz)
        return self._ack

    def start(self, progress: Callable[[str], None] = log.info) -> "VoiceRuntime":
        cfg = self.cfg
        cfg.check_credentials()
        t0 = time.monotonic()
        a = cfg.asr
        progress(
            f"loading ASR (conversation: {a.engine}, spelling: {a.engine_for('spelling')}, "
            f"interims: {a.engine_for('interim')}; whisper model {a.model})"
        )
        asrs = load_asrs(a)
        self.spelling_asr, self.interim_asr = asrs["spelling"], asrs["interim"]
        self.asr = asrs["conversation"]  # last: the server takes a runtime with ``asr`` for a loaded one
        if cfg.tts.provider == "piper":
            progress("loading TTS (Piper)")
            self.synth = PiperSynth(cfg.tts.voice)
        else:
            self.fish_api_key = os.environ[cfg.tts.api_key_env]
        self.llms.start(progress)
        progress("warming the system prompt into the LLM cache")
        self.llms.warm(spoken_prompt(cfg.llm.system_prompt))
        if cfg.llm.slow is not None:  # the fast model's acknowledgement while llm.slow answers (voice/acks.py)
            self.llms.warm(ACK_PROMPT, "ack")
        progress(f"ready in {time.monotonic() - t0:.1f} s")
        return self

    def stop(self) -> None:
        self.llms.stop()
