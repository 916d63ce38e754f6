"""The duplex voice pipeline, shared by every transport (WebRTC, WebSocket, local, file).

::

    transport.input → STT (interim + final) → user aggregator (Silero VAD, turn strategy)
      → [LLM apology] → LLM (streamed) → clause chunker + markers → TTS → [acknowledger] → playout (paced; barge-in pauses it)
      → transport.output → recorder → assistant aggregator

Turn-taking: Silero VAD (pipecat's bundled ONNX) on the user aggregator, with the user-turn
strategies of :func:`appliance.voice.turns.turn_strategies`: Smart Turn v3 and the words
decide the end of turn (or the pause rule), the LLM may start speculatively on the early
final transcript. Barge-in: the page lowers the bot at the person's first sound (without
a page, :class:`~appliance.voice.playout.Playout` pauses it at the VAD's start); pipecat's
start strategy confirms (an ``InterruptionFrame`` stops output audio and cancels LLM and
TTS work) or the bot is released and goes on (a backchannel, a noise); the assistant
aggregator sits after the output transport, which releases each clause's text only once
its audio was sent, so the context keeps only what the person heard (to the clause).
A reply the LLM fails to give (its server killed, a cloud error after retries) is
apologised for aloud (:mod:`appliance.voice.apology`).

Decisions one processor makes and another acts on travel as frames
(:mod:`appliance.voice.decisions`), marked beside the processors in :func:`build_task`
(↓ downstream, ↑ upstream); the VAD's state, which no frame carries in time, goes through
the one :class:`~appliance.voice.decisions.VoiceActivity` that ``build_task`` hands to the
VAD and to the playout.
"""

from __future__ import annotations

import logging

from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.frames.frames import Frame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
from pipecat.processors.audio.audio_buffer_processor import AudioBufferProcessor
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.transports.base_transport import BaseTransport
from pipecat.workers.runner import WorkerRunner

from appliance.config import Config
from appliance.voice.acks import Acknowledger, RelevantAck
from appliance.voice.apology import LLMApology
from appliance.voice.asr import SAMPLE_RATE_HZ
from appliance.voice.decisions import RecordingChoiceFrame, VoiceActivity
from appliance.voice.events import TurnObserver
from appliance.voice.fish_tts import FishClauseTTSService
from appliance.voice.line import LineProcessor
from appliance.voice.markers import SpeakableTextProcessor, spoken_prompt
from appliance.voice.piper_tts import PiperClauseTTSService
from appliance.voice.playout import ListeningSileroVAD, Playout
from appliance.voice.runtime import VoiceRuntime
from appliance.voice.session import Session
from appliance.voice.stt import StreamingSTTService
from appliance.voice.turns import turn_strategies
from appliance.voice.wav import write_wav

log = logging.getLogger(__name__)


class RetryingOpenAILLMService(OpenAILLMService):
    """pipecat's OpenAI service whose client tries a transient failure (no connection, a
    timeout, HTTP 408/409/429/5xx) again ``max_retries`` times (``llm.max_retries``), with
    the OpenAI SDK's own backoff (0.5 s, doubling, at most 8 s); then the service reports the
    error and :class:`~appliance.voice.apology.LLMApology` says sorry."""

    def __init__(self, *, max_retries: int, **kwargs):
        self._max_retries = max_retries  # read by create_client, which the base __init__ calls
        super().__init__(**kwargs)

    def create_client(self, **kwargs):
        return super().create_client(**kwargs).with_options(max_retries=self._max_retries)


