"""When the person's turn starts and ends: the user-turn strategies of pipecat's user
aggregator, as :func:`turn_strategies` builds them from ``turn.*``.

End of turn (``turn.end_of_turn``), the same for the plain assistant and the agent modes:

- ``smart_turn`` (default): at each VAD stop pipecat's Smart Turn v3 (the ONNX bundled in
  the pipecat wheel) judges from the audio whether the utterance is complete, and the
  transcript is read too (:func:`unfinished`): a complete one ends the turn at once; one
  that is not, by either reading ("my name is", "five five five", a trailing "and"), keeps
  the turn open until the person goes on or ``turn.incomplete_timeout_ms`` of silence
  passes. Smart Turn alone calls Piper's "My name is" complete (0.8): the words catch it.
- ``timeout``: the fallback, the pause rule without a model: the turn ends
  ``turn.agent_speech_timeout_ms`` after the VAD stop in the agent modes, at once in the
  plain assistant (pipecat's ``SpeechTimeoutUserTurnStopStrategy``).

Speculation (``turn.speculate``, plain assistant): the STT's early final
(:class:`~pipecat.frames.frames.EagerTranscriptionFrame`) starts the LLM before the turn
has ended, on a provisional context; pipecat's ``SpeculationGate`` in the LLM service holds
the reply. When the turn ends, a final transcript equal to the speculated one (pipecat's
``NormalizedMatch``: case, punctuation and spacing aside) keeps it (released at once);
otherwise it is withdrawn (``EagerEndOfTurnCancelFrame``) before any of it reaches TTS, and
the final transcript is answered as usual. Speech that goes on withdraws it too.

Start of turn and barge-in: with ``turn.barge_in_min_words`` N > 0, :class:`BargeInStart`:
while the bot speaks, the person's speech interrupts only once its transcript
:func:`interrupts` (N words that are not all backchannel, or a word like "stop"), so
"mm-hm", "yeah", "right", a cough or a knock let the bot go on; N = 0: any speech the VAD
hears interrupts (pipecat's ``VADUserTurnStartStrategy``).

Resumed speech: speech that starts before the bot has spoken ``turn.resumed_speech_ms`` since
the person's last turn ended (:class:`ReplyClock`) goes on with what the person was saying ("… 472,
[pause] 9183."; bench: Smart Turn ended the turn in the pause, and the one-word "9183." 30 ms
into the reply was dropped): one word that is not backchannel takes the turn, and the agent's
line marks the turn as resumed (:attr:`~appliance.voice.line.LineProcessor.heard_resumes`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from typing import Callable

from pipecat.audio.turn.base_turn_analyzer import BaseTurnAnalyzer, EndOfTurnState
from pipecat.audio.turn.smart_turn.base_smart_turn import SmartTurnParams
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    EagerEndOfTurnCancelFrame,
    EagerTranscriptionFrame,
    Frame,
    InterimTranscriptionFrame,
    TranscriptionFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import MetricsData, TurnMetricsData
from pipecat.turns.types import ProcessFrameResult, UserTurnSpeculation
from pipecat.turns.user_start import MinWordsUserTurnStartStrategy, VADUserTurnStartStrategy
from pipecat.turns.user_stop import NormalizedMatch, SpeechTimeoutUserTurnStopStrategy, TurnAnalyzerUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

from appliance.config import TurnConfig
from appliance.voice.decisions import BackchannelFrame

log = logging.getLogger(__name__)

#: ``report(event, **fields)``: how a strategy tells the session's event log what it decided
#: (``speculation`` with ``state`` started | kept | cancelled, ``turn_held``, ``backchannel``);
#: a decision another processor acts on goes as a frame (:mod:`appliance.voice.decisions`).
Report = Callable[..., None]

# A last word after which an English statement is rarely over ("I can.", "It was." are:
# auxiliaries that often end an answer are not here). A question mark overrides it.
DANGLING = frozenset(
    """
a an the my your his her our their its these those some every each
is are am
to of in on at for with from by about into onto over under after before than via per
and or but nor because if although though unless whether
um uh er erm uhm
""".split()
)
# What a person says to show they listen, not to take the turn.
BACKCHANNEL = frozenset(
    """
