"""Decisions as frames: what one processor of the voice pipeline decides and another acts on.

::

    user aggregator ──BackchannelFrame ↓──▶ Playout       words that did not take the turn: a yielding bot goes on
    LineProcessor ───AcknowledgeFrame ↓──▶ Acknowledger   a slow step begins: "One moment." if nothing comes
    TTS ◀──────────PlayoutAheadFrame ↑─── Playout         audio not yet heard: Piper keeps pace with it
    Playout ──────────BargeInFrame ↓──▶ output transport  ready | confirmed | released, to the page
    ListeningSileroVAD ── VoiceActivity ── Playout        the VAD's state between its frames (no frame)
    WebSocket input ──RecordingChoiceFrame ↓──▶ RecordingConsent   the client's choice: record from now on, or not

The frames are pipecat system frames (``SystemFrame``): each processor handles them at once (a TTS does not
queue them behind a clause's audio) and an interruption does not drop them (a backchannel
heard as the bot is cut still reaches the playout; the playout's figure after the cut still
reaches the TTS). :class:`VoiceActivity` is the one decision no frame carries in time: the VAD
runs inside pipecat's user aggregator, whose frames say only that speech started
(``vad.start_ms`` after its onset) or stopped, while the playout must know within
``NOISE_CHECK_MS`` whether a ducked-for sound is speech-like at all; ``build_task`` hands
the one object to the VAD and to the playout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pipecat.audio.vad.vad_analyzer import VADState
from pipecat.frames.frames import OutputTransportMessageUrgentFrame, SystemFrame

#: what the playout tells the page (see :mod:`appliance.voice.playout`)
BargeInState = Literal["ready", "confirmed", "released"]


@dataclass
class BackchannelFrame(SystemFrame):
    """The person spoke while the bot did and the words did not take the turn ("mm-hm",
    "yeah", a cough): pushed downstream by :class:`~appliance.voice.turns.BargeInStart` at
    the final (or early final) transcript; the :class:`~appliance.voice.playout.Playout`
    releases a bot it paused or the page ducked. ``text``: that transcript."""

    text: str


@dataclass
class RecordingChoiceFrame(SystemFrame):
    """A WebSocket client's choice about recording (its ``format`` event's ``record``: True, False,
    or None when it named none: the operator's ``recording.enabled``), pushed downstream by the
    transport's input; :class:`~appliance.voice.pipeline.RecordingConsent` acts on it."""

    record: bool | None


@dataclass
class AcknowledgeFrame(SystemFrame):
    """A slow step begins (an agent's tool call): pushed downstream by
    :meth:`~appliance.voice.line.LineProcessor.acknowledge`; the
    :class:`~appliance.voice.acks.Acknowledger` says ``turn.ack_text`` unless the answer's
    audio comes within ``turn.ack_after_ms``."""


@dataclass
class PlayoutAheadFrame(SystemFrame):
    """The bot's audio the :class:`~appliance.voice.playout.Playout` has taken in and the
    transport not yet played, pushed upstream at each change; the TTS keeps the last one.

    ``sent_s``: seconds sent on to the transport ahead of real time (it runs down as it is
    played). ``queued_s``: seconds waiting in the playout (paced or paused; it runs down
    only as it is sent on, which pushes a new frame).
    """

    sent_s: float
    queued_s: float

    def ahead_s(self, elapsed_s: float) -> float:
        """Seconds of audio not yet played, ``elapsed_s`` seconds after this frame was pushed."""
        return max(0.0, self.sent_s - elapsed_s) + self.queued_s


@dataclass
class BargeInFrame(OutputTransportMessageUrgentFrame):
    """The playout's word to the page: ``{"type": "barge_in", "state": state}`` over the
    data channel (a transport without one drops it). ``ready``: the page may duck the bot
    (a playout answers it); ``confirmed``: the person took the turn, the page mutes what is
    still in flight; ``released``: the duck was a backchannel or a noise, the bot's level
    comes back."""

    message: Any = field(init=False)
    state: BargeInState

    def __post_init__(self):
        super().__post_init__()
        self.message = {"type": "barge_in", "state": self.state}


@dataclass
class VoiceActivity:
    """What the session's VAD hears right now (``state``: pipecat's ``VADState``; ``STARTING``
    while speech-like audio adds up to ``vad.start_ms``): written by
    :class:`~appliance.voice.playout.ListeningSileroVAD` at each analysis, read by the
    :class:`~appliance.voice.playout.Playout` (see the module docstring for why no frame)."""

    state: VADState = VADState.QUIET