def build_task(
    runtime: VoiceRuntime,
    transport: BaseTransport,
    session: Session,
    system_prompt: str | None = None,
    line: LineProcessor | None = None,
    cfg: Config | None = None,
) -> PipelineWorker:
    """The pipeline for one session on ``transport``; run it with :func:`run_task`.

    ``system_prompt`` overrides ``llm.system_prompt`` (told the control markers,
    :func:`~appliance.voice.markers.spoken_prompt`). ``line``: an agent speaks and
    listens through this :class:`~appliance.voice.line.LineProcessor` instead of the LLM.
    ``cfg``: this session's settings (default: the runtime's; ``bench voice`` gives its
    barge-in trials longer replies, :meth:`~appliance.config.Config.with_reply_tokens`).
    Recording (when the session has a folder): ``input.wav`` and ``output.wav`` (16 kHz
    mono) are written when the pipeline ends, and each utterance the ASR transcribed as it
    ends, ``utterances/NNN.wav``, named in its ``asr`` event (a replay hears them again:
    :mod:`appliance.forms.replay`).
    """
    cfg = cfg or runtime.cfg
    clips = iter(range(1, 1_000_000))

    def on_final(result, audio: bytes):
        if line is not None:
            line.transcribed(result.words)
        clip = None
        if session.folder is not None and result.text:
            clip = f"utterances/{next(clips):03d}.wav"
            write_wav(session.folder / clip, audio, SAMPLE_RATE_HZ)
        session.events.emit(
            "asr",
            audio_s=round(result.audio_s, 3),
            compute_s=round(result.compute_s, 3),
            no_speech_prob=round(result.no_speech_prob, 3),
            clip=clip,
        )

    agent = line is not None
    stt = StreamingSTTService(
        runtime.asr,
        cfg.turn.interim_every_ms,
        interim_asr=runtime.interim_asr,
        spelling_asr=runtime.spelling_asr,
        on_final=on_final,
        early_final_ms=cfg.turn.early_final_ms,
        quiet_interim_every_ms=cfg.turn.quiet_interim_every_ms,
        eager=cfg.turn.speculate and not agent,
    )
    activity = VoiceActivity()  # what the VAD hears now: written by the VAD, read by the playout
    vad = ListeningSileroVAD(
        activity,
        params=VADParams(
            confidence=cfg.vad.confidence,
            start_secs=cfg.vad.start_ms / 1000,
            stop_secs=cfg.vad.stop_ms / 1000,
            min_volume=cfg.vad.min_volume,
        ),
    )
    session.context = LLMContext()
    aggregators = LLMContextAggregatorPair(
        session.context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=vad,
            user_turn_strategies=turn_strategies(cfg.turn, agent=agent, report=session.events.emit),
            user_turn_stop_timeout=cfg.turn.user_turn_timeout_ms / 1000,
        ),
    )
    # the plain assistant answers with llm.slow when it is set, and the fast llm acknowledges meanwhile
    slow = None if agent else runtime.llms.slow
    answers = slow or runtime.llms.main
    llm = line or RetryingOpenAILLMService(
        max_retries=cfg.llm.max_retries,
        api_key=answers.api_key,
        base_url=answers.base_url,
        settings=OpenAILLMService.Settings(
            model=answers.model,
            max_tokens=cfg.llm.max_tokens,
            temperature=cfg.llm.temperature,
            system_instruction=system_prompt or spoken_prompt(cfg.llm.system_prompt),
        ),
    )
    if cfg.tts.provider == "piper":
        tts = PiperClauseTTSService(runtime.synth, cfg.tts)
    else:
        tts = FishClauseTTSService(cfg.tts, runtime.fish_api_key)
    apology = [] if agent else [LLMApology(llm, session.events.emit)]  # a line is no LLM: nothing to apologise for
    ack = acknowledger(runtime, agent, session)
    relevant_ack = (
        [RelevantAck(runtime.llm("ack"), runtime.synth, report=session.events.emit)]
        if slow is not None and runtime.synth is not None
        else []
    )
    processors = [
        transport.input(),
        *([RecordingConsent(session)] if session.pending is not None else []),  # RecordingChoiceFrame ↓ ends here
        stt,
        aggregators.user(),  # its VAD writes `activity`; BargeInStart: BackchannelFrame ↓
        *relevant_ack,  # llm.slow: AckAudioRawFrame ↓ (through the LLM and the TTS)
        *apology,
        llm,  # a line: AcknowledgeFrame ↓
        SpeakableTextProcessor(cfg.tts.first_clause_words, cfg.tts.max_clause_words),
        tts,  # PlayoutAheadFrame ↑ ends here: Piper keeps pace with playback
        *([] if ack is None else [ack]),  # AcknowledgeFrame ↓ ends here
        # BackchannelFrame ↓ releases a yielding bot; reads `activity`; PlayoutAheadFrame ↑, BargeInFrame ↓
        Playout(cfg.turn, cfg.vad.start_ms, report=session.events.emit, activity=activity),
        transport.output(),  # BargeInFrame → the page; a clause's text only after its audio
        *([] if line is None else [line.played]),
        *([] if not (session.folder or session.pending) else [_recorder(session)]),
        aggregators.assistant(),
    ]
    task = PipelineWorker(
        Pipeline(processors),
        params=PipelineParams(enable_metrics=True),
        observers=[TurnObserver(session.events, cfg.vad.stop_ms)],
    )
    return task


def _recorder(session: Session) -> AudioBufferProcessor:
    """Records the session into ``session.recorder``: ``input.wav`` and ``output.wav`` in
    its folder when the pipeline ends; from the start, or (the person chooses later:
    ``session.pending``) from :class:`RecordingConsent`'s start on."""
    session.recorder = AudioBufferProcessor(
        sample_rate=16_000, num_channels=1, auto_start_recording=session.folder is not None
    )

    @session.recorder.event_handler("on_track_audio_data")
    async def _save(_proc, user_pcm: bytes, bot_pcm: bytes, sample_rate: int, _channels: int):
        if session.folder is not None:
            write_wav(session.folder / "input.wav", user_pcm, sample_rate)
            write_wav(session.folder / "output.wav", bot_pcm, sample_rate)

    return session.recorder


class RecordingConsent(FrameProcessor):
    """A WebSocket client's choice (:class:`~appliance.voice.decisions.RecordingChoiceFrame`,
    from its ``format`` event): the session records from now on (:meth:`Session.choose`;
    the recorder starts) or stores nothing. Audio and events before the choice are never stored."""

    def __init__(self, session: Session):
        super().__init__()
        self._session = session

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, RecordingChoiceFrame):
            if self._session.choose(frame.record) and self._session.recorder is not None:
                await self._session.recorder.start_recording()
            self._session.events.emit(
                "recording_notice",
                recorded=self._session.folder is not None,
                folder=str(self._session.folder) if self._session.folder else None,
            )
            return
        await self.push_frame(frame, direction)


def acknowledger(runtime: VoiceRuntime, agent: bool, session: Session) -> Acknowledger | None:
    """The session's "never silent when slow" (``turn.ack``; see :mod:`appliance.voice.acks`),
    or None when it is off or there is no embedded voice to say it."""
    turn = runtime.cfg.turn
    audio = runtime.ack_audio() if turn.ack != "off" else None
    if audio is None:
        return None
    every_turn = turn.ack == "on" or runtime.cfg.llm.provider != "embedded"
    if not (every_turn or agent):
        return None
    return Acknowledger(audio[0], audio[1], turn.ack_after_ms, every_turn, report=session.events.emit)


async def run_task(task: PipelineWorker) -> None:
    """Run one pipeline task to its end (pipecat's ``WorkerRunner``; no signal handlers)."""
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(task)
    await runner.run()
