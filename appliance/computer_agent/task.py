"""The task in the person's words: fill the form and submit it, or fill it and leave it unsent.

The task text comes from the person or the operator (the page's task field, ``appliance
form --task``, a demo spec's ``task``). :func:`read_task` reads one thing from it, in code,
so that no model can talk the agent into a submit: whether the person wants the form
*submitted* once they allow it (the default), or *filled and left for their review* —
"fill it but don't submit, I want to check first". The words that decide it:

* a negated submit: "don't / do not / never / not / without" (then at most "yet",
  "actually", "please" or "it") before "submit", "send", "post", "book", "hand in",
  "press submit/send" (any ending: "submitting", "sends");
* the person keeping the last step: "I'll submit it myself", "let me check / review it",
  "I want to check it", "… first", "before I submit", "leave it for me", "save it as a
  draft" ("I want to submit my application" stays a submit).

Anything else keeps the default. A review task never presses the final submit (nor Enter
in a field): the agent fills every field and reports ``review``.

It also reads how many *more people* than the person the task is for (``others``): "for me
and my partner Sarah", "with my wife and my son", "for two adults" — so that a form with an
"Add another passenger" control gets one more group per person before the summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUBMIT = r"(?:submit|send|post|book|hand(?:ing)? (?:it )?in|press(?:ing)? (?:the )?(?:submit|send))\w*"
_REVIEW = (
    rf"\b(?:don'?t|do not|never|not|without|no need to)\s+(?:(?:yet|actually|please|it|the form|go ahead and)\s+)?"
    rf"{_SUBMIT}",
    rf"\b(?:i'?ll|i will|let me)\s+(?:\w+\s+){{0,2}}?(?:{_SUBMIT}|check|review|look)\b",
    r"\b(?:i'?d like to|i want to|i wish to)\s+(?:\w+\s+){0,2}?(?:check|review|look)\b",
    r"\b(?:check|review|look at|see)\s+(?:\w+\s+){0,3}?(?:first|before)\b",
    rf"\bbefore (?:i|we) {_SUBMIT}",
    r"\bleave (?:it|the form) (?:for me|unsent|open)\b",
    r"\b(?:save|keep) (?:it )?as (?:a )?draft\b",
)
_REVIEW_RE = [re.compile(p, re.I) for p in _REVIEW]
#: a person named beside the speaker: "me and my partner", "with my wife", "and our son"
_OTHER = re.compile(
    r"\b(?:and|with|plus)\s+(?:my|our)\s+(?:partner|wife|husband|spouse|son|daughter|child|kid|friend|mother|"
    r"mum|mom|father|dad|brother|sister|colleague|boyfriend|girlfriend|fianc[eé]e?|grand\w+)\b",
    re.I,
)
_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "2": 2, "3": 3, "4": 4, "5": 5}
#: "for two adults", "for 3 passengers", "the two of us"
_GROUP = re.compile(
    r"\bfor\s+(two|three|four|five|[2-5])\s+(?:people|persons|adults|passengers|guests|travell?ers|of us)\b"
    r"|\bthe\s+(two|three|four|five)\s+of\s+us\b",
    re.I,
)


@dataclass(frozen=True)
class TaskIntent:
    """``submit``: submit once the person allows it (True) or fill and leave it for their
    review (False); ``why``: the words that decided a review ('' for the default)."""

    submit: bool
    why: str = ""
    others: int = 0  # people besides the person the task is for ("me and my partner": 1)


def read_task(text: str) -> TaskIntent:
    """What the task ``text`` asks for (see the module docstring)."""
    t = " ".join(text.replace("’", "'").split())
    m = _GROUP.search(t)
    others = _COUNT[(m.group(1) or m.group(2)).casefold()] - 1 if m else len(_OTHER.findall(t))
    for rx in _REVIEW_RE:
        m = rx.search(t)
        if m:
            return TaskIntent(submit=False, why=m.group(0), others=others)
    return TaskIntent(submit=True, others=others)