mm mmm mhm hm hmm uh huh uhhuh mmhmm mmhm mhmm ah oh aha yeah yea yep yes ya right okay ok sure
alright cool nice wow great good fine true exactly totally indeed really interesting see got it i
""".split()
)
# A word that asks the bot to stop whatever else is said around it.
STOP_WORDS = frozenset("stop wait hold pause hang quiet enough cancel no nope sorry excuse actually".split())
# Whisper's names for sounds that are not words: "[Music]", "(coughing)", "♪ ... ♪", "*knock*".
_NON_SPEECH_RE = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|♪[^♪]*♪?|♪")
FINAL_WAIT_S = 3.0  # longest wait for the final transcript of a VAD segment before the turn may end
FINISHED_GRACE_S = 0.4  # Smart Turn heard an unfinished voice but the words are a whole question: wait this
STATEMENT_GRACE_S = 1.0  # ... the words are a statement that does not trail off: wait this
_DIGIT_WORDS = frozenset("zero oh one two three four five six seven eight nine double triple".split())


def spoken_words(text: str) -> list[str]:
    """The words of a transcript: sound annotations ("[Music]", "(coughs)", "♪") removed,
    lower case, punctuation gone, hyphenated backchannels joined ("mm-hm" → "mmhm")."""
    text = _NON_SPEECH_RE.sub(" ", text).lower()
    text = re.sub(r"(?<=\w)-(?=\w)", "", text)
    return re.findall(r"[a-z0-9']+", text.replace("\u2019", "'"))


def _digit_count(words: list[str]) -> int | None:
    """Digits spoken in ``words`` if every word is a digit group or digit word, else None."""
    n = 0
    for w in words:
        if w.isdigit():
            n += len(w)
        elif w in _DIGIT_WORDS:
            n += 1
        else:
            return None
    return n


def unfinished(text: str) -> bool:
    """Whether a transcript sounds like the person has more to say: it trails off ("…",
    a comma, a dash), its last word seldom ends a statement (:data:`DANGLING`: "my name
    is", "I want to book a flight to"), or it is a number being read in groups (only digits,
    at least 3 and fewer than 10: "555", "555 123"; a whole phone number is complete). A
    question or an exclamation ("What time zone is Tokyo in?") is finished."""
    stripped = text.strip()
    if not stripped or stripped.endswith(("?", "!")):
        return False
    if re.search(r"(\.\.\.|…|,|-|—)$", stripped):
        return True
    words = spoken_words(stripped)
    if not words:
        return False
    digits = _digit_count(words)
    if digits is not None:
        return 3 <= digits < 10
    return words[-1] in DANGLING


_HUM_RE = re.compile(r"^(?:[mh]+|(?:uh|huh|ah|oh|um)+)$")  # "mmm", "mm-mm", "hmm", "mhm", "uh-huh"


# Words a question cannot end on ("What is the capital of?" is Whisper's guess at a cut one).
_QUESTION_DANGLING = frozenset("a an the my your his her our their its of and or but nor because if um uh er".split())


def sounds_finished(text: str) -> bool:
    """Whether the words alone say the utterance is over: a question or an exclamation
    ("How do I make a cup of green tea?") that does not end on an article, a possessive,
    "of" or a conjunction."""
    stripped = text.strip()
    if not stripped.endswith(("?", "!")):
        return False
    words = spoken_words(stripped)
    return bool(words) and words[-1] not in _QUESTION_DANGLING and _digit_count(words) is None


def is_backchannel(text: str) -> bool:
    """Whether a transcript is only backchannel ("mm-hm", "yeah", "right", "okay", any hum)
    or no words at all (a cough, a knock, music)."""
    return all(w in BACKCHANNEL or _HUM_RE.match(w) for w in spoken_words(text))


def interrupts(text: str, min_words: int) -> bool:
    """Whether what the person said while the bot spoke takes the turn: a stop word
    (:data:`STOP_WORDS`: "stop", "wait", "no"), or ``min_words`` words that are not all
    backchannel."""
    words = spoken_words(text)
    if not words or is_backchannel(text):
        return False
    return any(w in STOP_WORDS for w in words) or len(words) >= min_words


class ReplyClock:
    """Seconds of the bot's speech since the person's last turn ended, from the frames a
    processor sees: ``BotStartedSpeakingFrame`` / ``BotStoppedSpeakingFrame`` (a reply may
    pause between clauses) and ``UserStoppedSpeakingFrame`` (the turn's end; a start strategy,
    which does not see that frame, calls :meth:`turn_ended`). Infinite before the first turn
    has ended: nothing to resume. ``resumed_s``: speech whose ``VADUserStartedSpeakingFrame``
    comes before the bot has spoken this long resumes the turn before (:attr:`speech_resumes`)."""

    def __init__(self, resumed_s: float) -> None:
        self._resumed_s = resumed_s
        self._spoken_s = math.inf
        self._since: float | None = None  # the bot is speaking since this time.monotonic()
        #: whether the person's speech now (since the VAD's last start) resumes the turn before
        self.speech_resumes = False

    def turn_ended(self, now: float) -> None:
        self._spoken_s = 0.0
        if self._since is not None:
            self._since = now

    def see(self, frame: Frame, now: float) -> None:
        if isinstance(frame, UserStoppedSpeakingFrame):
            self.turn_ended(now)
        elif isinstance(frame, BotStartedSpeakingFrame):
            self._since = now
        elif isinstance(frame, BotStoppedSpeakingFrame) and self._since is not None:
            self._spoken_s += now - self._since
            self._since = None
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            self.speech_resumes = self.spoken_s(now) < self._resumed_s

    def spoken_s(self, now: float) -> float:
        """The bot's speech since the person's last turn ended, in seconds, up to ``now``."""
        return self._spoken_s + (now - self._since if self._since is not None else 0.0)


class BargeInStart(MinWordsUserTurnStartStrategy):
    """pipecat's ``MinWordsUserTurnStartStrategy`` with a rule that knows backchannels: while
    the bot speaks, a transcript (interim or final) starts the turn — and interrupts — only
    when it :func:`interrupts`; otherwise its text is dropped and the bot goes on (a final
    one, or an early final that is all backchannel, is reported as ``backchannel`` and pushed
    downstream as a :class:`~appliance.voice.decisions.BackchannelFrame`, which releases a
    ducked bot at once). While the bot is quiet, any word starts the turn; so does
    one of speech that resumes (begun within ``resumed_speech_ms`` of the bot's reply, see the
    module docstring)."""

    def __init__(self, *, resumed_speech_ms: int = 0, report: Report | None = None, **kwargs):
        super().__init__(**kwargs)
        self._report = report or (lambda *_a, **_k: None)
        self._clock = ReplyClock(resumed_speech_ms / 1000)

    async def _decide(self, text: str, final: bool) -> bool:
        """Start the turn when ``text`` takes it (while the bot speaks: it :func:`interrupts`;
        else any word); a final that does not, while the bot speaks, is reported as
        ``backchannel`` and pushed as a :class:`BackchannelFrame`. Returns whether it took the turn."""
        take = (
            interrupts(text, 1 if self._clock.speech_resumes else self._min_words)
            if self._bot_speaking
            else bool(spoken_words(text))
        )
        if take:
            await self.trigger_user_turn_started()
        elif final and self._bot_speaking:
            self._report("backchannel", text=text)
            await self.push_frame(BackchannelFrame(text=text))
        return take

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        self._clock.see(frame, time.monotonic())
        if isinstance(frame, EagerTranscriptionFrame):  # the early final: decided before the VAD stop
            # the turn starts here, not at the final: with the bot quiet there are no interims, and the
            # stop strategy speculates only within a started turn (it sees this frame next)
            await self._decide(frame.text, final=True)
        return await super().process_frame(frame)

    async def handle_user_turn_stopped(self):
        await super().handle_user_turn_stopped()
        self._clock.turn_ended(time.monotonic())

    async def _handle_transcription(self, frame: TranscriptionFrame | InterimTranscriptionFrame) -> ProcessFrameResult:
        if await self._decide(frame.text, final=isinstance(frame, TranscriptionFrame)):
            return ProcessFrameResult.STOP
        if spoken_words(frame.text):  # words that did not take the turn: dropped (nothing said: nothing to drop)
            await self.trigger_reset_aggregation()
        return ProcessFrameResult.CONTINUE


class _Speculating:
    """Mixin for a pipecat stop strategy: answers the STT's early final before the turn ends.

    On an ``EagerTranscriptionFrame`` (while a turn is open and the text so far does not
    sound :func:`unfinished`) the speculation starts (``trigger_user_turn_inference_triggered``
    with a ``UserTurnSpeculation`` of the turn's text so far); at the turn's end it is kept
    (``trigger_user_turn_finalized(confirms_speculation=True)``) when the committed text
    matches, otherwise withdrawn and the turn ends as usual. Speech that resumes, the STT's
    withdrawal (``EagerEndOfTurnCancelFrame``) or ``timeout_s`` without an end withdraw it.
    """

    def _setup_speculation(self, speculate: bool, report: Report | None, timeout_s: float = 5.0) -> None:
        self._speculate_on = speculate
        self._report: Report = report or (lambda *_a, **_k: None)
        self._spec_timeout_s = timeout_s
        self._spec: UserTurnSpeculation | None = None
        self._spec_timer: asyncio.Task | None = None
        self._segments: list[str] = []
        self._open = False
        self._match = NormalizedMatch()

    @property
    def turn_text(self) -> str:
        """The committed transcripts of the open turn, joined."""
        return " ".join(s.strip() for s in self._segments if s.strip())

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        if isinstance(frame, TranscriptionFrame):
            self._segments.append(frame.text)
        elif isinstance(frame, EagerTranscriptionFrame):
            await self._maybe_speculate(frame.text)
        elif isinstance(frame, EagerEndOfTurnCancelFrame):
            if await self._take_speculation():  # the STT withdrew it; its frame reaches the LLM by itself
                self._report("speculation", state="cancelled", reason="speech went on")
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            await self._withdraw("speech went on")
        return await super().process_frame(frame)

    async def handle_user_turn_started(self):
        await super().handle_user_turn_started()
        await self._withdraw("a new turn")
        self._segments = []
        self._open = True

    async def handle_user_turn_stopped(self):
        await super().handle_user_turn_stopped()
        await self._withdraw("the turn ended elsewhere")  # e.g. pipecat's stop watchdog
        self._segments = []
        self._open = False

    async def cleanup(self):
        await super().cleanup()
        await self._take_speculation()

    async def _maybe_speculate(self, text: str) -> None:
        if not (self._speculate_on and self._open) or self._spec is not None:
            return
        full = " ".join([self.turn_text, text.strip()]).strip()
        if not full or unfinished(full):
            return
        self._spec = UserTurnSpeculation(text=full)
        self._spec_timer = self.task_manager.create_task(self._expire(self._spec), f"{self}::speculation_timeout")
        self._report("speculation", state="started", text=full)
        await self.trigger_user_turn_inference_triggered(speculation=self._spec)

    async def _expire(self, spec: UserTurnSpeculation) -> None:
        await asyncio.sleep(self._spec_timeout_s)
        self._spec_timer = None
        if self._spec is spec:
            self._spec = None
            self._report("speculation", state="cancelled", reason="the turn did not end")
            await self.trigger_user_turn_speculation_cancelled()

    async def _take_speculation(self) -> UserTurnSpeculation | None:
        spec, self._spec = self._spec, None
        if self._spec_timer is not None:
            task, self._spec_timer = self._spec_timer, None
            await self.task_manager.cancel_task(task)
        return spec

    async def _withdraw(self, reason: str) -> None:
        if await self._take_speculation():
            self._report("speculation", state="cancelled", reason=reason)
            await self.trigger_user_turn_speculation_cancelled()

    async def trigger_user_turn_stopped(self, *, enable_user_speaking_frames: bool | None = None):
        spec = await self._take_speculation()
        if spec is not None:
            if self._match.matches(spec.text, self.turn_text):
                self._report("speculation", state="kept", text=spec.text)
                await self.trigger_user_turn_finalized(
                    enable_user_speaking_frames=enable_user_speaking_frames, confirms_speculation=True
                )
                return
            self._report(
                "speculation",
                state="cancelled",
                reason="the final transcript differs",
                text=spec.text,
                final=self.turn_text,
            )
            await self.trigger_user_turn_speculation_cancelled()
        await super().trigger_user_turn_stopped(enable_user_speaking_frames=enable_user_speaking_frames)


class SmartTurnStop(_Speculating, TurnAnalyzerUserTurnStopStrategy):
    """``turn.end_of_turn: smart_turn``: pipecat's Smart Turn stop strategy, plus the words.

    ``analyzer``: the turn model (pipecat's ``LocalSmartTurnAnalyzerV3`` with ``stop_secs``
    = ``hold_s``: how long it waits after an utterance it judges incomplete). When the model
    has found the turn complete and the final transcript is in, a transcript that sounds
    :func:`unfinished` is held ``hold_s`` more; speech ends the hold (the turn goes on).

    Smart Turn is often wrong on synthetic or flat voices, so when it finds the utterance
    incomplete the words weigh in too: a whole question (:func:`sounds_finished`) ends the
    turn after :data:`FINISHED_GRACE_S` of silence, a statement that is not
    :func:`unfinished` after :data:`STATEMENT_GRACE_S`; only words that trail off wait the
    whole ``hold_s``.

    The turn never ends while the final transcript of its last VAD segment is still due
    (at most :data:`FINAL_WAIT_S`): pipecat's STT safety net would end it on the previous
    segment's text when the ASR is slow. The STT sends an empty final for a segment
    that said nothing, so the wait ends there too.
    """

    def __init__(
        self,
        *,
        analyzer: BaseTurnAnalyzer,
        hold_s: float,
        speculate: bool = False,
        report: Report | None = None,
        **kwargs,
    ):
        super().__init__(turn_analyzer=analyzer, **kwargs)
        if isinstance(analyzer, WordsFirstSmartTurn):
            analyzer.words_finished = self._speculated_question
        self._hold_s = hold_s
        self._hold: asyncio.Task | None = None
        self._held_text: str | None = None
        self._final_due: float | None = None  # loop time of the VAD stop whose final is still to come
        self._deferred = False  # a stop came while that final was due
        self._incomplete = False  # Smart Turn's verdict at the last VAD stop was "incomplete"
        self._grace: asyncio.Task | None = None
        self._setup_speculation(speculate, report)

    async def process_frame(self, frame: Frame) -> ProcessFrameResult:
        if isinstance(frame, VADUserStoppedSpeakingFrame):
            self._final_due, self._deferred = asyncio.get_running_loop().time(), False
        elif isinstance(frame, TranscriptionFrame):
            self._final_due = None
            if not frame.text.strip():  # that segment said nothing: the turn's text stays as it was
                if self._deferred:
                    self._deferred = False
                    await self.trigger_user_turn_stopped()
                return ProcessFrameResult.CONTINUE
        result = await super().process_frame(frame)
        if isinstance(frame, VADUserStartedSpeakingFrame):
            self._incomplete = False
            await self._cancel_hold()  # after pipecat dropped its pending end of turn: nothing re-arms it
        elif isinstance(frame, TranscriptionFrame):
            self._maybe_grace()
        return result

    def _speculated_question(self) -> bool:
        """The LLM is already answering a whole question: the words end the turn at the VAD stop."""
        if self._spec is None or not sounds_finished(self._spec.text):
            return False
        self._report("turn_ended_by_words", text=self._spec.text)
        return True

    async def _handle_prediction_result(self, result):
        await super()._handle_prediction_result(result)
        if isinstance(result, TurnMetricsData):
            self._incomplete = not result.is_complete
            self._maybe_grace()

    def _maybe_grace(self) -> None:
        text = self.turn_text
        if (
            self._incomplete
            and self._grace is None
            and self._final_due is None
            and self._open
            and text
            and not unfinished(text)
        ):
            wait = FINISHED_GRACE_S if sounds_finished(text) else STATEMENT_GRACE_S
            self._grace = self.task_manager.create_task(self._grace_then_stop(wait), f"{self}::grace")

    async def _grace_then_stop(self, wait_s: float) -> None:
        await asyncio.sleep(wait_s)
        self._grace = None
        if not self._vad_user_speaking and self._incomplete:
            self._report("turn_ended_by_words", text=self.turn_text)
            await self.trigger_user_turn_stopped()

    async def handle_user_turn_started(self):
        # A turn whose first words are its final transcript ("Yes.", too short for an interim)
        # starts after its VAD stop: keep the verdict Smart Turn gave there, which pipecat's
        # reset would drop (it would then wait out its STT safety net instead).
        verdict = None if self._vad_user_speaking else (self._turn_complete, self._vad_stopped)
        await self._cancel_hold()
        await super().handle_user_turn_started()
        self._held_text = None
        if verdict is not None and verdict[1]:
            self._turn_complete, self._vad_stopped = verdict

    async def handle_user_turn_stopped(self):
        await self._cancel_hold()
        await super().handle_user_turn_stopped()

    async def cleanup(self):
        await self._cancel_hold()
        await super().cleanup()

    async def _cancel_hold(self) -> None:
        for name in ("_hold", "_grace"):
            task = getattr(self, name)
            if task is not None:
                setattr(self, name, None)
                await self.task_manager.cancel_task(task)

    async def trigger_user_turn_stopped(self, *, enable_user_speaking_frames: bool | None = None):
        if self._final_due is not None and asyncio.get_running_loop().time() - self._final_due < FINAL_WAIT_S:
            self._deferred = True  # the final transcript re-triggers (pipecat's, or the empty one above)
            return
        text = self.turn_text
        if unfinished(text):
            if self._hold is None:  # else already waiting out this utterance
                if text != self._held_text:
                    self._report("turn_held", text=text, hold_ms=round(self._hold_s * 1000))
                    self._held_text = text
                self._hold = self.task_manager.create_task(
                    self._hold_then_stop(enable_user_speaking_frames), f"{self}::hold"
                )
            return
        await self._cancel_hold()
        await super().trigger_user_turn_stopped(enable_user_speaking_frames=enable_user_speaking_frames)

    async def _hold_then_stop(self, enable_user_speaking_frames: bool | None) -> None:
        await asyncio.sleep(self._hold_s)
        self._hold = None
        await super().trigger_user_turn_stopped(enable_user_speaking_frames=enable_user_speaking_frames)


class TimeoutStop(_Speculating, SpeechTimeoutUserTurnStopStrategy):
    """``turn.end_of_turn: timeout``: pipecat's pause rule (``user_speech_timeout``), speculating
    like :class:`SmartTurnStop` when asked."""

    def __init__(self, *, speculate: bool = False, report: Report | None = None, **kwargs):
        super().__init__(**kwargs)
        self._setup_speculation(speculate, report)


class WordsFirstSmartTurn(LocalSmartTurnAnalyzerV3):
    """pipecat's Smart Turn v3, not run at a VAD stop whose words already decide:
    ``words_finished()`` (set by :class:`SmartTurnStop`) says the words the LLM is already
    answering (the speculation) are a whole question (:func:`sounds_finished`), so the turn is
    complete there and the model does not take a core from the LLM's first token. Measured
    (issue 28, 10 turns, 2 cores): the LLM's time to its first token in the pipeline was 445 ms
    with Smart Turn at each VAD stop, 315 ms without it, 140–150 ms with no audio running."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.words_finished: Callable[[], bool] = lambda: False

    async def analyze_end_of_turn(self) -> tuple[EndOfTurnState, MetricsData | None]:
        if self.words_finished():
            self.clear()
            return EndOfTurnState.COMPLETE, None
        return await super().analyze_end_of_turn()


def smart_turn_analyzer(turn: TurnConfig) -> WordsFirstSmartTurn:
    """Smart Turn v3 from the pipecat wheel (no download), waiting ``turn.incomplete_timeout_ms``
    after an utterance it judges incomplete."""
    return WordsFirstSmartTurn(params=SmartTurnParams(stop_secs=turn.incomplete_timeout_ms / 1000))


def turn_strategies(
    turn: TurnConfig, agent: bool, report: Report | None = None, analyzer: BaseTurnAnalyzer | None = None
) -> UserTurnStrategies:
    """The user-turn strategies for ``turn`` (see the module docstring).

    ``agent``: an agent speaks through a :class:`~appliance.voice.line.LineProcessor` (no
    LLM to speculate with; ``timeout`` waits ``agent_speech_timeout_ms``). ``report``
    receives the strategies' decisions as session events. ``analyzer`` replaces Smart Turn (tests).
    """
    if turn.barge_in_min_words:
        start = BargeInStart(
            min_words=turn.barge_in_min_words,
            resumed_speech_ms=turn.resumed_speech_ms,
            enable_interruptions=turn.barge_in,
            report=report,
        )
    else:
        start = VADUserTurnStartStrategy(enable_interruptions=turn.barge_in)
    speculate = turn.speculate and not agent
    if turn.end_of_turn == "smart_turn":
        stop = SmartTurnStop(
            analyzer=analyzer or smart_turn_analyzer(turn),
            hold_s=turn.incomplete_timeout_ms / 1000,
            speculate=speculate,
            report=report,
        )
    else:
        stop = TimeoutStop(
            user_speech_timeout=turn.agent_speech_timeout_ms / 1000 if agent else 0.0,
            speculate=speculate,
            report=report,
        )
    return UserTurnStrategies(start=[start], stop=[stop])
