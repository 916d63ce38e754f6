r"""One pydantic model per LLM decision → its JSON schema and its GBNF grammar.

A decision is a flat pydantic model whose fields are, in order, the keys of the answer
object. :func:`json_schema` gives the JSON Schema for an OpenAI-compatible endpoint's
``response_format``; :func:`grammar` gives the equivalent GBNF for the embedded
llama-server: compact JSON (no free whitespace, so a 0.5B model spends no token on it),
every key written, in field order. The grammar is derived from the schema, so the two
cannot drift apart. Field types the derivation supports:

- ``Literal["a", "b"]`` (built at run time with :func:`choices`);
- ``str`` bounded by ``max_length`` (``min_length`` to ``max_length`` characters, none of
  them a quote, a backslash or a control character) or by an anchored ``pattern``
  (``^[a-z][a-z0-9_]{1,31}$``: character classes, ``.``, ``\d``, ``\w``, literal
  characters, groups, ``|`` and quantifiers);
- ``bool``;
- ``X | None`` of any of these (the grammar also allows ``null``).

A field's key is its alias when it has one, so keys that are not identifiers work (a
form field's label: ``create_model("Names", f0=(str, Field(alias="First name(s)", max_length=9)))``).
The strings the grammar allows never need a JSON escape, so what it admits always parses.
Example::

    class Launch(BaseModel):
        tool: Literal["call", "finish"]
        argument: str = Field(min_length=3, max_length=120)

    grammar(Launch) == r'root ::= "{" "\"tool\":" ("\"call\"" | "\"finish\"") "," '
                       r'"\"argument\":" "\"" [^"\\\x00-\x1f]{3,120} "\"" "}"'
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, create_model

#: a character a grammar-bounded JSON string may hold: anything but a quote, a backslash or a control character
_SAFE_CHAR = r'[^"\\\x00-\x1f]'
#: characters a pattern may name literally (inside or outside a class) without a JSON escape
_LITERAL = re.compile(r"[A-Za-z0-9 _\-.,:;'!?@#$%&*+/=<>~()|^\[\]{}]")
_CLASS_ESCAPES = {"d": "0-9", "w": "a-zA-Z0-9_"}
_CLASS = re.compile(r"\[((?:\\.|[^\\\]])+)\]")  # [...] with its escapes; group 1: the inside


def gbnf_string(s: str) -> str:
    """A GBNF literal matching the JSON string ``s`` (quotes included)."""
    return _gbnf_literal(json.dumps(s))


def gbnf_alternatives(values: list[str] | tuple[str, ...]) -> str:
    """GBNF alternatives matching any of ``values`` as JSON strings."""
    return " | ".join(gbnf_string(v) for v in values)


def choices(name: str, **fields: Sequence[str]) -> type[BaseModel]:
    """A decision model named ``name`` whose each field is one of its listed strings, in
    order: ``choices("OptionPick", option=("Germany", "France", "none of them"))``.

    Raises:
        ValueError: a field lists no value.
    """
    for key, values in fields.items():
        if not values:
            raise ValueError(f"{name}.{key}: a choice needs at least one value")
    return create_model(name, **{key: (Literal[tuple(values)], ...) for key, values in fields.items()})


def json_schema(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a decision: an object with every field required (``X | None``
    fields too, as nullable), no other keys, properties in field order; no titles.

    Raises:
        TypeError: a field is not one of the supported types (see the module docstring).
    """
    raw = model_cls.model_json_schema()
    if "$defs" in raw:
        raise TypeError(f"{model_cls.__name__}: nested models are not supported in a decision; use flat fields")
    props = {key: _clean(prop) for key, prop in raw.get("properties", {}).items()}
    if not props:
        raise TypeError(f"{model_cls.__name__}: a decision needs at least one field")
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def grammar(model_cls: type[BaseModel]) -> str:
    """The GBNF grammar of a decision (one line, compact JSON, keys in field order).

    Raises:
        TypeError: a field is not one of the supported types.
        ValueError: a string field is unbounded (no ``max_length`` or ``pattern``), or its
            pattern uses something the translation does not support.
    """
    parts = []
    for key, prop in json_schema(model_cls)["properties"].items():
        where = f"{model_cls.__name__}.{key}"
        parts.append(_gbnf_literal(json.dumps(key) + ":") + " " + _value(prop, where))
    return 'root ::= "{" ' + ' "," '.join(parts) + ' "}"'


