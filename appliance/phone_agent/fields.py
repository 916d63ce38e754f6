"""What the phone agent says about a field and how it reads the answer.

A field's *kind* (from its HTML type first, then its name) picks the question wording,
the normaliser (:mod:`normalise`) and the read-back. Read-backs are short and spell only
what a listener could not tell from the words: a name is said as written (the person hears
whether it sounds like theirs; letters Piper speaks come back from Whisper tiny.en
garbled: "D A V I D" → "D with VYD"), an e-mail or user name in the person's own words when those
give exactly the value (else spelled), a code's letters by their spelling-alphabet words,
digits in groups, a date in words. A value the person *spelled* is spelled back
(:func:`appliance.phone_agent.spelling.say`: "For your family name, I have it as Hotel, Oscar, Alpha.").

Names, codes, addresses, user names and e-mails are *spellable*: the interview asks for a
spelling once a read-back of one was rejected (:func:`spell_question`, :func:`parse_spelled`).
A given and a family name, and the day, month and year fields of one date, are asked
together (:func:`question_together`, :func:`parse_together`).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Literal

from appliance.phone_agent import normalise, spelling, words
from appliance.protocol import ONE_TIME_CODE, FieldSpec, FieldValue

_CODE_NAMES = (
    "passport", "id_number", "postcode", "zip", "post_code", "licence", "license", "iban", "reference",
    "security_code", "verification_code", "one_time_code", "sort_code", "account_number",
)  # fmt: skip
_NAME_NAMES = ("name", "city", "town", "company", "country_of", "place")
_ADDRESS_NAMES = ("address", "street", "line1", "line_1")
#: kinds a person can spell (see :mod:`appliance.phone_agent.spelling`)
SPELLABLE: tuple[FieldKind, ...] = ("name", "code", "email", "username", "address")


#: What a field holds, as the phone agent asks, parses and reads it back (:func:`kind`).
FieldKind = Literal[
    "email", "phone", "date", "choice", "choices", "yesno", "number", "username", "code", "address", "name", "text"
]


def kind(spec: FieldSpec) -> FieldKind:
    """``email``, ``phone``, ``date``, ``choice``, ``choices``, ``yesno``, ``number``,
    ``username``, ``code``, ``address``, ``name`` or ``text``."""
    t, n = spec.type, spec.name
    by_type: dict[str, FieldKind] = {
        "email": "email",
        "tel": "phone",
        "date": "date",
        "select": "choice",
        "radio": "choice",
        "multiselect": "choices",
        "checkboxes": "choices",
        "checkbox": "yesno",
        "number": "number",
    }
    if t in by_type:
        return by_type[t]
    if spec.meaning == ONE_TIME_CODE:
        return "code"
    if "user" in n or "login" in n:
        return "username"
    if "email" in n:
        return "email"
    if "phone" in n or "mobile" in n:
        return "phone"
    if "date" in n or "birth" in n:
        return "date"
    if any(c in n for c in _CODE_NAMES) or (spec.pattern and not re.search(r"a-z|\\w|\.", spec.pattern)):
        return "code"
    if any(c in n for c in _ADDRESS_NAMES):
        return "address"
    if any(c in n for c in _NAME_NAMES):
        return "name"
    return "text"


_GIVEN = re.compile(r"(?i)\b(?:given|first|fore)[ _-]?names?\b|^(?:given|first|f)_?name$")
_FAMILY = re.compile(r"(?i)\b(?:family|last|sur)[ _-]?names?\b|^(?:family|last|l)_?name$")
_DATE_PART = re.compile(r"(?i)(?:^|[\s_-])(day|month|year)\W*$")


def name_part(spec: FieldSpec) -> Literal["given", "family"] | None:
    """Whether ``spec`` holds a given name or a family name (by its name, then its label)."""
    if spec.type not in ("text", "") or spec.options:
        return None
    for text in (spec.name, spec.label):
        if _GIVEN.search(text):
            return "given"
        if _FAMILY.search(text):
            return "family"
    return None


#: the ASR context while a spelling is expected (``context`` of
#: :meth:`~appliance.voice.asr.whisper.WhisperASR.transcribe`): the letters, then the spelling alphabet.
#: Measured here, tiny.en on a recorded "W for Whiskey, Oscar, Juliett, …, Alpha, Kilo" (9.5 s): after
#: the person's typed given name "Grzegorz" it wrote "W." alone; after this, every word. Piper's "G, R,
#: Z, E, …" and "S for Sierra, I, O, …" came back as with no context; the spelling alphabet alone made
#: the letters loop ("T-R-C-E-T-O-R-S-E-E-S-S-…") and "S for Sierra" into "S-versi-air".
SPELLING_CONTEXT = f"Spelled letter by letter: {', '.join(words.SPELLING)}. {', '.join(words.SPELLING.values())}."
#: … and after it, where the value may hold digits (a code, an e-mail, a user name): the digits in words. Measured
#: here, Piper's spellings of the 8 profiles' passport numbers ("L for Lima, Kilo, zero, eight, three, …"), twice
#: each, through tiny.en: 7 of 16 decoded right after SPELLING_CONTEXT ("zero, eight, three" came back "0, A, 3",
#: "four, five" as "Thor, V"), 11 of 16 after this
DIGITS_CONTEXT = "Digits: zero, one, two, three, four, five, six, seven, eight, nine."


def spelling_context(spec: FieldSpec | None) -> str:
    """The ASR context while ``spec``'s spelling is expected: :data:`SPELLING_CONTEXT`, and
    :data:`DIGITS_CONTEXT` after it for a kind whose values may hold digits."""
    if spec is not None and kind(spec) in ("code", "email", "username"):
        return f"{SPELLING_CONTEXT} {DIGITS_CONTEXT}"
    return SPELLING_CONTEXT


#: a choice's options are the ASR context of its answer up to this many (Whisper decodes after the last 160
#: tokens of its context; the flight form's 13 nationalities are 40): a longer list would push the names out
CONTEXT_OPTIONS = 16


def asr_context(
    specs: Mapping[str, FieldSpec], values: Mapping[str, FieldValue], asked: FieldSpec | None = None
) -> str:
    """The person's names as the interview holds them, in the form's order ("Oluwaseun
    Oyelaran"): words they may say again in an e-mail or a user name, for the ASR to decode
    after (``context`` of :meth:`~appliance.voice.asr.whisper.WhisperASR.transcribe`).

    ``specs``: the fields by name, in page order; ``values``: each field's value, confirmed
    or being read back (the answer to a read-back said with the next question is transcribed
    before the value is confirmed; a misheard name is replaced here once the person corrects
    it). A name is the text value of a :func:`name_part` field, or of a ``name`` kind field
    whose name or label says "name" (a full name, a company name; not a city).

    ``asked``: the field whose answer comes next; a choice of up to :data:`CONTEXT_OPTIONS`
    options adds them ("Oluwaseun Oyelaran. Standard, Vegetarian, Halal, Kosher."). Measured
    on the bench's recorded "I'd like a halal meal.": "I'd like a how-a-me-ill." alone, "I'd
    like a Halal meal." after the meal options; "No, it's hell." → "No, it's Halal." likewise."""

    def named(spec: FieldSpec) -> bool:
        return name_part(spec) is not None or (
            kind(spec) == "name" and "name" in f"{spec.name} {spec.label}".casefold()
        )

    names = " ".join(
        v.strip() for n, spec in specs.items() if isinstance(v := values.get(n), str) and v.strip() and named(spec)
    )
    opts = asked.options or () if asked is not None and kind(asked) in ("choice", "choices") else ()
    if not 0 < len(opts) <= CONTEXT_OPTIONS:
        return names
    return f"{names}. {', '.join(opts)}." if names else f"{', '.join(opts)}."


#: "My username is …", "Yes, my e-mail address is …": the field a person names before their value
_NAMED = re.compile(
    r"^(?:\W*(?:yes|yeah|no|ok|okay|sure|so|and|um+|uh+|please|actually|can you|could you)\b)*\W*"
    r"(?:(?:please\s+)?(?:change|make|set|correct|update)\s+)?(?:my|our|the) "
    r"([a-z' -]{2,40}?)\s+(?:is|are|was|should be|to)\b",
    re.I,
)
#: words that name the same part of a name
_SAME_WORD = {"first": "given", "forename": "given", "last": "family", "surname": "family"}


def _label_words(text: str) -> set[str]:
    words_ = re.findall(r"[a-z]+", text.casefold().replace("e-mail", "email").replace("_", " "))
    return {_SAME_WORD.get(w, w) for w in words_}


def _field_words(spec: FieldSpec) -> set[str]:
    return _label_words(f"{spec.name} {spec.label}")


def named_field(text: str, asked: FieldSpec, specs: Mapping[str, FieldSpec]) -> FieldSpec | None:
    """The other field an answer says it gives ("My username is davidmiller." to "What is
    your first name?"): the one field of ``specs`` (by name) whose name and label hold every
    word the lead-in names ("first" and "given", "last", "surname" and "family" alike), when
    ``asked``'s do not. None when the answer names no field, names ``asked``, or names no
    other field for certain ("my name is" fits a first name)."""
    said = _lead_in_words(text)
    if not said or said <= _field_words(asked):
        return None
    others = [s for n, s in specs.items() if n != asked.name and said <= _field_words(s)]
    return others[0] if len(others) == 1 else None


def field_named(text: str, specs: Mapping[str, FieldSpec]) -> FieldSpec | None:
    """The one field of ``specs`` an answer's lead-in names ("No, my town is Leeds." → the
    town or city field), as :func:`named_field` finds it; None when it names none, or several."""
    said = _lead_in_words(text)
    found = [s for s in specs.values() if said and said <= _field_words(s)]
    return found[0] if len(found) == 1 else None


#: words too common to say which field a sentence is about
_COMMON_WORDS = frozenset("the and you your for with like want would please not that this its are was have".split())


def field_mentioned(text: str, specs: Mapping[str, FieldSpec]) -> FieldSpec | None:
    """The one field of ``specs`` whose name or label shares a word with ``text`` (words of
    three letters or more, :data:`_COMMON_WORDS` aside) — "No, I'd like a halal meal." → the
    meal field — when :func:`field_named` finds no lead-in; None when no field or several are."""
    said = {w for w in _label_words(text) if len(w) >= 3 and w not in _COMMON_WORDS}
    found = [s for s in specs.values() if said & _field_words(s)]
    return found[0] if len(found) == 1 else None


def _lead_in_words(text: str) -> set[str]:
    m = _NAMED.match(text.strip())
    return _label_words(m.group(1)) if m else set()


def own_part(
    spec: FieldSpec, value: FieldValue, specs: Mapping[str, FieldSpec], values: Mapping[str, FieldValue]
) -> FieldValue:
    """``value`` heard for a given or a family name field (:func:`name_part`) without the
    other part of the name, when the person said their full name to a question about one
    part ("What is your first name?" "David Miller." → "David", the family name being
    Miller in ``values``, the other fields' values by name). Anything else is returned as it is."""
    part = name_part(spec)
    if part is None or not isinstance(value, str):
        return value
    other = next(
        (
            v
            for n, s in specs.items()
            if n != spec.name and isinstance(v := values.get(n), str) and v.strip() and name_part(s) not in (None, part)
        ),
        None,
    )
    if other is None:
        return value
    words, drop = value.split(), other.split()
    if len(words) > len(drop):
        folded = [w.casefold().strip(".,") for w in words]
        want = [w.casefold() for w in drop]
        if part == "given" and folded[-len(drop) :] == want:
            return " ".join(words[: -len(drop)])
        if part == "family" and folded[: len(drop)] == want:
            return " ".join(words[len(drop) :])
    return value


def date_part(spec: FieldSpec) -> Literal["day", "month", "year"] | None:
    """Whether ``spec`` holds the day, the month or the year of a date split into fields."""
    if spec.type == "date":
        return None
    for text in (spec.name, spec.label):
        m = _DATE_PART.search(text.strip())
        if m:
            return m.group(1).lower()
    return None


def fits(spec: FieldSpec, value: FieldValue) -> bool:
    """Whether ``value`` matches ``spec``'s ``pattern`` as the page's constraint validation
    applies it (the whole value: ``^(?:pattern)$``, HTML's ``pattern`` attribute); True when the
    field has no pattern, the value is no string, or the pattern is not one Python's ``re`` reads."""
    if not spec.pattern or not isinstance(value, str):
        return True
    try:
        return re.fullmatch(spec.pattern, value) is not None
    except re.error:
        return True


def spellable(spec: FieldSpec) -> bool:
    """Whether the person may be asked to spell this field's value."""
    return kind(spec) in SPELLABLE


#: a choice's options read out with its question up to this many ("Window, Aisle or Middle?"): they tell the
#: person the words the form takes; a longer list (six destinations, six meals: 3–3.5 s of speech) mostly
#: holds what the person would say anyway ("Rome"), so it is read only after an answer that names none
READ_OPTIONS = 3


def question(spec: FieldSpec) -> str:
    """The question for a field: "What is your date of birth?", "What is your seat
    preference: Window, Aisle or Middle?" (up to :data:`READ_OPTIONS` options are read out; a
    longer list is said only when the answer names none of them, :func:`hint`; a label that is a
    question is kept: "How should we contact you? Email, Phone or Post?"), "Do you accept the
    fare rules and the privacy notice?"; a "(s)" is not read out (Piper says it as a letter S:
    "What is your given name?" for "Given name(s)"); a date's label that does not say so gets "date":
    "What is your check-in date?"; "(optional)" is not read out, a plural takes "are": "What are
    your notes for the crew?", a number "how many": "How many checked bags?"; an item of a
    repeating group whose label does not name it is asked by its group and index ("What is the
    first name of passenger 2?")."""
    label = re.sub(r"(?i)\s*\((?:optional|required)\)$", "", _said(spec.label).rstrip(":*").strip())
    label = _FORMAT_NOTE.sub("", label).strip()  # "Date (DD/MM/YYYY)": the format is the page's to care about
    if spec.group and spec.group_index and spec.group.casefold() not in label.casefold():
        label = f"{spec.group} {spec.group_index}: {label}"  # an item of a repeating group: "… of passenger 2"
    k = kind(spec)
    if k == "yesno":
        m = re.match(r"(?i)i (agree|accept|consent|confirm|want|would like|have read)\b(.*)", label)
        return f"Do you {m.group(1).lower()}{m.group(2).rstrip('.')}?" if m else f"Please confirm: {label}. Yes or no?"
    opts = spec.options or ()
    if k in ("choice", "choices") and 0 < len(opts) <= READ_OPTIONS:
        head = label if label.endswith("?") else f"What is {_whose(label)}:"
        listed = f"{', '.join(opts[:-1])} or {opts[-1]}" if len(opts) > 1 else opts[0]
        return f"{head} {listed}?"
    if label.endswith("?"):
        return label
    if k == "date" and not re.search(r"(?i)\b(date|day|birthday|born|dob|when)\b", label):
        label = f"{label} date"  # "Check-in" → "What is your check-in date?"
    head = re.split(r"(?i)\s+(?:for|of|to|in|on|with|about|from)\s+", label)[0].split()[-1]
    plural = bool(re.search(r"(?i)[^su]s$", head))  # "Notes for the crew", "Checked bags"
    if plural and k == "number":
        return f"How many {_lower_first(label)}?"
    return f"What {'are' if plural else 'is'} {_whose(label)}?"


#: a format written into a label, never read out: "(DD/MM/YYYY)", "(TT.MM.JJJJ)", "(hh:mm)"
_FORMAT_NOTE = re.compile(r"\s*\((?:[dmyjths]{1,4}[./: -]){1,2}[dmyjths]{1,4}\)", re.I)


def _whose(label: str) -> str:
    """``label`` after "What is": "your first name"; "the account holder's name" (a label that
    names its owner is not the person's: "Account holder's name", "Name of the account holder");
    an acronym keeps its capitals ("your IBAN", never "your iBAN")."""
    said = _lower_first(label)
    if m := re.fullmatch(r"(.+?):\s*(.+)", said):  # "Passenger 2: First name" → "the first name of passenger 2"
        return f"the {_lower_first(m.group(2))} of {_lower_first(m.group(1))}"
    if re.match(r"(?i)(your|the|my)\b", said):
        return re.sub(r"(?i)^my\b", "your", said)
    if re.search(r"(?i)\w's\b|\bof the\b", said):
        return f"the {said}"
    return f"your {said}"


def hint(spec: FieldSpec) -> str:
    """What a good answer looks like, for a re-ask after an answer that did not parse."""
    k = kind(spec)
    if spec.format_hint and k not in ("date",):
        return f"The form wants {spec.format_hint[0].lower() + spec.format_hint[1:]}."
    return {
        "email": "For example: name at example dot com.",
        "phone": "Please say the digits one by one.",
        "date": "Please say the day, the month and the year.",
        "yesno": "Please say yes or no.",
        "choice": _choices_hint(spec),
        "code": "Please say it character by character.",
    }.get(k, "")


def spoken_text(text: str) -> str:
    """A page's words (a refusal's reason, a step's advice) as the phone agent says them: a
    long number (five digits or more, "+" said "plus") digit by digit in groups, which a
    speech synthesiser would read as one huge number ("+447700900123" → "plus four four
    seven, seven zero zero, nine zero zero, one two three"), and "e.g."/"i.e." in words."""
    text = re.sub(r"\be\.g\.,?", "for example", re.sub(r"\bi\.e\.,?", "that is", text))
    return re.sub(
        r"(\+)?\b(\d{5,})\b", lambda m: ("plus " if m.group(1) else "") + words.digit_groups(m.group(2)), text
    )


def _choices_hint(spec: FieldSpec) -> str:
    opts = spec.options or ()
    if len(opts) > READ_OPTIONS:  # not read out with the question: say them now
        return f"The choices are {', '.join(opts[:-1])} or {opts[-1]}."
    return "Please pick one of the choices."


def parse(spec: FieldSpec, text: str, date_order: str = "DMY") -> FieldValue | None:
    """The written value in the person's answer, or None (then ask again). The whole answer
    is read first — a turn may hold several transcripts ("My postal code is M. 1-1. A E.")
    —, then its first sentence alone (ASR may add a garbled repeat after it)."""
    value = _parse(spec, text, date_order)
    first = normalise.first_sentence(text)
    if value is None and first != text.strip():
        value = _parse(spec, first, date_order)
    return value


def _parse(spec: FieldSpec, text: str, date_order: str) -> FieldValue | None:
    k = kind(spec)
    if k == "yesno":
        return normalise.yes_no(text)
    if k == "choice":
        return normalise.choice(text, spec.options or ())
    if k == "choices":
        picked = tuple(o for o in spec.options or () if normalise.choice(text, (o,)))
        return picked or None
    if k in ("name", "email", "username") and spelling.looks_spelled(text, k):
        value = spelling.decode(text, k)  # "O'Neill, spelled O apostrophe N E I double L"
        if value is not None:
            return value
    if k in ("code", "number", "phone") and normalise.yes_no(text) is not None and not re.search(r"\d", text):
        return None  # "Yes, I accept." to "What is your security code?" (bench): no code, "YES" never typed
    return {
        "email": normalise.email,
        "phone": normalise.phone,
        "date": lambda t: normalise.date(t, date_order),
        "username": normalise.username,
        "code": lambda t: _code(spec, normalise.code(t)),
        "name": normalise.name,
        "number": lambda t: normalise.digits(t) or None,
        "address": lambda t: normalise.strip_lead_in(t) or None,
        "text": normalise.own_words,
    }[k](text)


def _spelling_kind(spec: FieldSpec) -> spelling.Kind:
    return kind(spec)  # the spellable kinds are spelling's kinds


def parse_spelled(spec: FieldSpec, text: str) -> str | None:
    """The value the person spelled in ``text`` (see :mod:`~appliance.phone_agent.spelling`),
    or None when it holds no spelling of one. A choice's spelled word picks its option
    ("India, Romeo, India, Sierra, Hotel" → "Ireland")."""
    if kind(spec) == "choice":
        word = spelling.decode(text, "name")
        return normalise.choice(word, spec.options or ()) if word else None
    value = spelling.decode(text, _spelling_kind(spec))
    if kind(spec) == "code":
        if value is None and spelling.looks_spelled(text, "code"):
            value = normalise.code(text)
        return _code(spec, value)
    return once(spec, value)


def once(spec: FieldSpec, value: FieldValue | None) -> FieldValue | None:
    """``value`` that is one value said twice, as one, where only one copy :func:`fits`
    ``spec``'s pattern (bench: "No, it's Papa, X-ray, 472, 9183, P for Papa, X-ray, 4, 7, …"
    decoded as PX4729183PX4729183 against ``[A-Z0-9]{9}``); else ``value`` as it is (a field
    without a pattern cannot tell a doubled value from a long one)."""
    if not isinstance(value, str) or not spec.pattern or len(value) % 2 or fits(spec, value):
        return value
    half = value[: len(value) // 2]
    return half if value == half * 2 and fits(spec, half) else value


def _code(spec: FieldSpec, value: str | None) -> str | None:
    """A code's value: one copy (:func:`once`); None for a one-time code with no digit in it
    (bench, audio: "Yes, I accept." spelled back as Y, E, S was typed into the code boxes)."""
    value = once(spec, value)
    if spec.meaning == ONE_TIME_CODE and isinstance(value, str) and not re.search(r"\d", value):
        return None
    return value


#: what follows a question when the page offers the field's box
TYPE_OFFER = "Or type it in the box on your screen."


def spell_question(spec: FieldSpec, or_type: bool = False) -> str:
    """ "Could you spell your family name for me, letter by letter?" (``or_type``: "… Or type
    it in the box on your screen.")."""
    label = spoken_label(spec)
    ask = f"Could you spell your {label} for me, letter by letter?"
    return f"{ask} {TYPE_OFFER}" if or_type else ask


def typed_value(spec: FieldSpec, text: str, date_order: str = "DMY") -> FieldValue:
    """A value the person typed, as the form takes it: dates as ISO, an option as its label,
    yes/no as a boolean where those parse; anything else as typed (stripped)."""
    text = text.strip()
    k = kind(spec)
    if k in ("date", "choice", "choices", "yesno"):
        value = _parse(spec, text, date_order) if k != "date" or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else text
        if value is not None:
            return value
    return text


def spoken_label(spec: FieldSpec) -> str:
    """A field's label as said inside a sentence: "family name", "e-mail address"; "given
    name" for "Given name(s)" (Piper reads the "(s)" as a letter S)."""
    return _lower_first(_said(spec.label).rstrip(":*?").strip())


def _said(label: str) -> str:
    """A label without what is not read out: its "(s)" (Piper reads it as a letter S)."""
    return re.sub(r"\(s\)", "", label).strip()


def _lower_first(label: str) -> str:
    return label[0].lower() + label[1:] if label and not label[:2].isupper() else label


def _as_heard(heard: str, value: str, parse) -> str | None:
    """The person's own words for ``value`` ("David Miller 84" for ``davidmiller84``), when
    they give exactly that value; else None."""
    said = re.split(r"\bat\b|@", normalise.strip_lead_in(normalise.first_sentence(heard)))[0].strip()
    return said if said and parse(said) == value else None


def spoken(spec: FieldSpec, value: FieldValue, heard: str = "", spelled: bool = False) -> str:
    """``value`` as the phone agent says it in a read-back (see the module docstring). User
    names and the part of an e-mail before the "at" are said in the person's own words when
    those give exactly the value ("david miller 84, as one word"; "david miller, at example
    dot com"), else spelled. ``spelled``: the person spelled it; it is spelled back."""
    k = kind(spec)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(value)
    if spelled and k in SPELLABLE:
        return spelling.say(value, _spelling_kind(spec))
    if k in ("name", "address"):
        return value
    if k == "email":
        local, _, domain = value.partition("@")
        own = _as_heard(heard, local, normalise.username)
        return f"{own.lower() if own else spelling.say(local, 'username')}, at {domain.replace('.', ' dot ')}"
    if k in ("phone", "number") or (k == "code" and value.isdigit()):
        return ("plus " if value.startswith("+") else "") + words.digit_groups(value.lstrip("+"))
    if k == "username":
        own = _as_heard(heard, value, normalise.username)
        return f"{own.lower()}, as one word" if own and " " in own else own or spelling.say(value, "username")
    if k == "code":
        return spelling.say(value, "code")
    if k == "date":
        return words.date(value)
    return value


#: a read-back that opens with a spelling-alphabet word ("Hotel, Oscar, Alpha")
_SPELLED_OUT = re.compile(rf"(?:{'|'.join(words.SPELLING.values())})\b")


def stated(spec: FieldSpec, value: FieldValue, heard: str = "", spelled: bool = False) -> str:
    """ "I have …." (``heard``: the answer the value came from; ``spelled``: the person spelled
    it): a read-back as a statement, which the next question may follow. A spelling names its
    field first: "For your family name, I have it as Hotel, Oscar, Alpha.". Letters alone do
    not say which detail they are (bench, joaquin: a late spelling of the first name was read
    back as "I have it as Juliett, …" after the family name was asked, and the person said yes
    to its first name). After a bare "I have", Whisper tiny.en wrote Piper's "Hotel" as "Hope
    Tell" and dropped the closing "Zulu" of "Golf, …, Romeo, Zulu"; after "it as", 4
    spellings in 4 came back whole (Piper straight into Whisper, no call). Measured here on
    the hard profiles' names, passport numbers and e-mails (28, Piper → the simulated person's
    ear): 19 heard right as "I have it as …", 17 as "For your …, I have it as …", 15 as "I
    have your family name as …" (tiny.en wrote "as" as "is", "email as" as "emails")."""
    said = spoken(spec, value, heard, spelled)
    lead = f"For your {spoken_label(spec)}, I have it as " if _SPELLED_OUT.match(said) else "I have "
    return f"{lead}{said}{'' if said.endswith(('.', '!', '?')) else '.'}"


def read_back(spec: FieldSpec, value: FieldValue, heard: str = "", spelled: bool = False) -> str:
    """ "I have …. Is that right?" (:func:`stated`, then the question)."""
    return f"{stated(spec, value, heard, spelled)} Is that right?"


# ---- fields asked together -------------------------------------------------------------------------------

#: family-name particles: "Ana de la Cruz" → given "Ana", family "de la Cruz"
_PARTICLES = {
    "de",
    "da",
    "di",
    "del",
    "della",
    "der",
    "den",
    "van",
    "von",
    "du",
    "le",
    "la",
    "bin",
    "ibn",
    "al",
    "el",
    "dos",
    "das",
    "ter",
    "ten",
    "mac",
    "st",
}


def question_together(what: str, specs: tuple[FieldSpec, ...]) -> str:
    """One question for fields a person answers together: "What is your full name?"; "What
    is the date of birth: day, month and year?"; ``several`` (one section's details, issue
    27): "What are your full name and date of birth?"."""
    if what == "name":
        return "What is your full name?"
    if what == "several":
        labels = dict.fromkeys(
            "full name"
            if name_part(s)
            else _lower_first(_common_label(tuple(d for d in specs if date_part(d))) or "date")
            if date_part(s)
            else spoken_label(s)
            for s in specs
        )
        return f"What are your {_and_listed(list(labels))}?"
    prefix = _common_label(specs)
    return f"What is your {_lower_first(prefix)}?" if prefix else "What is the date: day, month and year?"


def _common_label(specs: tuple[FieldSpec, ...]) -> str:
    """What the labels of a date's part fields share once "day"/"month"/"year" is taken off."""
    rest = {re.sub(r"(?i)[\s(_-]*\b(day|month|year)\b\W*$", "", s.label).strip(" :*-") for s in specs}
    return rest.pop() if len(rest) == 1 else ""


def split_name(full: str) -> tuple[str, str] | None:
    """A full name → (given, family): the family name is the last word, or starts at a
    particle ("Ana de la Cruz" → ("Ana", "de la Cruz")); None for a single word."""
    words_ = full.split()
    if len(words_) < 2:
        return None
    start = next((i for i in range(1, len(words_) - 1) if words_[i].casefold() in _PARTICLES), len(words_) - 1)
    return " ".join(words_[:start]), " ".join(words_[start:])


def parse_together(
    what: str, specs: tuple[FieldSpec, ...], text: str, date_order: str = "DMY"
) -> tuple[FieldValue, ...] | None:
    """The values of fields asked together, in the order of ``specs``, or None."""
    if what == "name":
        full = normalise.name(text)
        parts = split_name(full) if full else None
        return parts
    iso = normalise.date(text, date_order)
    if iso is None:
        return None
    day = _dt.date.fromisoformat(iso)
    return tuple(_date_part_value(s, day) for s in specs)


def _date_part_value(spec: FieldSpec, day: _dt.date) -> str:
    part = date_part(spec)
    n = {"day": day.day, "month": day.month, "year": day.year}[part or "day"]
    for o in spec.options or ():
        label = o.strip().casefold()
        if (label.isdigit() and int(label) == n) or (
            part == "month" and len(label) >= 3 and day.strftime("%B").casefold().startswith(label[:3])
        ):
            return o
    return str(n)


def stated_together(
    what: str, specs: tuple[FieldSpec, ...], values: tuple[FieldValue, ...], heard: tuple[str, ...] = ()
) -> str:
    """ "I have David Miller."; "I have the fourteenth of March, nineteen ninety."; values
    said in one breath (``several``; ``heard``: each one's words, as :func:`spoken` takes
    them): the name, then each other value by its label, "I have Ada Lovelace, your date of
    birth, the tenth of December, nineteen ninety, and your passport number, X-ray, one, …"."""
    if what == "name":
        return f"I have {' '.join(str(v) for v in values)}."
    if what == "several":
        words_ = heard or ("",) * len(specs)
        names = [str(v) for s, v in zip(specs, values) if name_part(s)]
        rest = [
            f"your {spoken_label(s)}, {spoken(s, v, w)}"
            for s, v, w in zip(specs, values, words_, strict=True)
            if not name_part(s)
        ]
        return f"I have {_and_listed(([' '.join(names)] if names else []) + rest)}."
    return f"I have {words.date(together_date(specs, values))}."


def _and_listed(parts: list[str]) -> str:
    """ "a", "a and b", "a, b, and c" """
    if len(parts) <= 2:
        return " and ".join(parts)
    return f"{', '.join(parts[:-1])}, and {parts[-1]}"


def together_date(specs: tuple[FieldSpec, ...], values: tuple[FieldValue, ...]) -> str:
    """The ISO date that a date's part values say."""
    parts = {date_part(s): str(v) for s, v in zip(specs, values)}
    month = parts["month"]
    m = int(month) if month.isdigit() else normalise.MONTHS[month.casefold()[:3]]
    return _dt.date(int(parts["year"]), m, int(parts["day"])).isoformat()


# ---- before and after the submit -----------------------------------------------------------------------


def summary(
    specs: Mapping[str, FieldSpec], values: Mapping[str, FieldValue], unread: Mapping[str, str] | None = None
) -> str:
    """A short summary of what will be submitted, in page order: the name, choices, dates
    and short words as said; identifiers (codes, numbers, e-mails) by their labels only:
    "Here is what I'll submit: David Miller; the fourteenth of March, nineteen ninety;
    Window; and your passport number and email as you confirmed them."; a value in
    ``unread`` (field name → the words it was heard in; never read back, issue 27: its
    confirmation is this summary) by its label and in full, whatever its kind: "…; your
    email, ada at example dot com; …"."""
    unread = unread or {}
    names, said, others = [], [], []
    for name, spec in specs.items():
        if name not in values:
            continue
        value, k = values[name], kind(spec)
        if isinstance(value, bool):
            continue  # a consent box: the person just said yes to it
        if name in unread:
            said.append(f"your {spoken_label(spec)}, {spoken(spec, value, unread[name])}")
        elif k == "name" and name_part(spec) and isinstance(value, str):
            names.append(value)
        elif k == "date" and isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            said.append(words.date(value))
        elif k in ("choice", "choices", "name", "address", "text") and len(str(value).split()) <= 4:
            said.append(spoken(spec, value))
        else:
            others.append(spoken_label(spec))
    parts = ([" ".join(names)] if names else []) + said
    if not parts and not others:
        return "All the fields are filled in."
    text = "Here is what I'll submit: " + "; ".join(parts)
    if others:
        text += f"{'; and ' if parts else ''}your {_and_listed(others)} as you confirmed {'it' if len(others) == 1 else 'them'}"
    return text + "."


_REFERENCE = re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,}\b")


def page_answer(text: str) -> str:
    """What the page answered to the submit, for the person: the sentence with its reference,
    the reference spelled ("The page says: Your booking reference is Sierra, Kilo, Yankee,
    four, …."); else its first words (up to 25); '' for nothing."""
    sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+|\n+", text or "") if s.strip()]
    t = " ".join(s if s[-1] in ".!?" else s + "." for s in sentences)
    if not t:
        return ""
    m = _REFERENCE.search(t)
    if m:
        sentence = next(s for s in sentences if m.group(0) in s).rstrip(".!?")
        return f"The page says: {sentence.replace(m.group(0), spelling.say(m.group(0), 'code'))}. "
    first = " ".join(t.split()[:25])
    return f"The page says: {first if first[-1] in '.!?' else first + '.'} "
