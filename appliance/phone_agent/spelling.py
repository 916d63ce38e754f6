"""Spelling as people say it (as Whisper writes it) → the written value, and a value spelled back.

A person asked to spell says letters ("S, I, O, B, H, A, N"), letters with a word ("S as in
Sierra", "A for apple"), the spelling alphabet alone ("Sierra, India, Oscar"), "double L",
"capital D", symbols by name ("apostrophe", "dash", "underscore", "dot", "at") and digits
("nine, one", "oh" for zero in a code). :func:`decode` reads that back from one final
transcript, for one *kind* of value:

* ``name`` — letters, apostrophes, hyphens and spaces; each part capitalised
  ("o apostrophe n e i double l" → "O'Neill"), unless "capital"/"small" says otherwise;
* ``code`` — letters and digits, upper-case; "oh"/"O" is a zero;
* ``email`` — the part before the (last) "at" spelled, the domain in words or spelled
  ("… at example dot com"), lower-case;
* ``username`` — like an e-mail's local part;
* ``address`` — letters, digits and spaces, each word capitalised.

How the units are told apart, in order of trust:

1. *a word said for its letter*: after "as in", "for", "like" (and Whisper's "is in",
   "is an", "as an") the word's first letter (a spelling-alphabet word: its letter); the
   letter said before it is the same letter and is dropped ("Eight as in Alpha": A);
2. *the spelling alphabet* (ICAO Annex 10, with "Alfa", "Juliet", "Whisky", "X-ray",
   "Oskar");
3. *letters*: single letters ("s", "S-I-O", "S.I.O."), capitalised runs Whisper merged
   ("SIOB"), letter names ("ess", "dee", "double you"). A letter name that is also a word
   ("are", "you", "why", "see", "be", "oh", "eye", "a", "i" …) counts only next to another
   spelled unit, and "are", "you", "why", "see" only after one ("the letters are S …").

When words for letters (1–2) make up at least a third of the units, only they, digits and
symbols count: letters then are the ones said before "as in" or ASR noise ("S.S. and
Sierra"). Anything else (lead-ins such as "my name is", the word spelled: "O'Neill,
O apostrophe …") is not spelling and is skipped.

:func:`say` spells a value back for a read-back: letters as their spelling-alphabet words,
digits and symbols as words ("O'Neill" → "Oscar, apostrophe, November, Echo, India, Lima,
Lima"), which survive a speech synthesiser and a small ASR model where bare letters do not.
The first word after "I have" is the one Whisper mishears most ("I have seat air, India, …",
"I have Hope Tell, Oscar"), so the read-back says "For your family name, I have it as Sierra, …"
(:func:`appliance.phone_agent.fields.stated`), not "S for Sierra", which came back as "El
Verlina" for "L for Lima".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from appliance.phone_agent import words
from appliance.phone_agent.normalise import soundex

Kind = Literal["name", "code", "email", "username", "address"]
KINDS: tuple[Kind, ...] = ("name", "code", "email", "username", "address")

ICAO: dict[str, str] = {w.casefold().replace("-", ""): c.lower() for c, w in words.SPELLING.items()} | {
    "alfa": "a",
    "juliet": "j",
    "whisky": "w",
    "oskar": "o",
    "xray": "x",
}
#: how Whisper tiny.en writes spelling-alphabet words it mishears in Piper's speech (measured with
#: scripts/measure_spelling_asr.py); taken for their letter only where the spelling alphabet is in use
MISHEARD_ICAO = {
    "y": (
        "anki",
        "yanki",
        "yanky",
        "yankey",
        "yankie",
        "antie",
        "gantee",
        "gankie",
        "yanke",
        "anti",
        "auntie",
        "enki",
        "enke",
    ),
    "j": (
        "juleeet",
        "julehet",
        "jule",
        "julie",
        "juliette",
        "julia",
        "tulehet",
        "julehat",
        "jule-hat",
        "julet",
        "juliete",
    ),
    "r": ("romel", "romale", "romio", "romeow", "romeu", "romelo"),
    "p": ("hoppa", "oppo", "oppa", "pappa", "poppa", "pop", "papah"),
    "w": ("whispey", "wiski", "whiskers", "whiskeys"),
    "g": ("gulf", "gof", "goff", "call", "caulff", "health"),
    "b": ("robbo", "rubble", "bravaud", "rhevo"),
    "k": ("killo", "keelo", "kylo", "kilow", "keylo"),
    "s": ("siera", "ciara", "sierre", "tier", "tierr", "tiara", "tiaira", "tear", "tierra", "severe", "seidear"),
    "e": ("eko", "ecco", "ekko"),
    "q": ("kebec", "kebeck", "quebeck", "kebek"),
    "l": ("lena", "lina", "leema", "liima"),
    "c": ("charley", "charly"),
    "h": ("optel", "hotell", "hostel"),
    "i": ("indian", "indio", "indya", "andio", "andia", "indigo", "andiya"),
    "m": ("mikey",),
    "v": ("viktor",),
    "z": ("zoolu", "tulu", "thulu"),
    "a": ("alpher", "alfah"),
    "d": ("delter",),
    "x": ("exray",),
}
#: … and as two words
MISHEARD_PAIRS = {
    ("and", "here"): "i",
    ("and", "dio"): "i",
    ("and", "ea"): "i",
    ("see", "here"): "s",
    ("see", "air"): "s",
    ("seat", "air"): "s",
    ("to", "hear"): "s",
    ("to", "share"): "s",
    ("see", "there"): "s",
    ("will", "tell"): "h",
    ("we'll", "tell"): "h",
    ("i", "go"): "e",
    ("julie", "het"): "j",
    ("jule", "at"): "j",
}
#: "apostrophe" as Whisper writes it in a spelling ("a Postrific", "vastrophe", "a poster fee")
_APOSTROPHE = re.compile(r"(?i)^(?:a?p[oa]st(?:r|er|ur)\w*|\w?[ha]?[oa]strophe|vastrophe)$")
_MISHEARD = {w: c for c, ws in MISHEARD_ICAO.items() for w in ws} | {" ".join(k): c for k, c in MISHEARD_PAIRS.items()}
#: letter names as Whisper writes a spoken letter
LETTER_NAMES = {
    "ay": "a",
    "eh": "a",
    "bee": "b",
    "be": "b",
    "cee": "c",
    "see": "c",
    "sea": "c",
    "dee": "d",
    "ee": "e",
    "ef": "f",
    "eff": "f",
    "gee": "g",
    "jee": "g",
    "aitch": "h",
    "haitch": "h",
    "eye": "i",
    "jay": "j",
    "kay": "k",
    "el": "l",
    "ell": "l",
    "elle": "l",
    "em": "m",
    "en": "n",
    "oh": "o",
    "pee": "p",
    "pea": "p",
    "queue": "q",
    "cue": "q",
    "kyu": "q",
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
    "wye": "y",
    "zed": "z",
    "zee": "z",
}
#: letter names (and single letters) that are also words: they count only next to spelling
_WORDLIKE = {
    "a",
    "i",
    "be",
    "bee",
    "see",
    "sea",
    "oh",
    "eye",
    "you",
    "are",
    "why",
    "tea",
    "pea",
    "ex",
    "queue",
    "cue",
    "el",
    "em",
    "en",
    "es",
    "ay",
    "eh",
}
#: … and these only after a spelled unit (they open lead-ins: "the letters are …", "see, it's …")
_AFTER_ONLY = {"are", "you", "why", "see", "sea"}
SYMBOLS = {
    "dash": "-",
    "hyphen": "-",
    "minus": "-",
    "underscore": "_",
    "dot": ".",
    "point": ".",
    "period": ".",
    "apostrophe": "'",
    "space": " ",
    "plus": "+",
    "at": "@",
}
_DIGITS = {w: str(i) for i, w in enumerate(words.DIGITS)} | {"nought": "0", "o": "0", "oh": "0"}
_TEENS = {
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
#: digits as Whisper writes them beside other digits of a code ("X for 729183": X4729183)
_DIGIT_HOMOPHONES = {
    "for": "4",
    "far": "4",
    "fore": "4",
    "bar": "4",
    "to": "2",
    "too": "2",
    "free": "3",
    "tree": "3",
    "ate": "8",
    "hey": "8",
    "won": "1",
}
#: … and these after any spelled unit too ("Charlie, India, Kilo, Free, at example.com": bench, "three")
_SPELLED_DIGIT_HOMOPHONES = {"free", "tree"}
#: a domain's last label as Whisper writes it ("example calm")
_TLD_HOMOPHONES = {"calm": "com", "come": "com", "comb": "com", "orc": "org", "nett": "net"}
_TLDS = {"com", "org", "net", "ie", "uk", "de", "fr", "es", "it", "ca", "us", "eu", "io", "info"}
_MARKERS = (("as", "in"), ("is", "in"), ("as", "an"), ("is", "an"), ("for",), ("like",))
_LEAD = re.compile(r"^.*\b(?:spelled|spelt|spelling|spell)\b[\s,:.-]*", re.I)
_CASE = {
    "capital": "upper",
    "uppercase": "upper",
    "upper": "upper",
    "big": "upper",
    "small": "lower",
    "lowercase": "lower",
    "lower": "lower",
}


@dataclass(frozen=True)
class _Unit:
    """One spelled unit: ``text`` written (a letter, digits, a symbol; '' = not spelling),
    ``how`` it was said (``word``: a word for its letter; ``letter``; ``digit``; ``symbol``;
    ``case``: capital/small, ``double``/``triple``; ``noise``) and its source token(s)."""

    text: str
    how: str
    src: str = ""


def _tokens(text: str) -> list[str]:
    """Tokens, case kept: "S-I-O" and "S.I.O." split into letters, "M91" into characters,
    "X-ray" and "double you" joined."""
    t = re.sub(r"(?i)\b(?:x|ex)[\s-]ray\b", "xray", text)
    t = re.sub(r"(?i)\bdouble[\s-](?:you|u)\b", "W", t)
    t = re.sub(r"(?i)\b(at|full)[\s-](sign|stop)\b", lambda m: "at" if m.group(1).lower() == "at" else "dot", t)
    t = re.sub(r"(?i)\b(under|upper|lower)[\s-](score|case)\b", r"\1\2", t)
    t = t.replace("@", " @ ")
    out: list[str] = []
    for raw in re.findall(r"[^\s,;:!?()\"]+", t):
        tok = raw.strip(".'’-")
        if not tok:
            if raw.strip(".") in ("'", "’"):
                out.append("'")
            continue
        parts = re.split(r"[-.]", tok)
        if re.fullmatch(r"[^\W_](?:[-.][^\W_])+", tok):  # "s-i-o", "s.i.o", "1-8-6"
            out += parts
        elif len(parts) >= 3 and 3 * sum(len(p) == 1 for p in parts) >= 2 * len(parts):
            out += [p for p in parts if p]  # "W-O-J-C-I-K-DASH-N-O-W-A-K"
        elif re.fullmatch(r"(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+", tok):  # "M91", "4F"
            out += list(tok)
        elif re.fullmatch(r"\d+(?:-\d+)*", tok):  # "471", "72918-3"
            out += [c for c in tok if c.isdigit()]
        elif re.fullmatch(r"\d+(?:-[a-z]+)+|[a-z]+(?:-\d+)+", tok, re.I):  # "72918-free"
            out += [c for p in parts for c in (list(p) if p.isdigit() else [p])]
        else:
            out.append(tok)
    return out


def _number(toks: list[str], i: int) -> tuple[str, int] | None:
    """Digits said at ``toks[i]``: "7", "seven", "oh", "ninety one", "twelve"; (digits, next index)."""
    t = toks[i].casefold()
    if t.isdigit():
        return t, i + 1
    if t in _TENS:
        nxt = toks[i + 1].casefold() if i + 1 < len(toks) else ""
        if nxt in words.DIGITS[1:]:
            return str(_TENS[t] + words.DIGITS.index(nxt)), i + 2
        return str(_TENS[t]), i + 1
    if t in _TEENS:
        return str(_TEENS[t]), i + 1
    if t in _DIGITS:
        return _DIGITS[t], i + 1
    return None


def _marker(toks: list[str], i: int) -> int:
    """Tokens used by an "as in"/"for"/"like" marker at ``i`` (0: none)."""
    low = [t.casefold() for t in toks[i : i + 2]]
    for m in _MARKERS:
        if tuple(low[: len(m)]) == m:
            return len(m)
    return 0


def _word_for_letter(tok: str | None) -> bool:
    """A word said for its first letter ("Alpha", "apple"), not a letter, digit or symbol."""
    if tok is None:
        return False
    t = tok.casefold()
    return (
        t.isalpha()
        and len(t) >= 2
        and t not in LETTER_NAMES
        and t not in _DIGITS
        and t not in _TEENS
        and t not in _TENS
        and t not in SYMBOLS
        and t not in _CASE
        and t not in ("double", "triple")
    )


def _units(toks: list[str], kind: Kind) -> list[_Unit]:
    digits_ok = kind != "name"
    out: list[_Unit] = []
    i = 0
    while i < len(toks):
        tok, low = toks[i], toks[i].casefold()
        pair = (low, toks[i + 1].casefold()) if i + 1 < len(toks) else None
        if pair in MISHEARD_PAIRS:  # kept as one word; its letter counts where the spelling alphabet is in use
            out.append(_Unit("", "noise", " ".join(pair)))
            i += 2
            continue
        n = _marker(toks, i)
        if n and _word_for_letter(toks[i + n] if i + n < len(toks) else None):
            word = toks[i + n].casefold()
            letter = ICAO.get(word, _MISHEARD.get(word))
            before = (
                out[-1] if out and out[-1].how in ("letter", "wordlike", "digit") and len(out[-1].src) <= 6 else None
            )
            if before is not None:
                out.pop()  # "S as in Sierra": the letter before is the same letter
            if letter is None:  # "A for apple": the word's first letter; "S for tier" (misheard): the letter said
                letter = (
                    before.text if before is not None and before.how != "digit" and len(before.src) == 1 else word[0]
                )
            out.append(_Unit(letter, "word", word))
            i += n + 1
            continue
        if (
            out
            and out[-1].how in ("letter", "wordlike")
            and len(out[-1].src) == 1
            and re.fullmatch(r"f[aeiou]r\w{3,}", low)
            and low not in ICAO
        ):
            out[-1] = _Unit(out[-1].text, "word", out[-1].src)  # "S. Fursière": "S for Sierra" run together
        elif low in ICAO:
            out.append(_Unit(ICAO[low], "word", low))
        elif low in ("double", "triple"):
            out.append(_Unit("", low, low))
        elif low in _CASE:
            out.append(_Unit("", "case-" + _CASE[low], low))
        elif low == "letter" and out and out[-1].how.startswith("case-"):
            pass  # "capital letter D"
        elif _APOSTROPHE.match(low) and low not in ICAO:
            out.append(_Unit("'", "symbol", low))
        elif low in SYMBOLS or tok in ("@", "'"):
            sym = SYMBOLS.get(low, tok)
            if sym == "@" and kind not in ("email",):
                out.append(_Unit("", "noise", low))
            else:
                out.append(_Unit(sym, "symbol", low))
        elif (
            digits_ok
            and (num := _number(toks, i)) is not None
            and not (
                kind in ("email", "username", "address") and low in ("o", "oh") and not (out and out[-1].how == "digit")
            )
        ):  # in a code "oh" is a zero; elsewhere a letter
            value, j = num
            out.append(_Unit(value, "digit", " ".join(toks[i:j])))
            i = j
            continue
        elif (
            digits_ok
            and low in _DIGIT_HOMOPHONES
            and (
                (out and out[-1].how == "digit")
                or (i + 1 < len(toks) and _number(toks, i + 1) is not None)
                or (low in _SPELLED_DIGIT_HOMOPHONES and out and out[-1].how != "noise")
            )
        ):
            out.append(_Unit(_DIGIT_HOMOPHONES[low], "digit", low))
        elif len(tok) == 1 and tok.isalpha():
            out.append(_Unit(low, "wordlike" if low in _WORDLIKE else "letter", low))
        elif low in LETTER_NAMES:
            out.append(_Unit(LETTER_NAMES[low], "wordlike" if low in _WORDLIKE else "letter", low))
        elif tok.isupper() and 2 <= len(tok) <= 6 and tok.isalpha() and tok != "OK":
            out += [_Unit(c.lower(), "letter", c.lower()) for c in tok]  # "SIOB": letters Whisper ran together
        else:
            out.append(_Unit("", "noise", low))
        i += 1
    return out


def _spelled(u: _Unit | None) -> bool:
    return (
        u is not None
        and u.how in ("word", "letter", "digit", "symbol", "double", "triple")
        or (u is not None and u.how.startswith("case-"))
    )


def _keep(units: list[_Unit]) -> list[_Unit]:
    """Drop what is not spelling: word-like letters away from other spelling, and bare
    letters when words for letters carry the spelling."""
    kept = []
    for k, u in enumerate(units):
        if u.how == "wordlike":
            before = k > 0 and (_spelled(units[k - 1]) or units[k - 1].how == "wordlike")
            after = k + 1 < len(units) and (_spelled(units[k + 1]) or units[k + 1].how == "wordlike")
            if not (before or (after and u.src not in _AFTER_ONLY)):
                continue
            u = _Unit(u.text, "letter", u.src)
        kept.append(u)
    by_word = sum(u.how == "word" or (u.how == "noise" and u.src in _MISHEARD) for u in kept)
    letters = sum(u.how == "letter" for u in kept)
    if by_word >= 2 and by_word * 3 >= by_word + letters:  # the spelling alphabet carries the spelling
        kept = [_misheard(u) for u in kept if u.how != "letter"]
    kept = [u for u in kept if u.how != "noise"]
    kept = _unlooped(kept)
    rest = "".join(u.text for u in kept[1:])
    if len(kept) > 2 and kept[0].how == "word" and kept[0].src == rest and kept[0].src in ICAO:
        kept = kept[1:]  # "Victor, V I C T O R": the name, then its letters
    return kept


def _unlooped(units: list[_Unit]) -> list[_Unit]:
    """Whisper's repetition loop on a short segment ("Oscar Oscar Oscar Oscar apostrophe",
    "November. November. November"): three or more of one spelled word in a row are one; two
    are kept ("Lima, Lima": LL)."""
    out: list[_Unit] = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and units[j + 1].src == units[i].src and units[i].how == "word":
            j += 1
        out += units[i : i + (1 if j - i >= 2 else j - i + 1)]
        i = j + 1
    return out


def _misheard(u: _Unit) -> _Unit:
    """A noise word that is a known mishearing of a spelling-alphabet word, or sounds like
    exactly one (Soundex, same first letter: "Lena" for "Lima") → that word's letter."""
    if u.how != "noise" or not u.src.replace(" ", "").replace("'", "").isalpha():
        return u
    if u.src in _MISHEARD:
        return _Unit(_MISHEARD[u.src], "word", u.src)
    if len(u.src) >= 4 and u.src.isalpha():
        alike = {c for w, c in ICAO.items() if soundex(w) == soundex(u.src)}
        if len(alike) == 1:
            return _Unit(alike.pop(), "word", u.src)
    return u


