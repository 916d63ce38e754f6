"""Reading a page the way a person sees it, and acting on one field by its ref.

:func:`perceive` runs ``page.js`` once in every frame of the page (Playwright frames: the
main document, same-origin and cross-origin iframes, nested ones) and returns a
:class:`PageView`: fields (label, kind, widget, required, pattern, options, current value,
visibility, validation error, hint) and buttons, each tagged in its frame's DOM with a
``data-ap-ref`` attribute that stays on the element from one reading to the next. What it
covers, reading only the page (nothing here knows a site):

* native controls, open shadow roots (nested), ARIA widgets on divs and buttons
  (``role=combobox|listbox|option|radiogroup|radio|switch|checkbox|spinbutton|textbox``),
  ``contenteditable``;
* labels from ``<label>``, ``aria-labelledby`` (never the field's own value), ``aria-label``,
  a group's ``<legend>``, the visible text just before the control, then
  ``placeholder``/``title``. A label is the text a person can *see*: screen-reader-only
  and hidden parts are left out while any visible text remains (injected instructions in
  an ``sr-only`` span stay out of the question);
* hints and errors tied by ``aria-describedby``/``aria-errormessage``, the browser's own
  constraint validation, or found in the field's own box (``small``, ``*hint*``,
  ``*error*``);
* visibility as a person has it: ``display:none``, ``visibility:hidden``, the
  ``sr-only`` clip, zero opacity and off-page boxes are all hidden.

A field's ``kind`` is the value it holds (an input type, ``select``, ``radio``,
``checkbox``, ``date`` …: what the phone agent asks for); its ``widget`` is how it is
operated (:data:`appliance.computer_agent.widgets.STRATEGIES`): ``native``,
``autocomplete``, ``listbox``, ``date_picker``, ``date_parts``, ``masked``, ``aria_radio``,
``switch``, ``spinbutton`` or ``contenteditable``. A JS calendar behind a read-only input
is ``kind: date, widget: date_picker`` (fillable, never written by script); three selects
for day, month and year are one ``date`` field whose value is ISO.

Why our own reader and not a library's page model (measured here on the demo pages, one
warm Chromium, median of 10): this reader 1.5–5 ms a frame; Playwright's
``aria_snapshot(mode="ai")`` 3–10 ms, but it gives roles and accessible names only (no
required, pattern, option values, hints or errors), and the accessible name is not what a
person sees (an ``sr-only`` injection becomes the Email field's name; a label that is
nearby text is lost: the check-out field is named by its placeholder); CDP
``Accessibility.getFullAXTree`` 2–6 ms per frame with the same names and no DOM handle to
act on; browser-use's ``DomService`` 10–27 ms plus 190 ms to attach, and only over a
``--remote-debugging-port`` (a TCP port any local process could drive), with an LLM text
rendering and CDP node ids in place of Playwright locators. Acting goes through Playwright
locators (their CSS engine pierces open shadow roots; frames are Playwright frames).

:func:`fill` sets one field through its widget's strategy and returns what the page then
holds, read back from the DOM.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from appliance.computer_agent import localised, widgets
from appliance.computer_agent.widgets import FillProblem, match_option, same_value

__all__ = [
    "ButtonView",
    "FieldView",
    "FillProblem",
    "Option",
    "PageView",
    "fill",
    "locate",
    "match_option",
    "perceive",
    "read_back",
    "same_value",
]

log = logging.getLogger(__name__)

#: The page reader (one ``evaluate`` per frame and entry): see ``page.js`` for its entries.
PAGE_JS = Path(__file__).with_name("page.js").read_text()

#: Texts of buttons that only move between steps (never the final submit): "Next", "Continue" …;
#: "Send code" / "Email me a link" / "Get a verification code" (the site sends the person a code
#: to type on the next step: nothing is submitted for good, the form goes on); anything "… and
#: continue" ("Verify and continue", "Save and next"). A bare "Verify" stays a final submit: it
#: is what ends a sign-in, and nothing in its words says a step follows.
STEP_BUTTON = re.compile(
    r"^\W*(next|continue|proceed|next step|save and continue|go on)\b"
    r"|^\W*(send|get|email|e-mail|text|sms) (me )?(a |an |the |my |your )?(new )?"
    r"(code|otp|pin|passcode|one[- ]time (pass)?code|security code|verification code|confirmation code"
    r"|login code|sign[- ]in code|magic link|sign[- ]in link|login link|link)\b"
    r"|\b(and|then|&) (continue|proceed|next)\b",
    re.I,
)
#: Texts of buttons the agent never presses: going back, cancelling, clearing, deleting, closing,
#: signing out; and "Resend code" / "Send again" / "Get a new code" (one more code texted to the
#: person: only when they ask; it never moves the form on).
AVOID_BUTTON = re.compile(
    r"^\W*(back|previous|prev|cancel|reset|clear|delete|remove|close|log ?out|sign ?out"
    r"|re-?send|send (it |the code |a code )?again|(send|get) (me )?a new (code|link))\b",
    re.I,
)
#: Texts of buttons that open or reveal the form or more of it: a start page's "Start now",
#: "Apply", "Request a callback" (a dialog), "Get started", "Open …", "Show …", "Add another
#: passenger", "Begin". Only ever an ``opener`` for a button that submits nothing (type=button,
#: or outside any form): see :attr:`ButtonView.role`.
OPENER_BUTTON = re.compile(
    r"^\W*(start|get started|begin|apply|request|open|show|expand|view|add (another|more|new|an?|one more)\b"
    r"|enter|fill in|make an?|create an?|new)\b",
    re.I,
)
#: An opener that adds one more item of a repeating group ("Add another passenger", "+ Add
#: another address", "Add a person"): pressed only when the person asks for one more (``add_item``).
ADD_ITEM_BUTTON = re.compile(r"^\W*add (another|more|one more|an?|new)\b", re.I)
#: Words that make a button never an ``opener``, whatever else it says or declares: it submits,
#: pays, books, orders, confirms, deletes, removes or signs out, or puts goods in a basket.
NEVER_OPENER = re.compile(
    r"\b(submit|send|pay|payment|buy|purchase|book|booking|order|checkout|check out|confirm|delete|remove"
    r"|sign ?out|log ?out|unsubscribe|cancel|basket|cart|bag|trolley|wishlist)\b",
    re.I,
)


@dataclass(frozen=True)
class Option:
    value: str
    label: str
    english: str = ""  # the label's English name when the page is in another language (localised.english)


@dataclass(frozen=True)
class FieldView:
    """One field as read from the page. ``kind``: an input type, ``select``, ``multiselect``,
    ``radio`` (a group), ``checkbox`` (one box or switch, value bool), ``checkboxes`` (a
    group), ``date`` (native, calendar pop-up or split day/month/year: value ISO
    ``YYYY-MM-DD`` once the page holds a whole date), ``number`` or ``textarea``.
    ``widget``: the strategy that operates it. ``key``: the control's name or id (stable
    across re-renders; ``FRAME:name`` inside an iframe, ``name#2`` for a repeated name);
    ``ref``: its DOM tag (kept while the element lives); ``value``: str, bool or tuple of
    str; ``error``: validation text ('' = none); ``frame``: the Playwright frame it is in."""

    ref: str
    kind: str
    key: str
    label: str
    required: bool
    pattern: str | None
    hint: str
    placeholder: str
    options: tuple[Option, ...] | None
    value: str | bool | tuple[str, ...]
    visible: bool
    enabled: bool
    error: str
    min: str | None = None
    max: str | None = None
    autocomplete: str = ""  # the HTML autocomplete tokens, lower-case ('' = none)
    widget: str = "native"  # how it is operated: a key of widgets.STRATEGIES
    frame: object = field(default=None, compare=False, repr=False)  # its Playwright Frame (None: the main frame)
    lang: str = ""  # the page's language (its lang attribute; '' = not given)
    section: str = ""  # the page's part it is in: its fieldset's legend, else the heading before it ('' = none)
    group: str = ""  # a repeating group's name, the words its items' titles share ("Passenger"; '' = none)
    group_index: int = 0  # its item's place in that group from 1 (0 = not in a repeating group)

    @property
    def ident(self) -> str:
        """Identity across readings of the same page: name/id, else kind + label."""
        return self.key or f"{self.kind}:{self.label}"

    @property
    def empty(self) -> bool:
        return self.value in ("", False, ()) or self.value is None

    @property
    def fillable(self) -> bool:
        return self.visible and self.enabled


@dataclass(frozen=True)
class ButtonView:
    """One visible button; press it with :func:`locate` ``(page, button).click()``."""

    ref: str
    text: str
    type: str
    in_form: bool
    name: str
    formnovalidate: bool
    frame: object = field(default=None, compare=False, repr=False)  # its Playwright Frame (None: the main frame)
    expanded: str = ""  # aria-expanded, lower-cased ('' = absent)
    haspopup: str = ""  # aria-haspopup, lower-cased
    controls: str = ""  # aria-controls (ids)
    toggle: str = ""  # data-bs-toggle / data-toggle (Bootstrap's dialogs, tabs, collapses)

    @property
    def role(self) -> str:
        """``step`` (moves to the next step: :data:`STEP_BUTTON`), ``avoid`` (back, cancel, …:
        :data:`AVOID_BUTTON`, a reset, a ``formnovalidate`` button), ``final`` (any other submit
        of a form: treated as the final submit, which needs authorisation), ``opener`` (a button
        that submits nothing — type=button, or outside any form — and opens or reveals content:
        its text says so (:data:`OPENER_BUTTON`: "Start now", "Request a callback", "Add another
        passenger"), or the page declares it: ``aria-expanded="false"``,
        ``aria-haspopup="dialog"``, ``aria-controls``, Bootstrap's ``data-bs-toggle`` (a modal,
        a collapse; never a tooltip or popover); never one whose words submit, pay, book,
        confirm, delete or sign out (:data:`NEVER_OPENER`), nor one already expanded (pressing
        it would shut what it shows)); anything else is ``avoid``."""
        if AVOID_BUTTON.search(self.text) or self.type == "reset" or self.formnovalidate:
            return "avoid"
        if STEP_BUTTON.search(self.text):
            return "step"
        if self.type == "submit" and self.in_form:
            return "final"
        declared = (
            self.expanded == "false"
            or self.haspopup == "dialog"
            or bool(self.controls)
            or self.toggle not in ("", "tooltip", "popover")
        )
        if (
            (OPENER_BUTTON.search(self.text) or declared)
            and self.expanded != "true"
            and not NEVER_OPENER.search(self.text)
        ):
            return "opener"
        return "avoid"


@dataclass(frozen=True)
class PageView:
    """One reading of the page: its fields and buttons plus a little context text;
    ``captcha``: some frame shows a challenge for a person (an element named like a captcha,
    or "I'm not a robot"); ``frame_urls``: the URLs of the iframes a person can see;
    ``document``: a token of the main frame's document (another document was loaded since a
    reading whose token differs: a reload or a new page); ``skipped``: elements of any frame
    that ``page.js`` could not read, as ``(element, error)`` — left out, the rest read."""

    url: str
    title: str
    fields: tuple[FieldView, ...]
    buttons: tuple[ButtonView, ...]
    alerts: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    text: str = field(default="", repr=False)
    captcha: bool = False
    frame_urls: tuple[str, ...] = ()
    document: str = ""
    skipped: tuple[tuple[str, str], ...] = ()  # (element, error) the page script could not read
    lang: str = ""  # the main document's lang attribute ('' = not given)

    @property
    def live_fields(self) -> tuple[FieldView, ...]:
        return tuple(f for f in self.fields if f.fillable)

    def by_ident(self) -> dict[str, FieldView]:
        return {f.ident: f for f in self.fields}

    @property
    def signature(self) -> tuple:
        """What makes a page *state*: the URL path and the set of live fields."""
        path = re.sub(r"[?#].*$", "", self.url)
        return (path, tuple(sorted((f.ident, f.kind, f.label) for f in self.live_fields)))


def _shaped(v: object, widget: str, format_hint: str) -> object:
    """A value from ``page.js`` as :attr:`FieldView.value`: lists as tuples, a calendar
    input's shown date as ISO (``format_hint``: its placeholder and hint, for ``mm/dd``)."""
    if isinstance(v, list):
        return tuple(v)
    if widget == "date_picker" and isinstance(v, str):
        return widgets.read_date(v, format_hint) or v
    return v


