"""Naming what each new field asks for: the page's own semantics first, then the LLM.

A field's name comes from, in order: its HTML ``autocomplete`` token (the standard,
machine-readable meaning: ``given-name``, ``email``, ``postal-code``…); its label when that
is already one of :data:`COMMON_NAMES` ("Date of birth" → ``date_of_birth``); otherwise the
LLM, once per page state, for the fields left. Input to the model: those fields as a
compact numbered list (label, kind, a few options; ~10 tokens a field). Output, constrained
by a grammar: a JSON object label → snake_case name (``{"Given name":"given_name",...}``),
the labels forced in page order. Names stream: each is handed to ``on_name`` as soon as its
closing quote arrives, so ``need_info`` for the first fields goes out while the model is
still naming the rest.

The page's own text never reaches this prompt except as field labels and option labels,
and the model can only answer names: there is no action for injected text to trigger.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Annotated

from pydantic import BaseModel, Field, create_model

from appliance.computer_agent.page import FieldView
from appliance.llm.base import LLM, LLMError

log = logging.getLogger(__name__)

COMMON_NAMES = (
    "given_name",
    "family_name",
    "full_name",
    "date_of_birth",
    "email",
    "phone",
    "passport_number",
    "id_number",
    "nationality",
    "country",
    "street_address",
    "city",
    "postcode",
    "username",
    "travel_date",
    "return_date",
    "destination",
    "origin",
    "seat_preference",
    "meal",
    "consent",
    "contact_method",
    "gender",
    "title",
    "company",
)

SYSTEM = (
    "You name the fields of a web form. For each numbered field, give a short snake_case name for the "
    "information it holds about the person. Use one of these names when it fits: "
    + ", ".join(COMMON_NAMES)
    + ". Otherwise make a short name from the label. Answer with a JSON object that maps each field's label to "
    'its name, e.g. {"First name(s)":"given_name","E-mail":"email","Zip":"postcode","I agree to the terms":"consent",'
    '"Job":"job_title"}.'
)

#: HTML autocomplete tokens (WHATWG "autofill field names") → our names.
AUTOCOMPLETE = {
    "given-name": "given_name",
    "family-name": "family_name",
    "name": "full_name",
    "bday": "date_of_birth",
    "email": "email",
    "tel": "phone",
    "tel-national": "phone",
    "country": "country",
    "country-name": "country",
    "postal-code": "postcode",
    "address-level2": "city",
    "street-address": "street_address",
    "address-line1": "street_address",
    "username": "username",
    "organization": "company",
    "sex": "gender",
    "honorific-prefix": "title",
}

_NAME = re.compile(r"[a-z][a-z0-9_]{1,39}")
#: Answers that name the widget or the prompt rather than the information: replaced by the label's slug.
_NOT_NAMES = frozenset(
    {
        "label",
        "name",
        "field",
        "value",
        "text",
        "checkbox",
        "radio",
        "select",
        "input",
        "date",
        "option",
        "options",
        "yes",
        "no",
    }
)


def describe(fields: list[FieldView]) -> str:
    """The compact numbered field list the model sees (options cut to five)."""
    lines = []
    for i, f in enumerate(fields, 1):
        line = f'{i}. "{f.label or f.key}" {f.kind}'
        if f.options:
            opts = [o.label for o in f.options]
            line += ": " + ", ".join(opts[:5]) + (", …" if len(opts) > 5 else "")
        lines.append(line)
    return "Fields:\n" + "\n".join(lines)


#: what the model may answer as a name (a non-name such as ``label`` is replaced afterwards)
NameAnswer = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{1,31}$")]


def naming_model(fields: list[FieldView]) -> type[BaseModel]:
    """The decision for naming ``fields``: one key per field, its label (cut to 48
    characters, made unique), in page order. Each label is forced into the answer right
    before its name, so the model names the field it has just "written" rather than
    counting positions."""
    labels: list[str] = []
    for f in fields:
        label = base = (f.label or f.key)[:48]
        n = 1
        while label in labels:
            n += 1
            label = f"{base} ({n})"
        labels.append(label)
    return create_model("FieldNames", **{f"f{i}": (NameAnswer, Field(alias=label)) for i, label in enumerate(labels)})


def slug(text: str) -> str:
    """A snake_case name from a label: "Date of birth" → ``date_of_birth``."""
    s = re.sub(r"[^a-z0-9]+", "_", text.casefold()).strip("_")[:40]
    if not s or not s[0].isalpha():
        s = "field_" + s
    return s.rstrip("_") or "field"


def page_name(f: FieldView) -> str | None:
    """The name the page itself gives the field (autocomplete token, or a label that is
    already a common name), or None when the LLM has to name it."""
    for token in reversed(f.autocomplete.split()):
        if token in AUTOCOMPLETE:
            return AUTOCOMPLETE[token]
    guess = slug(f.label) if f.label else ""
    return guess if guess in COMMON_NAMES else None


async def name_fields(
    llm: LLM, fields: list[FieldView], max_tokens: int, on_name: Callable[[int, str, str], None]
) -> list[str]:
    """Name ``fields``; ``on_name(index, name, source)`` is called as each name is known
    (``source``: ``page``, ``llm`` or ``label``) — page names at once, the LLM's as they stream.

    Returns the names in field order. Names the model did not give (cut off, an error,
    a non-name) are made from the labels. Never raises for a bad answer.
    """
    names: list[str | None] = [page_name(f) for f in fields]
    for i, n in enumerate(names):
        if n is not None:
            on_name(i, n, "page")
    todo = [i for i, n in enumerate(names) if n is None]
    got = 0

    def take(text: str) -> None:
        nonlocal got
        done = re.findall(r':\s*"([^"]*)"', text)  # compact or spaced JSON, as a server streams it
        while got < min(len(done), len(todo)):
            i, raw = todo[got], done[got]
            ok = _NAME.fullmatch(raw) and raw not in _NOT_NAMES
            names[i] = raw if ok else slug(fields[i].label or fields[i].key)
            on_name(i, names[i], "llm" if ok else "label")
            got += 1

    if todo:
        asked = [fields[i] for i in todo]
        try:
            await llm.decide(SYSTEM, describe(asked), naming_model(asked), max_tokens=max_tokens, on_text=take)
        except LLMError as e:
            log.warning("field naming: %s; naming the rest from their labels", e)
    for i in todo[got:]:
        names[i] = slug(fields[i].label or fields[i].key)
        on_name(i, names[i], "label")
    return [n or "" for n in names]
