"""The simulated person's ear: does a read-back state exactly the person's own value?

The phone agent reads each value back ("I have Miller, spelled M I L L E R. Is that
right?"); the person hears it through Whisper and says yes only when what it heard states
its own profile value exactly. This is the simulation's oracle, so it shares no code with
the phone agent (its normaliser, its words): a bug there makes the simulation fail
instead of agreeing with it.

Strict about the value, tolerant of how Whisper writes speech:

* the value is what stands between the last "I have" ("I've got", "you said", "so
  that's") and the question ("Is that right?");
* spelled ("Miller, spelled M I L L E R"): the letters alone decide, whatever the word
  before them sounded like; a wrong, missing or extra letter is a no;
* letters as said: single letters ("D-A-V-I-D", "d a v i d"), letter names ("dee",
  "double you"), the spelling alphabet ("Mike", "M for Mike", "A as in Alpha"), "double L";
  amid a spelling, a word close to a spelling-alphabet word of its first letter is that
  word ("Alpha, Vicker, India": a listener hears Victor);
* digits as said: numerals or words, "oh", "double five", "eighty four", and "to"/"for"
  between digits (how Whisper writes a spoken "two"/"four");
* e-mails and user names: "at", "dot", "underscore", "dash" say their symbols;
* a date: any spoken or numeric form naming the same day ("the 14th of March, 1990",
  "March fourteenth, nineteen ninety", "14/03/1990"); "the 40th" is how Whisper writes a
  spoken "fourteenth" (no month has a 40th day, so no other date is taken for it), and
  "the 40 to March" its "fourteenth of March" too, and "2020-7" how it writes a spoken
  "twenty twenty seven" (bench: the person said no to right read-backs of its dates);
* a choice: the same words, or the country of a nationality ("British": "United Kingdom").

What is not pronounced never counts: case, and the spaces, hyphens and apostrophes of a
name said as words ("O'Neil-Smith" is heard as "O Neil Smith"). A spelling says them: in a
spelled name its apostrophes and hyphens count ("O, apostrophe, N, …, dash, S, …"), as in
user names, e-mails and codes the said symbols count ("emma underscore j" is not "emmaj").
"""

from __future__ import annotations

import datetime as _dt
import difflib
import functools
import re

from appliance.simulate.speech import DIGIT_WORDS, ICAO, MONTH_NAMES, SMALL_ORDINALS, TEEN_WORDS, TENS_WORDS

