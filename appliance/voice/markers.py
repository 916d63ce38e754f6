"""Control markers in LLM output, and clause-level chunking of the reply for TTS.

The LLM may write markers such as ``[THINKING]``, ``[EMO:happy]`` or ``[SPEED:0.8]``;
they are never spoken. :class:`SpeakableTextProcessor` (a pipecat ``FrameProcessor``
between the LLM and TTS) strips them from the token stream, cuts the reply into
speakable clauses — the first one as early as possible, since pipecat's default sentence
aggregation makes TTS wait for a whole sentence (0.6 s here) — and pushes
each clause as a :class:`StyledClauseFrame` carrying the style the markers set. A
:class:`VoiceFrame` inside a reply (an agent's :meth:`~appliance.voice.line.LineProcessor.say`
with ``voice=``) gives the reply's clauses a speaker's own voice — a Werewolf seat's, the
narrator's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pipecat.frames.frames import (
    AggregatedTextFrame,
    DataFrame,
    Frame,
    InterruptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.utils.text.base_text_aggregator import TextType

from appliance.voice.piper_synth import VoiceStyle

#: a marker, as the LLM writes it: the body (group 1) in any case, spaces around the colon allowed, a speed with
#: or without a trailing "x" ("[SPEED:0.8x]", the seed's own spelling, had been read aloud)
MARKER_RE = re.compile(r"\[\s*(THINKING|EMO\s*:\s*[A-Za-z_]+|SPEED\s*:\s*\d+(?:\.\d+)?)\s*[x×]?\s*\]", re.I)
_PARTIAL_MARKER_RE = re.compile(r"\[[A-Za-z:._0-9 ×]{0,20}$")
_CLAUSE_END_RE = re.compile(r"[.!?;:,\u2014](?=\s)|\n")
EMOTIONS = ("neutral", "happy", "sad", "angry", "excited", "calm", "serious")
THINKING_PAUSE_MS = 300


@dataclass(frozen=True)
class SpeechStyle:
    """What the markers ask of TTS: ``speed`` (1.0 normal, 0.5–2.0), ``emotion`` (one of
    :data:`EMOTIONS`), ``pause_before_ms`` silence before the clause; ``voice``: the
    speaker's own voice for this reply (None: the TTS service's)."""

    speed: float = 1.0
    emotion: str = "neutral"
    pause_before_ms: int = 0
    voice: VoiceStyle | None = None


@dataclass
class VoiceFrame(DataFrame):
    """Inside a reply (after its start frame): say the rest of it in ``voice``."""

    voice: VoiceStyle | None = None


@dataclass
class StyledClauseFrame(AggregatedTextFrame):
    """One speakable clause (markers removed) with the style to say it in."""

    style: SpeechStyle = field(default_factory=SpeechStyle)


def apply_marker(style: SpeechStyle, marker: str) -> SpeechStyle:
    """Return ``style`` updated by one marker body (``THINKING``, ``EMO:x``, ``SPEED:x``).

    Unknown emotions map to neutral; speed is clamped to [0.5, 2.0].
    """
    marker = re.sub(r"\s+", "", marker)
    if marker.upper() == "THINKING":
        return replace(style, pause_before_ms=style.pause_before_ms + THINKING_PAUSE_MS)
    kind, _, value = marker.partition(":")
    kind = kind.upper()
    if kind == "EMO":
        emo = value.lower()
        return replace(style, emotion=emo if emo in EMOTIONS else "neutral")
    return replace(style, speed=min(2.0, max(0.5, float(value))))


#: what the plain assistant's LLM is told about the markers (:func:`spoken_prompt`); the speeds are
#: :func:`apply_marker`'s range, the emotions :data:`EMOTIONS`
MARKERS_HINT = (
    "To change how a sentence sounds, you may start it with one of these markers, which are never read out: "
    "[EMO:happy], [EMO:sad], [EMO:calm], [EMO:excited], [EMO:serious], [SPEED:0.8] (slower) up to "
    "[SPEED:1.3] (faster), [THINKING] (a short pause). Use them rarely."
)


def spoken_prompt(system_prompt: str) -> str:
    """``system_prompt`` with :data:`MARKERS_HINT` after it: the plain assistant's prompt
    (issue 28: the LLM had never been told the markers it may use)."""
    return f"{system_prompt.rstrip()} {MARKERS_HINT}"


def strip_markers(text: str) -> str:
    """Text with every marker removed and spaces collapsed (for captions and logs)."""
    return re.sub(r"\s{2,}", " ", MARKER_RE.sub("", text)).strip()


class ClauseChunker:
    """Cuts streamed LLM text into clauses and applies markers.

    ``first_words``: the first clause of a reply is also cut after this many words when
    no punctuation came yet (fast first audio); later clauses at ``max_words``.
    """

    def __init__(self, first_words: int = 6, max_words: int = 14):
        self.first_words = first_words
        self.max_words = max_words
        self.reset()

    def reset(self) -> None:
        self._buf = ""
        self._style = SpeechStyle()
        self._emitted = 0

    def _take(self, upto: int) -> tuple[str, SpeechStyle] | None:
        text, self._buf = self._buf[:upto].strip(), self._buf[upto:]
        if not re.search(r"\w", text):
            return None
        style, self._style = self._style, replace(self._style, pause_before_ms=0)
        self._emitted += 1
        return text, style

    def set_voice(self, voice: VoiceStyle | None) -> None:
        """Say the rest of this reply (until :meth:`reset`) in ``voice``."""
        self._style = replace(self._style, voice=voice)

    def feed(self, token: str) -> list[tuple[str, SpeechStyle]]:
        """Add streamed text; return the clauses now complete, with their styles."""
        self._buf += token
        out: list[tuple[str, SpeechStyle]] = []
        while True:
            m = MARKER_RE.search(self._buf)
            if m:
                before, after = self._buf[: m.start()], self._buf[m.end() :]
                self._buf = before
                c = self._take(len(before))  # the words before a marker keep the old style
                if c:
                    out.append(c)
                self._buf = after.lstrip()
                self._style = apply_marker(self._style, m.group(1))
                continue
            if _PARTIAL_MARKER_RE.search(self._buf):
                return out  # wait for the marker to close
            end = _CLAUSE_END_RE.search(self._buf)
            if end:
                c = self._take(end.end())
                if c:
                    out.append(c)
                continue
            limit = self.first_words if self._emitted == 0 else self.max_words
            cut = self._buf.rstrip().rfind(" ")  # the last word may still be growing
            if cut > 0 and len(self._buf[:cut].split()) >= limit:
                c = self._take(cut)
                if c:
                    out.append(c)
                continue
            return out

    def flush(self) -> list[tuple[str, SpeechStyle]]:
        """End of reply: whatever is left (unterminated markers are dropped)."""
        self._buf = MARKER_RE.sub("", _PARTIAL_MARKER_RE.sub("", self._buf))
        c = self._take(len(self._buf))
        self.reset()
        return [c] if c else []


class SpeakableTextProcessor(FrameProcessor):
    """LLM text stream → :class:`StyledClauseFrame` per clause (markers applied).

    Input: ``LLMTextFrame`` tokens between ``LLMFullResponseStartFrame`` and
    ``LLMFullResponseEndFrame``. An ``InterruptionFrame`` discards the partial clause.
    """

    def __init__(self, first_words: int = 6, max_words: int = 14, **kwargs):
        super().__init__(**kwargs)
        self._chunker = ClauseChunker(first_words, max_words)

    async def _push_clauses(self, clauses: list[tuple[str, SpeechStyle]]) -> None:
        for text, style in clauses:
            await self.push_frame(StyledClauseFrame(text=text, text_type=TextType.SENTENCE, style=style))

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMTextFrame) and direction == FrameDirection.DOWNSTREAM:
            await self._push_clauses(self._chunker.feed(frame.text))
            return
        if isinstance(frame, VoiceFrame):
            await self._push_clauses(self._chunker.feed(""))
            self._chunker.set_voice(frame.voice)
            return
        if isinstance(frame, LLMFullResponseStartFrame):
            self._chunker.reset()
        elif isinstance(frame, LLMFullResponseEndFrame):
            await self._push_clauses(self._chunker.flush())
        elif isinstance(frame, InterruptionFrame):
            self._chunker.reset()
        await self.push_frame(frame, direction)
