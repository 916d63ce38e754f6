"""Operator configuration: one validated object, defaults in one place, units in key names.

``configs/default.yaml`` holds every key with its default; an operator file only needs
the keys it changes (it is merged over the defaults). Unknown keys, bad values and bad
YAML raise :class:`ConfigError` naming the file, the key and why.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from appliance.chromium import check_form_url
from appliance.errors import ApplianceError

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.yaml"


class ConfigError(ApplianceError, ValueError):
    """Bad operator configuration: names the file, the key and why."""


#: the most seats a Werewolf table has (the user seat included)
MAX_SEATS = 8

#: llama-server slot of each fixed prompt, by name. llama-server keeps one KV cache per slot;
#: a request pinned to its own slot finds its prompt prefix still cached after the other
#: prompts ran (a warm request's first token in ~0.25 s for the 0.5B model on 2 cores).
#: Form sessions: the computer agent, the phone agent, the simulated person. Werewolf: one
#: per seat. ``llm.parallel_slots`` must exceed every slot in use (see the ``Config.for_*``).
LLM_SLOTS: dict[str, int] = {
    "computer": 0,
    "phone": 1,
    "person": 2,
    "ack": 3,  # the plain assistant's acknowledgement while ``llm.slow`` answers (voice/acks.py)
    **{f"P{i}": i - 1 for i in range(1, MAX_SEATS + 1)},
}
FORM_SLOTS = ("computer", "phone", "person")

#: forms.answer_timeout_s at least this in a simulated call: the simulated person's LLM shares the CPU with both agents
SIMULATED_ANSWER_TIMEOUT_S = 20.0
#: forms.review_timeout_s at most this in a simulated call: no person looks at the preview, the review just ends
SIMULATED_REVIEW_TIMEOUT_S = 5.0
#: forms.answer_timeout_s at most this in a replay: once the recording's utterances run out, no answer comes
REPLAY_ANSWER_TIMEOUT_S = 4.0


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(_Section):
    """The web server (page, signalling, event sockets) and who may talk to it (see
    :mod:`appliance.voice.access`), and each session's life cycle (:mod:`appliance.voice.server`)."""

    host: str = "127.0.0.1"  # listen address; 127.0.0.1 unless the operator opens it up
    port: int = Field(8765, ge=0, le=65535)  # 0 = pick a free port
    # origins (scheme://host[:port]) besides the page's own whose pages may call the API
    allowed_origins: list[str] = []
    # required on the page, the API and the event socket; None = a random one when host is
    # not loopback (printed at start, in the page's URL), none on loopback
    token: str | None = Field(None, min_length=16)
    connect_timeout_ms: int = Field(10_000, ge=100)  # an offer whose ICE/DTLS is not connected by then is torn down
    idle_timeout_ms: int = Field(
        15_000, ge=100
    )  # a connected peer that sends no RTP (audio) for this long is torn down
    max_sessions: int = Field(4, ge=1)  # concurrent sessions (connecting or connected); one more gets HTTP 503
    # glibc's malloc for a long-lived server (appliance/heap.py): large blocks mapped on their own, free
    # pages handed back after each session. Soak 50 sessions: RSS +2 % (off: +14–24 %); costs Whisper ~+55 %
    # and Piper ~+40 ms a clause (fresh pages for each large buffer)
    heap_trim: bool = True
    # HTTPS for the page, the API and the event socket (PEM files, both or neither): a browser on another device
    # gives the page the microphone only over HTTPS; `appliance cert` makes a pair (appliance/voice/tls.py)
    tls_cert: str | None = None
    tls_key: str | None = None
    # a TLS-terminating proxy is in front (list its https:// origin in allowed_origins): no plain-HTTP warning,
    # and every request counts as remote (the token is required, an Origin too) whatever server.host is
    behind_proxy: bool = False

    @model_validator(mode="after")
    def _tls_pair(self) -> "ServerConfig":
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("server.tls_cert and server.tls_key go together: set both (PEM files) or neither")
        return self

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, origins: list[str]) -> list[str]:
        for origin in origins:
            if not re.fullmatch(r"https?://[^/?#\s]+", origin):
                raise ValueError(f"{origin!r} is not an origin: scheme://host[:port], http or https, no path")
        return [o.lower() for o in origins]


