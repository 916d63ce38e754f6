"""What a day speech claims, read from its text by a small parser. Pure, never guesses.

A speech is public, true or not; this module only says what it *claims*. It is read
sentence by sentence (``.``, ``!``, ``?``, ``;`` and a new line end a sentence), after
lower-casing, "P-3"/"P 3"/"player three"/"seat 3" → ``p3`` and number words → digits.
Each sentence is split at ``because``/``since``: the head holds the stance, the reason
may upgrade it to a check report ("… because my check found a werewolf"). Reported
speech ("P3 said P4 is a werewolf") claims nothing for the speaker.

Kinds of :class:`Claim` (``target`` is a seat id, ``None`` for ``SEER``):

- ``SEER`` — the speaker claims to be the seer: "I am the seer", "I'm the real seer",
  "as the seer", "seer here", or any report of "my check".
- ``WOLF`` — the speaker says ``target`` is a werewolf: "P3 is a werewolf/wolf",
  "my check found P3 (is a werewolf)", "I checked P3 and they are a werewolf",
  "I suspect P3 because my check found a werewolf". ``checked`` when stated as a check.
- ``CLEAR`` — ``target`` is not a werewolf: "P5 is not a werewolf", "P5 is clear/innocent",
  "my check cleared P5 (and P6)", "I checked P5, not a werewolf",
  "I trust P5 because my check cleared them". ``checked`` when stated as a check.
- ``SUSPECT`` — "I suspect P4", "I accuse P4", "vote (for/against) P4", "P4 is suspicious",
  "P4 sounds like a werewolf", "P4 is lying", "I don't trust P4".
- ``TRUST`` — "I trust P2", "I believe P2", "I defend P2", "P2 sounds honest",
  "don't vote P2", "I don't suspect P2".

The speaker never claims anything about itself except ``SEER``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

SEER = "seer"
WOLF = "wolf"
CLEAR = "clear"
SUSPECT = "suspect"
TRUST = "trust"
KINDS = (SEER, WOLF, CLEAR, SUSPECT, TRUST)


@dataclass(frozen=True)
class Claim:
    """One thing a speech claims: ``speaker`` says ``kind`` about ``target`` on day ``round``."""

    round: int
    speaker: str
    kind: str
    target: str | None = None
    checked: bool = False


_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_SENTENCES = re.compile(r"[.!?;\n]+")
_REASON = re.compile(r"\b(?:because|since|cause)\b")
_REPORTED = re.compile(r"\b(?:said|says|say|claimed|claims|told us|thinks|think that|believes that)\b")
_WOLF = r"(?:a |the |one of the |definitely a |surely a |clearly a |our )?(?:were ?)?wol(?:f|ves)\b"
_P = r"(p[1-9])"
_SEER_CLAIM = re.compile(
    r"\b(?:i am|i'm|im)(?: the| a| your)?(?: real| true| only| actual)? seer\b"
    r"|\bas the(?: real| true)? seer\b|\bseer here\b|\bmy (?:checks?|visions?)\b"
    r"|\bi checked\b"
)
_CHECK_FOUND = re.compile(
    rf"\bmy (?:checks?|visions?) (?:found|finds|shows?|showed|shown|says|said|revealed|reveals|"
    rf"caught|proves|proved) {_P}\b(?:(?: is| was| as| to be)? {_WOLF})?"
)
_CHECK_CLEARED = re.compile(rf"\bmy (?:checks?|visions?) (?:cleared|clears|clear) {_P}((?:(?:,| and|, and) p[1-9])*)")
_CHECKED = re.compile(
    rf"\bi checked {_P}\b[ ,:]*(?:and |,)?[ ]*(?:(?:they|he|she|it)(?: is| are|'s|'re| was| were)? )?"
    rf"(not a |not |innocent|clear|good|a villager|{_WOLF})"
)
_IS_NOT_WOLF = re.compile(rf"\b{_P} (?:is|was|'s) not {_WOLF}")
_IS_CLEAR = re.compile(rf"\b{_P} (?:is|was|'s) (?:clear|cleared|innocent)\b")
_IS_WOLF = re.compile(rf"\b{_P} (?:is|was|'s|must be|has to be) {_WOLF}")
_SUSPECT = [
    re.compile(p)
    for p in (
        rf"\bi (?:strongly |really |still |also )?(?:suspect|accuse|distrust|doubt) {_P}",
        rf"\b(?:i )?(?:vote|voting) (?:for |against )?{_P}",
        rf"\b(?:let's |lets |we should |please )?(?:vote|exile|eliminate) {_P} out\b",
        rf"\b{_P} (?:is|seems|looks|sounds|acts|was) (?:very |so |really |quite )?(?:suspicious|shady|guilty|"
        rf"like (?:a )?(?:were ?)?wol(?:f|ves)|like a liar|fishy)",
        rf"\b{_P} (?:is lying|lies|lied|is a liar)\b",
        rf"\bi (?:do not|don't|dont) trust {_P}",
        rf"\bi (?:am|'m) suspicious of {_P}",
    )
]
_TRUST = [
    re.compile(p)
    for p in (
        rf"\bi (?:fully |really |still |also )?(?:trust|believe|defend|vouch for) {_P}",
        rf"\b{_P} (?:is|seems|looks|sounds) (?:very |so |really |quite )?(?:honest|trustworthy|good|fine)\b",
        rf"\b(?:do not|don't|dont) vote (?:for |against )?{_P}",
        rf"\bi (?:do not|don't|dont) suspect {_P}",
    )
]
_CHECK_FOUND_BARE = re.compile(
    r"\bmy (?:checks?|visions?) (?:found|shows?|showed|revealed|caught) (?:a |one )?"
    r"(?:were ?)?wol(?:f|ves)\b"
)
_CHECK_CLEARED_BARE = re.compile(r"\bmy (?:checks?|visions?) (?:cleared|clears) (?:them|him|her)\b")


def normalise(text: str) -> str:
    """Lower case; number words → digits; "P-3", "P 3", "player 3", "seat 3" → ``p3``;
    curly apostrophes straightened; whitespace collapsed."""
    t = text.lower().replace("’", "'")
    t = re.sub(r"\bno[- ]one\b", "nobody", t)
    t = re.sub(r"\b(" + "|".join(_NUMBERS) + r")\b", lambda m: str(_NUMBERS[m.group(1)]), t)
    t = re.sub(r"\b(?:p|players?|seats?|number)[-.\s]*([1-9])\b", r"p\1", t)
    return re.sub(r"\s+", " ", t).strip()


@lru_cache(maxsize=4096)  # every seat reads every speech: parse it once
def read(speaker: str, text: str, round_: int = 0) -> tuple[Claim, ...]:
    """The claims ``speaker``'s speech ``text`` makes on day ``round_``, in order, without
    duplicates. A claim about the speaker itself is dropped (except ``SEER``)."""
    out: list[Claim] = []
    for kind, target, checked in _statements(text):
        c = Claim(round_, speaker, kind, target, checked)
        if target != speaker and c not in out:
            out.append(c)
    # a check report is a seer claim, whatever words it used
    if any(c.checked for c in out) and not any(c.kind == SEER for c in out):
        out.insert(0, Claim(round_, speaker, SEER))
    # "P3 is a werewolf. Vote P3 out." is one accusation, not two
    firm = {(c.target, SUSPECT if c.kind == WOLF else TRUST) for c in out if c.kind in (WOLF, CLEAR)}
    return tuple(c for c in out if (c.target, c.kind) not in firm)


def summary(said: tuple[Claim, ...]) -> str:
    """``said`` (one speech's claims, as :func:`read` returns them) in a few words for the
    seat's card on the page, e.g. ``claims seer; P3 is a werewolf (checked); suspects P2``;
    ``""`` when it claims nothing."""
    return "; ".join(_WORDS[c.kind].format(c.target) + (" (checked)" if c.checked else "") for c in said)


#: each kind of claim in words, ``{}`` its target
_WORDS = {
    SEER: "claims seer",
    WOLF: "{} is a werewolf",
    CLEAR: "{} is not a werewolf",
    SUSPECT: "suspects {}",
    TRUST: "trusts {}",
}


@lru_cache(maxsize=4096)  # the same words come from many seats on many days (templates)
def _statements(text: str) -> tuple[tuple[str, str | None, bool], ...]:
    """What ``text`` states, in order, as ``(kind, target, checked)`` (target a seat id
    or ``None``), whoever says it on whichever day."""
    out: list[tuple[str, str | None, bool]] = []

    def add(kind: str, target: str | None = None, checked: bool = False) -> None:
        out.append((kind, target.upper() if target else None, checked))

    for sentence in _SENTENCES.split(normalise(text)):
        head, reason = _split_reason(sentence)
        if head:
            _read_sentence(head, reason, add)
    return tuple(out)


def _split_reason(sentence: str) -> tuple[str, str]:
    parts = _REASON.split(sentence, 1)
    return parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")


def _read_sentence(head: str, reason: str, add) -> None:
    m = _REPORTED.search(head)
    own = head[: m.start()] if m else head  # what others said is theirs, not the speaker's
    m = _REPORTED.search(reason)
    reason = reason[: m.start()] if m else reason  # "… because P3 said: I am the seer" claims nothing
    if _SEER_CLAIM.search(own) or _SEER_CLAIM.search(reason):
        add(SEER)
    stated: set[str] = set()
    for m in _CHECK_FOUND.finditer(own):
        add(WOLF, m.group(1), checked=True)
        stated.add(m.group(1))
    for m in _CHECK_CLEARED.finditer(own):
        for seat in [m.group(1)] + re.findall(r"p[1-9]", m.group(2) or ""):
            add(CLEAR, seat, checked=True)
            stated.add(seat)
    for m in _CHECKED.finditer(own):
        wolf = "wol" in m.group(2) and not m.group(2).startswith("not")
        add(WOLF if wolf else CLEAR, m.group(1), checked=True)
        stated.add(m.group(1))
    for m in _IS_NOT_WOLF.finditer(own):
        if m.group(1) not in stated:
            add(CLEAR, m.group(1))
            stated.add(m.group(1))
    for m in _IS_CLEAR.finditer(own):
        if m.group(1) not in stated:
            add(CLEAR, m.group(1))
            stated.add(m.group(1))
    for m in _IS_WOLF.finditer(own):
        if m.group(1) not in stated and not re.search(rf"\b{m.group(1)} (?:is|was|'s) not ", own):
            add(WOLF, m.group(1))
            stated.add(m.group(1))
    for kind, patterns in ((SUSPECT, _SUSPECT), (TRUST, _TRUST)):
        for p in patterns:
            for m in p.finditer(own):
                seat = m.group(1)
                if kind == SUSPECT and re.search(rf"\b(?:do not|don't|dont) vote (?:for |against )?{seat}", own):
                    continue
                if kind == SUSPECT and re.search(rf"\b(?:do not|don't|dont) suspect {seat}", own):
                    continue
                if kind == TRUST and re.search(rf"\b(?:do not|don't|dont) (?:trust|believe) {seat}", own):
                    continue
                if _CHECK_FOUND_BARE.search(reason) and kind == SUSPECT:
                    add(WOLF, seat, checked=True)
                elif _CHECK_CLEARED_BARE.search(reason) and kind == TRUST:
                    add(CLEAR, seat, checked=True)
                elif seat not in stated:
                    add(kind, seat)