#: the asterisk a page puts after a required field's label ("First name *"): not part of what is asked
_REQUIRED_MARK = re.compile(r"\s*\*+\s*$")


def _fields(d: dict, frame, key_prefix: str) -> list[FieldView]:
    out = []
    lang = d.get("lang", "")
    for f in d["fields"]:
        opts = (
            tuple(Option(o["value"], o["label"], localised.english(o["label"], lang)) for o in f["options"])
            if f["options"] is not None
            else None
        )
        out.append(
            FieldView(
                ref=f["ref"],
                kind=f["kind"],
                key=key_prefix + f["key"] if f["key"] else "",
                label=_REQUIRED_MARK.sub("", f["label"]),
                required=f["required"],
                pattern=f["pattern"],
                hint="" if not f["hint"].strip("* ") else f["hint"],
                placeholder=f["placeholder"],
                options=opts,
                value=_shaped(f["value"], f["widget"], f"{f['placeholder']} {f['hint']}"),
                visible=f["visible"],
                enabled=f["enabled"],
                error=f["error"],
                min=f["min"],
                max=f["max"],
                autocomplete=f["autocomplete"],
                widget=f["widget"],
                frame=frame,
                lang=lang,
                section=f["section"],
                group=f["group"],
                group_index=f["group_index"],
            )
        )
    return out