def _write(units: list[_Unit], kind: Kind) -> str:
    out: list[str] = []
    times, case = 1, None
    for u in units:
        if u.how in ("double", "triple"):
            times = 2 if u.how == "double" else 3
            continue
        if u.how.startswith("case-"):
            case = u.how[5:]
            continue
        text = u.text
        if text.isalpha() and case:
            text = text.upper() if case == "upper" else text.lower()
            text = "\0" + text  # case said: kept as said
        out.append(text * times if not text.startswith("\0") else text + text[1:] * (times - 1))
        times, case = 1, None
    return _cased("".join(out), kind)


def _cased(s: str, kind: Kind) -> str:
    """Case as the kind writes it; a letter after a NUL keeps the case that was said."""
    if kind in ("email", "username"):
        return s.replace("\0", "").lower()
    if kind == "code":
        return s.replace("\0", "").upper()
    out, start = [], True
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\0":
            out.append(s[i + 1])
            start = False
            i += 2
            continue
        out.append(c.upper() if start else c.lower())
        start = not c.isalnum()
        i += 1
    return "".join(out)


#: a value said, then spelled, as a person corrects a read-back: "it's PX 472 9183, P for Papa, X-ray, four, …",
#: "it's LK 083 9215. L for Lima, …", "it's aoife.darcy5@example.com: A for Alpha, …" (group 1 the value said,
#: group 2 the spelling; bench: both decoded as one, "4729183PX4729183")
_SAID_FIRST = re.compile(r"^\W*(?:it's|it is|that's|that is)\s+(.+?)(?:[,:;]|\.\s)\s*(.+)$", re.I | re.S)


