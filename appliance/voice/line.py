"""A voice line for agents that decide in code what to say: the phone agent, the
Werewolf judge talking to a human seat.

:class:`LineProcessor` takes the LLM's place in the voice pipeline
(:func:`appliance.voice.pipeline.build_task` with ``line=``)::

    transport.input → STT → user aggregator → LineProcessor → clauses + markers → TTS
      → transport.output → LineProcessor.played

The agent calls :meth:`LineProcessor.say` (returns once the bot's audio has been played
or cut off by barge-in, with a :class:`SayOutcome`: which of the two, and what was heard)
and :meth:`LineProcessor.hear` (the person's next turn, the final transcript the user
aggregator committed). VAD, barge-in, captions, latency events and
recording are the pipeline's as for the plain assistant.
"""

from __future__ import annotations

import asyncio
import logging
import time

from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    Frame,
    InterruptionFrame,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    OutputAudioRawFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from appliance.config import TurnConfig
from appliance.protocol.line import SayOutcome
from appliance.voice.decisions import AcknowledgeFrame
from appliance.voice.markers import VoiceFrame
from appliance.voice.piper_synth import VoiceStyle
from appliance.voice.stt import ASRContextFrame
from appliance.voice.turns import ReplyClock

log = logging.getLogger(__name__)


#: how long after the VAD's stop the person's speech counts as an answer on its way (s), until its transcript
#: arrives: the turn may start only with its transcript. Bench (oluwaseun): the VAD stopped after a 15.8 s spelled
#: e-mail, "Are you still there?" was said 12 ms later, and the transcript came 1.2 s after the stop
ANSWER_PENDING_S = 3.0