class IceServerConfig(_Section):
    """One STUN or TURN server for the page and aiortc alike (WebRTC's ``RTCIceServer``):
    ``urls`` (``stun:``, ``turn:`` or ``turns:``), and a TURN server's static ``username`` and
    ``credential`` — or none, when ``transport.turn_secret_env`` mints them per call."""

    urls: str | list[str]
    username: str | None = None
    credential: str | None = None

    @field_validator("urls")
    @classmethod
    def _urls(cls, urls: str | list[str]) -> str | list[str]:
        for url in [urls] if isinstance(urls, str) else urls:
            if not re.match(r"(stun|turns?):[^\s]+$", url):
                raise ValueError(
                    f"{url!r} is not a STUN or TURN URL (stun:HOST[:PORT], turn:HOST[:PORT][?transport=udp|tcp])"
                )
        return urls


class TransportConfig(_Section):
    kind: Literal["webrtc", "websocket", "local"] = "webrtc"
    # STUN/TURN servers for the page and aiortc: URLs, or {urls, username, credential}; none by default (offline)
    ice_servers: list[str | IceServerConfig] = []
    # the name of the environment variable holding the TURN server's shared secret (coturn's use-auth-secret /
    # static-auth-secret): each call gets time-limited credentials for the TURN servers without their own
    turn_secret_env: str | None = None
    loopback_only: bool = False  # true: offer only 127.0.0.1 ICE candidates (tests; see voice/ice.py)
    input_device: int | str | None = None  # sounddevice id or name (local transport)
    output_device: int | str | None = None

    @field_validator("ice_servers")
    @classmethod
    def _ice(cls, servers: list) -> list:
        return [IceServerConfig(urls=s) if isinstance(s, str) else s for s in servers]


class VADConfig(_Section):
    """Silero VAD (pipecat's bundled ONNX). Defaults: pipecat's VADParams except start_ms
    (a ~200 ms "Yes." must start a turn)."""

    confidence: float = Field(0.7, gt=0, lt=1)
    start_ms: int = Field(120, ge=0)
    stop_ms: int = Field(200, ge=0)
    min_volume: float = Field(0.6, ge=0, le=1)


class TurnConfig(_Section):
    """When the person's turn starts and ends, and what the bot does meanwhile
    (``voice/turns.py``). ``end_of_turn``: ``smart_turn`` = Smart Turn v3 (bundled with
    pipecat) and the transcript's words decide at each VAD stop, an utterance that sounds
    unfinished waits up to ``incomplete_timeout_ms``; ``timeout`` = the pause rule: an agent
    mode keeps the turn open ``agent_speech_timeout_ms`` after the VAD stop (so "No, it's
    David." with its comma pause, 300–660 ms in Piper's speech, stays one turn), the plain
    assistant ends it at once. Both apply to the plain assistant and the agent modes."""

    end_of_turn: Literal["smart_turn", "timeout"] = "smart_turn"
    # smart_turn: how long after the VAD stop an utterance that sounds unfinished waits for more speech
    incomplete_timeout_ms: int = Field(2000, ge=0)
    # cadence of interim re-transcription while the bot speaks (barge-in: the growing buffer from the VAD start;
    # issue 28, the stop waited ~600 ms for the first interim at 400)
    interim_every_ms: int = Field(100, ge=50)
    # cadence of interims while the bot is quiet (the page's live transcript line), 0: none; the early final
    # takes over the one in flight when the person stops (voice/stt.py)
    quiet_interim_every_ms: int = Field(500, ge=0)
    early_final_ms: int = Field(100, ge=40)  # trailing quiet after which the final transcript is started early
    speculate: bool = True  # plain assistant: the LLM starts on the early final; kept if the final matches
    agent_speech_timeout_ms: int = Field(600, ge=0)  # pipecat's user_speech_timeout default (0.6 s)
    user_turn_timeout_ms: int = Field(5000, ge=500)  # give up waiting for a transcript
    barge_in: bool = True
    # 0: VAD speech interrupts the bot; N: a transcript of N words that are not all backchannel
    # ("mm-hm", "yeah"), or a stop word ("stop", "wait"), does; shorter ones are dropped
    barge_in_min_words: int = Field(2, ge=0)
    barge_in_max_pause_ms: int = Field(4000, ge=100)  # a ducked bot waits this long for a decision, then resumes
    resume_overlap_ms: int = Field(200, ge=0)  # after a false barge-in the bot resumes this much before the cut
    # speech begun before the bot has spoken this long since the person's turn ended goes on with what they were
    # saying: one word takes the turn, and an agent takes it with the answer before (voice/turns.py); 0: off
    resumed_speech_ms: int = Field(1000, ge=0)
    # never silent when slow (voice/acks.py): auto = after each turn with a remote LLM, and when an agent
    # announces a slow step (a tool call); on = after each turn; off = never
    ack: Literal["auto", "on", "off"] = "auto"
    ack_after_ms: int = Field(700, ge=0)  # ... when no audio of the answer has come this long after the turn
    ack_text: str = "One moment."
    say_timeout_s: float = Field(8.0, gt=0)  # an agent's line gives up waiting for its audio after this
    say_timeout_per_char_ms: float = Field(80.0, ge=0)  # ... plus this per character said


