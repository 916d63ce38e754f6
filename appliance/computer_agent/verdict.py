"""What the page answers, read from two readings of it, and what the person is told when the
agent gives up — pure functions over :class:`~appliance.computer_agent.page.PageView`.

**After a press** (:func:`after_press`, the reading before the press and one after it):

- ``refused`` — a field shows an error it did not show before the press, or any error on a
  page loaded since (the page's own words; :mod:`fieldbook` sends them to the phone agent
  per field), or the same form shows an alert it did not show before;
- ``result`` — the form is gone: no field left, or only optional fields none of which
  was on the form (a confirmation view, a new page: "Booking confirmed");
- ``moved`` — fields to fill that were not on the form (the next step of a wizard);
- ``unreachable`` — the browser shows its own error page (the site did not answer: the
  network dropped, or a replay's recording holds no answer to what was sent), never a result;
- ``none`` — nothing changed yet, or only fields went missing (the caller waits and reads again).

"Submitted" is reported only on a ``result``, never on the click.

**Obstacles** (:func:`obstacle`): a challenge for a person (a visible element named like a
captcha, "I'm not a robot", an iframe from a captcha service) or a password field (the agent
never asks for a password out loud; a sign-in page — a password and at most two other
fields, under words like "sign in" — is the person's to pass). A password field is never
named or filled by the agent (:func:`secret`).

**Give-ups** (:func:`widget_failed`, :func:`no_control`, :func:`no_result`, :func:`unknown_outcome`,
:func:`page_error`, :func:`obstacle_step`): the ``step_failed`` payloads, in words for the person — what is
wrong and what they can do in the preview on their page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from appliance.computer_agent.page import FieldView, PageView
from appliance.protocol import StepFailed

_CAPTCHA = re.compile(r"captcha|recaptcha|hcaptcha|turnstile|challenges\.cloudflare", re.I)
_SIGN_IN = re.compile(r"\b(sign ?in|log ?in|login)\b", re.I)
#: the most of the page's own words said in one explanation
MAX_SAID = 200
#: where Chromium puts its own error pages ("This site can't be reached")
ERROR_PAGE = "chrome-error:"
PREVIEW = "in the preview on your page"
#: what the person hears when the agent itself fails (a bug, a crash): the error goes to the log
#: and the recording, never into the call (issue 26: a stack trace was read aloud)
INTERNAL_FAILURE = "Something went wrong on my side with this page; you can finish it in the preview on your page."


@dataclass(frozen=True)
class Verdict:
    """The page's answer to a press: ``kind`` (see the module docstring) and ``text`` (the
    errors for ``refused``, what the page shows for ``result``)."""

    kind: Literal["result", "refused", "moved", "unreachable", "none"]
    text: str = ""


@dataclass(frozen=True)
class Obstacle:
    """Something on the page only the person can do: ``problem`` ``captcha`` or ``login``
    (``sign_in``: the whole page is a sign-in, else a password field on a longer form)."""

    problem: Literal["captcha", "login"]
    sign_in: bool = False


def secret(f: FieldView) -> bool:
    """A field the agent never asks for nor fills: a password."""
    return f.kind == "password"


#: a box that signs the person up for something they did not ask for (issue 26: never ticked unasked)
_MARKETING = re.compile(
    r"\b(newsletters?|marketing|offers?|promotions?|promotional|special deals|partners?|third[- ]part(y|ies)|"
    r"subscribe|abonnieren|werbung|keep me (informed|updated|posted)|"
    r"(news|updates) (about|on|from) (this|our|new|the) (service|products?|company|offers?))\b",
    re.I,
)
#: a box the form needs ticked to go on: terms, declarations, privacy notices
_TERMS = re.compile(
    r"\b(terms|conditions|declar|i confirm|i agree|i accept|privacy|consent|datenschutz|akzeptiere|bestätige)",
    re.I,
)


def consent(f: FieldView) -> Literal["none", "required", "optional"]:
    """What a checkbox asks of the person: ``optional`` — marketing, newsletters, offers,
    sharing with partners (never ticked unless the person asks for it, so never asked); ``required``
    — terms, declarations, privacy notices (asked, ticked only after a yes); else ``none``."""
    if f.kind != "checkbox":
        return "none"
    if _MARKETING.search(f.label) and not (f.required and _TERMS.search(f.label)):
        return "optional"
    return "required" if _TERMS.search(f.label) or f.required else "none"


def _said(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SAID else text[:MAX_SAID].rsplit(" ", 1)[0] + " …"


def after_press(before: PageView, after: PageView) -> Verdict:
    """The page's answer to a press, from the readings ``before`` and ``after`` it (when
    another document was loaded in between, every error it shows is new)."""
    if after.url.startswith(ERROR_PAGE):  # the browser's own error page: the site never answered
        return Verdict("unreachable", _said(after.text))
    navigated = before.document != after.document
    shown = {(f.ident, f.error) for f in before.live_fields if f.error}
    errors = [f.error for f in after.live_fields if f.error and (navigated or (f.ident, f.error) not in shown)]
    if errors:
        return Verdict("refused", "; ".join(dict.fromkeys(errors)))
    old = {f.ident for f in before.live_fields}
    new = after.live_fields
    same_form = bool(new) and {f.ident for f in new} == old
    fresh_alerts = [a for a in after.alerts if navigated or a not in before.alerts]
    if same_form and fresh_alerts:
        return Verdict("refused", "; ".join(fresh_alerts))
    added = [f for f in new if f.ident not in old]
    if new and not added:
        return Verdict("none")  # nothing new (a field may be missing from one reading: an iframe reloading)
    if not new or not any(f.ident in old or f.required for f in new):
        head = " ".join(after.headings[:2]) or after.title
        return Verdict("result", _said(f"{head}. {after.text}" if head and head not in after.text else after.text))
    return Verdict("moved")


def obstacle(view: PageView) -> Obstacle | None:
    """What on this page only the person can do, or None."""
    if view.captcha or any(_CAPTCHA.search(u) for u in view.frame_urls):
        return Obstacle("captcha")
    live = view.live_fields
    passwords = [f for f in live if secret(f) and f.empty]
    if not passwords:
        return None
    words = " ".join([view.title, *view.headings, *(b.text for b in view.buttons)])
    return Obstacle("login", sign_in=len(live) - len(passwords) <= 2 and bool(_SIGN_IN.search(words)))


def obstacle_step(o: Obstacle) -> StepFailed:
    """The ``step_failed`` for an obstacle."""
    if o.problem == "captcha":
        return StepFailed(
            problem="captcha",
            reason="The page wants to check that a person is filling it in, with a "
            "captcha, and I can't do that for you.",
            advice=f"Please solve it yourself {PREVIEW}; I'll carry on after that.",
        )
    if o.sign_in:
        return StepFailed(
            problem="login",
            reason="The page wants you to sign in first, and I can't do that for you.",
            advice=f"Please sign in yourself {PREVIEW}; I'll carry on after that.",
        )
    return StepFailed(
        problem="login",
        reason="The page asks for a password, and I never ask for one out loud.",
        advice=f"Please type it yourself {PREVIEW}.",
    )


def widget_failed(name: str, label: str, reason: str) -> StepFailed:
    """The agent could not operate field ``name`` (labelled ``label``) after every strategy."""
    what = label.strip().rstrip(":*?").strip() or "one of the fields"
    return StepFailed(
        problem="widget",
        field=name,
        reason=f"I could not set {what} on the page: {_said(reason)}",
        advice=f"You can set it yourself {PREVIEW}, or type it in the list of values there.",
    )


def no_control(view: PageView) -> StepFailed:
    """Every field is done (or there is none) but there is no button to go on or to send the form."""
    if not view.live_fields:
        return StepFailed(
            problem="no_control",
            reason="I can't find a form to fill in on this page.",
            advice=f"You can open it yourself {PREVIEW}, with its link or button, and I'll carry on.",
        )
    return StepFailed(
        problem="no_control",
        reason="Everything on this page is filled in, but I can't find a button to go on or to send it.",
        advice=f"You can press it yourself {PREVIEW}.",
    )


def refused_twice(name: str, label: str, message: str) -> StepFailed:
    """The page refused the same value of field ``name`` twice in the same way, whatever way it
    was typed: the person sets it (issue 26: such a refusal was asked again 11,866 times)."""
    what = label.strip().rstrip(":*?").strip() or "one of the fields"
    says = f" It says: {_said(message)}" if message else ""
    return StepFailed(
        problem="widget",
        field=name,
        reason=f"The page would not keep the value for {what}.{says}",
        advice=f"You can set it yourself {PREVIEW}, or type it in the list of values there.",
    )


def no_add_control() -> StepFailed:
    """The person asked for one more item, but the page has no control to add one."""
    return StepFailed(
        problem="no_control",
        reason="I can't find a way to add another one on this page.",
        advice=f"You can add it yourself {PREVIEW}, and I'll fill it in with you.",
    )


def no_result(button: str) -> StepFailed:
    """A press the page did not answer (nothing changed)."""
    return StepFailed(
        problem="no_result",
        reason=f"I pressed {_said(button)!r}, but the page did not show that anything happened.",
        advice=f"Please look at it {PREVIEW}: you may have to press it yourself.",
    )


def unknown_outcome(view: PageView) -> StepFailed:
    """The agent before this one (a pool task taken over) pressed the final submit and stopped
    before the page answered; ``view`` is the form's address read again. A page there with no
    form (a confirmation, a "you have already applied") is quoted; either way the form is
    filled again and never sent without a new go-ahead."""
    said = ""
    if not view.live_fields:
        head = " ".join(view.headings[:2]) or view.title
        said = " The form's page now says: " + _said(
            f"{head}. {view.text}" if head and head not in view.text else view.text
        )
    return StepFailed(
        problem="no_result",
        reason="The helper filling your form stopped just after pressing its send button, so I can't tell whether "
        "the form was sent." + said,
        advice="I'm putting your answers back in, and I won't send it again unless you tell me to.",
    )


def unreachable(button: str, page_words: str) -> StepFailed:
    """A press answered by the browser's own error page: the site did not answer."""
    return StepFailed(
        problem="no_result",
        reason=f"I pressed {_said(button)!r}, but the site did not answer, so I can't tell whether the form "
        f"was sent. The browser says: {_said(page_words)}",
        advice="Please check with the site before sending it again.",
    )


def page_error(message: str) -> StepFailed:
    """The page shows an error that belongs to no field."""
    return StepFailed(
        problem="page_error", reason=f"The page says: {_said(message)}", advice=f"You can fix it yourself {PREVIEW}."
    )
