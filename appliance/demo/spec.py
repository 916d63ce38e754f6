"""Demo form specs: which profile key each page field takes and the value the page must hold.

A spec (``specs/NAME.yaml``) is used only to *check* a run — the agents never read it.
:func:`evaluate` compares what the site recorded as submitted (or, for a form whose task
is not to submit, its last autosaved draft) with what the profile says. A rule may also
say what a person sees (``label``) and which widget operates the field (``widget``), which
the perception tests check, and ``when`` (profile key → value) for a field the page only
shows after another answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date
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
    compare: Literal["exact", "casefold", "alnum", "digits", "number", "phone", "date"] = "exact"
    label: str = ""  # the label a person reads on the page ('' = not checked)
    widget: str = "native"  # the FieldView.widget that operates it
    when: dict[str, str] = field(default_factory=dict)  # profile key → value for the rule to apply

    def applies(self, profile: Profile) -> bool:
        """Whether this person's answers make the page show (and send) this field."""
        return all(
            comparable(profile.facts.get(k, ""), "casefold") == comparable(v, "casefold") for k, v in self.when.items()
        )

    def expected(self, profile: Profile) -> str:
        """The value the page must hold for this person ('' when the profile lacks the key)."""
        v = profile.facts.get(self.key, "")
        for pv, page in self.values.items():
            if comparable(pv, "casefold") == comparable(v, "casefold"):
                return page
        return v

    def matches(self, expected: str, got: str) -> bool:
        return comparable(expected, self.compare) == comparable(got, self.compare)


@dataclass(frozen=True)
class FormSpec:
    """One demo form: its ``name`` (as the site records submissions), ``path``, field rules,
    fields that must stay empty, whether the task is to ``submit`` it, and the ``task`` in
    the person's words ('' = the default "fill it in and submit it"), and the profile keys whose
    first, wrong answer (``Profile.first_answers``) it is made to refuse: :meth:`person`."""

    name: str
    path: str
    fields: tuple[FieldRule, ...]
    must_be_empty: tuple[str, ...] = ()
    submit: bool = True
    empty_labels: tuple[str, ...] = ()  # the labels a person reads on the must_be_empty fields ('' = none)
    task: str = ""
    first_answers: tuple[str, ...] = ()  # profile keys whose first, wrong answer this page is made to refuse

    def person(self, profile: Profile) -> Profile:
        """``profile`` as the simulated person plays it on this page: its first, wrong answers
        only for the keys this page is made to refuse (elsewhere a page that takes any format
        would keep one, and the run would measure the profile, not the agents)."""
        return replace(
            profile, first_answers={k: v for k, v in profile.first_answers.items() if k in self.first_answers}
        )

    def rules_for(self, profile: Profile) -> tuple[FieldRule, ...]:
        """The rules that apply to this person (see :meth:`FieldRule.applies`)."""
        return tuple(r for r in self.fields if r.applies(profile))


@dataclass(frozen=True)
class FieldResult:
    field: str
    expected: str
    filled: str
    ok: bool


def comparable(v: str, how: str) -> str:
    """``v`` as a ``compare`` mode reads it: ``casefold``; ``alnum`` (letters and digits only,
    case-folded); ``digits``; ``number`` ("03" is "3"); ``phone`` (E.164 by libphonenumber, a
    number without + read as British, the demo profiles' country); ``date`` (an ISO date, a
    time after it dropped); else as given, stripped."""
    v = str(v).strip()
    if how == "casefold":
        return v.casefold()
    if how == "alnum":
        return re.sub(r"[\W_]+", "", v).casefold()
    if how == "digits":
        return re.sub(r"\D", "", v)
    if how == "number":
        return str(int(v)) if v.isdigit() else v
    if how == "date":
        try:
            return date.fromisoformat(v[:10]).isoformat()
        except ValueError:
            return v
    if how == "phone":
        import phonenumbers

        try:
            return phonenumbers.format_number(phonenumbers.parse(v, "GB"), phonenumbers.PhoneNumberFormat.E164)
        except phonenumbers.NumberParseException:
            return v
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
        try:
            data = yaml.safe_load(p.read_text())
            rules = tuple(
                FieldRule(
                    name=n,
                    key=r["key"],
                    compare=r.get("compare", "exact"),
                    values={_yaml_key(k): str(v) for k, v in (r.get("values") or {}).items()},
                    label=str(r.get("label", "")),
                    widget=str(r.get("widget", "native")),
                    when={str(k): _yaml_key(v) for k, v in (r.get("when") or {}).items()},
                )
                for n, r in data["fields"].items()
            )
            empty = data.get("must_be_empty") or ()  # names, or name → the label a person reads
            extra = {
                "must_be_empty": tuple(empty),
                "empty_labels": tuple(str(v) for v in empty.values()) if isinstance(empty, dict) else (),
                "submit": bool(data.get("submit", True)),
                "task": str(data.get("task", "")),
                "first_answers": tuple(data.get("first_answers") or ()),
            }
            out[data["form"]] = FormSpec(data["form"], data["path"], rules, **extra)
            for name, path in (data.get("variants") or {}).items():
                out[name] = FormSpec(name, path, rules, **extra)
        except (KeyError, TypeError, AttributeError, ValueError, yaml.YAMLError) as e:
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
    """One result per spec field that applies to ``profile`` (``filled`` = '' when nothing was
    submitted), then one per ``must_be_empty`` field that received data (``expected`` = '')."""
    data = submitted or {}
    results = []
    for rule in spec.rules_for(profile):
        exp = rule.expected(profile)
        got = data.get(rule.name, "")
        results.append(FieldResult(rule.name, exp, got, bool(submitted) and rule.matches(exp, got)))
    results += [FieldResult(n, "", data[n], False) for n in spec.must_be_empty if data.get(n)]
    return results