def _clean(prop: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in prop.items() if k not in ("title", "default", "description")}
    if "anyOf" in out:
        out["anyOf"] = [_clean(p) for p in out["anyOf"]]
    return out


def _value(prop: dict[str, Any], where: str) -> str:
    if "anyOf" in prop:
        return "(" + " | ".join(_value(p, where) for p in prop["anyOf"]) + ")"
    if "enum" in prop:
        return "(" + " | ".join(_gbnf_literal(json.dumps(v)) for v in prop["enum"]) + ")"
    if "const" in prop:
        return _gbnf_literal(json.dumps(prop["const"]))
    kind = prop.get("type")
    if kind == "boolean":
        return '("true" | "false")'
    if kind == "null":
        return '"null"'
    if kind == "string":
        if "pattern" in prop:
            return '"\\"" ' + _pattern(prop["pattern"], where) + ' "\\""'
        if "maxLength" not in prop:
            raise ValueError(
                f"{where}: a string needs max_length or pattern (an unbounded string lets a small "
                f"model ramble until max_tokens cuts the JSON)"
            )
        return f'"\\"" {_SAFE_CHAR}{{{prop.get("minLength", 0)},{prop["maxLength"]}}} "\\""'
    raise TypeError(f"{where}: {prop} is not a supported decision field (Literal, bounded str, bool, or X | None)")


def _pattern(pattern: str, where: str) -> str:
    """An anchored regular expression as a GBNF sequence of classes, literals and groups."""
    if not (pattern.startswith("^") and pattern.endswith("$")):
        raise ValueError(f"{where}: pattern {pattern!r} must be anchored with ^ and $ (the whole value)")
    body, out, i = pattern[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "[":
            m = _CLASS.match(body, i)
            if m is None:
                raise ValueError(f"{where}: pattern {pattern!r}: unsupported character class at {body[i:]!r}")
            out.append(_char_class(m.group(1), where))
            i = m.end()
        elif c in "()|":
            out.append(c)
            i += 1
        elif c in "?*+":
            out[-1] += c
            i += 1
        elif c == "{":
            end = body.index("}", i)
            if not re.fullmatch(r"\d+(,\d*)?", body[i + 1 : end]):
                raise ValueError(f"{where}: pattern {pattern!r}: bad quantifier {body[i : end + 1]!r}")
            out[-1] += body[i : end + 1]
            i = end + 1
        elif c == ".":
            out.append(_SAFE_CHAR)
            i += 1
        elif c == "\\" and i + 1 < len(body):
            out.append(f"[{_escape(body[i + 1], where)}]")
            i += 2
        else:
            out.append(_literal_char(c, pattern, where))
            i += 1
    return " ".join(out)


def _char_class(inner: str, where: str) -> str:
    negated = inner.startswith("^")
    items = inner[1:] if negated else inner
    out, i = "", 0
    while i < len(items):
        c = items[i]
        if c == "\\" and i + 1 < len(items):
            out += _escape(items[i + 1], where)
            i += 2
            continue
        if not _LITERAL.fullmatch(c):
            raise ValueError(f"{where}: {c!r} in a character class could need a JSON escape; not supported")
        out += c
        i += 1
    if negated:  # never a quote, a backslash or a control character, whatever the class says
        return f'[^{out}"\\\\\\x00-\\x1f]'
    return f"[{out}]"


def _escape(e: str, where: str) -> str:
    """A regex escape ``\\e`` as the inside of a GBNF character class."""
    if e in _CLASS_ESCAPES:
        return _CLASS_ESCAPES[e]
    if e.isalnum() or not _LITERAL.fullmatch(e):  # \s, \b, \n …: not supported; \" \\: need a JSON escape
        raise ValueError(f"{where}: escape \\{e} is not supported in a decision pattern")
    return "\\" + e if e in "]-^[" else e


def _literal_char(c: str, pattern: str, where: str) -> str:
    if not _LITERAL.fullmatch(c):
        raise ValueError(f"{where}: pattern {pattern!r}: {c!r} could need a JSON escape; not supported")
    return _gbnf_literal(c)


def _gbnf_literal(text: str) -> str:
    """A GBNF string literal matching ``text`` (printable ASCII, as ``json.dumps`` writes it)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
