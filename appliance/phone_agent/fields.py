"""What the phone agent says about a field and how it reads the answer.

A field's *kind* (from its HTML type first, then its name) picks the question wording,
the normaliser (:mod:`normalise`) and the read-back: names are said as written (a
person hears whether it sounds like theirs; letters spoken by Piper come back from
Whisper tiny.en garbled: "D A V I D" → "D with VYD", "E M M A" → "E-D-M-M-A"), e-mails
spelled before the "at" unless the person's own words give it, IDs and phone numbers said
digit by digit, dates said in words.
"""

from __future__ import annotations

import re

from appliance.phone_agent import normalise as nz, words
from appliance.protocol import FieldSpec, FieldValue

_CODE_NAMES = ("passport", "id_number", "postcode", "zip", "post_code", "licence", "license", "iban", "reference")
_NAME_NAMES = ("name", "city", "town", "street", "company", "country_of", "place")


def kind(spec: FieldSpec) -> str:
    """``email``, ``phone``, ``date``, ``choice``, ``choices``, ``yesno``, ``number``,
    ``username``, ``code``, ``name`` or ``text``."""
    t, n = spec.type, spec.name
    by_type = {"email": "email", "tel": "phone", "date": "date", "select": "choice", "radio": "choice",
               "multiselect": "choices", "checkboxes": "choices", "checkbox": "yesno", "number": "number"}
    if t in by_type:
        return by_type[t]
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
    if any(c in n for c in _NAME_NAMES):
        return "name"
    return "text"


def question(spec: FieldSpec) -> str:
    """The question for a field: "What is your date of birth?", "What is your seat
    preference: Window, Aisle or Middle?" (up to six options are read out; a label that is a
    question is kept: "How should we contact you? Email, Phone or Post?"), "Do you accept the
    fare rules and the privacy notice?"."""
    label = spec.label.strip().rstrip(":*").strip()
    k = kind(spec)
    if k == "yesno":
        m = re.match(r"(?i)i (agree|accept|consent|confirm|want|would like|have read)\b(.*)", label)
        return f"Do you {m.group(1).lower()}{m.group(2).rstrip('.')}?" if m else f"Please confirm: {label}. Yes or no?"
    opts = spec.options or ()
    if k in ("choice", "choices") and 0 < len(opts) <= 6:
        head = label if label.endswith("?") else f"What is your {label[0].lower() + label[1:]}:"
        listed = f"{', '.join(opts[:-1])} or {opts[-1]}" if len(opts) > 1 else opts[0]
        return f"{head} {listed}?"
    if label.endswith("?"):
        return label
    return f"What is your {label[0].lower() + label[1:]}?"


def hint(spec: FieldSpec) -> str:
    """What a good answer looks like, for a re-ask after an answer that did not parse."""
    k = kind(spec)
    if spec.format_hint and k not in ("date",):
        return f"The form wants {spec.format_hint[0].lower() + spec.format_hint[1:]}."
    return {"email": "For example: name at example dot com.", "phone": "Please say the digits one by one.",
            "date": "Please say the day, the month and the year.", "yesno": "Please say yes or no.",
            "choice": "Please pick one of the choices.", "code": "Please say it character by character."}.get(k, "")


def parse(spec: FieldSpec, text: str, date_order: str = "DMY") -> FieldValue | None:
    """The written value in the person's answer, or None (then ask again). The whole answer
    is read first — a turn may hold several transcripts ("My postal code is M. 1-1. A E.")
    —, then its first sentence alone (ASR may add a garbled repeat after it)."""
    value = _parse(spec, text, date_order)
    first = nz.first_sentence(text)
    if value is None and first != text.strip():
        value = _parse(spec, first, date_order)
    return value


def _parse(spec: FieldSpec, text: str, date_order: str) -> FieldValue | None:
    k = kind(spec)
    if k == "yesno":
        return nz.yes_no(text)
    if k == "choice":
        return nz.choice(text, spec.options or ())
    if k == "choices":
        picked = tuple(o for o in spec.options or () if nz.choice(text, (o,)))
        return picked or None
    return {"email": nz.email, "phone": nz.phone, "date": lambda t: nz.date(t, date_order), "username": nz.username,
            "code": nz.code, "name": nz.name, "number": lambda t: nz.digits(t) or None,
            "text": lambda t: nz.strip_lead_in(t) or None}[k](text)


def _chars(s: str) -> str:
    out = []
    for ch in s:
        out.append({"_": "underscore", ".": "dot", "-": "dash", "+": "plus", " ": ","}.get(ch, ch.upper()
                                                                                             if ch.isalpha() else ch))
    return " ".join(out).replace(" , ", ", ")


def _as_heard(heard: str, value: str, parse) -> str | None:
    """The person's own words for ``value`` ("David Miller 84" for ``davidmiller84``), when
    they give exactly that value; else None."""
    said = re.split(r"\bat\b|@", nz.strip_lead_in(nz.first_sentence(heard)))[0].strip()
    return said if said and parse(said) == value else None


def spoken(spec: FieldSpec, value: FieldValue, heard: str = "") -> str:
    """``value`` as the phone agent says it in a read-back. User names and the part of an
    e-mail before the "at" are said in the person's own words when those give exactly the
    value ("david miller 84, as one word"; "david miller, at example dot com"), else spelled."""
    k = kind(spec)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(value)
    if k == "email":
        local, _, domain = value.partition("@")
        own = _as_heard(heard, local, nz.username)
        return f"{own.lower() if own else _chars(local)}, at {domain.replace('.', ' dot ')}"
    if k in ("phone", "number") or (k == "code" and value.isdigit()):
        return ("plus " if value.startswith("+") else "") + words.digit_groups(value.lstrip("+"))
    if k == "username":
        own = _as_heard(heard, value, nz.username)
        return f"{own.lower()}, as one word" if own and " " in own else own or _chars(value)
    if k == "code":
        return words.spelled_code(value)
    if k == "date":
        return words.date(value)
    return value


def read_back(spec: FieldSpec, value: FieldValue, heard: str = "") -> str:
    """"I have …. Is that right?" (``heard``: the answer the value came from)."""
    return f"I have {spoken(spec, value, heard)}. Is that right?"
