"""Written → spoken numbers and dates, in words a speech synthesiser cannot misread
("fourteenth", not "14th", which ASR easily hears back as "40th")."""

from __future__ import annotations

import datetime as _dt

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINALS = (
    "",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
)


def number(n: int) -> str:
    """0–99 in words: 84 → "eighty four"."""
    if n < 10:
        return DIGITS[n]
    if n < 20:
        return _TEENS[n - 10]
    return _TENS[n // 10] + ("" if n % 10 == 0 else " " + DIGITS[n % 10])


def ordinal(n: int) -> str:
    """1–31 as an ordinal: 14 → "fourteenth", 21 → "twenty first", 30 → "thirtieth"."""
    if n <= 20:
        return _ORDINALS[n]
    return _TENS[n // 10][:-1] + "ieth" if n % 10 == 0 else f"{_TENS[n // 10]} {_ORDINALS[n % 10]}"


def year(y: int) -> str:
    """A year as said: 1990 → "nineteen ninety", 2005 → "two thousand and five", 1905 → "nineteen oh five"."""
    if 2000 <= y < 2010:
        return "two thousand" + ("" if y == 2000 else " and " + DIGITS[y - 2000])
    hi, lo = divmod(y, 100)
    return f"{number(hi)} {'hundred' if lo == 0 else ('oh ' + DIGITS[lo]) if lo < 10 else number(lo)}"


def digit_groups(d: str) -> str:
    """Digits one by one in groups of three (a lone last digit joins the group before):
    "512873946" → "five one two, eight seven three, nine four six"."""
    groups = [d[i : i + 3] for i in range(0, len(d), 3)]
    if len(groups) > 1 and len(groups[-1]) == 1:
        groups[-2:] = [groups[-2] + groups[-1]]
    return ", ".join(" ".join(DIGITS[int(c)] for c in g) for g in groups)


#: The ICAO/NATO spelling alphabet (ICAO Annex 10, Vol. II): letters said so they survive a phone line.
SPELLING = {
    c: w
    for c, w in zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        (
            "Alpha",
            "Bravo",
            "Charlie",
            "Delta",
            "Echo",
            "Foxtrot",
            "Golf",
            "Hotel",
            "India",
            "Juliett",
            "Kilo",
            "Lima",
            "Mike",
            "November",
            "Oscar",
            "Papa",
            "Quebec",
            "Romeo",
            "Sierra",
            "Tango",
            "Uniform",
            "Victor",
            "Whiskey",
            "X-ray",
            "Yankee",
            "Zulu",
        ),
    )
}


def date(iso: str) -> str:
    """ "1990-03-14" → "the fourteenth of March, nineteen ninety"."""
    d = _dt.date.fromisoformat(iso)
    return f"the {ordinal(d.day)} of {d.strftime('%B')}, {year(d.year)}"