def _spelling_part(text: str, kind: Kind) -> str:
    """The spelling in ``text`` when the value is said first and then spelled (:data:`_SAID_FIRST`;
    the part said holds no word for a letter, the rest at least two), else ``text``."""
    m = _SAID_FIRST.match(text)
    if m is None:
        return text
    said, rest = (_units(_tokens(part), kind) for part in m.groups())
    if any(u.how == "word" for u in said) or sum(u.how == "word" for u in rest) < 2:
        return text
    return m.group(2)


def letters(text: str, kind: Kind = "name") -> str | None:
    """The characters spelled in ``text``, written for ``kind`` (no check of the result's
    shape), or None when fewer than two spelled units were said."""
    text = _LEAD.sub("", text) if _LEAD.search(text) and _LEAD.sub("", text).strip() else text
    text = _spelling_part(text, kind)
    units = _keep(_units(_tokens(text), kind))
    if sum(u.how in ("word", "letter", "digit", "symbol") for u in units) < 2:
        return None
    s = _write(units, kind).strip(" ")
    return s or None


def decode(text: str, kind: Kind) -> str | None:
    """The value spelled in ``text`` (one final transcript), or None when it holds no
    spelling of a ``kind`` value (see the module docstring)."""
    if kind == "email":
        return _email(text)
    s = letters(text, kind)
    if s is None:
        return None
    if kind == "name":
        s = re.sub(r"\s+", " ", s)
        return s if re.fullmatch(r"[^\W\d_]+(?:[ '\-][^\W\d_]+)*'?", s) else None
    if kind == "code":
        s = re.sub(r"[^A-Z0-9]", "", s)
        return s if len(s) >= 2 else None
    if kind == "username":
        s = s.replace(" ", "")
        return s if re.fullmatch(r"[a-z0-9._\-+]+", s) else None
    return re.sub(r"\s+", " ", s)  # address


