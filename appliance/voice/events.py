"""A session's event log and the observer that writes each turn's events and latencies into it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    EagerTranscriptionFrame,
    InterimTranscriptionFrame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    MetricsFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSTextFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import TTFBMetricsData, TurnMetricsData
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.transports.base_output import BaseOutputTransport

from appliance.protocol.events import check
from appliance.voice.acks import AckAudioRawFrame
from appliance.voice.markers import strip_markers


class EventLog:
    """A session's event log: JSONL lines ``{"t_ms", "ts", "event", ...}`` appended and
    flushed per event; ``t_ms`` is ms since the session started (monotonic), ``ts`` ms
    since the Unix epoch. Listeners (the page's event socket) get each event as a dict.
    Each event is checked against its model in :data:`~appliance.protocol.events.SESSION_EVENTS`
    before it is written; the record holds the fields as given.
    """

    def __init__(self, path: Path | None):
        self._t0 = time.monotonic()
        self._fh = open(path, "a", buffering=1) if path else None
        self.listeners: list[Callable[[dict], None]] = []
        self.events: list[dict] = []

    def now_ms(self) -> float:
        return (time.monotonic() - self._t0) * 1000

    def emit(self, event: str, **fields) -> dict:
        """Write ``event`` with ``fields`` and hand it to the listeners; the record is returned.

        Raises:
            EventError: ``event`` is not a registered session event, or ``fields`` do not fit its model.
        """
        check(event, fields)
        rec = {"t_ms": round(self.now_ms(), 1), "ts": int(time.time() * 1000), "event": event, **fields}
        self.events.append(rec)
        if self._fh:
            self._fh.write(json.dumps(rec) + "\n")
        for fn in list(self.listeners):
            fn(rec)
        return rec

    def attach(self, path: Path) -> None:
        """Write the events from now on to ``path`` as well (a session whose recording began
        after it opened: what came before is not stored)."""
        if self._fh is None:
            self._fh = open(path, "a", buffering=1)

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None


#: The stages of a turn, in order; the ``turn`` event gives each one's ms from the end of speech.
STAGES = ("early_final", "vad_stopped", "final_transcript", "llm_first_token", "tts_first_audio", "first_audio_sent")


class TurnObserver(BaseObserver):
    """Writes per-turn events and latencies (ms) to the :class:`EventLog`.

    Events: ``user_started_speaking``, ``early_final`` (the STT's early final transcript,
    before the VAD stop), ``smart_turn`` (Smart Turn's verdict at a VAD stop), ``llm_ttfb`` (pipecat's
    time to the LLM's first token of a request), ``vad_stopped`` (``speech_end_ms`` = VAD stop
    − ``vad.stop_ms``), ``interim_transcript``, ``final_transcript``, ``llm_first_token``,
    ``tts_first_audio``, ``first_audio_sent``, ``bot_text`` (what was spoken),
    ``interruption`` (a reply was cut: the bot was speaking or generating), ``bot_stopped``, ``llm_reply`` (the whole generated reply, which
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
        self._early: float | None = None  # when the STT's early final of this segment came
        self._last_vad: dict[type, float] = {}

    def _vad_copy(self, frame) -> bool:
        """Whether ``frame`` is the second copy of the VAD event just seen."""
        kind, now = type(frame), self._ev.now_ms()
        last = self._last_vad.get(kind)
        self._last_vad[kind] = now
        other = self._last_vad.get(
            VADUserStoppedSpeakingFrame if kind is VADUserStartedSpeakingFrame else VADUserStartedSpeakingFrame, -1e9
        )
        return last is not None and now - last < 1000 and last > other

    def _first_audio_sent(self) -> None:
        if "first_audio_sent" not in self._turn and "speech_end" in self._turn:
            self._mark("first_audio_sent")
            end = self._turn["speech_end"]
            self._ev.emit("turn", **{f"{k}_ms": round(self._turn[k] - end, 1) for k in STAGES if k in self._turn})

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
        if isinstance(f, (VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame)):
            # the user aggregator sends each VAD frame twice (upstream at once, downstream after
            # its queue): the first one gives the time
            if self._vad_copy(f):
                return
        if isinstance(f, VADUserStartedSpeakingFrame):
            self._early = None
            if self._bot_speaking:
                self._ev.emit("barge_in_detected")
            self._ev.emit("user_started_speaking")
        elif isinstance(f, VADUserStoppedSpeakingFrame):
            t = self._ev.now_ms()
            self._turn = {"vad_stopped": t, "speech_end": t - self._stop_ms}
            if self._early is not None:
                self._turn["early_final"] = self._early
            self._ev.emit("vad_stopped", speech_end_ms=round(t - self._stop_ms, 1))
        elif isinstance(f, MetricsFrame):
            for m in f.data:
                if isinstance(m, TurnMetricsData):
                    self._ev.emit(
                        "smart_turn",
                        complete=m.is_complete,
                        probability=round(m.probability, 3),
                        compute_ms=round(m.e2e_processing_time_ms, 1),
                    )
                elif isinstance(m, TTFBMetricsData) and "LLM" in m.processor and m.value > 0:
                    self._ev.emit("llm_ttfb", ttfb_ms=round(m.value * 1000, 1), processor=m.processor)
        elif isinstance(f, EagerTranscriptionFrame):
            self._early = self._ev.now_ms()
            self._ev.emit("early_final", text=f.text)
        elif isinstance(f, InterimTranscriptionFrame):
            self._ev.emit("interim_transcript", text=f.text)
        elif isinstance(f, TranscriptionFrame):
            if f.text.strip():  # an empty final: the segment said nothing
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
        elif isinstance(f, AckAudioRawFrame):
            self._turn.setdefault("ack", self._ev.now_ms())  # not the answer (reported as an ``ack``)
        elif isinstance(f, TTSAudioRawFrame):
            self._mark("tts_first_audio")
            if "ack" in self._turn and isinstance(data.destination, BaseOutputTransport):
                self._first_audio_sent()  # the bot was already talking: its start was the ack's
        elif isinstance(f, TTSTextFrame):
            self._ev.emit("bot_text", text=strip_markers(f.text))
        elif isinstance(f, BotStartedSpeakingFrame):
            self._bot_speaking = True
            if "ack" not in self._turn:
                self._first_audio_sent()
        elif isinstance(f, BotStoppedSpeakingFrame):
            self._bot_speaking = False
            self._ev.emit("bot_stopped")
        elif isinstance(f, InterruptionFrame):
            if self._bot_speaking or self._reply:  # pipecat interrupts at every turn start: only a cut counts
                self._ev.emit("interruption")
            if self._reply:  # generation was cut: log what had been generated
                self._ev.emit("llm_reply", text=strip_markers("".join(self._reply)), interrupted=True)
                self._reply = []
