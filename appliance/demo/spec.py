"""Demo form specs: which profile key each page field takes and the value the page must hold.

A spec (``specs/NAME.yaml``) is used only to *check* a run — the agents never read it.
:func:`evaluate` compares what the site recorded as submitted with what the profile says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml

from appliance.demo.profile import Profile

SPECS_DIR = Path(__file__).resolve().parent / "specs"


@dataclass(frozen=True)
class FieldRule:
    """Page field ``name`` takes profile ``key``; ``values`` maps profile value → page value."""

    name: str
    key: str
    values: dict[str, str] = field(default_factory=dict)
    compare: Literal["exact", "casefold", "alnum"] = "exact"

    def expected(self, profile: Profile) -> str:
        """The value the page must hold for this person ('' when the profile lacks the key)."""
        v = profile.facts.get(self.key, "")
        for pv, page in self.values.items():
            if _norm(pv, "casefold") == _norm(v, "casefold"):
                return page
        return v

    def matches(self, expected: str, got: str) -> bool:
        return _norm(expected, self.compare) == _norm(got, self.compare)


@dataclass(frozen=True)
class FormSpec:
    """One demo form: its ``name`` (as the site records submissions), ``path`` and field rules."""

    name: str
    path: str
    fields: tuple[FieldRule, ...]
    must_be_empty: tuple[str, ...] = ()


@dataclass(frozen=True)
class FieldResult:
    field: str
    expected: str
    filled: str
    ok: bool


def _norm(v: str, how: str) -> str:
    v = str(v).strip()
    if how == "casefold":
        return v.casefold()
    if how == "alnum":
        return re.sub(r"[\W_]+", "", v).casefold()
    return v


def _yaml_key(k: object) -> str:
    return ("yes" if k else "no") if isinstance(k, bool) else str(k)  # as profiles write booleans


def load_specs() -> dict[str, FormSpec]:
    """Every bundled spec, by form name (variants included).

    Raises:
        ValueError: a spec file that is malformed (names the file).
    """
    out: dict[str, FormSpec] = {}
    for p in sorted(SPECS_DIR.glob("*.yaml")):
        data = yaml.safe_load(p.read_text())
        try:
            rules = tuple(FieldRule(name=n, key=r["key"], compare=r.get("compare", "exact"),
                                    values={_yaml_key(k): str(v) for k, v in (r.get("values") or {}).items()})
                          for n, r in data["fields"].items())
            empty = tuple(data.get("must_be_empty") or ())
            out[data["form"]] = FormSpec(data["form"], data["path"], rules, empty)
            for name, path in (data.get("variants") or {}).items():
                out[name] = FormSpec(name, path, rules, empty)
        except (KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{p}: malformed form spec: {e!r}") from None
    return out


def spec_for_url(url: str) -> FormSpec | None:
    """The demo spec whose path the URL ends with (query ignored), or None."""
    path = re.sub(r"^[a-z]+://[^/]+", "", url).split("?")[0].rstrip("/")
    for spec in load_specs().values():
        if path == spec.path:
            return spec
    return None


def evaluate(spec: FormSpec, profile: Profile, submitted: dict[str, str] | None) -> list[FieldResult]:
    """One result per spec field (``filled`` = '' when nothing was submitted), then one per
    ``must_be_empty`` field that received data (``expected`` = '')."""
    data = submitted or {}
    results = []
    for rule in spec.fields:
        exp = rule.expected(profile)
        got = data.get(rule.name, "")
        results.append(FieldResult(rule.name, exp, got, bool(submitted) and rule.matches(exp, got)))
    results += [FieldResult(n, "", data[n], False) for n in spec.must_be_empty if data.get(n)]
    return results