def asr_variant(variant: str) -> dict[str, Any]:
    """``ENGINE[:MODEL][:beamN]`` → the ``asr`` keys it sets: ``whisper``, ``whisper:base``,
    ``whisper:tiny.en:beam5``, ``whisper:base:beam5``, ``moonshine``. ``MODEL`` is ``asr.model``,
    ``beamN`` ``asr.beam_size``; both are Whisper's (Moonshine decodes greedily, with no model choice).

    Raises:
        ConfigError: no such engine, a model or beam given to ``moonshine``, or a bad part.
    """
    engine, *rest = variant.split(":")
    keys: dict[str, Any] = {"engine": engine}
    for part in rest:
        key = "beam_size" if re.fullmatch(r"beam\d+", part) else "model"
        if key in keys or not part:
            raise ConfigError(f"ASR variant {variant!r}: expected ENGINE[:MODEL][:beamN]")
        keys[key] = int(part[4:]) if key == "beam_size" else part
    if engine not in ("whisper", "moonshine"):
        raise ConfigError(f"ASR variant {variant!r}: no engine {engine!r} for asr.engine (whisper or moonshine)")
    if engine == "moonshine" and rest:
        raise ConfigError(f"ASR variant {variant!r}: moonshine takes no model and decodes greedily (no beam)")
    return keys


#: the ASR engines (``voice/asr/``): faster-whisper, or Moonshine base-en on onnxruntime
ASREngineName = Literal["whisper", "moonshine"]
#: what an ASR call is for: the conversation's finals, a spelling's finals, interims while the bot speaks
ASRUse = Literal["conversation", "spelling", "interim"]


class ASRConfig(_Section):
    """Speech recognition (``voice/asr/``): ``engine`` picks the conversation's engine,
    ``spelling_engine`` and ``interim_engine`` those of the spelling pass and of the
    barge-in ear (each ``engine`` when unset; :meth:`engine_for`); the other keys are
    faster-whisper's (whichever use runs ``whisper``), except ``cpu_threads``, which both use."""

    engine: ASREngineName = "whisper"  # conversation; moonshine = Moonshine base-en on onnxruntime
    # the spelling pass (a spelling is expected; the ASR context is the spelling alphabet); None = engine
    spelling_engine: ASREngineName | None = None
    # interims while the bot speaks: the barge-in ear; None = engine
    interim_engine: ASREngineName | None = None
    # whisper: "tiny.en" (fetched by default), "base" (multilingual; fetch --with whisper-base), or a CTranslate2 folder
    model: str = "tiny.en"
    beam_size: int = Field(1, ge=1, le=10)
    cpu_threads: int = Field(1, ge=1)
    compute_type: str = "int8"
    # silence = no-speech probability above this and average token log-probability below
    # logprob_threshold (openai-whisper's transcribe() defaults; see voice/asr/whisper.py)
    no_speech_prob: float = Field(0.6, gt=0, le=1)
    logprob_threshold: float = Field(-1.0, lt=0)
    language: str = "en"

    def engine_for(self, use: ASRUse) -> ASREngineName:
        """The engine that transcribes for ``use``: ``spelling_engine`` or ``interim_engine``
        when set, else ``engine``."""
        chosen = {"spelling": self.spelling_engine, "interim": self.interim_engine}.get(use)
        return chosen or self.engine

    def for_engine(self, engine: ASREngineName) -> "ASRConfig":
        """This section as ``engine`` is built from (``asr.engine`` = ``engine``): an engine's
        ``cfg`` names itself whichever use it serves."""
        return self.model_copy(update={"engine": engine})