async def _shown(fr) -> bool:
    """Whether a person can see iframe ``fr`` (its element in the parent is visible)."""
    try:
        return await (await fr.frame_element()).is_visible()
    except Exception as e:  # a frame detached while we looked: it has nothing to read
        log.debug("frame %s skipped: %s", fr.url, str(e).splitlines()[0])
        return False


async def _read_frame(i: int, fr) -> dict | None:
    """Frame ``i``'s reading (0 = the main frame); None for an iframe that is hidden or went away."""
    args = {"op": "perceive", "prefix": f"{i}:" if i else ""}
    if i == 0:
        return await fr.evaluate(PAGE_JS, args)

    async def read() -> dict | None:
        try:
            return await fr.evaluate(PAGE_JS, args)
        except Exception as e:  # navigating or detached: nothing to read in it now
            log.debug("frame %s not read: %s", fr.url, str(e).splitlines()[0])
            return None

    shown, got = await asyncio.gather(_shown(fr), read())
    return got if shown else None


async def perceive(page) -> PageView:
    """Read the page: one ``evaluate`` in the main frame and in each iframe a person can see
    (nested ones too), all at once (~3–20 ms for a form page), into a :class:`PageView`.
    Fields and buttons of iframes come after the main frame's, their refs prefixed ``N:``
    and keys ``FRAME:`` (the iframe's name or id, else its URL path).

    Raises:
        playwright.async_api.Error: the main frame navigated during the read (read again
            once it has loaded); an iframe that goes away is skipped.
    """
    frames = [page.main_frame, *(fr for fr in page.frames if fr is not page.main_frame and not fr.is_detached())]
    results = await asyncio.gather(*(_read_frame(i, fr) for i, fr in enumerate(frames)))
    main = results[0]
    fields: list[FieldView] = []
    buttons: list[ButtonView] = []
    alerts, headings = list(main["alerts"]), list(main["headings"])
    names: dict[str, int] = {}
    captcha, frame_urls = bool(main.get("captcha")), []
    skipped: list[tuple[str, str]] = []
    for i, (fr, d) in enumerate(zip(frames, results)):
        if d is None:
            continue
        if i:
            frame_urls.append(fr.url)
            captcha = captcha or bool(d.get("captcha"))
            tag = fr.name or urlsplit(fr.url).path or f"frame{i}"
            names[tag] = names.get(tag, 0) + 1
            prefix = f"{tag}{'#' + str(names[tag]) if names[tag] > 1 else ''}:"
            alerts += d["alerts"]
            headings += d["headings"]
        else:
            prefix = ""
        skipped += [(prefix + x["what"], x["error"]) for x in d.get("skipped", ())]
        fields += _fields(d, None if i == 0 else fr, prefix)
        buttons += [
            ButtonView(
                b["ref"],
                b["text"],
                b["type"],
                b["in_form"],
                b["name"],
                b["formnovalidate"],
                None if i == 0 else fr,
                b.get("expanded", ""),
                b.get("haspopup", ""),
                b.get("controls", ""),
                b.get("toggle", ""),
            )
            for b in d["buttons"]
        ]
    return PageView(
        main["url"],
        main["title"],
        tuple(fields),
        tuple(buttons),
        tuple(alerts),
        tuple(headings),
        main["text"],
        captcha,
        tuple(frame_urls),
        str(main.get("document", "")),
        tuple(skipped),
        str(main.get("lang", "")),
    )


