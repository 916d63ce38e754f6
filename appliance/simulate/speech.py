"""The simulated person's vocabulary: how it says numbers, dates and codes, and the words
its ear knows (:mod:`~appliance.simulate.hearing`).

The person shares no code with the phone agent it talks to: were the agent's words for a
date wrong, a person using the same words would agree with them and hide the bug.
"""

from __future__ import annotations

import datetime as _dt
import re

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
TEEN_WORDS = (
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
TENS_WORDS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
#: 1st … 19th (index = day); 20th and 30th are made from the tens ("twentieth", "thirtieth").
SMALL_ORDINALS = (
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
)
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
#: The spelling alphabet of radio and phone (ICAO), one word per letter.
ICAO = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        (
            "Alpha Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar Papa Quebec "
            "Romeo Sierra Tango Uniform Victor Whiskey X-ray Yankee Zulu"
        ).split(),
    )
)


def say_number(n: int) -> str:
    """0 … 99 in words: 7 → "seven", 13 → "thirteen", 84 → "eighty four", 40 → "forty"."""
    if n >= 20:
        tens, unit = divmod(n, 10)
        return TENS_WORDS[tens] + (f" {DIGIT_WORDS[unit]}" if unit else "")
    return TEEN_WORDS[n - 10] if n >= 10 else DIGIT_WORDS[n]


def say_ordinal(day: int) -> str:
    """A day of the month: 2 → "second", 14 → "fourteenth", 20 → "twentieth", 31 → "thirty first"."""
    if day < 20:
        return SMALL_ORDINALS[day]
    tens, unit = divmod(day, 10)
    return f"{TENS_WORDS[tens]} {SMALL_ORDINALS[unit]}" if unit else TENS_WORDS[tens][:-1] + "ieth"


def say_year(year: int) -> str:
    """1990 → "nineteen ninety", 1905 → "nineteen oh five", 1900 → "nineteen hundred",
    2000 → "two thousand", 2007 → "two thousand and seven", 2027 → "twenty twenty seven"."""
    if 2000 <= year <= 2009:
        return "two thousand" + (f" and {DIGIT_WORDS[year % 10]}" if year % 10 else "")
    century, rest = divmod(year, 100)
    tail = "hundred" if rest == 0 else f"oh {DIGIT_WORDS[rest]}" if rest < 10 else say_number(rest)
    return f"{say_number(century)} {tail}"


def say_digits(digits: str) -> str:
    """Digits one by one, in threes, a lone last digit joining the three before it:
    "512873946" → "five one two, eight seven three, nine four six"; "4930" → "four nine three zero"."""
    groups = re.findall(r"\d{1,3}", digits)
    if len(groups) > 1 and len(groups[-1]) == 1:
        groups[-2:] = [groups[-2] + groups[-1]]
    return ", ".join(" ".join(DIGIT_WORDS[int(d)] for d in group) for group in groups)


def say_date(iso: str) -> str:
    """ "1990-03-14" → "the fourteenth of March, nineteen ninety"."""
    day = _dt.date.fromisoformat(iso)
    return f"the {say_ordinal(day.day)} of {MONTH_NAMES[day.month - 1]}, {say_year(day.year)}"


def say_icao(code: str) -> str:
    """A code in the spelling alphabet, letters as their words alone and digit runs in groups:
    "M1 1AE" → "Mike, one, one, Alpha, Echo"."""
    return ", ".join(
        ICAO[run.lower()] if run.isalpha() else say_digits(run) for run in re.findall(r"[A-Za-z]|\d+", code)
    )


#: how a person names a symbol when spelling
SYMBOL_WORDS = {"'": "apostrophe", "-": "dash", ".": "dot", "_": "underscore", " ": "space", "+": "plus", "@": "at"}


def say_spelled(value: str) -> str:
    """A value spelled as a person spells it on the phone once a plain answer was misheard:
    the first letter and its spelling-alphabet word, then each letter by its word, digits one
    by one, symbols by name; an e-mail's domain in words: "O'Neill" → "O for Oscar,
    apostrophe, November, Echo, India, Lima, Lima"; "jo.m9@example.com" → "J for Juliett,
    Oscar, dot, Mike, nine, at example dot com"."""
    local, at, domain = value.rpartition("@") if "@" in value else (value, "", "")
    said = [
        ICAO[c.lower()]
        if c.isalpha() and c.lower() in ICAO
        else DIGIT_WORDS[int(c)]
        if c.isdigit()
        else SYMBOL_WORDS[c]
        for c in local
        if c.isalnum() or c in SYMBOL_WORDS
    ]
    if said and local[:1].isalpha() and local[0].lower() in ICAO:  # the first letter said with its word
        said[0] = f"{local[0].upper()} for {said[0]}"
    said = ", ".join(said)
    return f"{said}, at {domain.replace('.', ' dot ')}" if at else said