class LLMConfig(_Section):
    provider: Literal["embedded", "openai_compatible"] = "embedded"
    model: str = "qwen2.5-coder-0.5b"  # embedded: a model name from appliance.models; else the endpoint's model
    base_url: str | None = None  # openai_compatible only
    api_key_env: str | None = None  # name of the env var holding the key (openai_compatible)
    threads: int = Field(2, ge=1)
    nice: int = Field(10, ge=0, le=19)  # embedded: the LLM process's niceness increment (voice stages go first)
    ctx_tokens: int = Field(4096, ge=512)  # per slot
    parallel_slots: int = Field(
        4, ge=1
    )  # one slot per distinct prompt prefix: llama-server keeps one KV cache per slot
    max_tokens: int = Field(120, ge=1)
    temperature: float = Field(0.7, ge=0, le=2)
    request_timeout_s: float = Field(60.0, gt=0)  # longest wait for one try of one LLM request
    max_retries: int = Field(2, ge=0)  # more tries after a transient failure (no connection, timeout, HTTP 5xx/429)
    retry_backoff_ms: int = Field(250, ge=0)  # wait before the first retry; doubled before each next one
    start_timeout_s: float = Field(120.0, gt=0)  # embedded: longest wait for llama-server to load the model
    system_prompt: str = (
        "You are a friendly voice assistant running on a local appliance. "
        "Answer in one or two short spoken sentences. No lists, no markdown."
    )
    # a slow mind for the plain assistant's answers (a larger model, a remote endpoint), shaped like ``llm``
    # (its ``system_prompt`` unused: the answer keeps ``llm.system_prompt``): while it thinks, ``llm`` says a short
    # acknowledgement of what was asked (voice/acks.py); None: ``llm`` answers
    slow: "LLMConfig | None" = None

    @model_validator(mode="after")
    def _provider_fields(self) -> "LLMConfig":
        if self.provider == "openai_compatible" and not self.base_url:
            raise ValueError("llm.base_url is required when provider is openai_compatible")
        if self.slow is not None and self.slow.slow is not None:
            raise ValueError("llm.slow.slow: the slow mind has no slower one")
        return self


class TTSConfig(_Section):
    provider: Literal["piper", "fish"] = "piper"
    voice: str = "piper-joe"  # piper: model name in the cache
    length_scale: float = Field(1.0, gt=0.2, lt=3)  # piper: >1 slower speech
    api_key_env: str = "FISH_API_KEY"  # fish only
    reference_id: str | None = None  # fish only: the voice's reference id
    base_url: str | None = None  # fish only: override the API address (tests use a local fake)
    voice_library: str = "voices"  # folder with per-emotion reference clips (fish)
    timeout_s: float = Field(10.0, gt=0)
    first_clause_words: int = Field(3, ge=1)  # the reply's first clause goes to TTS after this many words
    max_clause_words: int = Field(14, ge=2)  # later clauses: at punctuation or this many words
    max_ahead_ms: int = Field(
        3000, ge=0
    )  # piper: a clause is synthesised once less audio than this waits to be played (0: no bound)

    @model_validator(mode="after")
    def _provider_fields(self) -> "TTSConfig":
        if self.provider == "fish" and not self.reference_id:
            raise ValueError("tts.reference_id is required when provider is fish")
        return self


class RecordingConfig(_Section):
    enabled: bool = True
    dir: str = "~/.cache/appliance/recordings"
    # recordings whose newest file is older than this many days are deleted at start and daily
    # (appliance/voice/recordings.py); 0 = kept until deleted by hand
    retention_days: int = Field(30, ge=0)


class BusConfig(_Section):
    backend: Literal["inproc", "redis"] = "inproc"
    redis_url: str = "redis://127.0.0.1:6379/0"
    log_dir: str = "~/.cache/appliance/bus"
    log_fsync_ms: int = Field(100, ge=0)  # 0 = fsync every envelope
    # redis: keep about this many entries per stream, never trimming one a durable group has
    # not acknowledged (trimmed by MINID; see appliance.bus.redis_streams); 0 = never trim
    redis_maxlen: int = Field(100_000, ge=0)
    # redis: an envelope delivered this many times to a durable group without being
    # acknowledged goes to the dead stream (S:dead) with the reason
    max_deliveries: int = Field(5, ge=1)


