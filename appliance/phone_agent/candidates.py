"""Choosing among the page's close matches: "Paris, France or Paris, Texas?".

When the page offers several choices that fit what the person said (an autocomplete list
with near-duplicates), the computer agent sends them as ``format_invalid.candidates`` and
the person picks one. :func:`question` asks, :func:`pick` reads the answer: the candidate
said in full, else the only one with a *distinguishing* word (one not shared by every
candidate: "France", "Texas") in the answer, else the one named by its place in the list
("the first one", "the second"). Anything else — several candidates named, none — is no
pick (None): the caller asks again or takes the answer as a new value.
"""

from __future__ import annotations

import re

#: How many candidates are read out; more are cut ("… or another one?").
MAX_READ = 5
_ORDINALS = {
    "first": 0,
    "1st": 0,
    "second": 1,
    "2nd": 1,
    "third": 2,
    "3rd": 2,
    "fourth": 3,
    "4th": 3,
    "fifth": 4,
    "5th": 4,
    "last": -1,
}


#: Words that distinguish nothing ("the one in Texas", "Manchester-by-the-Sea").
_FILLER = frozenset("the a an in of on at by one please i mean it s is that this want".split())
#: words in many place names that tell no place apart on their own: "My country is the United
#: Kingdom" names no "…, United States" (bench: it picked Rome, Georgia, United States for Rome)
GENERIC = frozenset(
    "united states kingdom new north south east west northern southern eastern western saint st great "
    "city county republic island islands province state".split()
)


def _words(s: str) -> list[str]:
    return re.sub(r"[\W_]+", " ", s.casefold()).split()


def question(label: str, candidates: tuple[str, ...]) -> str:
    """The question, e.g. "The page offers several for town or city: Paris, France; or Paris,
    Texas. Which one do you mean?" (semicolons part the candidates: a label may hold commas)."""
    read = list(candidates[:MAX_READ])
    listed = read[0] if len(read) == 1 else f"{'; '.join(read[:-1])}; or {read[-1]}"
    more = " or another one" if len(candidates) > MAX_READ else ""
    what = label.strip().rstrip(":*?").strip() or "this field"
    return f"The page offers several for {what[0].lower() + what[1:]}: {listed}{more}. Which one do you mean?"


def _named_by(candidate: str, said: str, said_words: set[str], common: set[str]) -> bool:
    """Whether the answer names ``candidate`` by what sets it apart: a word of its own that is not
    :data:`GENERIC`, or two of its words in a row ("United Kingdom"; "United" alone names no
    "…, United States")."""
    ws = _words(candidate)
    if (set(ws) - common) & said_words - GENERIC:
        return True
    return any(f" {a} {b} " in said for a, b in zip(ws, ws[1:]) if {a, b} - common)


def pick(text: str, candidates: tuple[str, ...]) -> str | None:
    """The candidate the answer ``text`` names, or None (see the module docstring)."""
    said = " " + " ".join(_words(text)) + " "
    full = [c for c in candidates if f" {' '.join(_words(c))} " in said]
    if full:
        best = max(full, key=len)
        return best if sum(len(c) == len(best) for c in full) == 1 else None
    common = set.intersection(*(set(_words(c)) for c in candidates)) if candidates else set()
    said_words = set(said.split()) - _FILLER
    touched = [c for c in candidates if (set(_words(c)) - common) & said_words]
    if len(touched) == 1 and _named_by(touched[0], said, said_words, common):
        return touched[0]
    nth = {i % len(candidates) for w, i in _ORDINALS.items() if f" {w} " in said and i < len(candidates)}
    return candidates[nth.pop()] if len(nth) == 1 else None
