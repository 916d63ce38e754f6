"""The duplex voice pipeline, shared by every transport (WebRTC, WebSocket, local, file).

::

    transport.input → STT (interim + final) → user aggregator (Silero VAD, turn strategy)
      → LLM (streamed) → clause chunker + markers → TTS → transport.output
      → recorder → assistant aggregator

Turn-taking: Silero VAD (pipecat's bundled ONNX) on the user aggregator; the turn ends
as soon as the final transcript of the VAD segment arrives
(``SpeechTimeoutUserTurnStopStrategy`` with no extra timeout). Barge-in is pipecat's:
the VAD start strategy broadcasts an ``InterruptionFrame`` while the bot speaks, which
stops output audio and cancels LLM and TTS work; the assistant aggregator sits after the
output transport, which releases each clause's text only once its audio was sent, so the
context keeps only what the person heard (to the clause).
"""

from __future__ import annotations

import json
import logging
import time
import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.audio.audio_buffer_processor import AudioBufferProcessor
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.transports.base_transport import BaseTransport
from pipecat.turns.user_start import VADUserTurnStartStrategy
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from appliance.config import Config
from appliance.voice.asr import WhisperASR
from appliance.voice.markers import SpeakableTextProcessor, strip_markers
from appliance.voice.services import FishClauseTTSService, PiperClauseTTSService, StreamingWhisperSTTService
from appliance.voice.line import LineProcessor
from appliance.voice.llm_server import EmbeddedLLMServer, endpoint, warm
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
        import os

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


class EventLog:
    """A session's event log: JSONL lines ``{"t_ms", "ts", "event", ...}`` appended and
    flushed per event; ``t_ms`` is ms since the session started (monotonic), ``ts`` ms
    since the Unix epoch. Listeners (the page's event socket) get each event as a dict.
    """

    def __init__(self, path: Path | None):
        self._t0 = time.monotonic()
        self._fh = open(path, "a", buffering=1) if path else None
        self.listeners: list[Callable[[dict], None]] = []
        self.events: list[dict] = []

    def now_ms(self) -> float:
        return (time.monotonic() - self._t0) * 1000

    def emit(self, event: str, **fields) -> dict:
        rec = {"t_ms": round(self.now_ms(), 1), "ts": int(time.time() * 1000), "event": event, **fields}
        self.events.append(rec)
        if self._fh:
            self._fh.write(json.dumps(rec) + "\n")
        for fn in list(self.listeners):
            fn(rec)
        return rec

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None


class TurnObserver(BaseObserver):
    """Writes per-turn events and latencies (ms) to the :class:`EventLog`.

    Events: ``user_started_speaking``, ``vad_stopped`` (``speech_end_ms`` = VAD stop
    − ``vad.stop_ms``), ``interim_transcript``, ``final_transcript``, ``llm_first_token``,
    ``tts_first_audio``, ``first_audio_sent``, ``bot_text`` (what was spoken),
    ``interruption``, ``bot_stopped``, ``llm_reply`` (the whole generated reply, which
    may be more than was heard), and one ``turn`` summary per answered turn with
    each stage's latency from the end of speech.
    """

    def __init__(self, events: EventLog, stop_ms: int):
        super().__init__()
        self._ev = events
        self._stop_ms = stop_ms
        self._seen: set[int] = set()
        self._turn: dict = {}
        self._bot_speaking = False
        self._reply: list[str] = []

    def _mark(self, key: str, **fields) -> None:
        if key in self._turn:
            return
        t = self._ev.now_ms()
        self._turn[key] = t
        self._ev.emit(key, **fields)

    async def on_push_frame(self, data: FramePushed):
        f = data.frame
        if f.id in self._seen or f.broadcast_sibling_id in self._seen:
            return  # a frame seen before, or the other copy of a broadcast frame
        self._seen.add(f.id)
        if len(self._seen) > 50_000:
            self._seen.clear()
        if isinstance(f, VADUserStartedSpeakingFrame):
            if self._bot_speaking:
                self._ev.emit("barge_in_detected")
            self._ev.emit("user_started_speaking")
        elif isinstance(f, VADUserStoppedSpeakingFrame):
            t = self._ev.now_ms()
            self._turn = {"vad_stopped": t, "speech_end": t - self._stop_ms}
            self._ev.emit("vad_stopped", speech_end_ms=round(t - self._stop_ms, 1))
        elif isinstance(f, InterimTranscriptionFrame):
            self._ev.emit("interim_transcript", text=f.text)
        elif isinstance(f, TranscriptionFrame):
            self._ev.emit("final_transcript", text=f.text)
            self._turn["final_transcript"] = self._ev.now_ms()
        elif isinstance(f, LLMFullResponseStartFrame):
            self._reply = []
            self._turn.pop("llm_first_token", None)
            self._turn.pop("tts_first_audio", None)
            self._turn.pop("first_audio_sent", None)
        elif isinstance(f, LLMTextFrame):
            self._mark("llm_first_token")
            self._reply.append(f.text)
        elif isinstance(f, LLMFullResponseEndFrame):
            self._ev.emit("llm_reply", text=strip_markers("".join(self._reply)))
            self._reply = []
        elif isinstance(f, TTSAudioRawFrame):
            self._mark("tts_first_audio")
        elif isinstance(f, TTSTextFrame):
            self._ev.emit("bot_text", text=strip_markers(f.text))
        elif isinstance(f, BotStartedSpeakingFrame):
            self._bot_speaking = True
            if "first_audio_sent" not in self._turn and "speech_end" in self._turn:
                self._mark("first_audio_sent")
                end = self._turn["speech_end"]
                self._ev.emit("turn", **{f"{k}_ms": round(self._turn[k] - end, 1) for k in (
                    "vad_stopped", "final_transcript", "llm_first_token", "tts_first_audio", "first_audio_sent")
                    if k in self._turn})
        elif isinstance(f, BotStoppedSpeakingFrame):
            self._bot_speaking = False
            self._ev.emit("bot_stopped")
        elif isinstance(f, InterruptionFrame):
            self._ev.emit("interruption")
            if self._reply:  # generation was cut: log what had been generated
                self._ev.emit("llm_reply", text=strip_markers("".join(self._reply)), interrupted=True)
                self._reply = []


