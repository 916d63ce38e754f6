"""What the person's request already told (issue 27, "nothing asked twice"): values the task in
their words gives ("Fill in this flight booking for me, I'm Ada Lovelace, ada@example.com")
for fields of the form, so that those fields are never asked.

The LLM copies, for each open field, the words of the request that give its value (one
constrained JSON object over the fields, :func:`decision_model`); code then keeps only what
the request really says of the person (:func:`values`): the copy's words stand together in the
request, no word just before them gives them to someone else ("my partner Sarah Miller, born
…"), and the field's own parser takes them (:func:`~appliance.phone_agent.fields.parse`).
Consents, a one-time code, yes/no boxes and a companion's fields (a second item of a repeating
group) are never taken from a request: they are asked.

The same copy finds the values an answer gives for fields not asked yet ("My email is …, and my
phone number is …": :func:`copies`, used by :class:`~appliance.phone_agent.confirmation.LookAhead`);
those are read back as any answer.

The values a request gives are confirmed at once (the person's own words, typed or said in the request),
and said back in one statement before the first question (:func:`statement`); a wrong one is
put right at the summary, as any other (``summary_corrected``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field, create_model

from appliance.phone_agent import fields, normalise
from appliance.protocol import ONE_TIME_CODE, FieldSpec, FieldValue

#: the longest copy of words the LLM may give for one field (characters)
MAX_WORDS_CHARS = 60
SYSTEM = (
    "A person asked an assistant to fill in a web form. For each form field, copy the exact words of the "
    "person's request that give that field's value, or null when the request does not give it. Never guess.\n"
    "Examples:\n"
    "The person's request: \"Book a table for me on Friday 3 May 2024, I'm Tom Baker, tom@example.org\"\n"
    'Form fields: "Name", "Phone", "Email", "Date"\n'
    '=> {"Name":"Tom Baker","Phone":null,"Email":"tom@example.org","Date":"Friday 3 May 2024"}\n'
    'The person\'s request: "Renew my library card, my number is 0161 496 0000"\n'
    'Form fields: "Card number", "Phone number", "First name"\n'
    '=> {"Card number":null,"Phone number":"0161 496 0000","First name":null}'
)


def request(task: str) -> str:
    """The person's request as far as it may give values: without web addresses (bench: a
    default task's "http://127.0.0.1:42915/…" gave the postcode 42915, submitted), and ''
    when it holds none at all (no digit, no ``@``, no capitalised word past its first: "Fill
    in the form.")."""
    task = re.sub(r"\b[a-z][a-z0-9+.-]*://\S+", " ", task, flags=re.I)
    words = task.split()
    holds = bool(re.search(r"[\d@]", task)) or any(w[:1].isupper() for w in words[1:] if w not in ("I", "I'm", "I'd"))
    return " ".join(words) if holds else ""


#: a field of a second (third …) item of a repeating group, by its label where the page gave no group
_OTHER_ITEM = re.compile(
    r"(?i)\b(?:passenger|traveller|traveler|guest|person|adult|child) (?:[2-9]|two|three)\b|\bsecond\b"
)
#: words that give what follows to someone else ("my partner Sarah Miller, born 5 November 1992")
_SOMEONE_ELSE = {
    "partner", "wife", "husband", "spouse", "son", "daughter", "child", "kid", "friend", "mother", "mum", "mom",
    "father", "dad", "brother", "sister", "colleague", "boyfriend", "girlfriend", "companion", "his", "her",
    "their", "he", "she", "they",
}  # fmt: skip
#: how many words before a copy may give it to someone else
_BEFORE = 5


#: kinds whose parser takes only a value of that kind, or a name: what a request or an answer may give
#: another field (free text, an address or a user name would take any words: bench, a German request's
#: "Melde mich bitte" became a first name)
_KINDS = ("email", "phone", "date", "number", "code", "choice", "name")
#: words just before a person's name that say it is theirs ("I'm", "I am", "my name is", "this is", "called")
_INTRODUCED = (("i", "m"), ("i", "am"), ("name", "is"), ("name", "s"), ("this", "is"), ("called",))


def open_fields(specs: Sequence[FieldSpec]) -> tuple[FieldSpec, ...]:
    """The fields a request or an answer may fill: the person's own (not another item of a
    repeating group: a companion is asked) of a kind with a strict parser or a name
    (:data:`_KINDS`), not a consent nor a one-time code."""
    return tuple(
        s
        for s in specs
        if s.consent == "none"
        and s.meaning != ONE_TIME_CODE
        and fields.kind(s) in _KINDS
        and (s.group_index or 1) == 1
        and not _OTHER_ITEM.search(s.label)
    )


def may_give(text: str, spec: FieldSpec, *, request: bool) -> bool:
    """Whether ``text`` may hold a value for ``spec`` at all, by what such a value needs to
    stand in words: an e-mail an "@" or "at … dot", a phone number six digits, a date a
    digit or a month, a number or a code a digit (in a request also the field's own name
    before it, as :func:`copies` requires), a choice one of its options' words; a person's
    name in a request an introduction ("I'm", "my name is"), in an answer the word "name" or
    an introduction; a town's or another name its field's name. Fields that fail are not
    given to the LLM to copy (a request that gives nothing costs no LLM call; an answer's
    copy is shorter: bench, 13 s of silence before the first question, 5.5 s before an
    answer's read-back)."""
    words = _words(text)
    kind = fields.kind(spec)
    label = set(_words(f"{_label(spec)} {spec.name.replace('_', ' ')}")) - {"your", "the", "of", "number", "name"}
    introduced = any(tuple(words[i : i + len(w)]) == w for w in _INTRODUCED for i in range(len(words)))
    match kind:
        case "email":
            return "@" in text or bool(re.search(r"\bat\b.*\bdot\b", text, re.I))
        case "phone":
            return len(re.findall(r"\d", text)) >= 6
        case "date":
            return bool(re.search(r"\d", text)) or any(w in normalise.MONTHS for w in words)
        case "number" | "code":
            return bool(re.search(r"\d", text)) and (not request or bool(label & set(words)))
        case "choice":
            return any(set(_words(o)) <= set(words) for o in spec.options or ())
        case _ if _person_name(spec):
            return introduced or (not request and "name" in words)
    return bool(label & set(words))


def _person_name(spec: FieldSpec) -> bool:
    """A person's name field (given, family or full), not a town's or a company's."""
    return fields.kind(spec) == "name" and "name" in spec.name


def _label(spec: FieldSpec) -> str:
    """A field's label without what is in brackets ("Date (DD/MM/YYYY)": "Date")."""
    return re.sub(r"\s*\([^)]*\)", "", spec.label).strip(" :*") or spec.name


def _keys(specs: Sequence[FieldSpec]) -> list[str]:
    """Each field's key in the LLM's answer: its label, told apart by a number when two share one."""
    keys: list[str] = []
    for s in specs:
        label = _label(s)
        key, n = label[:60], 1
        while key in keys:
            n += 1
            key = f"{label[:55]} ({n})"
        keys.append(key)
    return keys


def decision_model(specs: Sequence[FieldSpec]) -> type[BaseModel]:
    """The LLM's answer: one key per field (its label), the request's words or null."""
    return create_model(
        "Told",
        **{f"f{i}": (str | None, Field(alias=key, max_length=MAX_WORDS_CHARS)) for i, key in enumerate(_keys(specs))},
    )


def prompt(task: str, specs: Sequence[FieldSpec]) -> str:
    """The user message: the request and the fields by their keys."""
    listed = ", ".join(f'"{key}"' for key in _keys(specs))
    return f'The person\'s request: "{task}"\nForm fields: {listed}'


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def _copy(words: str | None) -> str | None:
    """The LLM's copy, None for none (a 0.5B model writes null as the word "null" too)."""
    return None if words is None or words.strip().casefold() in ("", "null", "none", "n/a") else words


def _the_persons(task: list[str], copied: list[str]) -> bool:
    """Whether ``copied`` (words) stands in ``task`` (words) where no word just before it gives
    it to someone else."""
    at = _at(task, copied)
    return at is not None and not _SOMEONE_ELSE & set(task[max(0, at - _BEFORE) : at])


def copies(
    text: str, specs: Sequence[FieldSpec], answer: BaseModel, date_order: str = "DMY", *, introduced: bool = False
) -> dict[str, str]:
    """The words ``answer`` (an instance of :func:`decision_model` over ``specs``) copied from
    ``text`` for each field that ``text`` really says of the person and the field's parser
    takes, by field name. ``introduced``: a person's name counts only where the words just
    before it say it is theirs (:data:`_INTRODUCED`: a request, not an answer to a question
    about them)."""
    said = _words(text)
    copied_ = [_copy(getattr(answer, f"f{i}")) for i in range(len(specs))]
    # a whole name copied for a given and a family name field (for both, or for one and the other left
    # null): split, as the fields asked together are ("Ada Lovelace" → Ada; Lovelace)
    parts = {fields.name_part(s): c for s, c in zip(specs, copied_, strict=True) if fields.name_part(s)}
    full = {c for c in parts.values() if c}
    whole_words = full.pop() if len(parts) == 2 and len(full) == 1 else None
    whole = fields.split_name(whole_words) if whole_words else None
    out: dict[str, str] = {}
    for spec, copied in zip(specs, copied_, strict=True):
        part = fields.name_part(spec)
        found = whole_words if whole is not None and part else copied  # where it stands in the text
        copied = (whole[0] if part == "given" else whole[1]) if whole is not None and part else copied
        if not copied or not found or not _words(copied) or not _the_persons(said, _words(found)):
            continue  # nothing, words the person never said (the LLM's guess), or someone else's
        names = {w for c in parts.values() if c for w in _words(c)}  # "I'm Ada Lovelace": Lovelace too
        if introduced and _person_name(spec) and not _introduces(said, _words(found), names):
            continue  # "Melde mich bitte …" is no name: a request names the person as "I'm …", "my name is …"
        if (
            introduced
            and fields.kind(spec) in _NAMED_KINDS
            and not _person_name(spec)
            and not _named(said, found, spec)
        ):
            continue  # a number, a code or a town a request gives only with its name ("my postcode is …")
        if fields.parse(spec, copied, date_order) not in (None, "", ()):
            out[spec.name] = copied
    return out


#: kinds a request gives only where it names the field just before the value: digits and words are
#: anywhere in a request ("for David Miller" is no town, "2 people" no bag count)
_NAMED_KINDS = ("number", "code", "name")


def _named(text: list[str], copied: str, spec: FieldSpec) -> bool:
    """Whether one of ``spec``'s label or name words stands among the few words before
    ``copied`` in ``text`` (words): "my postcode is M1 1AE"."""
    at = _at(text, _words(copied))
    own = set(_words(f"{_label(spec)} {spec.name.replace('_', ' ')}")) - {"your", "the", "of", "number", "name"}
    return at is not None and bool(own & set(text[max(0, at - _BEFORE) : at]))


def _introduces(text: list[str], copied: list[str], names: set[str]) -> bool:
    """Whether the words just before ``copied`` in ``text`` (words), past the other parts of the
    name (``names``), say it is the person's name (:data:`_INTRODUCED`)."""
    at = _at(text, copied)
    while at and text[at - 1] in names:
        at -= 1
    return at is not None and any(tuple(text[max(0, at - len(w)) : at]) == w for w in _INTRODUCED)


def _at(text: list[str], copied: list[str]) -> int | None:
    """Where ``copied`` (words) first stands in ``text`` (words), or None."""
    n = len(copied)
    return next((i for i in range(len(text) - n + 1) if text[i : i + n] == copied), None)


def values(text: str, specs: Sequence[FieldSpec], answer: BaseModel, date_order: str = "DMY") -> dict[str, FieldValue]:
    """The values a request ``text`` gives (:func:`copies`, a name only as introduced), parsed,
    by field name."""
    by_name = {s.name: s for s in specs}
    said = copies(text, specs, answer, date_order, introduced=True)
    return {n: fields.parse(by_name[n], words, date_order) for n, words in said.items()}


#: kinds said by their labels only (as in the summary): the person wrote them, and a spelled e-mail is long
_BY_LABEL = ("email", "code", "number", "phone", "username")


def statement(specs: Mapping[str, FieldSpec], told: Mapping[str, FieldValue]) -> str:
    """ "From your request, I have your last name, Lovelace, and your email as you gave it."
    ('' for no value)."""
    labels = {n: fields.spoken_label(specs[n].model_copy(update={"label": _label(specs[n])})) for n in told}
    parts = [
        f"your {labels[n]} as you gave it"
        if fields.kind(specs[n]) in _BY_LABEL
        else f"your {labels[n]}, {fields.spoken(specs[n], v)}"
        for n, v in told.items()
    ]
    if not parts:
        return ""
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])}, and {parts[-1]}"
    return f"From your request, I have {listed}."