def locate(page, item: FieldView | ButtonView):
    """The Playwright locator of a field or a button, in its own frame (a group's members are
    ``{ref}.N``: :meth:`widgets.Target.member`)."""
    return (item.frame or page.main_frame).locator(f'[data-ap-ref="{item.ref}"]')


async def read_back(page, f: FieldView) -> tuple[object, str] | None:
    """What field ``f`` holds now as ``(value, browser_validation_message)`` — value shaped
    as :attr:`FieldView.value` — or None when the field is no longer on the page."""
    got = await (f.frame or page.main_frame).evaluate(
        PAGE_JS, {"op": "read", "ref": f.ref, "kind": f.kind, "widget": f.widget}
    )
    if got is None:
        return None
    return _shaped(got["value"], f.widget, f"{f.placeholder} {f.hint}"), got["msg"]


async def fill(
    page,
    f: FieldView,
    value: str | bool | tuple[str, ...],
    timeout_ms: int,
    *,
    strategy: widgets.Strategy | None = None,
    actions=None,
) -> tuple[object, str]:
    """Put ``value`` into field ``f`` the way a person would (its widget's strategy: typing
    and picking a suggestion, opening a list or a calendar, clicking, pressing keys) and
    read the field back from the page. ``strategy``: another way to operate the widget (one
    of :data:`widgets.LADDERS`); ``actions``: an :class:`~appliance.computer_agent.actions.Actions`
    that counts what is done.

    ``value``: str for text-like fields, dates (ISO ``YYYY-MM-DD``, whatever the widget),
    selects, lists and radios (an option's value or label); bool for a single checkbox or
    a switch; tuple of str for multi-select / checkbox groups.

    Returns:
        ``(value_read_back, validation_message)`` — the value shaped as
        :attr:`FieldView.value` (compare it with :func:`same_value`); the message is the
        browser's constraint-validation text for a non-empty invalid value, else ''.

    Raises:
        FillProblem: ``format`` when the value does not fit (no option or suggestion
            matches — ``candidates`` lists the close ones when several do —, wrong shape);
            ``error`` when the field vanished, the widget could not be operated, or
            Playwright failed (its message included).
    """
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    strategy = strategy or widgets.STRATEGIES.get(f.widget)
    if strategy is None:
        raise FillProblem("error", f"no way to operate a {f.widget!r} field")
    frame = f.frame or page.main_frame

    async def call(op: str):
        return await frame.evaluate(PAGE_JS, {"op": op, "ref": f.ref})

    def counted(obj):
        return actions.wrap(obj) if actions is not None else obj

    value = widgets.as_page_date(f, value)  # "(DD/MM/YYYY)": typed as the page asks, never ISO
    target = widgets.Target(
        counted(page), f, counted(locate(page, f)), counted(frame), lambda: read_back(page, f), call
    )
    try:
        return await strategy(target, value, timeout_ms)
    except PlaywrightTimeout:  # said to the person: no "Locator.fill: Timeout 3000ms exceeded"
        raise FillProblem("error", f"the page did not take the value within {timeout_ms / 1000:g} s") from None
    except PlaywrightError as e:  # its text goes to the log, never to the person
        log.info("fill %s (%s): %s", f.key or f.ref, f.widget, str(e).splitlines()[0])
        raise FillProblem("error", "the page did not take the value") from None


