"""Spoken → written, in code: what a person said (as ASR wrote it) → the value a form takes.

Every function takes one final transcript and returns the written value, or ``None`` when
the utterance does not contain one (the interview then asks again). They accept what
Whisper produces for speech — numerals or number words, "at"/"dot", "double five",
spelled letters ("D-A-V-I-D", "d m i l l e r"), ordinals ("the 14th of March, 1990") — and
strip lead-ins such as "my email is" or "it's".

:func:`clean` also undoes an ASR failure seen with short utterances: the same words
repeated until the token limit ("Alice Alice Alice …").
"""

from __future__ import annotations

import datetime as _dt
import re

from appliance.phone_agent import candidates, words

UNITS = {
    "zero": 0,
    "oh": 0,
    "o": 0,
    "nought": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
}
TEENS = {
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
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
}
MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        1,
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
MULTIPLIERS = {"double": 2, "triple": 3}
YES = re.compile(
    r"\b(yes|yeah|yep|yup|correct|right|sure|ok|okay|exactly|absolutely|affirmative|go ahead|"
    r"please do|do it|i agree|i accept|i do|that's it|that is it|fine|of course|certainly)\b"
)
NO = re.compile(r"\b(no|nope|nah|not|wrong|incorrect|don't|do not|negative|cancel|stop|never|decline)\b")
_TO_PLACE = r"(?:fly|flying|go|going|travel|travelling|traveling|head|heading) to"
_LEAD_IN = re.compile(
    r"^.*?\b(?:is|it's|it is|i'm|i am|am|name's|called|that's|that is|was|live in|living in|"
    r"born in|from|%s)\b[\s,:]*" % _TO_PLACE,
    re.I,
)
#: a place said with the way there ("I'd like to fly to Rome", "I'm flying to Paris": bench, "I'd Like To Fly"
#: was read back as the destination city)
_TRAVEL_TO = re.compile(r"^%s\b[\s,:]*" % _TO_PLACE, re.I)
_FILLER = re.compile(r"^(?:(?:um+|uh+|er+|erm|well|so|okay|ok|yes|yeah|sure|right|please)\b[\s,.]*)+", re.I)


def clean(text: str) -> str:
    """Strip, and undo ASR repetition loops.

    An exact loop collapses to its first occurrence: "Alice Alice Alice Alice" → "Alice";
    "It's Martin. It's Martin. It's Mar" → "It's Martin." (a phrase of one word must repeat
    at least three times, a longer one twice; the tail may be cut short). A sentence that
    mostly repeats the words of the one kept before it is dropped (a loop is consecutive):
    "Yes, that's right. Yes, that right. Yes. That's" → "Yes, that's right."; "… is already
    taken. Please choose another. What is your username?" keeps its question. A sentence of
    spelling-alphabet words is spelling, whose words do repeat ("… Kilo, Dash, November,
    Oscar, Whiskey. Alpha, Kilo.": bench, the last two letters of a spelled name were lost).
    """
    text = _collapse_loop(text)
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept: list[str] = []
    for sent in sentences:
        said = set(re.findall(r"[a-z0-9']+", sent.casefold()))
        if (
            kept
            and said
            and not said <= _ALPHABET_WORDS
            and (len(said & set(re.findall(r"[a-z0-9']+", kept[-1].casefold()))) >= 0.5 * len(said))
        ):
            continue
        kept.append(sent)
    return " ".join(kept).strip()


_ALPHABET_WORDS = {w.casefold().replace("-", "") for w in words.SPELLING.values()}


def first_sentence(text: str) -> str:
    """The first sentence of a transcript (up to ``.``, ``!``, ``?`` or ``;``)."""
    return re.split(r"(?<=[.!?;])\s+", text.strip(), maxsplit=1)[0]