class WerewolfConfig(_Section):
    """Werewolf games (``appliance werewolf``): table size, the user seat's retries, the seats' LLM and budgets."""

    seats: int = Field(7, ge=6, le=MAX_SEATS)  # seats at the table, the user seat included
    asr_retry_limit: int = Field(2, ge=0)  # re-asks of the user seat before the game fails closed
    speech_max_tokens: int = Field(64, ge=8)  # LLM budget for one speech (the opening, ~20 tokens of its own, the JSON)
    temperature: float = Field(0.7, ge=0, le=2)
    # the AI seats' speeches: the code decides what they say, the LLM only words it (at 0.7 the
    # 0.5B model gave several seats the very same sentence)
    speech_temperature: float = Field(1.0, ge=0, le=2)
    speech_retries: int = Field(
        1, ge=0
    )  # more wordings asked for when the LLM's words do not conform; then the template
    turn_timeout_s: float = Field(180.0, gt=0)  # longest wait for one seat's answer
    prompt_max_chars: int = Field(9000, ge=1000)  # a seat's log beyond this drops its oldest speeches
    voices: str = "voices/werewolf.yaml"  # seat → voice style library (relative to the repository)
    # the seats' LLM, shaped like ``llm`` (e.g. the bundled qwen2.5-coder-1.5b, or an openai_compatible
    # endpoint): every seat's prompt P1…P8, the simulated user seat's too; None: the seats use ``llm``.
    # Started beside ``llm`` whenever it is set and differs.
    llm: LLMConfig | None = None


class BrowserConfig(_Section):
    """The computer agent's Chromium (see :mod:`appliance.chromium` for its switches).

    ``network: open`` uses Chromium's normal DNS (a real site); ``loopback`` adds the
    resolver rule under which only 127.0.0.1/localhost resolve (tests, ``bench``,
    ``simulate``: :meth:`Config.loopback`). Telemetry, sync, component updates and
    extension downloads are off in both. A form URL must use one of ``allowed_schemes``
    and, when ``allowed_domains`` is not empty, have one of those hosts or a subdomain.
    """

    chromium_path: str | None = None  # None: Debian's /usr/lib/chromium/chromium (appliance/chromium.py), else PATH
    network: Literal["open", "loopback"] = "open"
    allowed_schemes: tuple[str, ...] = ("http", "https")
    allowed_domains: tuple[str, ...] = ()  # empty: any host

    def check_url(self, url: str) -> str:
        """``url`` if the agent may open it under these settings.

        Raises:
            appliance.chromium.URLRefused: naming the URL and why (scheme, domain, loopback).
        """
        return check_form_url(
            url, network=self.network, allowed_schemes=self.allowed_schemes, allowed_domains=self.allowed_domains
        )


