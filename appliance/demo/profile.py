"""Simulated persons' profiles: YAML with semantic keys.

A profile is a flat mapping ``key → value`` (``given_name``, ``family_name``,
``date_of_birth`` ISO, ``passport_number``, ``nationality``, ``email``, ``phone`` E.164,
``travel_date`` ISO, ``seat_preference``, ``meal``, ``consent`` …) plus two keys that
describe behaviour rather than data:

* ``authorise_submit`` (bool, default true): the answer when asked whether the form may
  be submitted;
* ``first_answers`` (mapping key → value): what the person says the first time that key
  is asked (e.g. a phone number without the country code); once asked again they give the
  profile value;
* ``not_sure`` (list of keys): the person answers "I'm not sure." whenever one is asked;
* ``adds_at_summary`` (text): what the person says, once, when first asked whether the form
  may be submitted ("Not yet: please add my partner Sarah as a second passenger.");
* ``answers_together`` (list of key lists): asked for the first key of a list, the person
  gives every value of the list in one breath ("My email is …, and my phone number is …").

``one_time_code`` is the code a site sends the person (SMS, e-mail) to type back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"


class ProfileError(ValueError):
    """A profile file is missing or malformed (names the file and why)."""


@dataclass(frozen=True)
class Profile:
    """One person: ``facts`` (key → written value, all strings; booleans as "yes"/"no"),
    ``first_answers`` (key → first, wrong-format value), ``authorise_submit``, ``not_sure``
    (keys answered "I'm not sure."), ``adds_at_summary`` (said once at the first request
    to submit; '' = nothing) and ``answers_together`` (keys whose values are given in one
    breath when the first is asked)."""

    name: str
    facts: dict[str, str]
    first_answers: dict[str, str] = field(default_factory=dict)
    authorise_submit: bool = True
    not_sure: tuple[str, ...] = ()
    adds_at_summary: str = ""
    answers_together: tuple[tuple[str, ...], ...] = ()

    @property
    def display_name(self) -> str:
        return " ".join(v for k in ("given_name", "family_name") if (v := self.facts.get(k))) or self.name


def _text(v: object) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def load_profile(path_or_name: str | Path) -> Profile:
    """Load a profile by path, or by name from ``appliance/demo/profiles/NAME.yaml``.

    Raises:
        ProfileError: file missing, not YAML, not a mapping, or a value that is not a scalar.
    """
    p = Path(path_or_name)
    if not p.suffix:
        p = PROFILES_DIR / f"{p.name}.yaml"
    try:
        data = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise ProfileError(f"{p}: profile not found") from None
    except yaml.YAMLError as e:
        raise ProfileError(f"{p}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{p}: a profile is a mapping of semantic keys to values")
    first = data.pop("first_answers", None) or {}
    authorise = data.pop("authorise_submit", True)
    not_sure = data.pop("not_sure", None) or []
    adds = data.pop("adds_at_summary", "")
    together = data.pop("answers_together", None) or []
    if not isinstance(first, dict) or not isinstance(authorise, bool):
        raise ProfileError(f"{p}: first_answers must be a mapping and authorise_submit a boolean")
    if not isinstance(not_sure, list) or not isinstance(adds, str):
        raise ProfileError(f"{p}: not_sure must be a list of keys and adds_at_summary a text")
    if not isinstance(together, list) or not all(isinstance(g, list) and len(g) >= 2 for g in together):
        raise ProfileError(f"{p}: answers_together must be a list of lists of two keys or more")
    for k, v in list(data.items()) + list(first.items()):
        if isinstance(v, (dict, list)) or v is None:
            raise ProfileError(f"{p}: {k}: expected a single value, got {type(v).__name__}")
    unknown = set(first) - set(data)
    if unknown:
        raise ProfileError(f"{p}: first_answers for keys the profile lacks: {sorted(unknown)}")
    return Profile(
        name=p.stem,
        facts={str(k): _text(v) for k, v in data.items()},
        first_answers={str(k): _text(v) for k, v in first.items()},
        authorise_submit=authorise,
        not_sure=tuple(str(k) for k in not_sure),
        adds_at_summary=adds,
        answers_together=tuple(tuple(str(k) for k in g) for g in together),
    )