class LineProcessor(FrameProcessor):
    """The agent's side of a voice session: ``say(text)`` and ``hear()``.

    ``cfg``: ``turn.say_timeout_s`` and ``turn.say_timeout_per_char_ms`` bound how long
    ``say`` waits for its audio to be played; ``turn.resumed_speech_ms`` which turns resume the
    person's answer before (:attr:`heard_resumes`).
    """

    def __init__(self, cfg: TurnConfig, **kwargs):
        super().__init__(**kwargs)
        self._cfg = cfg
        self._heard: asyncio.Queue[tuple[str, tuple[tuple[str, float], ...], bool]] = asyncio.Queue()
        self._words: list[tuple[str, float]] = []  # the words of the finals since the last turn (see heard_words)
        #: the words of the turn :meth:`hear` last returned, as the ASR wrote them, each with its probability
        #: (:attr:`~appliance.voice.asr.base.Transcript.words`); empty when the ASR gives none
        self.heard_words: tuple[tuple[str, float], ...] = ()
        #: whether the turn :meth:`hear` last returned began before the bot had spoken ``turn.resumed_speech_ms``
        #: since the person's speech before it: it goes on with what the person was saying (voice/turns.py)
        self.heard_resumes = False
        self._clock = ReplyClock(cfg.resumed_speech_ms / 1000)
        self._turn_resumes = False  # the turn now began within resumed_speech_ms of the reply
        self._done = asyncio.Event()
        self._started = asyncio.Event()
        self._interrupted = False
        self._vad_speaking = False  # between the VAD's start and stop
        self._in_turn = False  # between the turn's start and its end (UserStarted/StoppedSpeakingFrame)
        self._stopped_at: float | None = None  # the VAD's last stop (monotonic s), until a transcript came after it
        #: goes after ``transport.output()``: the output transport lets a clause's text and
        #: the reply's end frame through only after their audio, so what it sees was played.
        self.played = _PlayedProbe(self._done)

    async def acknowledge(self) -> None:
        """A slow step begins (a tool call, a wait on another agent): unless something is
        said within ``turn.ack_after_ms``, the person hears ``turn.ack_text`` (an
        :class:`~appliance.voice.decisions.AcknowledgeFrame` to the session's
        :class:`~appliance.voice.acks.Acknowledger`; ``turn.ack`` off: none, nothing)."""
        await self.push_frame(AcknowledgeFrame())

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            text = last_user_text(frame.context.get_messages())
            if text:
                self._heard.put_nowait((text, tuple(self._words), self._turn_resumes))
            self._words, self._turn_resumes, self._stopped_at = [], False, None
            return  # no LLM behind this line: the context stops here
        self._clock.see(frame, time.monotonic())
        if isinstance(frame, (VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame)):
            self._vad_speaking = isinstance(frame, VADUserStartedSpeakingFrame)
            self._stopped_at = None if self._vad_speaking else time.monotonic()
        elif isinstance(frame, UserStartedSpeakingFrame):  # the turn starts (a dropped backchannel starts none)
            self._in_turn, self._turn_resumes = True, self._clock.speech_resumes
        elif isinstance(frame, UserStoppedSpeakingFrame):
            self._in_turn = False
        elif isinstance(frame, BotStartedSpeakingFrame):
            self._started.set()
        elif isinstance(frame, InterruptionFrame):
            self._interrupted = True
            self._done.set()
        await self.push_frame(frame, direction)

    @property
    def person_speaking(self) -> bool:
        """Whether the person is speaking now, their turn is still open or their answer is on
        its way: between the VAD's start and stop, from the turn's start until it ends (a turn
        held after the VAD stop for more words; bench: an agent that took the held turn for
        silence asked "Are you still there?" over the person's spelled answer, and took the
        late "Yes, I'm here." for the next spelling), and for :data:`ANSWER_PENDING_S` after
        the VAD's stop unless the transcript came meanwhile."""
        pending = self._stopped_at is not None and time.monotonic() - self._stopped_at < ANSWER_PENDING_S
        return self._vad_speaking or self._in_turn or pending

    async def say(self, text: str, voice: VoiceStyle | None = None) -> SayOutcome:
        """Speak ``text`` (markers allowed), in ``voice`` when given (a speaker's own, e.g. a
        Werewolf seat's); return when it was played to the end or interrupted, saying which
        and what was heard.

        Raises:
            RuntimeError: nothing of ``text`` was played: the reply ended without audio (TTS
                failed; its ``ErrorFrame`` went upstream), or no audio began within
                ``turn.say_timeout_s`` plus ``turn.say_timeout_per_char_ms`` per character.
        """
        self._done.clear()
        self._started.clear()
        self._interrupted = False
        self.played.reset()
        await self.push_frame(LLMFullResponseStartFrame())
        if voice is not None:
            await self.push_frame(VoiceFrame(voice=voice))
        await self.push_frame(LLMTextFrame(text))
        await self.push_frame(LLMFullResponseEndFrame())
        timeout_s = self._cfg.say_timeout_s + self._cfg.say_timeout_per_char_ms * len(text) / 1000
        try:
            await asyncio.wait_for(self._done.wait(), timeout_s)
        except TimeoutError:
            if not self._started.is_set():
                raise RuntimeError(f"no audio was played for {text!r} in {timeout_s:.1f} s: is TTS working?") from None
            log.warning("gave up waiting %.1f s for the end of %r", timeout_s, text)
        else:
            if not self._interrupted and not self.played.texts:
                raise RuntimeError(f"no audio was played for {text!r}: is TTS working?")
        return SayOutcome(interrupted=self._interrupted, heard=" ".join(self.played.texts))

    def transcribed(self, words: tuple[tuple[str, float], ...]) -> None:
        """A final transcript's words with their probabilities
        (:attr:`~appliance.voice.asr.base.Transcript.words`): they go with the turn they end up in."""
        self._words.extend(words)

    async def hear(self) -> str:
        """The person's next final transcript (safe to cancel); its words are then :attr:`heard_words`,
        and whether it resumed the answer before :attr:`heard_resumes`."""
        text, self.heard_words, self.heard_resumes = await self._heard.get()
        return text

    async def hint(self, context: str, spelling: bool = False) -> None:
        """Words the person may say again (their names as heard, or the spelling alphabet): the
        STT transcribes after them from now on (an :class:`~appliance.voice.stt.ASRContextFrame`
        upstream). ``spelling``: a spelling is expected, so its finals go to ``asr.spelling_engine``."""
        await self.push_frame(ASRContextFrame(context=context, spelling=spelling), FrameDirection.UPSTREAM)


class _PlayedProbe(FrameProcessor):
    """After the output transport: keeps the text of each clause played (``texts``: a
    clause's text that came after some of its audio; TTS passes the text of a clause it
    failed to say too) and sets ``done`` when the reply's end frame comes through."""

    def __init__(self, done: asyncio.Event, **kwargs):
        super().__init__(**kwargs)
        self._done = done
        self.texts: list[str] = []
        self._audio = False  # audio came since the last clause's text

    def reset(self) -> None:
        """Before a reply: nothing of it played yet."""
        self.texts.clear()
        self._audio = False

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, OutputAudioRawFrame):
                self._audio = True
            elif isinstance(frame, TTSTextFrame):
                if self._audio:
                    self.texts.append(frame.text)
                self._audio = False
            elif isinstance(frame, LLMFullResponseEndFrame):
                self._done.set()
        await self.push_frame(frame, direction)


def last_user_text(messages: list) -> str:
    """The text of the last ``user`` message of an LLM context's ``messages`` ('' when none)."""
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content.strip()
            return " ".join(p.get("text", "") for p in content if isinstance(p, dict)).strip()
    return ""