def _collapse_loop(text: str) -> str:
    words = text.split()
    keys = [re.sub(r"\W", "", w).casefold() for w in words]
    n = len(words)
    for p in range(1, n // 2 + 1):
        if n // p < (3 if p == 1 else 2):
            continue
        if all(keys[i] == keys[i % p] or (i == n - 1 and keys[i % p].startswith(keys[i])) for i in range(n)):
            return " ".join(words[:p]).rstrip(",")
    return text.strip()


def _tokens(text: str) -> list[str]:
    return re.findall(r"\+|[a-z]+(?:'[a-z]+)?|\d+", text.casefold())


def digits(text: str) -> str:
    """The digits spoken in ``text``, in order, with a leading ``+`` when "plus" was said.

    "plus four four, seven seven double zero" → "+447700"; "512 873 946" → "512873946";
    "twenty three" → "23". Returns '' when there are none.
    """
    out, mult, plus = [], 1, False
    toks = _tokens(text)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in ("+", "plus") and not out:
            plus = True
        elif t in MULTIPLIERS:
            mult = MULTIPLIERS[t]
        elif t.isdigit():
            out.append(t * mult if len(t) == 1 else t)
            mult = 1
        elif t in UNITS and (t not in ("o", "oh") or out or plus):
            out.append(str(UNITS[t]) * mult)
            mult = 1
        elif t in TEENS:
            out.append(str(TEENS[t]))
        elif t in TENS:
            if i + 1 < len(toks) and toks[i + 1] in UNITS and UNITS[toks[i + 1]] > 0:
                out.append(str(TENS[t] + UNITS[toks[i + 1]]))
                i += 1
            else:
                out.append(str(TENS[t]))
        i += 1
    s = "".join(out)
    return ("+" + s) if plus and s else s


def phone(text: str) -> str | None:
    """A phone number as said: "+447700900123" or "07700900123" (no spaces); None if < 6 digits."""
    d = digits(text)
    return d if len(d.lstrip("+")) >= 6 else None


def _spelled(words: list[str]) -> str | None:
    """Letters spelled out ("d m i l l e r", "D-A-V-I-D") → the word, else None."""
    parts = [p for w in words for p in re.split(r"[-.]", w) if p]
    if len(parts) >= 2 and all(len(p) == 1 and p.isalpha() for p in parts):
        return "".join(parts)
    return None


def strip_lead_in(text: str) -> str:
    """Remove "my X is", "it's", the way to a place ("I'd like to fly to"), fillers and closing
    punctuation: "Yes, it's Miller." → "Miller"; "I'm flying to Paris, France." → "Paris, France"."""
    t = clean(text).strip()
    m = _LEAD_IN.match(t)
    if m and m.end() < len(t):
        t = t[m.end() :]
    m = _TRAVEL_TO.match(t)  # "I'm flying to Paris": "I'm" came off first
    if m and m.end() < len(t):
        t = t[m.end() :]
    t = _FILLER.sub("", t)
    return t.strip(" .,!?;:\"'")


_OWN_WORDS_LEAD_IN = re.compile(
    r"^(?:(?:um+|uh+|er+|erm)\b[\s,.]*)*(?:(?:my|the) [\w' ]{1,30}? is|it's|it is)\b[\s,:]*", re.I
)
_HESITATION = re.compile(r"^(?:(?:um+|uh+|er+|erm)\b[\s,.]*)+", re.I)


def own_words(text: str) -> str | None:
    """A free-text answer in the person's own words (a message, a note): without a lead-in
    at its start ("My message is …", "It's …") or hesitations, every other word kept
    ("Please call me after 5 pm." stays so); a sentence (four words or more) keeps its one
    closing full stop, question or exclamation mark, a shorter value none. None: nothing said."""
    t = clean(text).strip()
    m = _OWN_WORDS_LEAD_IN.match(t)
    if m and m.end() < len(t):
        t = t[m.end() :]
    t = _HESITATION.sub("", t).strip(" ,;:\"'")
    body = t.rstrip(" .!?")
    if not body:
        return None
    end = t[len(body) :].strip()[:1]
    return body + end if end and len(body.split()) >= 4 else body


def name(text: str) -> str | None:
    """A person's or place's name: "My first name is David." → "David"; "D-A-V-I-D" → "David";
    "Miller, spelled M I L L E R" → "Miller"."""
    t = clean(text)
    sp = re.search(r"\b(?:spelled|spelt|that's|that is)\b[\s,:]*(.+)$", t, re.I)
    if sp:
        s = _spelled(re.findall(r"[A-Za-z]+", sp.group(1)))
        if s:
            return s.capitalize()
    if yes_no(t) is not None and not re.search(r"\b(?:is|it's|i'm|am)\b", t, re.I):
        return None  # "Yes, please." is not a name
    t = re.split(r"[.!?;]", strip_lead_in(t))[0]
    words = re.findall(r"[A-Za-z][A-Za-z'\-]*", t)
    if not words:
        return None
    s = _spelled(words)
    if s:
        return s.capitalize()
    return " ".join(w[0].upper() + w[1:] for w in words[:4])


def email(text: str) -> str | None:
    """An e-mail address: "my email is d miller at example dot com" → "dmiller@example.com"."""
    t = clean(text).casefold()
    t = re.sub(r"\s*\b(?:at sign|at)\b\s*", "@", t)
    t = re.sub(r"\s*\bdot\b\s*", ".", t)
    t = re.sub(r"\s*\b(?:underscore|under score)\b\s*", "_", t)
    t = re.sub(r"\s*\b(?:dash|hyphen)\b\s*", "-", t)
    if "@" not in t:
        return None
    local, _, domain = t.rpartition("@")
    local = re.sub(r"^.*\b(?:is|was|it's|it is|address|email|e-mail|mail|have)\b[\s,:]*", "", local)
    local = _local_numbers(local)
    local = re.sub(r"[^a-z0-9._+\-]", "", local)
    domain = re.sub(r"[^a-z0-9.\-]", "", domain.split(" and ")[0]).strip(".")
    addr = f"{local}@{domain}"
    return addr if re.fullmatch(r"[a-z0-9._+\-]+@[a-z0-9\-]+(\.[a-z0-9\-]+)*\.[a-z]{2,}", addr) else None


def _local_numbers(local: str) -> str:
    """Number words in an e-mail's local part → digits ("oneill seven" → "oneill 7"; "twenty
    one" → "21"); "o"/"oh" only after another number word (else it is the letter)."""
    toks = re.findall(r"[a-z]+|\d+|[^a-z\d\s]+", local)
    return " ".join(
        _number_runs(
            toks,
            lambda tok, run: (
                tok in TEENS
                or tok in TENS
                or tok in MULTIPLIERS
                or (tok in UNITS and (tok not in ("o", "oh", "nought") or bool(run)))
            ),
        )
    )


def _spoken_numbers(text: str) -> str:
    """Number words → numerals for dates: "the fourteenth of march nineteen ninety" →
    "the 14 of march 1990"; "two thousand and five" → "2005"; "twenty twenty seven" → "2027"."""
    toks = re.findall(r"[a-z]+|\d+|[^\sa-z\d]+", text.casefold())
    out: list[str] = []
    i = 0

    def num_at(j: int) -> tuple[int | None, int]:
        """A number 0–99 said from token j: (value, tokens used)."""
        if j >= len(toks):
            return None, 0
        t = toks[j]
        if t in TENS:
            if (
                j + 1 < len(toks)
                and (toks[j + 1] in UNITS or toks[j + 1] in ORDINALS)
                and toks[j + 1] not in ("o", "oh", "zero", "nought")
            ):
                u = UNITS.get(toks[j + 1], ORDINALS.get(toks[j + 1]))
                if u is not None and 0 < u < 10:
                    return TENS[t] + u, 2
            return TENS[t], 1
        if t in TEENS:
            return TEENS[t], 1
        if t in UNITS and t not in ("o", "oh", "nought"):
            return UNITS[t], 1
        if t in ORDINALS:
            return ORDINALS[t], 1
        return None, 0

    while i < len(toks):
        t = toks[i]
        if t in ("two", "one") and i + 1 < len(toks) and toks[i + 1] == "thousand":
            base = 2000 if t == "two" else 1000
            j = i + 2
            if j < len(toks) and toks[j] == "and":
                j += 1
            v, used = num_at(j)
            out.append(str(base + (v or 0)))
            i = j + used
            continue
        v, used = num_at(i)
        if v is not None:
            v2, used2 = num_at(i + used)
            if 10 <= v <= 20 and v2 is not None and used2 and toks[i + used] not in ORDINALS:
                out.append(f"{v}{v2:02d}")  # "nineteen ninety" → 1990
                i += used + used2
                continue
            out.append(str(v))
            i += used
            continue
        out.append(t)
        i += 1
    return " ".join(out)


def date(text: str, order: str = "DMY") -> str | None:
    """A date as ISO ``YYYY-MM-DD``: "the 14th of March, 1990", "March 14 1990",
    "14/03/1990" (``order`` DMY or MDY for numeric forms), "1990-03-14", or all in words;
    "the 40th of March" is the 14th (see below). None when no valid calendar date is found."""
    t = _spoken_numbers(clean(text))
    m = re.search(r"\b(\d{4})\s*-\s*(\d{1,2})\s*-\s*(\d{1,2})\b", t)
    if m:
        return _iso(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = re.search(r"\b(\d{1,2})\s*[/.\-]\s*(\d{1,2})\s*[/.\-]\s*(\d{2,4})\b", t)
    if m:
        a, b, y = int(m.group(1)), int(m.group(2)), _year(m.group(3))
        return _iso(y, b, a) if order == "DMY" else _iso(y, a, b)
    month = _month(t)
    if month is None:
        return None
    nums = [int(n) for n in re.findall(r"\d+", t)]
    years = [n for n in nums if n >= 1000]
    # "-teen"/"-ty" is ASR's classic confusion: "the fourteenth" comes back as "the 40th"; no
    # month has a 40th day, so 40–90 are read as 14–19
    days = [n if n <= 31 else 10 + n // 10 for n in nums if 1 <= n <= 31 or n in (40, 50, 60, 70, 80, 90)]
    if not years or not days:
        return None
    return _iso(years[0], month, days[0])


def _month(t: str) -> int | None:
    for w in re.findall(r"[a-z]+", t):
        if w in MONTHS and (w != "may" or re.search(r"\d\s*(?:of\s+)?may\b|\bmay\s+\d", t)):
            return MONTHS[w]  # "may" only next to a number: "you may" is not a month
    return None


def _year(s: str) -> int:
    y = int(s)
    if len(s) == 2:
        y += 2000 if y <= (_dt.date.today().year % 100) + 10 else 1900
    return y


def _iso(y: int, m: int, d: int) -> str | None:
    try:
        return _dt.date(y, m, d).isoformat()
    except ValueError:
        return None


def _number_runs(tokens: list[str], numeric=lambda tok, run: _is_number_word(tok)) -> list[str]:  # noqa: ANN001
    """Runs of number words (with "double"/"triple") → their digits; other tokens kept.
    ``numeric(tok, run)``: whether ``tok`` continues a run (``run``: the run so far)."""
    out: list[str] = []
    run: list[str] = []
    for tok in tokens + [""]:
        if numeric(tok, run):
            run.append(tok)
            continue
        if run:
            out.append(digits(" ".join(run)))
            run = []
        if tok:
            out.append(tok)
    return out


def code(text: str) -> str | None:
    """An identifier said character by character (passport number, postcode): letters and
    digits, upper-case, no spaces: "It's P, 123, 45678" → "P12345678"; "M1, 1aE" → "M11AE".

    Spelled with the spelling alphabet ("M for Mike, one, one, A as in Alpha, Echo"), only
    the spelling words give letters (a letter said before "for"/"as in" is the same letter;
    other words are ASR noise) → "M11AE"."""
    t = strip_lead_in(text)
    tokens = [tok for tok in re.findall(r"x-ray|[A-Za-z]+|\d+", t, re.I) if tok.casefold() not in _CODE_WORDS]
    if any(tok.casefold() in _SPELLING for tok in tokens):
        kept = [
            _SPELLING[tok.casefold()] if tok.casefold() in _SPELLING else tok
            for tok in tokens
            if tok.casefold() in _SPELLING or tok.isdigit() or _is_number_word(tok)
        ]
        return "".join(_number_runs(kept)).upper() or None
    s = "".join(_number_runs(tokens)).upper()
    return s or None


_SPELLING = {w.casefold(): c for c, w in words.SPELLING.items()} | {"juliet": "J", "whisky": "W", "xray": "X"}
#: words around a code that are not part of it ("my passport numbers px 4 7 2 …": ASR's "number is")
_CODE_WORDS = {
    "my",
    "passport",
    "number",
    "numbers",
    "is",
    "it",
    "its",
    "the",
    "code",
    "postcode",
    "postal",
    "zip",
    "reference",
    "licence",
    "license",
    "id",
    "of",
    "and",
}


def _is_number_word(tok: str) -> bool:
    return any(tok.casefold() in ws for ws in (UNITS, TEENS, TENS, MULTIPLIERS))


def username(text: str) -> str | None:
    """A user name: lower-case letters, digits, ``_`` and ``.``: "D Miller 84" → "dmiller84";
    "emma underscore j eighty five" → "emma_j85"."""
    t = strip_lead_in(text).casefold()
    t = re.sub(r"\s*\b(?:underscore|under score)\b\s*", " _ ", t)
    t = re.sub(r"\s*\bdot\b\s*", " . ", t)
    s = "".join(_number_runs(re.findall(r"[a-z]+|\d+|[_.]", t)))
    return s or None


def yes_no(text: str) -> bool | None:
    """True for yes ("yes", "that's right", "I agree"…), False for no, None if neither or both
    in a way that cannot be read ("no" said first wins: "No, that's not right")."""
    t = clean(text).casefold()
    y, n = YES.search(t), NO.search(t)
    if y and n:
        return y.start() < n.start() and not re.search(r"\b(not|isn't|wasn't)\b", t)
    return True if y else False if n else None


#: Nationality words → country names, so "I'm British" picks "United Kingdom".
DEMONYMS = {
    "american": "united states",
    "argentinian": "argentina",
    "australian": "australia",
    "austrian": "austria",
    "belgian": "belgium",
    "brazilian": "brazil",
    "british": "united kingdom",
    "english": "united kingdom",
    "scottish": "united kingdom",
    "welsh": "united kingdom",
    "canadian": "canada",
    "chinese": "china",
    "croatian": "croatia",
    "czech": "czechia",
    "danish": "denmark",
    "dutch": "netherlands",
    "egyptian": "egypt",
    "finnish": "finland",
    "french": "france",
    "german": "germany",
    "greek": "greece",
    "hungarian": "hungary",
    "indian": "india",
    "indonesian": "indonesia",
    "irish": "ireland",
    "israeli": "israel",
    "italian": "italy",
    "japanese": "japan",
    "korean": "korea",
    "mexican": "mexico",
    "moroccan": "morocco",
    "new zealander": "new zealand",
    "nigerian": "nigeria",
    "norwegian": "norway",
    "pakistani": "pakistan",
    "polish": "poland",
    "portuguese": "portugal",
    "romanian": "romania",
    "russian": "russia",
    "saudi": "saudi arabia",
    "south african": "south africa",
    "spanish": "spain",
    "swedish": "sweden",
    "swiss": "switzerland",
    "thai": "thailand",
    "turkish": "turkey",
    "ukrainian": "ukraine",
    "vietnamese": "vietnam",
}


def choice(text: str, options: tuple[str, ...] | list[str], by_sound: bool = True) -> str | None:
    """The option named in ``text`` (whole words, case-insensitive; the longest match wins;
    a nationality word names its country; with ``by_sound``, failing those, the one option that
    sounds like words said), else None. "A window seat, please." with
    (Window, Aisle, Middle) → "Window"; "I'm British" with (…, United Kingdom) → "United Kingdom"."""

    def words(s: str) -> str:
        return " " + re.sub(r"[\W_]+", " ", s.casefold()).strip() + " "

    t = words(clean(text))
    for demonym, country in DEMONYMS.items():
        t = t.replace(f" {demonym} ", f" {demonym} {country} ")
    hits = [o for o in options if words(o) in t]
    if not hits and by_sound:
        # ASR spelled a word the way it sounds ("roam" for "Rome"): match by sound, if only one option does
        said = {soundex(w) for w in t.split()}
        # a word with no sound code (a number) must be said as it is: "10:30am" is not "14:30"
        hits = [
            o for o in options if all(soundex(w) in said if soundex(w) else w in t.split() for w in words(o).split())
        ]
        return hits[0] if len(hits) == 1 else None
    if not hits:
        return None
    best = max(hits, key=len)
    return best if sum(len(h) == len(best) for h in hits) == 1 else None


#: words that name nothing on their own in an answer ("I'd like to fly to Rome")
_NOT_NAMING = frozenset(
    "i i'd id im i'm my me we our a an the to of in on at for and or is it it's its please like would "
    "want go going fly flying travel travelling to from with be".split()
)


def choices_named(text: str, options: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The options that contain a word of ``text`` other than filler, when no option is named
    whole (:func:`choice`): "to Rome" with ("Rome, Italy", "Rome, Georgia, United States",
    "Paris, France") → the two Romes. A word found in every option names none of them."""
    said = {
        w
        for w in re.findall(r"[\w']+", clean(text).casefold())
        if w not in _NOT_NAMING and w not in candidates.GENERIC and len(w) > 1
    }
    hits = []
    for o in options:
        words = set(re.findall(r"[\w']+", o.casefold()))
        if said & words and not all(said & set(re.findall(r"[\w']+", x.casefold())) for x in options):
            hits.append(o)
    return tuple(hits)


def soundex(word: str) -> str:
    """American Soundex: words that sound alike share a code ("Rome", "roam" → R500)."""
    codes = {
        **dict.fromkeys("bfpv", "1"),
        **dict.fromkeys("cgjkqsxz", "2"),
        **dict.fromkeys("dt", "3"),
        "l": "4",
        **dict.fromkeys("mn", "5"),
        "r": "6",
    }
    w = re.sub(r"[^a-z]", "", word.casefold())
    if not w:
        return ""
    out, last = w[0].upper(), codes.get(w[0], "")
    for ch in w[1:]:
        c = codes.get(ch, "")
        if c and c != last:
            out += c
        if ch not in "hw":
            last = c
    return (out + "000")[:4]
