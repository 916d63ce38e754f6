"""Local ASR engines (Whisper or Moonshine, by config: ``asr.engine``, ``asr.spelling_engine``,
``asr.interim_engine``) as a pipecat STT service: interim transcripts while the person
speaks (the barge-in ear's engine), the final one at the VAD stop (the conversation's
engine, or the spelling pass's while a spelling is expected), and
that final often ready *at* the VAD stop — announced even before it as pipecat's eager end
of turn, so the LLM can start on it (``voice/turns.py``).

Pure helpers on 16 kHz s16 mono PCM (how loud each 20 ms window is; whether the person has
probably stopped) under one ``SegmentedSTTService`` subclass, which only schedules
transcriptions of the utterance so far.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import AsyncGenerator, Callable

import numpy as np
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    Frame,
    InputAudioRawFrame,
    InterimTranscriptionFrame,
    SystemFrame,
    TranscriptionFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.settings import STTSettings
from pipecat.services.stt_service import SegmentedSTTService
from pipecat.turns.eager_end_of_turn_mixin import EagerEndOfTurnSTTServiceMixin
from pipecat.utils.time import time_now_iso8601

from appliance.voice.asr import SAMPLE_RATE_HZ, ASREngine, Transcript, pcm16_to_float

_WINDOW_SAMPLES = SAMPLE_RATE_HZ // 50  # 20 ms
_PREROLL_BYTES = SAMPLE_RATE_HZ * 2  # 1 s kept before the VAD start, as SegmentedSTTService keeps it
_RECENT_BYTES = SAMPLE_RATE_HZ * 2 * 4  # the early final compares the trailing quiet with the last 4 s
#: while the bot speaks, no interim before this long after the VAD start (itself ``vad.start_ms`` into the
#: speech): "stop" or "wait" is 0.3–0.4 s long, and a yielding bot (voice/playout.py) waits for that word
FIRST_INTERIM_MS = 150
#: ... and from then on one as soon as a word ends: this much quiet after speech not yet transcribed (a
#: stop consonant's closure inside "stop" is shorter: cut there, "Stop" is heard as "Star")
WORD_END_MS = 100


@dataclass
class ASRContextFrame(SystemFrame):
    """Words the person may say again (an agent's line pushes it upstream: their names as
    heard, or the spelling alphabet): :class:`StreamingSTTService` transcribes after them
    from now on (the ASR's ``context``); ``''`` clears it. ``spelling``: a spelling is
    expected, so the finals from now on are the spelling pass's (its own engine)."""

    context: str
    spelling: bool = False


def window_rms(pcm: bytes) -> np.ndarray:
    """RMS of each whole 20 ms window of 16 kHz s16 mono ``pcm``: shape ``(n_windows,)``,
    in int16 units (0–32768); a partial last window is left out."""
    a = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
    n = len(a) // _WINDOW_SAMPLES
    if not n:
        return np.zeros(0, np.float32)
    return np.sqrt((a[: n * _WINDOW_SAMPLES].reshape(n, _WINDOW_SAMPLES) ** 2).mean(axis=1))


#: Quiet = a 20 ms window's RMS under this share of the utterance's loudest (−30 dB): the
#: end of a fricative ("France", "yes") is ~−20 dB and must not count as the speech's end.
QUIET_RATIO = 1 / 32


def trailing_silence(pcm: bytes, window_ms: int = 120) -> bool:
    """Whether the last ``window_ms`` of an utterance (16 kHz s16 mono, ≥ 200 ms long) stay
    under :data:`QUIET_RATIO` of its loudest 20 ms window (RMS): the person has probably stopped."""
    rms = window_rms(pcm)
    if len(rms) < 10:
        return False
    return bool(rms[-max(1, window_ms // 20) :].max() < rms.max() * QUIET_RATIO)


def quiet_after(pcm: bytes, offset: int) -> bool:
    """Whether everything from byte ``offset`` of ``pcm`` on (16 kHz s16 mono) stays under
    :data:`QUIET_RATIO` of the loudest 20 ms window before it; nothing after ``offset``
    counts as quiet."""
    before, after = window_rms(pcm[:offset]), window_rms(pcm[offset - offset % 2 :])
    return len(before) > 0 and (len(after) == 0 or bool(after.max() < before.max() * QUIET_RATIO))


class StreamingSTTService(EagerEndOfTurnSTTServiceMixin, SegmentedSTTService):
    """STT over local ASR engines (Whisper or Moonshine) with interim transcripts while
    the person speaks and a final one at the VAD stop. Input audio: 16 kHz mono s16.

    Engines: ``asr`` transcribes the finals (and early finals), ``spelling_asr`` instead of
    it while the last :class:`ASRContextFrame` said a spelling is expected, ``interim_asr``
    the interims (each ``asr`` when not given; one worker thread runs them all, one call at a
    time). An interim at a word's end is reused as the early final (below) only when the
    interim engine is the final's.

    Interims: while the bot speaks (they decide a barge-in) the utterance so far is
    re-transcribed as soon as a word ends (:data:`WORD_END_MS` of quiet after speech not yet
    transcribed, from :data:`FIRST_INTERIM_MS` after the VAD start on: "Stop." is decided in
    its own pause) and otherwise every ``interim_every_ms`` (the first ``interim_every_ms``
    after the VAD start), and an ``InterimTranscriptionFrame`` is pushed when its text
    changed. While the bot is quiet (the page's live transcript line) one runs every
    ``quiet_interim_every_ms`` (0: none) while the person is audibly speaking, never in a pause
    that may be the end; on 2 cores one still in flight when the person stops would hold up the
    early final by a whole ASR call, so when nothing was said after the audio it covers, the
    early final *is* that interim's transcription (same engine only), not a second call. Final: a
    ``TranscriptionFrame`` (``finalized``) for the whole VAD segment, empty (``''``) for
    silence or noise (pipecat's user aggregator adds nothing for it; the turn strategies
    learn that the segment is done). Early final: once the end of the utterance has been
    quiet for ``early_final_ms`` (the VAD needs ``vad.stop_ms`` of silence to decide), it
    is transcribed at once; if the segment pipecat hands over at the VAD stop begins with
    exactly that audio and the rest is still quiet, that transcript *is* the final one
    (the same speech, less trailing silence), ready at the VAD stop instead of one ASR call
    later. While the bot speaks the interim at a word's end is that early final (announced
    as an interim, never as the eager end of turn): one ASR call per pause, where two would
    queue on the barge-in's path, and a "Stop." followed by silence is final when the VAD
    stops, with no second call. When it is ready before the VAD stop it is pushed as pipecat's eager end of turn
    (``EagerTranscriptionFrame``, with ``eager=True``), and withdrawn
    (``EagerEndOfTurnCancelFrame``) if the person goes on. ``on_final`` (optional) receives
    each final's :class:`~appliance.voice.asr.Transcript`, empty ones included, and the
    utterance it transcribed (16 kHz s16 mono PCM).

    The utterance so far is this service's own copy, kept from pipecat's public hooks
    (``process_audio_frame`` and the VAD frames) by the rule ``SegmentedSTTService``
    applies to its private buffer: grow while the person speaks, else keep the last second.
    """

    _TICK_S = 0.04

    def __init__(
        self,
        asr: ASREngine,
        interim_every_ms: int,
        on_final: Callable[[Transcript, bytes], None] | None = None,
        early_final_ms: int = 120,
        eager: bool = False,
        quiet_interim_every_ms: int = 0,
        interim_asr: ASREngine | None = None,
        spelling_asr: ASREngine | None = None,
        **kwargs,
    ):
        super().__init__(
            sample_rate=SAMPLE_RATE_HZ,
            trailing_silence_secs=0.0,
            enable_eager_end_of_turn=eager,
            settings=STTSettings(model=asr.cfg.model, language=None),
            ttfs_p99_latency=1.0,
            **kwargs,
        )
        self._asr = asr
        self._interim_asr = interim_asr or asr
        self._spelling_asr = spelling_asr or asr
        self._spelling = False  # the last ASRContextFrame's
        self._interim_every_s = interim_every_ms / 1000
        self._early_final_ms = early_final_ms
        self._quiet_interim_every_s = quiet_interim_every_ms / 1000
        self._interim: tuple[bytes, asyncio.Future] | None = None  # the interim in flight while the bot is quiet
        self._on_final = on_final
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asr")
        self._utterance = bytearray()
        self._speaking = False
        self._bot_speaking = False
        self._interim_task: asyncio.Task | None = None
        self._early: tuple[bytes, asyncio.Future] | None = None  # (audio covered, its transcription)
        self._early_final: tuple[bytes, asyncio.Future] | None = None  # the early one at the last VAD stop
        self._context = ""  # the last ASRContextFrame's

    @property
    def wants_wav_segments(self) -> bool:
        return False

    async def cleanup(self):
        await super().cleanup()
        self._early = self._drop(self._early)
        self._early_final = self._drop(self._early_final)
        self._executor.shutdown(wait=True, cancel_futures=True)

    @staticmethod
    def _drop(early: tuple[bytes, asyncio.Future] | None) -> None:
        """Cancel ``early``'s transcription (if any); returns None, for the slot that held it."""
        if early is not None:
            early[1].cancel()

    @property
    def _final_asr(self) -> ASREngine:
        """The engine of the finals now: the spelling pass's while a spelling is expected."""
        return self._spelling_asr if self._spelling else self._asr

    def _transcribe(self, pcm: bytes, asr: ASREngine) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self._executor, asr.transcribe, pcm16_to_float(pcm), self._context)

    async def process_audio_frame(self, frame: InputAudioRawFrame, direction: FrameDirection):
        await super().process_audio_frame(frame, direction)
        self._utterance += frame.audio
        if not self._speaking:
            del self._utterance[:-_PREROLL_BYTES]
        elif self._early is None and not self._bot_speaking and len(self._utterance) >= SAMPLE_RATE_HZ:  # ≥ 0.5 s
            recent = bytes(self._utterance[-_RECENT_BYTES:])
            if trailing_silence(recent, self._early_final_ms):  # the person has probably stopped
                pcm = bytes(self._utterance)
                interim = self._interim
                if interim is not None and self._interim_asr is self._final_asr and quiet_after(pcm, len(interim[0])):
                    early = self._early = interim  # the interim heard all that was said: no second call
                else:
                    early = self._early = (pcm, self._transcribe(pcm, self._final_asr))
                self.create_task(self._announce(early), "early_final")

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        if isinstance(frame, ASRContextFrame):
            self._context, self._spelling = frame.context, frame.spelling
        if isinstance(frame, (BotStartedSpeakingFrame, BotStoppedSpeakingFrame)):
            self._bot_speaking = isinstance(frame, BotStartedSpeakingFrame)
        if isinstance(frame, VADUserStoppedSpeakingFrame):
            if self._interim_task is not None:
                await self.cancel_task(self._interim_task)
                self._interim_task = None
            self._speaking = False
            self._utterance.clear()
            self._drop(self._early_final)  # not taken by its run_stt: a segment was not transcribed yet
            self._early_final, self._early = self._early, None
        await super().process_frame(frame, direction)
        if isinstance(frame, VADUserStartedSpeakingFrame) and self._interim_task is None:
            self._speaking = True
            self._early = self._drop(self._early)
            self._interim_task = self.create_task(self._interims())

    async def _announce(self, early: tuple[bytes, asyncio.Future]) -> None:
        """Push ``early``'s transcript as the eager end of turn if it is ready while the
        person is still (by the VAD) speaking and nothing has made it stale."""
        await asyncio.wait({early[1]})
        if early[1].cancelled() or early[1].exception() is not None:
            return
        if self._early is early and self._speaking and early[1].result().text:
            await self._push_eager_end_of_turn(early[1].result().text, user_id=self._user_id)

    async def _interims(self):
        loop = asyncio.get_running_loop()
        started = loop.time()
        last_text, last_t, last_len = "", started, 0  # the last interim: its text, when, how much audio it covered
        while True:
            await asyncio.sleep(self._TICK_S)
            pcm = bytes(self._utterance)
            if len(pcm) < SAMPLE_RATE_HZ:  # < 0.5 s: nothing useful yet
                continue
            if self._early is not None:
                if quiet_after(pcm, len(self._early[0])):
                    continue  # the early final still covers the utterance
                self._early = self._drop(self._early)  # speech went on: that early transcript is stale
                await self._cancel_eager_end_of_turn()
            paused, word = trailing_silence(pcm, WORD_END_MS), False
            if self._bot_speaking:
                # a word just ended (speech since the last interim, then a pause) or it is time for one
                word = paused and loop.time() - started >= FIRST_INTERIM_MS / 1000 and not quiet_after(pcm, last_len)
                # (a tick with nothing said since the last interim has nothing new to hear)
                due = word or (loop.time() - last_t >= self._interim_every_s and not quiet_after(pcm, last_len))
            else:  # the page's live line, while the person is audibly speaking: a pause may be the end
                due = (
                    self._quiet_interim_every_s > 0
                    and not paused
                    and loop.time() - last_t >= self._quiet_interim_every_s
                    and not quiet_after(pcm, last_len)
                )
            if not due:
                continue
            last_t, last_len = loop.time(), len(pcm)
            if word and self._interim_asr is self._final_asr:  # the pause's transcript is also the segment's
                # early final: if the VAD stops here, the final reuses it (shielded: the VAD stop cancels this
                # task, not the transcription)
                early = self._early = (pcm, self._transcribe(pcm, self._interim_asr))
                result = await asyncio.shield(early[1])
            elif not self._bot_speaking:  # the early final may take it over (shielded, as above)
                interim = self._interim = (pcm, self._transcribe(pcm, self._interim_asr))
                try:
                    result = await asyncio.shield(interim[1])
                finally:
                    if self._interim is interim:
                        self._interim = None
            else:
                result = await self._transcribe(pcm, self._interim_asr)
            if result.text and result.text != last_text and self._speaking:
                last_text = result.text
                await self.push_frame(InterimTranscriptionFrame(result.text, self._user_id, time_now_iso8601()))

    async def run_stt(self, audio: bytes) -> AsyncGenerator[Frame, None]:
        early, self._early_final = self._early_final, None
        if early is not None and audio.startswith(early[0]) and quiet_after(audio, len(early[0])):
            result = await early[1]
        else:
            self._drop(early)
            result = await self._transcribe(audio, self._final_asr)
        if self._on_final:
            self._on_final(result, audio)
        self._clear_eager_end_of_turn()
        # an empty final too: the turn strategies learn that this segment said nothing
        yield TranscriptionFrame(result.text, self._user_id, time_now_iso8601(), finalized=True)
