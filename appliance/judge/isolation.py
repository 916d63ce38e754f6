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

Entitled: its own role; for werewolves the team, proposals, victims and the attack
instruction; for the Seer her own check results and the check instruction; for the
Witch the victims of nights on which she still held the antidote, her own potion use and
the potion instructions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
    Role.WITCH: [r"Night \d+: your potions\.", r"save: true uses your antidote on tonight's victim, false keeps it\.",
                 r"poison: one of (?:P\d+, )*P\d+, or null to keep the poison\."],
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
    kinds = {"role"}
    if role is Role.WEREWOLF:
        kinds |= {"wolf_team", "wolf_proposal", "wolf_victim"}
    elif role is Role.SEER:
        kinds |= {"seer_result"}
    elif role is Role.WITCH:
        kinds |= {"witch_action"}
    saved_round = next((e.round for e in truth.events if e.kind == "witch_action" and e.data["save"]), None)
    out: set[str] = set()
    for e in truth.events:
        mine = e.kind != "role" or e.data["seat"] == seat
        info_ok = (e.kind == "witch_info" and role is Role.WITCH
                   and (saved_round is None or e.round <= saved_round))
        if (e.kind in kinds and mine) or info_ok:
            out.update(sentences(render_event(e) or ""))
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


def count_violations(texts: Iterable[tuple[str, str]], truth: GameState,
                     static: Iterable[tuple[str, str]] = ()) -> tuple[int, list[tuple[str, str]]]:
    """Scan ``(seat, text)`` pairs (views, turn prompts) and ``static`` ``(seat, text)``
    pairs (system prompts, see :func:`scan`); returns the number of distinct
    ``(seat, sentence)`` violations and the list of them."""
    cache: dict[str, set[str]] = {}
    found: dict[tuple[str, str], None] = {}
    for texts_, is_static in ((texts, False), (static, True)):
        for seat, text in texts_:
            allowed = cache.setdefault(seat, entitled(truth, seat))
            for s in scan(text, seat, truth, allowed, static=is_static):
                found[(seat, s)] = None
    return len(found), list(found)