@dataclass
class Session:
    """One conversation: its event log, recording folder (or None) and LLM context."""

    events: EventLog
    folder: Path | None = None
    context: LLMContext = field(default_factory=LLMContext)
    recorder: AudioBufferProcessor | None = None


def open_session(cfg: Config, name: str) -> Session:
    """Create the session's recording folder (``recording.dir/<time>-<name>``) with the
    config used, and its event log."""
    folder = None
    if cfg.recording.enabled:
        import yaml

        folder = Path(cfg.recording.dir).expanduser() / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    return Session(events=EventLog(folder / "events.jsonl" if folder else None), folder=folder)


def _write_wav(path: Path, pcm: bytes, sample_rate_hz: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate_hz)
        w.writeframes(pcm)


def build_task(runtime: VoiceRuntime, transport: BaseTransport, session: Session,
               system_prompt: str | None = None, line: LineProcessor | None = None) -> PipelineWorker:
    """The pipeline for one session on ``transport``; run it with :func:`run_task`.

    ``system_prompt`` overrides ``llm.system_prompt``. ``line``: an agent speaks and
    listens through this :class:`~appliance.voice.line.LineProcessor` instead of the LLM.
    Recording (when the session has a folder): ``input.wav`` and ``output.wav`` (16 kHz
    mono) are written when the pipeline ends.
    """
    cfg = runtime.cfg
    asr_stats = []

    def on_final(result):
        asr_stats.append(result)
        session.events.emit("asr", audio_s=round(result.audio_s, 3), compute_s=round(result.compute_s, 3),
                            no_speech_prob=round(result.no_speech_prob, 3))

    stt = StreamingWhisperSTTService(runtime.asr, cfg.turn.interim_every_ms, on_final=on_final)
    vad = SileroVADAnalyzer(params=VADParams(confidence=cfg.vad.confidence, start_secs=cfg.vad.start_ms / 1000,
                                             stop_secs=cfg.vad.stop_ms / 1000, min_volume=cfg.vad.min_volume))
    strategies = UserTurnStrategies(
        start=[VADUserTurnStartStrategy(enable_interruptions=cfg.turn.barge_in)],
        stop=[SpeechTimeoutUserTurnStopStrategy(
            user_speech_timeout=cfg.turn.agent_speech_timeout_ms / 1000 if line is not None else 0.0)],
    )
    prompt = system_prompt or cfg.llm.system_prompt
    session.context = LLMContext()
    aggregators = LLMContextAggregatorPair(session.context, user_params=LLMUserAggregatorParams(
        vad_analyzer=vad, user_turn_strategies=strategies,
        user_turn_stop_timeout=cfg.turn.user_turn_timeout_ms / 1000))
    llm = line or OpenAILLMService(api_key=runtime.llm_api_key, base_url=runtime.llm_base_url,
                           settings=OpenAILLMService.Settings(model=runtime.llm_model, max_tokens=cfg.llm.max_tokens,
                                                              temperature=cfg.llm.temperature,
                                                              system_instruction=prompt))
    if cfg.tts.provider == "piper":
        tts = PiperClauseTTSService(runtime.synth, cfg.tts)
    else:
        tts = FishClauseTTSService(cfg.tts, runtime.fish_api_key)
    processors = [transport.input(), stt, aggregators.user(), llm,
                  SpeakableTextProcessor(cfg.tts.first_clause_words, cfg.tts.max_clause_words), tts,
                  transport.output()]
    if line is not None:
        processors.append(line.played)
    if session.folder:
        session.recorder = AudioBufferProcessor(sample_rate=16_000, num_channels=1, auto_start_recording=True)
        folder = session.folder

        @session.recorder.event_handler("on_track_audio_data")
        async def _save(_proc, user_pcm: bytes, bot_pcm: bytes, sample_rate: int, _channels: int):
            _write_wav(folder / "input.wav", user_pcm, sample_rate)
            _write_wav(folder / "output.wav", bot_pcm, sample_rate)

        processors.append(session.recorder)
    processors.append(aggregators.assistant())
    task = PipelineWorker(Pipeline(processors), params=PipelineParams(enable_metrics=True),
                        observers=[TurnObserver(session.events, cfg.vad.stop_ms)])
    return task


async def run_task(task: PipelineWorker) -> None:
    """Run one pipeline task to its end (pipecat's ``WorkerRunner``; no signal handlers)."""
    from pipecat.workers.runner import WorkerRunner

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(task)
    await runner.run()
