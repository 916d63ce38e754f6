"""Audit: does any text a seat received state another seat's private facts?

Private facts are other seats' roles, the Seer's checks, the Witch's knowledge and
potions, and the werewolves' night conference. The checker works on *text* (rendered
views and the exact prompts in a ``--trace``), independently of how the views were
built: it derives what each seat is entitled to from the roles alone, not from the
events' audience lists the view builder uses.

Method: quoted speech (``P3 said: "…"``) is removed first — what seats say aloud is
public, true or not. The rest is split into sentences. A sentence is a violation unless
the seat is entitled to it when it either

- names another seat **and** uses private vocabulary (role names, attack/kill/victim/
  propose, check, save/poison/antidote/potion), or
- uses night-action vocabulary (everything above but the role names) at all.

**Speeches** are public, so :func:`speech_leaks` audits what the seats *said*, from the
roles alone as well: a werewolf that names a partner (in any words: "P2", "player two",
"seat 2"), or says a seat it knows is no werewolf is one ("P4 is innocent"); a werewolf
or the Witch that speaks of the night's actions (attacks, proposals, saves, poisons,
potions), which only they know.

Entitled: its own role; for werewolves the team, proposals, victims and the attack
instruction; for the Seer her own check results and the check instruction; for the
Witch the victims of nights on which she still held the antidote, her own potion use and
the potion instructions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from appliance.judge.events import (
    RoleAssigned,
    SeerResult,
    Speech,
    WitchAction,
    WitchInfo,
    WolfProposal,
    WolfTeam,
    WolfVictim,
)
from appliance.judge.state import GameState, Role
from appliance.judge.views import render_event

_SPEECH = re.compile(r'\b(P\d+) said: "(?:[^"\\]|\\.)*"')
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")
_SEAT = re.compile(r"\bP([1-9])\b")
_ROLE_WORDS = r"were ?wol(?:f|ves)|wol(?:f|ves)|seers?|witch(?:es)?|villagers?"
_ACTION_WORDS = r"attack\w*|kill\w*|victim\w*|propos\w*|check\w*|sav(?:e|ed|es|ing)|poison\w*|antidotes?|potions?"
_PRIVATE = re.compile(rf"\b(?:{_ROLE_WORDS}|{_ACTION_WORDS})\b", re.IGNORECASE)
_ACTION = re.compile(rf"\b(?:{_ACTION_WORDS})\b", re.IGNORECASE)
#: the turn instructions (views.instruction) each role may receive
_INSTRUCTIONS = {
    Role.WEREWOLF: [r"Night \d+: choose the seat to attack\."],
    Role.SEER: [r"Night \d+: choose a seat to check\."],
    Role.WITCH: [
        r"Night \d+: your potions\.",
        r"save: true uses your antidote on tonight's victim, false keeps it\.",
        r"poison: one of (?:P\d+, )*P\d+, or null to keep the poison\.",
    ],
    Role.VILLAGER: [],
}


def sentences(text: str) -> list[str]:
    """``text`` without quoted speech, split into stripped, non-empty sentences."""
    text = _SPEECH.sub(lambda m: f"{m.group(1)} spoke.", text)
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def entitled(truth: GameState, seat: str) -> set[str]:
    """Sentences naming other seats with private vocabulary that ``seat`` may receive,
    derived from the roles in ``truth`` (normally the final state of the game)."""
    role = truth.role(seat)
    saved_round = next((e.round for e in truth.events if isinstance(e.what, WitchAction) and e.what.save), None)
    out: set[str] = set()
    for e in truth.events:
        match e.what:
            case RoleAssigned(seat=whose):
                mine = whose == seat
            case WolfTeam() | WolfProposal() | WolfVictim():
                mine = role is Role.WEREWOLF
            case SeerResult():
                mine = role is Role.SEER
            case WitchAction():
                mine = role is Role.WITCH
            case WitchInfo():
                mine = role is Role.WITCH and (saved_round is None or e.round <= saved_round)
            case _:
                mine = False  # public events entitle no seat to a private fact
        if mine:
            out.update(sentences(render_event(e)))
    return out


def scan(text: str, seat: str, truth: GameState, allowed: set[str] | None = None, static: bool = False) -> list[str]:
    """Sentences in ``text`` that reveal another seat's private facts to ``seat``.

    ``allowed`` may pass a precomputed :func:`entitled` set. ``static``: ``text`` is a
    fixed system prompt (rules and the seat's own strategy, written before the game), so
    only sentences naming another seat with private vocabulary count. Returns ``[]`` when
    clean.
    """
    allowed = entitled(truth, seat) if allowed is None else allowed
    instructions = [re.compile(p) for p in _INSTRUCTIONS[truth.role(seat)]]
    bad = []
    for s in sentences(text):
        names_other = any(f"P{n}" != seat for n in _SEAT.findall(s))
        if not ((names_other and _PRIVATE.search(s)) or (not static and _ACTION.search(s))):
            continue
        if s in allowed or any(p.fullmatch(s) for p in instructions):
            continue
        bad.append(s)
    return bad


def count_violations(
    texts: Iterable[tuple[str, str]], truth: GameState, static: Iterable[tuple[str, str]] = ()
) -> tuple[int, list[tuple[str, str]]]:
    """Scan ``(seat, text)`` pairs (views, turn prompts) and ``static`` ``(seat, text)``
    pairs (system prompts, see :func:`scan`); returns the number of distinct
    ``(seat, sentence)`` violations and the list of them."""
    cache: dict[str, set[str]] = {}
    found: dict[tuple[str, str], None] = {}
    for texts_, is_static in ((texts, False), (static, True)):
        for seat, text in texts_:
            if seat not in cache:  # once per seat (setdefault would derive it for every text)
                cache[seat] = entitled(truth, seat)
            allowed = cache[seat]
            for s in scan(text, seat, truth, allowed, static=is_static):
                found[(seat, s)] = None
    return len(found), list(found)


_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8"}
_SAID_SEAT = re.compile(
    r"\b(?:p|players?|seats?|number)[\s.\-#]*([1-8]|one|two|three|four|five|six|seven|eight)\b", re.IGNORECASE
)
_NIGHT_TALK = re.compile(
    r"\b(?:attack\w*|kill\w*|victims?|propos\w*|sav(?:e|ed|es|ing)|poison\w*|antidotes?|potions?)\b", re.IGNORECASE
)
_CLEARED = r"(?:is|was|'s|are)\s+(?:not\s+an?\s+(?:were\s*)?wol(?:f|ves)|innocent|clear(?:ed)?|a\s+villager|good)\b"


def said_seats(text: str) -> set[str]:
    """Seat ids a speech names, however it says them ("P3", "p-3", "player three", "seat 3")."""
    return {f"P{_NUMBER_WORDS.get(m.group(1).lower(), m.group(1))}" for m in _SAID_SEAT.finditer(text)}


def speech_leaks(truth: GameState, seats: Iterable[str] | None = None) -> list[tuple[str, int, str, str]]:
    """Speeches of ``seats`` (default: every seat but the user's, whose words are a
    person's) that state another seat's private fact (see the module docstring), as
    ``(seat, round, text, why)``; ``[]`` when clean."""
    audited = set(truth.seats if seats is None else seats) - ({truth.user_seat} if seats is None else set())
    wolves = set(truth.seats_with(Role.WEREWOLF))
    out = []
    for e in truth.events:
        if not isinstance(e.what, Speech) or e.what.seat not in audited:
            continue
        seat, text = e.what.seat, e.what.text
        role = truth.role(seat)
        why = None
        if role is Role.WEREWOLF and said_seats(text) & (wolves - {seat}):
            why = "a werewolf named its partner"
        elif role is Role.WEREWOLF and any(
            re.search(rf"{_SAID_SEAT.pattern}\s+{_CLEARED}", part, re.IGNORECASE) and (said_seats(part) - wolves)
            for part in re.split(r"[.!?;]", text)
        ):
            why = "a werewolf cleared a seat it knows is no werewolf"
        elif role in (Role.WEREWOLF, Role.WITCH) and _NIGHT_TALK.search(text):
            why = f"the {role.value} spoke of the night's actions"
        if why:
            out.append((seat, e.round, text, why))
    return out
