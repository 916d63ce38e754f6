"""Word error rate after normalising both sides the same way.

:func:`normalise` lower-cases, reads an e-mail's "@" and inner "." as the words "at" and
"dot", removes punctuation, writes numbers as digits and splits digit strings into single
digits, so "555-234-9981", "five five five, two three four …" and "5 5 5 2 3 4 …" compare
equal (as do "2020" and "twenty twenty", "1,000" and "one thousand"); "ok" counts as
"okay". Ordinals keep their suffix ("twelfth" → "12th"). :func:`word_errors` is the
Levenshtein distance over words; :func:`wer` sums it over many pairs (a corpus WER, not a
mean of per-utterance rates).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from appliance.phone_agent.normalise import ORDINALS, TEENS, TENS

# the agent's tables, but not its "oh"/"o"/"nought" for 0: here an "oh" is a word like any other
_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = TEENS
_TENS = TENS
_SCALES = {"thousand": 1_000, "million": 1_000_000}
_ORDINALS = ORDINALS
_SPELLINGS = {"ok": "okay"}


def _suffix(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _numbers(tokens: list[str]) -> list[str]:
    """Number words → numbers (as strings): "twenty one" → "21", "one hundred and five" →
    "105", "five five five" → "5", "5", "5", "nineteen eighty four" → "19", "84",
    "twenty first" → "21st"."""
    out: list[str] = []
    total = current = 0
    last = None  # kind of the last number word in the number being read
    in_number = False

    def flush() -> None:
        nonlocal total, current, last, in_number
        if in_number:
            out.append(str(total + current))
        total = current = 0
        last, in_number = None, False

    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if tok in _UNITS or tok in _TEENS:
            value = _UNITS.get(tok, _TEENS.get(tok))
            if last in ("unit", "teen") or (last == "tens" and tok in _TEENS):
                flush()
            current += value
            last, in_number = ("unit" if tok in _UNITS else "teen"), True
        elif tok in _TENS:
            if last in ("unit", "teen", "tens"):
                flush()
            current += _TENS[tok]
            last, in_number = "tens", True
        elif tok == "hundred" and in_number and last in ("unit", "teen"):
            current *= 100
            last = "hundred"
        elif tok in _SCALES and in_number:
            total += current * _SCALES[tok]
            current, last = 0, "scale"
        elif tok == "and" and last in ("hundred", "scale") and (nxt in _UNITS or nxt in _TEENS or nxt in _TENS):
            continue
        elif tok in _ORDINALS:
            if last == "tens" and _ORDINALS[tok] < 10:
                n = total + current + _ORDINALS[tok]
                total = current = 0
                last, in_number = None, False
            else:
                flush()
                n = _ORDINALS[tok]
            out.append(f"{n}{_suffix(n)}")
        else:
            flush()
            out.append(tok)
    flush()
    return out


def normalise(text: str) -> list[str]:
    """``text`` as the words WER compares (see the module docstring)."""
    s = text.lower()
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)  # 1,000 → 1000
    s = s.replace("@", " at ")
    s = re.sub(r"(?<=[a-z0-9])\.(?=[a-z0-9])", " dot ", s)  # john.smith → john dot smith
    s = s.replace("%", " percent ").replace("&", " and ")
    s = re.sub(r"['’]", "", s)  # what's → whats
    s = re.sub(r"[^a-z0-9]+", " ", s)
    s = re.sub(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z]{3,})", " ", s)  # flight215 → flight 215; 12th stays
    words = _numbers([_SPELLINGS.get(w, w) for w in s.split()])
    return [part for w in words for part in (list(w) if w.isdigit() else [w])]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """``(edits, reference words)``: substitutions + deletions + insertions turning the
    normalised ``hypothesis`` into the normalised ``reference``, and the reference's length."""
    ref, hyp = normalise(reference), normalise(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[len(hyp)], len(ref)


def wer(pairs: Iterable[tuple[str, str]]) -> float:
    """Corpus WER of ``(reference, hypothesis)`` pairs: all edits ÷ all reference words
    (0.0 for no reference words)."""
    edits = words = 0
    for ref, hyp in pairs:
        e, n = word_errors(ref, hyp)
        edits, words = edits + e, words + n
    return edits / words if words else 0.0