_UNITS = {w: i for i, w in enumerate(DIGIT_WORDS)} | {"oh": 0, "o": 0, "nought": 0}
_TEENS = {w: 10 + i for i, w in enumerate(TEEN_WORDS)}
_TENS = {w: 10 * t for t, w in TENS_WORDS.items()}
#: ordinal day words; "fortieth" … "ninetieth" are Whisper's spelling of a spoken "fourteenth" … "nineteenth"
_ORDINAL_DAYS = (
    {w: i for i, w in enumerate(SMALL_ORDINALS) if w}
    | {"twentieth": 20, "thirtieth": 30}
    | {w[:-1] + "ieth": 10 + t for t, w in TENS_WORDS.items() if t >= 4}
)
_MONTHS = (
    {m.casefold(): i for i, m in enumerate(MONTH_NAMES, 1)}
    | {m.casefold()[:3]: i for i, m in enumerate(MONTH_NAMES, 1)}
    | {"sept": 9}
)
_ICAO_WORDS = {w.casefold().replace("-", ""): c for c, w in ICAO.items()} | {"alfa": "a", "juliet": "j", "whisky": "w"}
#: how Whisper tiny.en writes the bot's spelling-alphabet words over the call (a person hears the word;
#: the person's ear hears Whisper's text): none of them is another spelling word, so each means its letter
_ICAO_WORDS |= {
    "lena": "l",
    "lina": "l",
    "anki": "y",
    "yanky": "y",
    "enki": "y",
    "romel": "r",
    "romelo": "r",
    "julehet": "j",
    "juleeet": "j",
    "whispey": "w",
    "robbo": "b",
    "rubble": "b",
    "tier": "s",
    "tierr": "s",
    "andia": "i",
    "optel": "h",
    "tulu": "z",
    "thulu": "z",
}
#: letter names as Whisper writes them
_LETTER_NAMES = {
    "ay": "a",
    "eh": "a",
    "bee": "b",
    "be": "b",
    "see": "c",
    "sea": "c",
    "cee": "c",
    "dee": "d",
    "ee": "e",
    "ef": "f",
    "eff": "f",
    "gee": "g",
    "aitch": "h",
    "eye": "i",
    "jay": "j",
    "kay": "k",
    "el": "l",
    "ell": "l",
    "em": "m",
    "en": "n",
    "pee": "p",
    "pea": "p",
    "queue": "q",
    "cue": "q",
    "are": "r",
    "ar": "r",
    "es": "s",
    "ess": "s",
    "tee": "t",
    "tea": "t",
    "you": "u",
    "vee": "v",
    "ex": "x",
    "why": "y",
    "zed": "z",
    "zee": "z",
}
_SYMBOLS = {
    "at": "@",
    "@": "@",
    "dot": ".",
    "point": ".",
    "underscore": "_",
    "dash": "-",
    "hyphen": "-",
    "minus": "-",
    "plus": "+",
    "apostrophe": "'",
    "space": "",
}
_DIGIT_HOMOPHONES = {"to": "2", "too": "2", "for": "4", "won": "1", "ate": "8"}
#: nationality → the names of its country a form lists
NATIONALITIES = {
    "american": ("united states", "united states of america", "usa", "us", "america"),
    "australian": ("australia",),
    "austrian": ("austria",),
    "belgian": ("belgium",),
    "brazilian": ("brazil",),
    "british": ("united kingdom", "great britain", "britain", "uk"),
    "canadian": ("canada",),
    "chinese": ("china",),
    "danish": ("denmark",),
    "dutch": ("netherlands", "the netherlands", "holland"),
    "finnish": ("finland",),
    "french": ("france",),
    "german": ("germany",),
    "greek": ("greece",),
    "indian": ("india",),
    "irish": ("ireland",),
    "italian": ("italy",),
    "japanese": ("japan",),
    "korean": ("korea", "south korea"),
    "mexican": ("mexico",),
    "nigerian": ("nigeria",),
    "norwegian": ("norway",),
    "pakistani": ("pakistan",),
    "polish": ("poland",),
    "portuguese": ("portugal",),
    "spanish": ("spain",),
    "swedish": ("sweden",),
    "swiss": ("switzerland",),
    "turkish": ("turkey", "turkiye"),
    "ukrainian": ("ukraine",),
    "vietnamese": ("vietnam", "viet nam"),
}

_QUESTION = re.compile(
    r"\b(?:is (?:that|this) (?:right|correct|ok|okay)|did i get (?:that|it) right|"
    r"have i got (?:that|it) right|(?:right|correct)\s*\?)",
    re.I,
)
#: the words before a read-back's value ("I had" is how Whisper may write the bot's "I have")
_FRAME = re.compile(
    r"\b(?:so that's|so that is|i have it as|i have|i had|i've got|i've|i got|i heard|you said)\b"
    r"|^\W*so\b",
    re.I,
)
_SPELLED = re.compile(r"\bspel(?:l|led|t|ling)\b[\s,.:;-]*", re.I)
#: "as one word" as Whisper writes it too: "That's one word", "S one word", "S1 word"
_UNSAID = re.compile(
    r"(?:\b(?:as|all|that's|that is|is|s)\s*)?(?:\bone|1)\s*word\b|\b(?:all (?:in )?lower ?case|lower ?case|upper ?case|capital(?: letter)?)\b",
    re.I,
)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def own_words(key: str, value: object) -> str:
    """What a person expects to hear back right after giving the detail ``key`` as ``value``:
    the value when it is plain words, with the country of a nationality ("halal.", "Irish,
    Ireland."), as the second pass's ``context`` of their Whisper
    (:meth:`~appliance.simulate.call.PersonOnCall._transcribe_piece`); ``""`` for a name (a key
    that says "name": its read-back is judged letter by letter, and a name in the context can
    stand in for letters Whisper did not hear clearly), a code, number, date or e-mail address.

    Measured on the bench's recorded bot audio: "I have Halal. Is that right?" was "I have
    hell." three times in three without it and "I have halal." with it; "I have Ireland." was
    "island" and "by one" without it."""
    if "name" in key or not isinstance(value, str) or not re.fullmatch(r"[A-Za-z][A-Za-z' -]*", value):
        return ""
    country = [c.title() for c in NATIONALITIES.get(value.casefold(), ())[:1] if c.casefold() != value.casefold()]
    return ", ".join([value, *country]) + "."