def _email(text: str) -> str | None:
    text = _LEAD.sub("", text) if _LEAD.search(text) and _LEAD.sub("", text).strip() else text
    text = _spelling_part(text, "username")
    toks = _tokens(text)
    ats = [i for i, t in enumerate(toks) if t.casefold() in ("at", "@")]
    if not ats:
        return None
    at = ats[-1]
    local = letters(" ".join(toks[:at]), "username")
    if local is None:
        return None
    local = local.replace(" ", "")
    labels, label = [], []
    for tok in [p for t in toks[at + 1 :] for p in re.split(r"(\.)", t) if p] + ["dot"]:
        if tok.casefold() in ("dot", "point", "period") or tok == ".":
            if (
                len(labels) == 0
                and len(label) >= 2
                and _TLD_HOMOPHONES.get(label[-1].casefold(), label[-1].casefold()) in _TLDS
            ):
                labels.append(_label(label[:-1]))  # "example calm": the "dot" unheard
                label = label[-1:]
            if label:
                labels.append(_label(label))
            label = []
        else:
            label.append(tok)
    if labels:
        labels[-1] = _TLD_HOMOPHONES.get(labels[-1], labels[-1])
    domain = ".".join(x for x in labels if x)
    addr = f"{local}@{domain}"
    return addr if re.fullmatch(r"[a-z0-9._+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)*\.[a-z]{2,}", addr) else None


