"""The bot's audio on its way out, so that a barge-in can stop it at once and a false one
(a backchannel, a cough, a knock, a tone) lets it go on.

:class:`Playout` sits between TTS and the output transport. It forwards the bot's audio
paced ``lead_ms`` ahead of real time (pipecat's transport would otherwise queue a whole
clause, which nothing could take back), and keeps what it forwarded in the last seconds.

Barge-in, decided in two steps:

1. **Yield** (a transport with a page) — the person may be interrupting. The page's own
   speech detector (an AudioWorklet on the microphone, ``webrtc_page/onset-worklet.js``)
   lowers the bot there within tens of ms (−10.5 dB: still heard, as a speaker yields when
   someone starts to talk) and sends ``{"type": "duck"}`` over the WebRTC data channel. The
   server goes on sending: nothing can tell "mm-hm" from "stop" before a word of it is
   recognised, and silencing the bot for that long is what makes a backchannel a stop. If,
   :data:`NOISE_CHECK_MS` after the sound reached the server (the microphone's audio comes
   later than the data channel's message), the VAD is not hearing anything speech-like
   (:class:`~appliance.voice.decisions.VoiceActivity`: quiet, not even starting), or it goes back to quiet before
   its start (a knock, a cough, a tone, music), the page is told ``released``.
   A page's session is never paused by the VAD (at the page that is a stop): a sound its
   detector missed, or a duck released before the speech was heard, leaves the bot at its
   level until the words decide.
   **Pause** (a transport without a page: its VAD start) — no more audio goes out, and what
   was sent but not yet heard goes back to the front of the queue,
   ``turn.resume_overlap_ms`` earlier still, so the bot picks up a little before the cut.
2. **Confirm or release** — pipecat's user-turn start strategy decides
   (:class:`~appliance.voice.turns.BargeInStart`): a transcript that takes the turn
   interrupts (``InterruptionFrame``: the queue is dropped, LLM and TTS cancelled, the
   context trimmed), and the page is told ``confirmed`` (it mutes what is still in flight);
   a backchannel ("mm-hm", "yeah", from the early final on: a
   :class:`~appliance.voice.decisions.BackchannelFrame`), or no decision within
   ``turn.barge_in_max_pause_ms``, releases: the page is told ``released`` and the bot's
   level comes back (a paused bot resumes where it was).

An acknowledgement (:class:`~appliance.voice.acks.AckAudioRawFrame`) still queued when the
answer's audio arrives is dropped, and one that arrives after the answer's audio (since the
person's turn last ended) too. At each change of the audio it holds or sent on ahead,
the playout pushes a :class:`~appliance.voice.decisions.PlayoutAheadFrame` upstream: the
TTS keeps pace with what is heard.

Messages to the page: :class:`~appliance.voice.decisions.BargeInFrame`
(``{"type": "barge_in", "state": "ready" | "confirmed" | "released"}``; dropped by
transports without a data channel); the page ducks only once it has had ``ready``, so a
pipeline without a Playout (the benchmark's stock pipecat) is never ducked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import deque
from typing import Callable

import numpy as np
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADState
from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    StartFrame,
    SystemFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.config import TurnConfig
from appliance.voice.acks import AckAudioRawFrame
from appliance.voice.decisions import BackchannelFrame, BargeInFrame, BargeInState, PlayoutAheadFrame, VoiceActivity

log = logging.getLogger(__name__)

NOISE_CHECK_MS = 100  # after a ducked sound reached the server, when the VAD is asked whether it is speech
NOISE_MAX_MS = 450  # ... and the longest it may stay "starting" before the duck counts as noise
SOUND_WAIT_MS = 400  # the longest wait for the page's sound in the microphone's audio
SOUND_RMS = 0.003 * 32768  # −50 dBFS: the sound has reached the server
SETTLE_MS = 3000  # after the person stops, how long the start strategy may take to decide (a loaded ASR)
PAGE_LATENCY_MS = 80  # audio the transport sends is heard at the page about this much later
_HISTORY_S = 4.0


class ListeningSileroVAD(SileroVADAnalyzer):
    """pipecat's Silero VAD analyzer, writing what it hears into ``activity`` at each
    analysis (the playout reads it there; ``kwargs``: ``SileroVADAnalyzer``'s)."""

    def __init__(self, activity: VoiceActivity, **kwargs):
        super().__init__(**kwargs)
        self._activity = activity

    async def analyze_audio(self, buffer: bytes) -> VADState:
        state = await super().analyze_audio(buffer)
        self._activity.state = state
        return state


def _duration_s(frame: OutputAudioRawFrame) -> float:
    return len(frame.audio) / 2 / frame.sample_rate / max(1, frame.num_channels)


class Playout(FrameProcessor):
    """Paces the bot's audio to the transport and pauses, resumes or drops it on barge-in.

    ``turn``: ``barge_in`` (off: ducks are released at once, the VAD never pauses),
    ``barge_in_max_pause_ms``, ``resume_overlap_ms``. ``vad_start_ms``: the VAD's
    ``start_ms`` (its start comes that long after the onset). ``activity``: what the
    session's VAD hears now (:class:`~appliance.voice.decisions.VoiceActivity`, written by
    :class:`ListeningSileroVAD`; None: a duck waits ``start_ms`` + :data:`NOISE_CHECK_MS`
    for the VAD's start). ``report(event, **fields)``:
    ``duck`` (the page lowered the bot), ``pause`` (the VAD's start stopped it; rewound_ms),
    ``duck_released`` (why, after_ms), ``barge_in_confirmed`` (after_ms).

    Frames in: the bot's audio; ``InputTransportMessageFrame`` ``{"type": "duck"}`` from
    the page; the VAD's, the turn's and the interruption's frames;
    :class:`~appliance.voice.decisions.BackchannelFrame` (releases a paused or ducked bot).
    Frames out: the audio, paced; :class:`~appliance.voice.decisions.BargeInFrame` to the
    page; :class:`~appliance.voice.decisions.PlayoutAheadFrame` upstream to the TTS.
    """

    def __init__(
        self,
        turn: TurnConfig,
        vad_start_ms: int,
        report: Callable[..., None] | None = None,
        lead_ms: int = 150,
        activity: VoiceActivity | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._turn = turn
        self._vad_start_s = vad_start_ms / 1000
        self._activity = activity
        self._report = report or (lambda *_a, **_k: None)
        self._lead_s = lead_ms / 1000
        self._queue: deque[Frame] = deque()
        self._history: deque[tuple[float, OutputAudioRawFrame]] = deque()  # (transport play start, frame)
        self._play_end = 0.0  # loop time when the audio sent so far has been played by the transport
        self._changed = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._ducked_at: float | None = None  # loop time of the page's duck (lowered there, not here)
        self._sound_at: float | None = None  # when the ducked-for sound reached us in the mic's audio
        self._paused_at: float | None = None  # loop time of the pause
        self._speech = False  # the VAD hears the person
        self._page = False  # a page ducks for this session: the VAD's start never pauses the bot (that is a stop there)
        self._timer: asyncio.Task | None = None
        self._answered = False  # answer audio came since the person's turn last ended

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def _tell_ahead(self) -> None:
        """Tell the TTS how much of the bot's audio is taken in and not yet played by the
        transport: what was sent on ahead of real time, and what is queued here."""
        queued = sum(_duration_s(f) for f in self._queue if isinstance(f, OutputAudioRawFrame))
        sent = max(0.0, self._play_end - self._now())
        await self.push_frame(PlayoutAheadFrame(sent_s=sent, queued_s=queued), FrameDirection.UPSTREAM)

    def _playing(self) -> bool:
        """Bot audio is going out or about to."""
        return self._play_end > self._now() - 0.1 or any(isinstance(f, OutputAudioRawFrame) for f in self._queue)

    # --- frames -----------------------------------------------------------------------
    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if direction == FrameDirection.UPSTREAM:
            await self.push_frame(frame, direction)
            return
        if isinstance(frame, StartFrame):
            await self.push_frame(frame, direction)
            self._task = self.create_task(self._forward(), "playout")
            await self._tell_page("ready")  # the page ducks only for a server that answers
            return
        if isinstance(frame, CancelFrame):
            await self._stop()
            await self.push_frame(frame, direction)
            return
        if isinstance(frame, InputAudioRawFrame):
            if self._ducked_at is not None and self._sound_at is None and _rms(frame.audio) > SOUND_RMS:
                self._sound_at = self._now()
            await self.push_frame(frame, direction)
            return
        if isinstance(frame, SystemFrame):
            await self._on_system(frame)
            if not (isinstance(frame, InputTransportMessageFrame) and _is_duck(frame.message)):
                await self.push_frame(frame, direction)
            return
        if isinstance(frame, EndFrame) and (self.paused or self._ducked_at is not None):
            await self._release("the session ends")
        if isinstance(frame, AckAudioRawFrame) and self._answered:
            return  # the answer came first: an acknowledgement now would cut into it
        if isinstance(frame, OutputAudioRawFrame) and not isinstance(frame, AckAudioRawFrame):
            # the answer is here: an acknowledgement still waiting is dropped, never played before it
            self._queue = deque(f for f in self._queue if not isinstance(f, AckAudioRawFrame))
            self._answered = True
        self._queue.append(frame)
        self._changed.set()
        if isinstance(frame, OutputAudioRawFrame):
            await self._tell_ahead()

    async def _on_system(self, frame: Frame) -> None:
        if isinstance(frame, InterruptionFrame):
            # a page mutes what is still in flight, whether it ducked for this or not
            heard = self.paused or self._ducked_at is not None or (self._page and self._playing())
            self._queue = deque(f for f in self._queue if not f.interruptible)
            self._history.clear()
            self._play_end = 0.0
            if heard:
                await self._confirm()
            self._changed.set()
            await self._tell_ahead()
        elif isinstance(frame, InputTransportMessageFrame) and _is_duck(frame.message):
            await self._on_duck()
        elif isinstance(frame, BackchannelFrame):
            if self.paused or self._ducked_at is not None:  # the words did not take the turn: go on
                self._arm(0.0, "backchannel")
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self._speech = True
            if self.paused or self._ducked_at is not None:  # a yielding bot goes on until the words decide
                self._arm(self._turn.barge_in_max_pause_ms / 1000, "no decision")
            elif self._turn.barge_in and self._playing() and not self._page:  # a page ducks for itself
                await self._pause(self._now() - self._vad_start_s - 0.03)
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            self._speech = False
            if self.paused or self._ducked_at is not None:
                self._arm(SETTLE_MS / 1000, "no decision after the speech")
        elif isinstance(frame, UserStoppedSpeakingFrame):
            self._answered = False  # a new turn: its answer is still to come
        elif isinstance(frame, UserStartedSpeakingFrame) and self.paused and not self._turn.barge_in:
            await self._release("barge-in is off")

    async def _on_duck(self) -> None:
        self._page = True
        if not (self._turn.barge_in and self._playing()):
            await self._tell_page("released")
            return
        if self.paused or self._ducked_at is not None:
            return
        self._ducked_at, self._sound_at = self._now(), None
        self._report("duck")
        if self._speech:  # the VAD already hears the person: the words decide
            self._arm(self._turn.barge_in_max_pause_ms / 1000, "no decision")
        else:
            self._cancel_timer()
            self._timer = self.create_task(self._noise_or_speech(), "playout-noise")

    async def _noise_or_speech(self) -> None:
        """Release a duck the VAD does not hear as speech (its start leaves it to the words)."""
        if self._activity is None:
            await asyncio.sleep(self._vad_start_s + NOISE_CHECK_MS / 1000)
        else:
            waited = 0
            while self._sound_at is None and waited < SOUND_WAIT_MS:
                await asyncio.sleep(0.01)
                waited += 10
            await asyncio.sleep(NOISE_CHECK_MS / 1000)
            waited = NOISE_CHECK_MS
            while self._activity.state == VADState.STARTING and waited < NOISE_MAX_MS:
                await asyncio.sleep(0.02)
                waited += 20
        self._timer = None
        # the VAD's own state too: its start frame reaches this processor only after the pipeline's queues
        heard = self._speech or (self._activity is not None and self._activity.state != VADState.QUIET)
        if not heard and not self.paused:
            await self._release("no speech")

    # --- pause, release, confirm --------------------------------------------------------
    async def _pause(self, heard_until: float) -> None:
        """Stop sending; what was sent to be heard after ``heard_until`` (less the overlap)
        goes back to the front of the queue."""
        self._paused_at = self._now()
        cut = heard_until - (self._turn.resume_overlap_ms + PAGE_LATENCY_MS) / 1000
        back = [dataclasses.replace(f) for start, f in self._history if start + _duration_s(f) > cut]
        self._queue.extendleft(reversed(back))
        self._history.clear()
        self._play_end = 0.0
        self._report("pause", rewound_ms=round(sum(_duration_s(f) for f in back) * 1000))
        self._arm(self._turn.barge_in_max_pause_ms / 1000, "no decision")
        self._changed.set()
        await self._tell_ahead()

    async def _release(self, why: str) -> None:
        if not (self.paused or self._ducked_at is not None):
            return
        after_ms = round((self._now() - (self._ducked_at or self._paused_at)) * 1000)
        self._paused_at = self._ducked_at = None
        self._cancel_timer()
        self._report("duck_released", why=why, after_ms=after_ms)
        await self._tell_page("released")
        self._changed.set()

    async def _confirm(self) -> None:
        since = self._ducked_at or self._paused_at
        after_ms = round((self._now() - since) * 1000) if since is not None else None
        self._paused_at = self._ducked_at = None
        self._cancel_timer()
        self._report("barge_in_confirmed", after_ms=after_ms)
        await self._tell_page("confirmed")

    async def _tell_page(self, state: BargeInState) -> None:
        await self.push_frame(BargeInFrame(state=state))

    def _arm(self, delay_s: float, why: str) -> None:
        """Release after ``delay_s`` unless something decides first (replaces the timer)."""
        self._cancel_timer()
        self._timer = self.create_task(self._release_after(delay_s, why), "playout-release")

    async def _release_after(self, delay_s: float, why: str) -> None:
        await asyncio.sleep(delay_s)
        self._timer = None
        await self._release(why)

    def _cancel_timer(self) -> None:
        if self._timer is not None and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None

    # --- forwarding -----------------------------------------------------------------------
    async def _forward(self) -> None:
        while True:
            if not self._queue or (self.paused and isinstance(self._queue[0], OutputAudioRawFrame)):
                self._changed.clear()
                await self._changed.wait()
                continue
            frame = self._queue[0]
            if isinstance(frame, OutputAudioRawFrame):
                now = self._now()
                ahead = self._play_end - now
                if ahead > self._lead_s:
                    self._changed.clear()
                    try:
                        await asyncio.wait_for(self._changed.wait(), ahead - self._lead_s)
                    except TimeoutError:
                        pass
                    continue
                start = max(now, self._play_end)
                self._play_end = start + _duration_s(frame)
                self._history.append((start, frame))
                while self._history and self._history[0][0] < now - _HISTORY_S:
                    self._history.popleft()
            self._queue.popleft()
            if isinstance(frame, OutputAudioRawFrame):
                await self._tell_ahead()
            await self.push_frame(frame)
            if isinstance(frame, EndFrame):
                return

    async def _stop(self) -> None:
        self._cancel_timer()
        if self._task is not None:
            await self.cancel_task(self._task)
            self._task = None

    async def cleanup(self):
        await super().cleanup()
        await self._stop()


def _rms(pcm: bytes) -> float:
    a = np.frombuffer(pcm, np.int16).astype(np.float32)
    return float(np.sqrt((a * a).mean())) if len(a) else 0.0


def _is_duck(message) -> bool:
    return isinstance(message, dict) and message.get("type") == "duck"
