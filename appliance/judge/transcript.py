"""Spoken transcript → the turn's action, for the user seat. Never guesses.

The user seat acts by voice, so its action is whatever can be read *unambiguously* from
the ASR transcript. Accepted forms (case and punctuation ignored, number words one–nine
read as digits, Whisper's "P-3"/"P 3" spellings accepted):

- a seat needs a marker: ``P3``, ``player three``, ``seat 3``, ``number three`` (plurals
  too: Whisper sometimes repeats "players four"; and "place 3" and "play 3", how it wrote
  "player three" in CI: "I at that place 3", "I attack play 3"). A bare number is not a seat ("the quiet one" must not
  become P1);
- vote/night_kill/seer_check: exactly one distinct seat, no negation (not, no, don't,
  never) anywhere; the seat must be among the tool's legal targets (a dead or unknown
  seat is rejected);
- vote abstains only on an explicit word: abstain, skip, none, nobody, no one, no vote —
  and then names no seat;
- witch_act: a clause about saving ("I save them" / "no save", "keep the antidote") is
  required while she holds the antidote, and one about poison ("poison player four" /
  "no poison", "poison nobody", "keep the poison") while she holds the poison;
- speak: any transcript with at least one letter (cut at a word boundary to the tool's
  length limit);
- never a recap question ("what happened last night?", "who voted for whom?",
  :func:`appliance.judge.recap.request`): it asks the judge, it is no move and no speech.

Anything else raises :class:`TranscriptRejected` with the reason; the caller asks again.
"""

from __future__ import annotations

import re

from appliance.judge import recap, tools
from appliance.judge.state import Action, IllegalAction, NightKill, SeerCheck, Speak, Vote, WitchAct
from appliance.judge.tools import ToolSpec

_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_SEAT = re.compile(r"\b(?:p|players?|play|place|seats?|number)\s*(\d+)\b")
_NEGATION = re.compile(r"\b(?:not|no|don't|dont|never|won't|wont|nobody|none|keep)\b|n't\b")
_ABSTAIN = re.compile(r"\b(?:abstain\w*|skip\w*|none|nobody|no vote)\b")
_CLAUSES = re.compile(r"[,.;!?]|\band\b|\bbut\b|\bthen\b")


class TranscriptRejected(IllegalAction):
    """The transcript does not say one legal action unambiguously; ask the seat again."""


def normalise(text: str) -> str:
    """Lower case, "no one" → "nobody", number words → digits, "p-3"/"p.3" → "p 3",
    clause punctuation kept, other symbols dropped, whitespace collapsed."""
    t = text.lower().replace("’", "'")
    t = re.sub(r"\b(p)[-.\s]*(\d)", r"\1 \2", t)
    t = re.sub(r"\bno[- ]one\b", "nobody", t)  # before "one" becomes a digit
    t = re.sub(r"\b(" + "|".join(_NUMBERS) + r")\b", lambda m: str(_NUMBERS[m.group(1)]), t)
    t = re.sub(r"[^a-z0-9',.;!? ]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def parse(transcript: str, tool: ToolSpec) -> Action:
    """The action ``transcript`` states for ``tool``.

    Raises:
        TranscriptRejected: nothing, more than one thing, a negated or an illegal thing
            was said, or a recap was asked for (the message says which).
    """
    if recap.request(transcript) is not None:
        raise TranscriptRejected(f"{transcript!r} asks for a recap: a question to the judge, not a move")
    text = normalise(transcript)
    if tool.name == tools.SPEAK:
        return _speech(transcript, tool.max_chars)
    if tool.name == tools.WITCH_ACT:
        return _witch(text, tool)
    seats = _seats(text, tool)
    if tool.name == tools.VOTE and _ABSTAIN.search(text):
        if seats:
            raise TranscriptRejected(f"both an abstention and {', '.join(seats)} in {transcript!r}")
        return Vote(None)
    if _NEGATION.search(text):
        raise TranscriptRejected(f"a negation makes {transcript!r} ambiguous")
    if len(seats) != 1:
        raise TranscriptRejected(f"{'no seat' if not seats else 'more than one seat'} named in {transcript!r}")
    target = seats[0]
    return {tools.VOTE: Vote, tools.NIGHT_KILL: NightKill, tools.SEER_CHECK: SeerCheck}[tool.name](target)


def _seats(text: str, tool: ToolSpec) -> list[str]:
    """Distinct seats named in ``text`` (in order), each checked against the legal targets."""
    out: list[str] = []
    for n in _SEAT.findall(text):
        seat = f"P{int(n)}"
        if seat not in tool.targets:
            raise TranscriptRejected(f"{seat} is not a legal choice now (choices: {', '.join(tool.targets)})")
        if seat not in out:
            out.append(seat)
    return out


def _speech(transcript: str, max_chars: int) -> Speak:
    text = " ".join(transcript.split())
    if not re.search(r"[A-Za-z]", text):
        raise TranscriptRejected("nothing was said")
    if len(text) > max_chars:
        text = text[:max_chars].rsplit(" ", 1)[0]
    return Speak(text)


def _witch(text: str, tool: ToolSpec) -> WitchAct:
    save: bool | None = None
    poison: str | None = None
    poison_said = False
    for clause in (c.strip() for c in _CLAUSES.split(text)):
        if not clause:
            continue
        about_save = re.search(r"\b(?:save\w*|antidote)\b", clause) is not None
        about_poison = re.search(r"\bpoison\w*\b", clause) is not None
        if about_save and about_poison:
            raise TranscriptRejected(f"saving and poisoning in one clause: {clause!r}")
        negated = _NEGATION.search(clause) is not None
        seats = _seats(clause, tool) if about_poison else []
        if about_save:
            if tool.victim is None:
                raise TranscriptRejected("the antidote is already used")
            named = {f"P{int(n)}" for n in _SEAT.findall(clause)}
            if named - {tool.victim}:
                raise TranscriptRejected(f"only tonight's victim {tool.victim} can be saved, heard {clause!r}")
            if save is not None and save == negated:
                raise TranscriptRejected(f"contradictory save clauses in {text!r}")
            save = not negated
        elif about_poison:
            if not tool.can_poison:
                raise TranscriptRejected("the poison is already used")
            choice = None if negated and not seats else (seats[0] if len(seats) == 1 and not negated else "?")
            if choice == "?" or (poison_said and choice != poison):
                raise TranscriptRejected(f"unclear poison clause {clause!r}")
            poison, poison_said = choice, True
        elif _SEAT.search(clause):
            raise TranscriptRejected(f"a seat named outside a save or poison clause: {clause!r}")
    if tool.victim is not None and save is None:
        raise TranscriptRejected("say whether you save tonight's victim")
    if tool.can_poison and not poison_said:
        raise TranscriptRejected("say whom you poison, or no poison")
    return WitchAct(save=bool(save), poison=poison)