def _label(toks: list[str]) -> str:
    """One domain label: spelled ("e x a m p l e", "India Echo") or said as a word ("example")."""
    spelled = letters(" ".join(toks), "username")
    if spelled and len(toks) >= 2:
        return spelled.replace(" ", "")
    return re.sub(r"[^a-z0-9\-]", "", "".join(toks).casefold())


def looks_spelled(text: str, kind: Kind = "name") -> bool:
    """Whether ``text`` spells something (three spelled units or more, or "spelled …")."""
    if re.search(r"\bspel(?:l|led|t|ling)\b", text, re.I):
        return True
    units = _keep(_units(_tokens(text), kind))
    return sum(u.how in ("word", "letter") for u in units) >= 3


def say(value: str, kind: Kind = "name") -> str:
    """``value`` spelled for a read-back, each letter by its spelling-alphabet word alone:
    "O'Neill" → "Oscar, apostrophe, November, Echo, India, Lima, Lima"; "jo.m91@example.com"
    → "Juliett, Oscar, dot, Mike, nine, one, at example dot com" (an e-mail's domain in
    words). Not "L for Lima": Whisper tiny.en wrote Piper's "L for Lima, Kilo" as "El
    Verlina, Kilo" and "a for Alpa, Lena, Kilo", and the person said no to a right value
    (bench, Aoife's passport number); "Lima, Kilo" came back as it was said."""
    if kind == "email" and "@" in value:
        local, _, domain = value.rpartition("@")
        return f"{say(local, 'username')}, at {domain.replace('.', ' dot ')}"
    out = []
    for run in re.findall(r"\d+|.", value):
        if run.isdigit():  # digits one by one; in a code, in groups as a code is read
            out.append(words.digit_groups(run) if kind == "code" else ", ".join(words.DIGITS[int(c)] for c in run))
        elif run.isalpha() and run.upper() in words.SPELLING:
            out.append(words.SPELLING[run.upper()])
        elif run in _SAID:
            out.append(_SAID[run])
    return ", ".join(out)


#: how a symbol is said when spelling
_SAID = {"-": "dash", "_": "underscore", ".": "dot", "'": "apostrophe", " ": "space", "+": "plus", "@": "at"}