class FormsConfig(_Section):
    """Form filling by voice (``appliance form``, ``appliance demo``, ``simulate form``, ``bench form``)."""

    demo_port: int = Field(8770, ge=0, le=65535)  # ``appliance demo`` listens here on 127.0.0.1; 0 = any
    page_load_timeout_ms: int = Field(15000, ge=500)  # one navigation (goto, Next, submit)
    action_timeout_ms: int = Field(3000, ge=100)  # one fill / select / check / click
    poll_ms: int = Field(250, ge=20)  # re-read the page this often while waiting (fields that appear)
    step_deadline_s: float = Field(600.0, gt=0)  # longest stay on one page state before the task fails
    task_deadline_s: float = Field(1800.0, gt=0)  # longest whole task
    map_max_tokens: int = Field(400, ge=32)  # LLM budget for mapping one page state's fields
    answer_timeout_s: float = Field(10.0, gt=0)  # silence before the phone agent checks the person is there
    review_timeout_s: float = Field(900.0, gt=0)  # a "don't submit" task: how long the filled form waits for the person
    llm_threads: int = Field(1, ge=1)  # llm.threads when a form command starts the LLM (Chromium + ASR share the cores)
    date_order: Literal["DMY", "MDY"] = "DMY"  # how spoken numeric dates like 03/04/1990 are read
    person_pitch_semitones: float = Field(-2.0, ge=-12, le=12)  # simulated person's voice vs the bot's
    person_length_scale: float = Field(0.95, gt=0.2, lt=3)
    # the simulated person's ear, ENGINE[:MODEL][:beamN] as ``bench asr --engines`` names variants: the best
    # engine a default set-up has, not the appliance's (issue 27: the bench measures the appliance, not its
    # listener). bench asr, 220 clips: tiny.en beam 5 0.256 WER overall, 0.06 on the bot's Piper voice
    # (tiny.en beam 1, the appliance's: 0.285, 0.10); whisper:base:beam5 0.247, 0.047 after
    # ``python -m appliance.models fetch --with whisper-base``
    person_ear: str = "whisper:tiny.en:beam5"

    @field_validator("person_ear")
    @classmethod
    def _ear(cls, v: str) -> str:
        asr_variant(v)  # a ConfigError names what is wrong
        return v

    submit_grace_ms: int = Field(3000, ge=0)  # after the yes to submitting, a "stop" this soon sends nothing
    # a name answered in words is asked to be spelled at once (no read-back) when the ASR's probability for one of its
    # words is below this (0: never). tiny.en on Piper answers: 0.51-0.82 for names heard right, 0.03-0.46 for names
    # heard wrong (appliance.voice.asr.whisper._words)
    spell_below_prob: float = Field(0.45, ge=0, le=1)
    # VAD stop in form sessions: a spelling's or a dictation's pauses (300-450 ms in Piper's speech) stay inside one
    # VAD segment, which Whisper transcribes whole; the turn's waits after the VAD stop (turn.agent_speech_timeout_ms,
    # turn.incomplete_timeout_ms) shrink by as much (the longest pause inside a turn stays the same)
    vad_stop_ms: int = Field(500, ge=0)
    # who runs a form call's computer agent (appliance/forms/pool.py): local = this process (Chromium here); pool =
    # a worker (`appliance worker computer`, bus.backend: redis) takes the task from the form_tasks stream
    computer: Literal["local", "pool"] = "local"
    pool_wait_s: float = Field(10.0, gt=0)  # pool: no worker took the call's task this soon → "all busy", call ends
    claim_idle_ms: int = Field(30_000, ge=1000)  # pool: a dead worker's task is taken over after this long idle