class PageDriver(Protocol):
    """How the computer agent reads and operates a form page: :func:`perceive`,
    :func:`locate`, :func:`fill`, each on the ``page`` its browser holds. The real one is
    :class:`PlaywrightDriver`; the tests' stand-in page (``tests/fakes.py`` ``FakePage``)
    is its own driver."""

    async def perceive(self, page) -> PageView:
        """The page as a person sees it (see :func:`perceive`)."""

    def locate(self, page, item: FieldView | ButtonView):
        """The Playwright locator of a field or a button (see :func:`locate`)."""

    async def fill(
        self,
        page,
        f: FieldView,
        value: str | bool | tuple[str, ...],
        timeout_ms: int,
        *,
        strategy: widgets.Strategy | None = None,
        actions=None,
    ) -> tuple[object, str]:
        """Put ``value`` into ``f`` and read it back (see :func:`fill`; raises :class:`FillProblem`)."""


class PlaywrightDriver:
    """The :class:`PageDriver` of a Playwright ``Page``: this module's functions."""

    async def perceive(self, page) -> PageView:
        return await perceive(page)

    def locate(self, page, item: FieldView | ButtonView):
        return locate(page, item)

    async def fill(
        self,
        page,
        f: FieldView,
        value: str | bool | tuple[str, ...],
        timeout_ms: int,
        *,
        strategy: widgets.Strategy | None = None,
        actions=None,
    ) -> tuple[object, str]:
        return await fill(page, f, value, timeout_ms, strategy=strategy, actions=actions)
