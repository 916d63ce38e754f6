"""Named options across languages: a country or language as a page in another language lists
it ("Vereinigtes Königreich") and as the person says it in English ("United Kingdom").

The names are Unicode CLDR's (the ``babel`` package: ``Locale.territories`` and
``Locale.languages``, code → name in each locale), never an LLM's guess (issue 26: on a German
page "United Kingdom" was matched to "United States Minor Outlying Islands"). CLDR's short
and variant English names are known too ("UK", "US", "United States of America" via the
``territories`` of ``en`` and its alternates), so a person's usual name finds its code.
"""

from __future__ import annotations

import functools
import re

from babel import Locale, UnknownLocaleError

#: English names people use for a territory that CLDR lists under another name
_ALSO = {
    "uk": "GB",
    "britain": "GB",
    "great britain": "GB",
    "england": "GB",
    "scotland": "GB",
    "wales": "GB",
    "northern ireland": "GB",
    "usa": "US",
    "us": "US",
    "america": "US",
    "united states of america": "US",
    "holland": "NL",
}


def _fold(s: str) -> str:
    return re.sub(r"[\W_]+", " ", s).strip().casefold()


@functools.cache
def _names(lang: str) -> dict[str, str]:
    """Folded country and language names in ``lang`` → their code (``T:GB``, ``L:de``); {} for
    a language CLDR does not know."""
    try:
        loc = Locale.parse(lang.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return {}
    out = {_fold(name): f"L:{code}" for code, name in loc.languages.items()}
    out.update({_fold(name): f"T:{code}" for code, name in loc.territories.items() if code.isalpha()})
    return out


def is_english(lang: str) -> bool:
    """Whether a page's ``lang`` attribute is English or not given ('' counts as English)."""
    return not lang or lang.casefold().split("-")[0] == "en"


def code_of(name: str, lang: str = "en") -> str | None:
    """``name`` (a country or a language, in ``lang``) → ``T:ISO3166`` or ``L:ISO639`` code; None
    when CLDR has no such name."""
    key = _fold(name)
    if is_english(lang) and key in _ALSO:
        return f"T:{_ALSO[key]}"
    return _names(lang.split("-")[0] if lang else "en").get(key)


def english(label: str, lang: str) -> str:
    """A page option's ``label`` in ``lang`` as English ('' when it is no country or language
    name CLDR knows, or the page is English already)."""
    if is_english(lang):
        return ""
    code = code_of(label, lang)
    if code is None:
        return ""
    kind, c = code.split(":")
    en = Locale.parse("en")
    return (en.territories if kind == "T" else en.languages).get(c, "")