class Config(_Section):
    server: ServerConfig = ServerConfig()
    transport: TransportConfig = TransportConfig()
    vad: VADConfig = VADConfig()
    turn: TurnConfig = TurnConfig()
    asr: ASRConfig = ASRConfig()
    llm: LLMConfig = LLMConfig()
    tts: TTSConfig = TTSConfig()
    recording: RecordingConfig = RecordingConfig()
    bus: BusConfig = BusConfig()
    browser: BrowserConfig = BrowserConfig()
    forms: FormsConfig = FormsConfig()
    werewolf: WerewolfConfig = WerewolfConfig()

    # ---- derived settings: how each kind of process sizes the shared runtime ----------------

    def for_forms(self) -> "Config":
        """For a process that runs form sessions: ``llm.parallel_slots`` covers every
        :data:`FORM_SLOTS` slot and ``llm.threads`` is ``forms.llm_threads`` (Chromium, ASR
        and TTS share the cores); ``vad.stop_ms`` is at least ``forms.vad_stop_ms``, so a
        spelling's pauses stay inside one VAD segment (Whisper transcribes a segment alone:
        "Sierra," cut off its neighbours came back as "Tier"), and the waits for more speech
        that follow the VAD stop are shorter by what that added, so the longest pause a turn
        waits out stays the same: ``turn.agent_speech_timeout_ms`` (``end_of_turn: timeout``:
        every turn ends as soon as before) and ``turn.incomplete_timeout_ms``
        (``smart_turn``: an utterance that sounds unfinished is held as long as before; a
        finished one ends at the VAD stop, later by what it added).

        Raises:
            ConfigError: the derived settings are not valid.
        """
        slots = 1 + max(LLM_SLOTS[name] for name in FORM_SLOTS)
        stop_ms = max(self.vad.stop_ms, self.forms.vad_stop_ms)
        added_ms = stop_ms - self.vad.stop_ms
        waits = {
            key: max(0, getattr(self.turn, key) - added_ms)
            for key in ("agent_speech_timeout_ms", "incomplete_timeout_ms")
        }
        return self._derive(
            llm={"parallel_slots": max(self.llm.parallel_slots, slots), "threads": self.forms.llm_threads},
            vad={"stop_ms": stop_ms},
            turn=waits,
        )

    def for_simulation(self) -> "Config":
        """For the voice server a simulated person calls (``simulate form``, ``bench form``):
        :meth:`for_forms` and :meth:`loopback`, on 127.0.0.1 at a free port, loopback ICE candidates only, and a
        phone agent that waits at least :data:`SIMULATED_ANSWER_TIMEOUT_S` for an answer, and a
        filled "don't submit" form that waits at most :data:`SIMULATED_REVIEW_TIMEOUT_S` for its review.

        Raises:
            ConfigError: the derived settings are not valid.
        """
        return (
            self.for_forms()
            .loopback()
            ._derive(
                server={"host": "127.0.0.1", "port": 0},
                transport={"loopback_only": True},
                forms={
                    "answer_timeout_s": max(self.forms.answer_timeout_s, SIMULATED_ANSWER_TIMEOUT_S),
                    "review_timeout_s": min(self.forms.review_timeout_s, SIMULATED_REVIEW_TIMEOUT_S),
                },
            )
        )

    def for_replay(self, recorded_s: float, recorded_pace: bool = False) -> "Config":
        """For re-running a recorded form call (:mod:`appliance.forms.replay`) whose review (or,
        without one, the whole call) lasted ``recorded_s`` seconds:
        :meth:`for_forms` and :meth:`loopback`, a phone agent that waits at most
        :data:`REPLAY_ANSWER_TIMEOUT_S` for an answer (each is there when asked for; with
        ``recorded_pace``, answers come at their recorded times: the usual wait), and a "don't
        submit" form whose review waits no longer than it did then.

        Raises:
            ConfigError: the derived settings are not valid.
        """
        return (
            self.for_forms()
            .loopback()
            ._derive(
                forms={
                    "answer_timeout_s": self.forms.answer_timeout_s
                    if recorded_pace
                    else min(self.forms.answer_timeout_s, REPLAY_ANSWER_TIMEOUT_S),
                    "review_timeout_s": min(self.forms.review_timeout_s, max(1.0, recorded_s)),
                },
            )
        )

    def without_recording(self) -> "Config":
        """For one call the person asked not to record (the offer's ``record: false``):
        ``recording.enabled`` is false."""
        return self._derive(recording={"enabled": False})

    def for_werewolf(self, seats: int) -> "Config":
        """For one Werewolf game of ``seats`` seats: ``werewolf.seats`` is ``seats`` and
        ``llm.parallel_slots`` (and ``werewolf.llm.parallel_slots``, when set) gives every
        seat its own slot.

        Raises:
            ConfigError: ``seats`` is outside 6–8.
        """
        return self._derive(
            werewolf={"seats": seats, **self._seat_slots(seats)},
            llm={"parallel_slots": max(self.llm.parallel_slots, seats)},
        )

    def for_werewolf_page(self) -> "Config":
        """For the voice server of ``werewolf --user human``: the page lets the person pick
        any table up to :data:`MAX_SEATS` seats, so every one of them gets its own slot."""
        return self._derive(
            werewolf=self._seat_slots(MAX_SEATS), llm={"parallel_slots": max(self.llm.parallel_slots, MAX_SEATS)}
        )

    def with_werewolf_model(self, model: str) -> "Config":
        """With ``werewolf.llm`` = ``llm`` serving ``model`` instead (e.g. the bundled
        ``qwen2.5-coder-1.5b``): ``bench werewolf --compare-model`` plays the same seeds
        with the seats on another model. Call :meth:`for_werewolf` after it."""
        return self._derive(werewolf={"llm": {**self.llm.model_dump(), "model": model}})

    def _seat_slots(self, seats: int) -> dict[str, Any]:
        """``werewolf.llm`` (when set) with a slot per seat."""
        ww = self.werewolf.llm
        if ww is None:
            return {}
        return {"llm": {**ww.model_dump(), "parallel_slots": max(ww.parallel_slots, seats)}}

    def loopback(self) -> "Config":
        """This config with ``browser.network: loopback``: what tests, benchmarks and
        simulations run under, whatever the operator's file says."""
        return self._derive(browser={"network": "loopback"})

    def for_voice_bench(self, max_tokens: int) -> "Config":
        """For ``bench voice``'s own server: on a free port, loopback ICE candidates only, no
        recording, no "never silent" acknowledgements (the bench measures the replies) and
        replies of at most ``max_tokens`` tokens (``llm.max_tokens``).

        Raises:
            ConfigError: the derived settings are not valid.
        """
        return self._derive(
            server={"port": 0},
            transport={"loopback_only": True},
            recording={"enabled": False},
            llm={"max_tokens": max_tokens},
            turn={"ack": "off"},
        )

    def with_reply_tokens(self, max_tokens: int) -> "Config":
        """With ``llm.max_tokens`` = ``max_tokens`` (``bench voice``'s barge-in trials need
        replies long enough to interrupt).

        Raises:
            ConfigError: ``max_tokens`` is not valid.
        """
        return self._derive(llm={"max_tokens": max_tokens})

    def with_bus_log_dir(self, folder: str | Path) -> "Config":
        """With ``bus.log_dir`` = ``folder``: a Werewolf game logs its envelopes into its own
        recording folder."""
        return self._derive(bus={"log_dir": str(folder)})

    def for_asr_engine(self, variant: str) -> "Config":
        """With ``asr.engine`` (and its use-specific engines) set by ``variant``
        (:func:`asr_variant`; ``bench asr --engines`` runs each variant on one config).

        Raises:
            ConfigError: a bad variant (see :func:`asr_variant`).
        """
        return self._derive(asr={**asr_variant(variant), "spelling_engine": None, "interim_engine": None})

    def person_ear(self) -> ASRConfig:
        """The ``asr`` section the simulated person's ear is built from (``forms.person_ear``)."""
        return self.for_asr_engine(self.forms.person_ear).asr

    def _derive(self, **sections: dict[str, Any]) -> "Config":
        """This config with ``sections`` (section → key → value) changed, validated again."""
        data = self.model_dump()
        for name, changes in sections.items():
            data[name] = {**data[name], **changes}
        try:
            return Config.model_validate(data)
        except ValidationError as e:
            raise ConfigError("\n".join(_problems(e, "derived settings"))) from None

    def check_credentials(self) -> None:
        """A cloud provider whose key variable is unset is an error at start, never a quiet fallback.

        Raises:
            ConfigError: naming the provider and the unset variable.
        """
        for key, llm in (("llm", self.llm), ("llm.slow", self.llm.slow), ("werewolf.llm", self.werewolf.llm)):
            if llm is not None and llm.provider == "openai_compatible" and llm.api_key_env:
                if not os.environ.get(llm.api_key_env):
                    raise ConfigError(
                        f"{key}.api_key_env: environment variable {llm.api_key_env} is not set "
                        f"(needed by {key}.provider openai_compatible at {llm.base_url})"
                    )
        if self.tts.provider == "fish" and not os.environ.get(self.tts.api_key_env):
            raise ConfigError(
                f"tts.api_key_env: environment variable {self.tts.api_key_env} is not set (needed by tts.provider fish)"
            )


def add_config_arg(parser: argparse.ArgumentParser) -> None:
    """``--config FILE`` on a command: an operator YAML merged over ``configs/default.yaml``."""
    parser.add_argument("--config", metavar="FILE", help="operator YAML merged over configs/default.yaml")


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping of sections, got {type(data).__name__}")
    return data


def load(path: str | Path | None = None, overrides: dict | None = None) -> Config:
    """Load ``configs/default.yaml``, merge the operator's file and ``overrides`` over it, validate.

    Raises:
        ConfigError: "<file>: <dotted.key>: <why>" for the first problems found.
    """
    data = _read_yaml(DEFAULT_CONFIG)
    src = DEFAULT_CONFIG
    if path is not None:
        src = Path(path)
        data = _merge(data, _read_yaml(src))
    if overrides:
        data = _merge(data, overrides)
    try:
        return Config.model_validate(data)
    except ValidationError as e:
        raise ConfigError("\n".join(_problems(e, src))) from None


def _problems(e: ValidationError, src: Path | str) -> list[str]:
    """ "<src>: <dotted.key>: <why>" for each error of ``e``."""
    problems = []
    for err in e.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        why = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"{src}: {key}: {why}")
    return problems