def sentences(text: str) -> list[str]:
    """``text``'s sentences, split after ".", "!" or "?" (at least one: ``[""]`` for no text)."""
    return re.split(r"(?<=[.!?])\s+", text.strip())


def clean(text: str) -> str:
    """A transcript with Whisper's repetition loops undone: a phrase said over and over
    ("Alice Alice Alice Alice" → "Alice"; "It's Martin. It's Martin. It's Mar" → "It's
    Martin."; a one-word phrase must come three times, a longer one twice, the last copy may
    be cut short), and a sentence that mostly repeats the one before it ("Yes, that's right.
    Yes, that right." → "Yes, that's right."), unless it is spelling-alphabet words, which do
    repeat in a spelling ("…, Oscar, Whiskey. Alpha, Kilo.")."""
    said = text.split()
    keys = [re.sub(r"\W", "", w).casefold() for w in said]
    body = " ".join(keys)
    for size in range(1, len(keys) // 2 + 1):
        if len(keys) // size >= (3 if size == 1 else 2):
            phrase = " ".join(keys[:size]) + " "
            if (phrase * (len(keys) // size + 1)).startswith(body):
                return " ".join(said[:size]).rstrip(",")
    kept: list[tuple[str, set[str]]] = []
    for sentence in sentences(text):
        vocabulary = set(re.findall(r"[a-z0-9']+", sentence.casefold()))
        if (
            kept
            and vocabulary
            and not vocabulary <= _ICAO_WORDS.keys()
            and 2 * len(vocabulary & kept[-1][1]) >= len(vocabulary)
        ):
            continue
        kept.append((sentence, vocabulary))
    return " ".join(s for s, _ in kept).strip()


def read_back(heard: str) -> str:
    """The value part of a read-back: "Thanks. I have Miller, spelled M I L L E R. Is that
    right?" → "Miller, spelled M I L L E R"."""
    text = heard.strip()
    questions = list(_QUESTION.finditer(text))
    if questions:
        text = text[: questions[-1].start()]
    frames = list(_FRAME.finditer(text))
    if frames:
        text = text[frames[-1].end() :]
    return text.strip(" \t,.;:!?")


def spelled(heard: str) -> bool:
    """Whether the read-back spells its value ("…, spelled …", "M for Mike")."""
    part = read_back(heard)
    return bool(_SPELLED.search(part) or re.search(r"\b(?:for|as in)\s+[a-z]{2,}", part, re.I))


def states(heard: str, value: str) -> bool:
    """Whether the read-back ``heard`` (as Whisper wrote it) states exactly ``value``, the
    person's own written value ("Miller", "1990-03-14", "+447700900123",
    "davidmiller@example.com", "M1 1AE", "window", "British")."""
    part = read_back(heard)
    if " " in value.strip():  # a sentence's closing full stop (or ? or !) is not pronounced
        value = value.strip().rstrip(".!?")
    if not part or not value.strip():
        return False
    if _ISO_DATE.fullmatch(value):
        return _date(part) == value
    letters = _SPELLED.split(part)
    if len(letters) > 1:  # spelled: the letters alone decide
        part = letters[-1]
    spoken = _sounds(_UNSAID.sub(" ", part))
    spelt = len(letters) > 1 or _spelt(part)
    return any(_says(spoken, v, spelt) for v in (value, *NATIONALITIES.get(value.casefold(), ())))


def _spelt(part: str) -> bool:
    """Whether ``part`` spells its value without saying "spelled": three letters or more,
    each a single letter or a spelling-alphabet word, and at least half of its words ("I have
    it as Delta, apostrophe, Alpha, …")."""
    toks = [t for t in _words(part) if t.isalpha()]
    letters = sum(len(t) == 1 or t in _ICAO_WORDS for t in toks)
    return letters >= 3 and 2 * letters >= len(toks)


def country_names(value: str) -> tuple[str, ...]:
    """The names of the country that ``value``, a nationality or a country, means
    ("Irish" or "Ireland" → ``("ireland",)``; "British" → ``("united kingdom", …)``), case
    folded, or ``()`` for a value :data:`NATIONALITIES` does not know."""
    folded = value.strip().casefold()
    return NATIONALITIES.get(folded) or next((c for c in NATIONALITIES.values() if folded in c), ())


def may_mean(heard: str, value: str) -> bool:
    """Whether a read-back that does not state ``value`` might still name the same choice in
    other words ("United Kingdom" for "British"): only for a value of plain words the ear has
    no table for (neither a nationality nor a country of :data:`NATIONALITIES`: "Iceland" is
    no other word for "Ireland"), read back without spelling. Where this is False the ear's
    "no" is final."""
    return (
        bool(re.fullmatch(r"[^\W\d_]+(?:[ '-][^\W\d_]+)*", value.strip()))
        and not country_names(value)
        and not spelled(heard)
    )


# ---- letters, digits and symbols ---------------------------------------------------------------------


def _words(text: str) -> list[str]:
    text = re.sub(r"\bx[\s-]ray\b", "xray", text.casefold().replace("@", " @ "))
    out = []
    for raw in re.findall(r"[^\s,;:!?()\"]+", text):
        tok = raw.strip(".'")
        if re.fullmatch(r"[^\W_](?:[-.][^\W_])+", tok):  # "d-a-v-i-d", "d.a.v.i.d", "1-1"
            out += re.split(r"[-.]", tok)
        elif tok:
            out.append(tok)
    return out


def _numeric(tok: str | None) -> bool:
    return tok is not None and (tok.isdigit() or tok in _UNITS or tok in _TEENS or tok in _TENS)


def _spelling_word(tok: str | None) -> bool:
    return tok is not None and tok.isalpha() and len(tok) >= 2 and not _numeric(tok)


def _sounds(text: str) -> list[tuple[str, ...]]:
    """What each spoken unit may write: one tuple of alternatives per unit, in order
    ("M for Mike" → ("m",); "see" → ("c", "see"); "double five" → ("55",))."""
    toks = _words(text)
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(toks):
        tok, nxt = toks[i], toks[i + 1] if i + 1 < len(toks) else None
        for lead in ("for", "as in"):  # "M for Mike", "A as in apple", "for Alpha" (its letter unheard)
            n = len(lead.split())
            start = i + (0 if " ".join(toks[i : i + n]) == lead else 1)
            word = toks[start + n] if start + n < len(toks) else None
            said_letter = start == i or not _numeric(tok) or (tok in ("o", "oh") and (word or "")[:1] == "o")
            if " ".join(toks[start : start + n]) == lead and said_letter and _spelling_word(word):
                out.append((word[0],))
                i = start + n + 1
                break
        else:
            if re.fullmatch(r"[a-z]4", tok) and nxt in _ICAO_WORDS:  # "M4 Mike": "M for Mike"
                out.append((_ICAO_WORDS[nxt],))
                i += 2
            elif tok in ("double", "triple") and nxt is not None:
                times = 2 if tok == "double" else 3
                alts = ("w", "uu") if nxt in ("you", "u") and times == 2 else _alternatives(nxt)
                out.append(tuple(a * times for a in alts))
                i += 2
            elif tok in _TENS and nxt in _UNITS and _UNITS[nxt] > 0 and nxt not in ("oh", "o"):
                out.append((str(_TENS[tok] + _UNITS[nxt]),))  # "eighty four"
                i += 2
            elif tok in _DIGIT_HOMOPHONES and (_numeric(nxt) or (i > 0 and _numeric(toks[i - 1]))):
                out.append((_DIGIT_HOMOPHONES[tok],))
                i += 1
            else:
                alts = _alternatives(tok)
                near = (
                    _near_spelling_word(tok)
                    if len(alts) == 1 and ((i > 0 and toks[i - 1] in _ICAO_WORDS) or nxt in _ICAO_WORDS)
                    else None
                )
                out.append(alts + (near,) if near else alts)
                i += 1
    return out


@functools.lru_cache(maxsize=1024)
def _near_spelling_word(tok: str) -> str | None:
    """The letter of the spelling-alphabet word ``tok`` sounds like, as a listener hears a
    misheard one amid a spelling ("Alpha, Vicker, India": Victor; "Echo, Romato": Romeo):
    a word of the same first letter, close by :func:`difflib.get_close_matches` (ratio
    ≥ 0.6). Only asked for a word next to a spelling-alphabet word."""
    if not tok.isalpha() or len(tok) < 3:
        return None
    hit = next((w for w in difflib.get_close_matches(tok, _ICAO_WORDS, n=3, cutoff=0.6) if w[0] == tok[0]), None)
    return _ICAO_WORDS[hit] if hit else None


def _alternatives(tok: str) -> tuple[str, ...]:
    if tok in _SYMBOLS:
        return _SYMBOLS[tok], tok
    if tok in _UNITS:
        return (str(_UNITS[tok]), "o") if tok in ("oh", "o") else (str(_UNITS[tok]),)
    if tok in _TEENS or tok in _TENS:
        return (str(_TEENS.get(tok) or _TENS[tok]),)
    if tok in _ICAO_WORDS:
        return _ICAO_WORDS[tok], tok
    if tok in _LETTER_NAMES:
        return _LETTER_NAMES[tok], tok
    return (tok, tok.replace("-", "")) if "-" in tok else (tok,)


def _identifier(value: str) -> bool:
    """A user name, e-mail, phone number or code: its said symbols count."""
    return bool(re.search(r"[\d@_+]", value))


def _canon(text: str, identifier: bool, spelt: bool = False) -> str | None:
    """``text`` as compared: case folded; for a name only letters and digits (its symbols are
    not said), and its apostrophes and hyphens too when ``spelt`` (a spelling says them:
    "Delta, apostrophe, Alpha, …"; bench, aoife: "D'Arcy-Byrne" spelled back without its
    apostrophe was taken for right, and the form got "Darcy-Byrne"); None for a said symbol
    that a name cannot hold."""
    if identifier:
        return re.sub(r"[^\w@.+\-]", "", text.casefold())
    if text in ("@", ".", "_", "+"):
        return None
    return "".join(c for c in text.casefold() if c.isalnum() or (spelt and c in "'-"))


def _says(spoken: list[tuple[str, ...]], value: str, spelt: bool = False) -> bool:
    """Whether some choice of one alternative per unit writes exactly ``value`` (``spelt``:
    the units spell it, so a name's apostrophes and hyphens must be said too)."""
    ident = _identifier(value)
    want = _canon(value, ident, spelt)
    reach = {0}
    for alternatives in spoken:
        pieces = {c for a in alternatives if (c := _canon(a, ident, spelt)) is not None}
        reach = {p + len(c) for p in reach for c in pieces if want.startswith(c, p)}
        if not reach:
            return False
    return len(want) in reach and bool(want)


# ---- dates --------------------------------------------------------------------------------------------

#: a decade's year and a digit: how Whisper writes a spoken "twenty twenty seven" ("2020-7", "2020 7")
_SPLIT_YEAR = re.compile(r"\b(\d\d[1-9]0)[- ]([1-9])\b(?![-/.]\d)")


#: "the 40 to March": how Whisper writes a spoken "the fourteenth of March" (no month has a 40th day)
_TEENTH_OF = re.compile(r"\b([4-9])0 to (?=(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)")


def _date(part: str) -> str | None:
    """The one date ``part`` names, ISO, or None (none, several, or not a real day)."""
    text = _SPLIT_YEAR.sub(lambda m: str(int(m.group(1)) + int(m.group(2))), part.casefold())
    text = _TEENTH_OF.sub(lambda m: f"1{m.group(1)}th of ", text)
    if m := re.search(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b", text):
        y, mo, d = (int(g) for g in m.groups())
    elif m := re.search(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b", text):
        a, b, y = (int(g) for g in m.groups())
        d, mo = (b, a) if b > 12 else (a, b)  # day first, as the person writes dates
    else:
        return _spoken_date(re.findall(r"[a-z]+|\d+(?:st|nd|rd|th)?", text.replace("-", " ")))
    try:
        return _dt.date(y, mo, d).isoformat()
    except ValueError:
        return None


def _spoken_date(toks: list[str]) -> str | None:
    months = [(i, _MONTHS[t]) for i, t in enumerate(toks) if t in _MONTHS]
    if len(months) != 1:
        return None
    k, month = months[0]
    found = None
    for i in range(k):  # "the 14th of March"
        if (day := _day(toks, i)) is not None:
            j = day[1]
            while j < k and toks[j] in ("of", "the"):
                j += 1
            if j == k:
                found = (day[0], i, k + 1)
                break
    if found is None and (day := _day(toks, k + 1)) is not None:  # "March the fourteenth"
        found = (day[0], k, day[1])
    if found is None:
        return None
    d, start, j = found
    while j < len(toks) and toks[j] in ("of", "in", "the"):
        j += 1
    if (year := _year(toks, j)) is None:
        return None
    rest = toks[:start] + toks[year[1] :]
    if any(_numeric(t) or t[:1].isdigit() or t in _ORDINAL_DAYS for t in rest):
        return None  # another number: not one clear date
    try:
        return _dt.date(year[0], month, d).isoformat()
    except ValueError:
        return None


def _day(toks: list[str], i: int) -> tuple[int, int] | None:
    """The day of the month said at ``toks[i]`` ("the 14th", "twenty first", "22") and the
    index after it."""
    if i < len(toks) and toks[i] == "the":
        i += 1
    if i >= len(toks):
        return None
    tok, nxt = toks[i], toks[i + 1] if i + 1 < len(toks) else ""
    if m := re.fullmatch(r"(\d{1,2})(st|nd|rd|th)?", tok):
        n = int(m.group(1))
        if m.group(2) == "th" and n >= 40 and n % 10 == 0:
            n = 10 + n // 10  # "40th": Whisper's "fourteenth"
        day = (n, i + 1)
    elif tok in _ORDINAL_DAYS:
        day = (_ORDINAL_DAYS[tok], i + 1)
    elif tok in ("twenty", "thirty") and (nxt in _ORDINAL_DAYS or nxt in _UNITS) and nxt not in ("oh", "o"):
        unit = _ORDINAL_DAYS.get(nxt, _UNITS.get(nxt))
        day = (_TENS[tok] + unit, i + 2) if 0 < unit < 10 else None
    elif tok in _TEENS or tok in _TENS or (tok in _UNITS and tok not in ("oh", "o")):
        day = (_TEENS.get(tok) or _TENS.get(tok) or _UNITS[tok], i + 1)
    else:
        day = None
    return day if day and 1 <= day[0] <= 31 else None


def _year(toks: list[str], i: int) -> tuple[int, int] | None:
    """The year said at ``toks[i]`` ("1990", "nineteen ninety", "nineteen oh five", "two
    thousand and seven", "twenty twenty seven") and the index after it."""
    if i >= len(toks):
        return None
    tok = toks[i]
    if re.fullmatch(r"\d{4}", tok):
        return int(tok), i + 1
    if toks[i : i + 2] == ["two", "thousand"]:
        j = i + 2 + (toks[i + 2 : i + 3] == ["and"])
        rest = _under_100(toks, j)
        return (2000 + rest[0], rest[1]) if rest else (2000, i + 2)
    if tok not in _TEENS and tok not in _TENS:
        return None
    century = _TEENS.get(tok) or _TENS[tok]
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    if nxt == "hundred":
        return century * 100, i + 2
    if nxt in ("oh", "o") and i + 2 < len(toks) and toks[i + 2] in _UNITS:
        return century * 100 + _UNITS[toks[i + 2]], i + 3
    rest = _under_100(toks, i + 1)
    return (century * 100 + rest[0], rest[1]) if rest and rest[0] >= 10 else None


def _under_100(toks: list[str], i: int) -> tuple[int, int] | None:
    tok = toks[i] if i < len(toks) else ""
    nxt = toks[i + 1] if i + 1 < len(toks) else ""
    if tok in _TENS:
        return (
            (_TENS[tok] + _UNITS[nxt], i + 2)
            if nxt in _UNITS and nxt not in ("oh", "o", "zero")
            else (_TENS[tok], i + 1)
        )
    if tok in _TEENS:
        return _TEENS[tok], i + 1
    if tok in _UNITS and tok not in ("oh", "o"):
        return _UNITS[tok], i + 1
    return None
