"""Acting like a person: one small strategy per widget kind (:data:`STRATEGIES`).

Every strategy has the contract of :func:`appliance.computer_agent.page.fill`: it puts one
value into one field the way a person would, then returns what the page holds, read back
from the DOM, as ``(value, browser_validation_message)``; it raises :class:`FillProblem`
when the value does not fit the field (``format``, with the close ``candidates`` when
several fit) or the widget cannot be operated (``error``). A read-only input is never
written by script: a calendar is opened and its day clicked.

* ``native`` — ``<input>``/``<select>``/``<textarea>``, radio and checkbox groups: Playwright's
  ``fill`` / ``select_option`` / ``check`` (the ``input`` and ``change`` events a person's
  action fires), then blur (a value the browser then refuses, "Please match the requested
  format" from a mask that formats on key events, is typed again key by key: the agent moves
  on to the ladder's next strategy, :func:`typed`, whenever the page does not keep a value);
* ``autocomplete`` — type the value's first part key by key, wait up to
  :data:`SUGGEST_WAIT_S` for the suggestion list to settle, click the one suggestion that
  matches (several close ones → ``format`` with ``candidates``: "Paris, France or Paris,
  Texas?");
* ``listbox`` — a custom dropdown (ARIA combobox/listbox on divs or buttons): open it,
  click the matching option;
* ``searchable_select`` — a native ``<select>`` a widget library replaced (select2,
  choices.js, tom-select, the USWDS combo box): click the widget open, type the wanted
  option's first word into its search box when it has one, click the option with that
  label, read the hidden select back (closing a widget that stays open);
* ``date_picker`` — a JS calendar behind a read-only input: open it, move with its year
  list and month arrows until it shows the month, click the day;
* ``time_picker`` — a read-only time input with a popup of hour and minute boxes
  (flatpickr): open it, type the hour and the minute, Tab, Escape;
* ``date_parts`` — day, month and year controls: year, month, then day, each chosen like a
  person (by number or month name);
* ``masked`` — an input mask: type the characters key by key (digits the mask already
  shows, like a fixed ``+1``, are not typed again), read back what the mask made;
* ``aria_radio``, ``switch``, ``spinbutton``, ``contenteditable`` — click the radio, click
  the switch until it says the value, press the arrow keys, type into the editable box.

When a strategy cannot operate its widget (``FillProblem`` ``error``), the agent tries the
next one of the widget's :data:`LADDERS` on a fresh reading of the field — a *different*
way a person would do it — and gives up after the last (the field is then the person's):

* ``typed`` (native text fields) — click, then type the value key by key (pages that
  listen for key events rather than ``input``);
* ``autocomplete_slowly`` — the value's first part typed slowly, a longer wait for the
  list, ``ArrowDown`` to call it up (the ARIA combobox key), then a click on the match;
* ``listbox_by_keys`` — focus the control and type the option's first letters (type-ahead,
  as a keyboard user picks), else ``ArrowDown`` to open it and click the option;
* ``masked_digits`` — only the digits typed, the mask adds the rest;
* ``searchable_select_by_keys`` — the option's label typed into the widget's search box (or
  ``ArrowDown`` into a list without one), ``ArrowDown`` until it is the highlighted option,
  then Enter there (in the widget's own box, on the wanted option: it submits nothing);
* any other widget: its own strategy once more on the fresh reading (the page may have
  re-rendered it).

No strategy presses Enter in a form field (it submits the form); only
``searchable_select_by_keys`` does, in a widget's own search box, on the wanted option.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from appliance.computer_agent import localised

#: Longest wait for a suggestion list to appear and settle once typing stops (s); pages
#: debounce their lookups by up to ~1 s.
SUGGEST_WAIT_S = 1.5
#: Pause between two key presses when typing like a person (ms).
KEY_DELAY_MS = 30
#: A widget seen shut this long after its option was picked stays shut (s), and the longest
#: it is tried (s): tom-select reopened on the pick's last events after it had been seen shut
#: once, and its list then covered the form's button (CI, a loaded machine)
CLOSED_FOR_S = 0.45
CLOSE_WAIT_S = 3.0
#: Most month steps a calendar is moved by its arrows (ten years).
MAX_MONTH_STEPS = 120

TEXT_KINDS = frozenset(
    {
        "text",
        "email",
        "tel",
        "url",
        "number",
        "search",
        "textarea",
        "password",
        "date",
        "datetime-local",
        "month",
        "week",
        "time",
    }
)
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

Value = str | bool | tuple[str, ...]
Read = tuple[object, str]


class FillProblem(Exception):
    """A value could not be put into a field: ``kind`` is ``format`` (the value does not fit
    the field: ``expected`` says what would, ``candidates`` lists the page's close choices
    when several fit) or ``error`` (the field is gone, disabled, the widget did not respond…)."""

    def __init__(self, kind: str, reason: str, expected: str = "", candidates: tuple[str, ...] = ()):
        super().__init__(reason)
        self.kind, self.reason, self.expected, self.candidates = kind, reason, expected, candidates


@dataclass(frozen=True)
class Target:
    """What a strategy acts on: the Playwright ``page``, the field's view ``f``, ``loc``
    (its first element), ``frame`` (the Playwright frame it is in), ``read()`` (what it
    holds now, None when gone) and ``call(op)`` (an entry of ``page.js`` on this field)."""

    page: Any
    f: Any
    loc: Any
    frame: Any
    read: Callable[[], Awaitable[Read | None]]
    call: Callable[[str], Awaitable[Any]]

    def member(self, j: int):
        """Locator of member ``j`` of a group (radio ``j``; day 0, month 1, year 2 of a split date)."""
        return self.frame.locator(f'[data-ap-ref="{self.f.ref}.{j}"]')

    async def state(self) -> Read:
        """``read()``, or ``FillProblem(error)`` when the field is no longer on the page."""
        got = await self.read()
        if got is None:
            raise FillProblem("error", "the field is no longer on the page")
        return got


# ---- matching what the person said against what the page offers -----------------------------------


def _fold(s: str) -> str:
    return re.sub(r"[\W_]+", " ", str(s)).strip().casefold()


def close_options(options, wanted: str) -> list:
    """The options (anything with ``value`` and ``label``, and maybe ``english``) close to
    ``wanted``, case and punctuation ignored: the one whose value, label or English name *is*
    it; else the one that names the same country or language in CLDR (:mod:`localised`:
    "UK" is "United Kingdom"; an option valued "GB"); else those whose label starts with it;
    else those whose label contains it or is contained in it."""
    w = _fold(wanted)
    if not w:
        return []
    exact = [o for o in options if w in (_fold(o.value), _fold(o.label), _fold(getattr(o, "english", "")))]
    if exact:
        return exact[:1]
    if (hhmm := read_time(wanted)) is not None:  # "14:30" is the option "2:30pm"
        same = [o for o in options if hhmm in (read_time(o.value), read_time(o.label))]
        if same:
            return same[:1]
    code = localised.code_of(wanted)  # "UK" for "United Kingdom"; a country's code as the option's value
    if code is not None:
        named = [o for o in options if localised.code_of(getattr(o, "english", "") or o.label) == code]
        named = named or [o for o in options if o.value.casefold() == code.split(":")[1].casefold()]
        if len(named) == 1:
            return named
    for test in (lambda o: _fold(o.label).startswith(w), lambda o: w in _fold(o.label) or _fold(o.label) in w):
        hits = [o for o in options if test(o)]
        if hits:
            return hits
    return []


def match_option(options, wanted: str):
    """The one option that is ``wanted`` (see :func:`close_options`); None when none or several are."""
    hits = close_options(options, wanted)
    return hits[0] if len(hits) == 1 else None


def _choices(options) -> str:
    return ", ".join(o.label for o in options)


def digits(s: object) -> str:
    return re.sub(r"\D", "", str(s))


def same_value(f, value: Value, got: object) -> bool:
    """Whether the page holds what was entered into ``f``, meaning the same (issue 26: a page
    that regroups what is typed has taken it): options compare by value or label, a masked
    input by its digits (the mask adds spaces and brackets), a phone number as a number
    (:func:`same_phone`), anything else by :func:`canonical` form (case, spaces and
    separators aside)."""
    if f.kind == "checkbox":
        return got == value
    if f.options:
        wanted = [value] if isinstance(value, str) else list(value)
        held = [got] if isinstance(got, str) else list(got or ())
        opts = [match_option(f.options, w) for w in wanted]
        return None not in opts and sorted(o.value for o in opts) == sorted(held)
    if f.widget == "masked":
        return bool(digits(value)) and digits(got) == digits(value)
    if str(got) == str(value) or str(got) == str(as_page_date(f, value)):
        return True
    iso = isinstance(value, str) and _ISO.fullmatch(value)
    if iso and page_date_format(f) is None and read_date(str(got), f"{f.placeholder} {f.hint}") == value:
        return True
    if f.kind == "tel" or "tel" in f.autocomplete.split():
        return same_phone(str(value), str(got))
    if (hhmm := read_time(str(value))) is not None and read_time(str(got)) == hhmm:
        return True
    return bool(canonical(value)) and canonical(got) == canonical(value)


_CLOCK24 = re.compile(r"(\d{1,2})[:.h](\d{2})(?::\d{2})?")
_CLOCK12 = re.compile(r"(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s*m\.?", re.I)


def read_time(text: str) -> str | None:
    """A time of day as people and pages write it ("14:30", "14.30", "2:30pm", "2:30 PM",
    "2 p.m.", "14:30:00") → ``HH:MM`` on the 24-hour clock; None when ``text`` is no time."""
    s = str(text).strip()
    if m := _CLOCK12.fullmatch(s):
        h, mi = int(m.group(1)), int(m.group(2) or 0)
        if not 1 <= h <= 12 or mi > 59:
            return None
        h = h % 12 + (12 if m.group(3).lower() == "p" else 0)
    elif m := _CLOCK24.fullmatch(s):
        h, mi = int(m.group(1)), int(m.group(2))
        if h > 23 or mi > 59:
            return None
    else:
        return None
    return f"{h:02d}:{mi:02d}"


def canonical(v: object) -> str:
    """A value as pages regroup it: letters case-folded, digits kept, spaces and separators
    dropped ("GB29 NWBK 6016 …" is "gb29nwbk6016…", "60-16-13" is "601613")."""
    return re.sub(r"[\W_]+", "", str(v)).casefold()


def same_phone(value: str, got: str) -> bool:
    """Whether ``got`` (as a page shows a number: "07700 900123", "+44 7700 900123") is the
    number ``value``: compared as numbers by libphonenumber, ``got`` read in the country of
    ``value`` (E.164); by digits alone when ``value`` is national or either is no number."""
    import phonenumbers

    if not value.strip().startswith("+"):  # no country to read the page's number in
        return bool(digits(value)) and digits(got) == digits(value)
    try:
        want = phonenumbers.parse(value, None)
        region = phonenumbers.region_code_for_country_code(want.country_code)
        held = phonenumbers.parse(got, region)
    except phonenumbers.NumberParseException:
        return bool(digits(value)) and digits(got) == digits(value)
    return (want.country_code, want.national_number) == (held.country_code, held.national_number)


# ---- dates -------------------------------------------------------------------------------------


def iso_date(value: object) -> date:
    """``value`` (``YYYY-MM-DD``) as a date.

    Raises:
        FillProblem: ``format`` for anything else.
    """
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise FillProblem("format", f"expected a date as YYYY-MM-DD, got {value!r}", "a date, YYYY-MM-DD") from None


def _month(token: str) -> int:
    t = token[:3].casefold()
    return MONTHS.index(t) + 1 if t in MONTHS else 0


def read_date(text: str, hint: str = "") -> str | None:
    """A date as a page shows it → ISO ``YYYY-MM-DD``, or None when ``text`` is not one date.

    Reads ``2027-06-02``, ``2027/06/02``, ``Wed 2 Jun 2027``, ``June 2, 2027``, ``2nd June
    2027`` and numeric ``02/06/2027`` / ``2.6.2027``; a numeric date whose day and month could
    swap is day first unless ``hint`` (the field's placeholder or hint) says ``mm/dd``.
    """
    s = text.strip()
    words = re.findall(r"[A-Za-z]+", s)
    nums = re.findall(r"\d+", s)
    try:
        named = [m for m in (_month(w) for w in words if len(w) >= 3) if m]
        if len(named) == 1 and len(nums) == 2:
            d, y = (int(nums[0]), int(nums[1])) if len(nums[1]) == 4 else (int(nums[1]), int(nums[0]))
            return date(y, named[0], d).isoformat()
        if words and not re.fullmatch(r"(st|nd|rd|th|T)?", "".join(words)) or len(nums) != 3:
            return None
        a, b, c = nums
        if len(a) == 4:
            return date(int(a), int(b), int(c)).isoformat()
        if len(c) != 4:
            return None
        first, second = int(a), int(b)
        mdy = second > 12 or (first <= 12 and re.search(r"mm\W*dd", hint, re.I) is not None)
        return (date(int(c), first, second) if mdy else date(int(c), second, first)).isoformat()
    except ValueError:
        return None


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
#: a date format a page names: "(DD/MM/YYYY)", "TT.MM.JJJJ" (German), "mm/dd/yyyy", "YYYY-MM-DD"
_FORMAT = re.compile(r"\b(dd|tt|mm|yyyy|jjjj)([./ -])(dd|tt|mm)\2(yyyy|jjjj|dd|tt)\b", re.I)
#: an example date in a hint: "For example, 14/03/1990", "z. B. 14.03.1990"
_EXAMPLE = re.compile(r"\b(\d{1,2})([./-])(\d{1,2})\2(\d{4})\b")
#: a pattern attribute for a numeric date: \d{2}\.\d{2}\.\d{4}, [0-9]{2}/[0-9]{2}/[0-9]{4}
_PATTERN = re.compile(r"(?:\\d|\[0-9\])\{1?,?2\}(\\?[./-])(?:\\d|\[0-9\])\{1?,?2\}\1(?:\\d|\[0-9\])\{4\}")


def page_date_format(f) -> tuple[str, str] | None:
    """The numeric date format field ``f`` asks for, as ``(order, separator)`` with order
    ``dmy``, ``mdy`` or ``ymd``: from its label, hint, placeholder and error text ("(DD/MM/YYYY)",
    "TT.MM.JJJJ", "mm/dd/yyyy"), an example date there ("For example, 14/03/1990": day first
    when the first number is over 12, else month first only if the text says mm/dd), or its
    ``pattern`` (``\\d{2}\\.\\d{2}\\.\\d{4}``: day first); None when it names none.
    A ``type=date`` field (kind ``date``) takes ISO and has none."""
    if f.kind == "date":
        return None
    text = " ".join(str(x or "") for x in (f.label, f.hint, f.placeholder, f.error))
    if m := _FORMAT.search(text):
        parts = [p.lower()[0] for p in (m.group(1), m.group(3), m.group(4))]
        order = "".join({"t": "d", "j": "y"}.get(p, p) for p in parts)
        if sorted(order) == ["d", "m", "y"]:
            return order, m.group(2)
    if m := _EXAMPLE.search(text):
        return ("dmy" if int(m.group(1)) > 12 or not re.search(r"mm\W*dd", text, re.I) else "mdy"), m.group(2)
    if f.pattern and (m := _PATTERN.search(f.pattern)):
        return "dmy", m.group(1).lstrip("\\")
    return None


def as_page_date(f, value: Value) -> Value:
    """An ISO date for a text field that asks for another format, written in that format
    ("1990-03-14" → "14/03/1990" for "(DD/MM/YYYY)", "14.03.1990" for "TT.MM.JJJJ"); any other
    value, or a field that names no format, unchanged."""
    if not isinstance(value, str) or not _ISO.fullmatch(value.strip()) or f.kind not in TEXT_KINDS:
        return value
    fmt = page_date_format(f)
    if fmt is None:
        return value
    order, sep = fmt
    y, m, d = value.strip().split("-")
    return sep.join({"d": d, "m": m, "y": y}[p] for p in order)


def part_option(options: list[tuple[str, str]], part: str, n: int) -> str | None:
    """The value of the option that means ``n`` in a ``day``/``month``/``year`` list of
    ``(value, text)`` (by number in its value or text, or a month by name)."""
    for value, text in options:
        if value == "":
            continue
        if part == "month" and _month(text.strip()) == n:
            return value
        if any(x.strip().isdigit() and int(x) == n for x in (value, text)):
            return value
    return None


# ---- strategies ------------------------------------------------------------------------------


async def native(t: Target, value: Value, timeout_ms: int) -> Read:
    f, loc = t.f, t.loc
    if f.kind == "checkbox":
        if not isinstance(value, bool):
            raise FillProblem("format", f"expected yes or no, got {value!r}", "yes or no")
        await loc.set_checked(value, timeout=timeout_ms)
    elif f.kind in ("radio", "select"):
        opt = match_option(f.options or (), str(value))
        if opt is None:
            raise FillProblem(
                "format",
                f"{value!r} is not one of the choices",
                f"one of: {_choices(f.options or ())}",
                tuple(o.label for o in close_options(f.options or (), str(value))),
            )
        if f.kind == "select":
            await loc.select_option(value=opt.value, timeout=timeout_ms)
        else:
            await t.member(f.options.index(opt)).check(timeout=timeout_ms)
    elif f.kind in ("multiselect", "checkboxes"):
        wanted = [value] if isinstance(value, str) else list(value)
        opts = [match_option(f.options or (), w) for w in wanted]
        if None in opts:
            raise FillProblem(
                "format", f"{value!r} are not all among the choices", f"some of: {_choices(f.options or ())}"
            )
        if f.kind == "multiselect":
            await loc.select_option(value=[o.value for o in opts], timeout=timeout_ms)
        else:
            for i, o in enumerate(f.options or ()):
                await t.member(i).set_checked(o in opts, timeout=timeout_ms)
    elif f.kind in TEXT_KINDS:
        if not isinstance(value, str):
            raise FillProblem("format", f"expected text, got {value!r}", "text")
        await loc.fill(value, timeout=timeout_ms)
        await loc.dispatch_event("change", timeout=timeout_ms)
        await _blur(loc, timeout_ms)
    else:
        raise FillProblem("error", f"cannot fill a field of kind {f.kind!r}")
    return await t.state()


async def _blur(loc, timeout_ms: int) -> None:
    await loc.evaluate("e => e.blur()", timeout=timeout_ms)


class _Option:
    def __init__(self, d: dict, index: int):
        self.value, self.label, self.index = d["value"], d["label"], index
        self.text = d.get("text", d["label"])  # its whole text (a highlighted "<b>Rom</b>e" is "Rome")


async def _options(t: Target) -> list[_Option]:
    """The field's list as it shows now (visible options, tagged for a click)."""
    got = await t.call("options")
    if got is None:
        raise FillProblem("error", "the field is no longer on the page")
    return [_Option(d, i) for i, d in enumerate(got)]


async def _settled(t: Target, typed: str, wait_s: float) -> list[_Option]:
    """Poll the suggestion list until it shows options about ``typed`` twice in a row, or
    ``wait_s`` passes (then whatever shows, possibly nothing)."""
    deadline, last = time.monotonic() + wait_s, None
    w = _fold(typed)
    while True:
        opts = await _options(t)
        labels = [o.label for o in opts]
        if opts and labels == last and any(w[:3] in _fold(o.label) for o in opts):
            return opts
        if time.monotonic() > deadline:
            return opts
        last = labels
        await asyncio.sleep(0.1)


async def _pick(t: Target, opts: list[_Option], value: str, timeout_ms: int) -> None:
    hits = close_options(opts, value)
    if len(hits) != 1:
        labels = tuple(o.label for o in (hits or opts))
        reason = f"{value!r} fits several of the page's choices" if hits else f"none of the page's choices is {value!r}"
        raise FillProblem("format", reason, " or ".join(labels), labels if hits else ())
    await t.frame.locator(f'[data-ap-opt="{hits[0].index}"]').click(timeout=timeout_ms)


def _first_part(value: str) -> str:
    """What a person types to call up suggestions: the value up to its first comma or bracket."""
    return re.split(r"[,(]| - ", value, maxsplit=1)[0].strip()[:24] or value


async def autocomplete(t: Target, value: Value, timeout_ms: int) -> Read:
    if not isinstance(value, str) or not value.strip():
        raise FillProblem("format", f"expected text, got {value!r}", "text")
    loc = t.loc
    await loc.click(timeout=timeout_ms)
    await loc.fill("", timeout=timeout_ms)
    typed = _first_part(value)
    await loc.press_sequentially(typed, delay=KEY_DELAY_MS, timeout=timeout_ms)
    opts = await _settled(t, typed, SUGGEST_WAIT_S)
    if not opts:  # no list came: a plain text field after all
        if typed != value:
            await loc.fill(value, timeout=timeout_ms)
    else:
        try:
            await _pick(t, opts, value, timeout_ms)
        except FillProblem:
            await loc.fill("", timeout=timeout_ms)  # leave no half-typed town behind
            raise
    await _blur(loc, timeout_ms)
    await asyncio.sleep(0.2)  # the page's own blur handler checks the choice
    return await t.state()


async def listbox(t: Target, value: Value, timeout_ms: int) -> Read:
    f = t.f
    if not isinstance(value, str):
        raise FillProblem("format", f"expected one choice, got {value!r}", "one choice")
    if f.options and match_option(f.options, value) is None:
        raise FillProblem(
            "format",
            f"{value!r} is not one of the choices",
            f"one of: {_choices(f.options)}",
            tuple(o.label for o in close_options(f.options, value)),
        )
    current = await t.state()
    if f.options and same_value(f, value, current[0]):
        return current
    opts = await _options(t)
    if not opts:  # closed: open it like a person, then wait for its options
        await t.loc.click(timeout=timeout_ms)
        deadline = time.monotonic() + timeout_ms / 1000
        while not opts and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            opts = await _options(t)
        if not opts:
            raise FillProblem("error", "the list did not open")
    await _pick(t, opts, value, timeout_ms)
    return await t.state()


def search_prefix(label: str) -> str:
    """What a person types into a searchable list to find the option ``label``: its first word
    (up to 8 characters; "United Kingdom" → "United", "2:30pm" → "2:30pm")."""
    word = re.split(r"[\s,(/]+", label.strip(), maxsplit=1)[0]
    return (word or label.strip())[:8]


def _is_option(o, label: str) -> bool:
    """Whether a shown option ``o`` is the one labelled ``label`` (spaces and punctuation aside)."""
    want = canonical(label)
    return bool(want) and want in (canonical(o.label), canonical(getattr(o, "text", "")))


def _wanted(f, value: Value):
    """The option of select ``f`` that ``value`` names; ``FillProblem(format)`` when none or several."""
    if not isinstance(value, str):
        raise FillProblem("format", f"expected one choice, got {value!r}", "one choice")
    opt = match_option(f.options or (), value)
    if opt is None:
        raise FillProblem(
            "format",
            f"{value!r} is not one of the choices",
            f"one of: {_choices(f.options or ())}",
            tuple(o.label for o in close_options(f.options or (), value)),
        )
    return opt


async def _held(t: Target, want: str, timeout_ms: int) -> Read:
    """What the field holds once it is ``want``, or after ``timeout_ms`` whatever it holds."""
    deadline = time.monotonic() + timeout_ms / 1000
    got = await t.state()
    while got[0] != want and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        got = await t.state()
    return got


async def _open_widget(t: Target, timeout_ms: int) -> tuple[Any, bool]:
    """Click a replaced select's widget open; its search box (a locator) when it has one and
    whether its list shows."""
    opener = t.frame.locator(f'[data-ap-widget="{t.f.ref}"]')
    w = await t.call("search")
    if w is None:
        raise FillProblem("error", "the field's widget is no longer on the page")
    if not w["expanded"]:
        await opener.click(timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        w = await t.call("search") or {"search": False, "expanded": False}
        if w["search"] or w["expanded"] or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    return (t.frame.locator(f'[data-ap-search="{t.f.ref}"]') if w["search"] else None), w["expanded"]


async def searchable_select(t: Target, value: Value, timeout_ms: int) -> Read:
    """A native ``<select>`` a widget replaced (select2, choices.js, tom-select, a USWDS combo box):
    click the widget open, type the first word of the wanted option into its search box when it
    has one, click the option with that label in the list it shows, read the select back."""
    opt = _wanted(t.f, value)
    current = await t.state()
    if current[0] == opt.value:
        return current
    search, _ = await _open_widget(t, timeout_ms)
    if search is not None:
        await search.fill("", timeout=timeout_ms)
        await search.press_sequentially(search_prefix(opt.label), delay=KEY_DELAY_MS, timeout=timeout_ms)
    deadline = time.monotonic() + max(timeout_ms / 1000, SUGGEST_WAIT_S)
    while True:
        shown = await _options(t)
        hit = next((o for o in shown if _is_option(o, opt.label)), None)
        if hit is not None or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    if hit is None:
        await t.page.keyboard.press("Escape")
        raise FillProblem("error", f"the list did not show {opt.label!r}")
    await t.frame.locator(f'[data-ap-opt="{hit.index}"]').click(timeout=timeout_ms)
    got = await _held(t, opt.value, timeout_ms)
    await _close_widget(t, timeout_ms)
    return got


async def _close_widget(t: Target, timeout_ms: int) -> None:
    """A widget that stays open once its option is picked (tom-select) is shut as a person
    does: Escape, else focus leaves it, until it has stayed shut for :data:`CLOSED_FOR_S`
    (some reopen on the click's last events), for at most :data:`CLOSE_WAIT_S`."""
    deadline = time.monotonic() + CLOSE_WAIT_S
    shut_since: float | None = None
    escaped = False
    while time.monotonic() < deadline:
        await asyncio.sleep(0.15)
        w = await t.call("search")
        if not (w and w["expanded"]):
            shut_since = shut_since or time.monotonic()
            if time.monotonic() - shut_since >= CLOSED_FOR_S:
                return
            continue
        shut_since = None
        if not escaped:
            await t.page.keyboard.press("Escape")
            escaped = True
        else:
            await t.frame.locator(f'[data-ap-widget="{t.f.ref}"]').evaluate("e => e.blur()", timeout=timeout_ms)


async def searchable_select_by_keys(t: Target, value: Value, timeout_ms: int) -> Read:
    """The keyboard way: open the widget, type the option's label into its search box (or
    ``ArrowDown`` into a list without one), move down until the wanted option is the
    highlighted one and press Enter there — only ever in the widget's own search box or
    list, with the wanted option highlighted (never Enter in a form field)."""
    opt = _wanted(t.f, value)
    current = await t.state()
    if current[0] == opt.value:
        return current
    search, shows = await _open_widget(t, timeout_ms)
    keys = search if search is not None else t.frame.locator(f'[data-ap-widget="{t.f.ref}"]')
    if search is not None:
        await search.fill("", timeout=timeout_ms)
        await search.press_sequentially(opt.label, delay=KEY_DELAY_MS, timeout=timeout_ms)
        await asyncio.sleep(0.3)
    elif not shows:
        await keys.press("ArrowDown", timeout=timeout_ms)
    for _ in range(len(t.f.options or ()) + 2):
        now = await t.call("highlighted")
        if now is not None and _is_option(_Option({"value": "", **now}, 0), opt.label):
            await keys.press("Enter", timeout=timeout_ms)
            got = await _held(t, opt.value, timeout_ms)
            await _close_widget(t, timeout_ms)
            return got
        await keys.press("ArrowDown", timeout=timeout_ms)
        await asyncio.sleep(0.05)
    await t.page.keyboard.press("Escape")
    raise FillProblem("error", f"the keyboard did not reach {opt.label!r} in the list")


async def _calendar(t: Target) -> dict:
    cal = await t.call("calendar")
    if cal is None:
        raise FillProblem("error", "the field is no longer on the page")
    return cal


async def _month_change(t: Target, shown: tuple[int, int], timeout_ms: int) -> dict:
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        cal = await _calendar(t)
        if not cal["open"] or (cal["year"], cal["month"]) != shown or time.monotonic() > deadline:
            return cal
        await asyncio.sleep(0.05)


async def date_picker(t: Target, value: Value, timeout_ms: int) -> Read:
    d = iso_date(value)
    current = await t.state()
    if current[0] == d.isoformat():
        return current
    await t.loc.click(timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    cal = await _calendar(t)
    while not cal["open"] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        cal = await _calendar(t)
    if not cal["open"]:
        raise FillProblem("error", "the date picker did not open when the field was clicked")
    for _ in range(MAX_MONTH_STEPS):
        shown = (cal["year"], cal["month"])
        if not all(shown):
            raise FillProblem("error", "the date picker does not say which month it shows")
        if shown == (d.year, d.month):
            break
        if cal["year_select"] and cal["year"] != d.year:
            years = t.frame.locator('[data-ap-cal="year"]')
            if str(d.year) not in await years.evaluate("s => [...s.options].map(o => o.text.trim())"):
                raise FillProblem("format", f"the date picker does not offer {d.year}", "another date")
            await years.select_option(label=str(d.year), timeout=timeout_ms)
        else:
            way = "next" if (d.year, d.month) > shown else "prev"
            if not cal[way]:
                raise FillProblem("error", f"the date picker has no {way} month button")
            await t.frame.locator(f'[data-ap-cal="{way}"]').click(timeout=timeout_ms)
        cal = await _month_change(t, shown, timeout_ms)
        if not cal["open"]:
            raise FillProblem("error", "the date picker closed while moving to the month")
    else:
        raise FillProblem("error", f"the date picker did not reach {d:%B %Y}")
    day = next((x for x in cal["days"] if x["n"] == d.day), None)
    if day is None:
        raise FillProblem("error", f"the date picker shows no day {d.day} in {d:%B %Y}")
    if day["disabled"]:
        raise FillProblem("format", f"the page does not offer {d.isoformat()}", "another date")
    await t.frame.locator(f'[data-ap-cal="d{d.day}"]').click(timeout=timeout_ms)
    return await t.state()


async def time_picker(t: Target, value: Value, timeout_ms: int) -> Read:
    """A read-only time input that opens a popup of hour and minute boxes (flatpickr's time
    picker): click it, type the hour and the minute into their boxes (AM/PM clicked when the
    popup has one and shows the other), Tab to commit, Escape to close; read the field back."""
    hhmm = read_time(str(value)) if isinstance(value, str) else None
    if hhmm is None:
        raise FillProblem("format", f"expected a time of day, got {value!r}", "a time, HH:MM")
    current = await t.state()
    if read_time(str(current[0])) == hhmm:
        return current
    await t.loc.click(timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1000
    clock = await t.call("clock")
    while clock is not None and not clock["open"] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        clock = await t.call("clock")
    if clock is None:
        raise FillProblem("error", "the field is no longer on the page")
    if not clock["open"]:
        raise FillProblem("error", "no hour and minute boxes opened when the field was clicked")
    h, m = (int(x) for x in hhmm.split(":"))
    half = "PM" if h >= 12 else "AM"
    hour_keys = str(h % 12 or 12) if clock["ampm"] else str(h).zfill(2)
    for part, keys in (("hour", hour_keys), ("minute", str(m).zfill(2))):
        box = t.frame.locator(f'[data-ap-clock="{part}"]')
        await box.click(timeout=timeout_ms)
        await box.press("Control+A", timeout=timeout_ms)
        await box.press_sequentially(keys, delay=KEY_DELAY_MS, timeout=timeout_ms)
    if clock["ampm"] and clock["ampm"] != half:
        await t.frame.locator('[data-ap-clock="ampm"]').click(timeout=timeout_ms)
    await t.page.keyboard.press("Tab")  # leaves the minute box: the picker takes what was typed
    await asyncio.sleep(0.1)
    if (await t.call("clock") or {}).get("open"):
        await t.page.keyboard.press("Escape")
    return await t.state()


async def date_parts(t: Target, value: Value, timeout_ms: int) -> Read:
    d = iso_date(value)
    for j, part, n in ((2, "year", d.year), (1, "month", d.month), (0, "day", d.day)):
        m = t.member(j)
        if await m.evaluate("e => e.tagName", timeout=timeout_ms) == "SELECT":
            options = await m.evaluate("e => [...e.options].map(o => [o.value, o.text])", timeout=timeout_ms)
            pick = part_option(options, part, n)
            if pick is None:
                raise FillProblem("format", f"the page's {part} list has no {n}", f"another {part}")
            await m.select_option(value=pick, timeout=timeout_ms)
        else:
            await m.fill(str(n).zfill(4 if part == "year" else 2), timeout=timeout_ms)
            await m.dispatch_event("change", timeout=timeout_ms)
    return await t.state()


async def masked(t: Target, value: Value, timeout_ms: int) -> Read:
    if not isinstance(value, str) or not value.strip():
        raise FillProblem("format", f"expected text, got {value!r}", "text")
    loc = t.loc
    await loc.click(timeout=timeout_ms)
    await loc.fill("", timeout=timeout_ms)
    shown = digits((await t.state())[0])  # a mask may show fixed digits once focused (+1 …)
    keys = value.strip()
    if shown and digits(keys).startswith(shown):
        keys = digits(keys)[len(shown) :]
    await loc.press_sequentially(keys, delay=KEY_DELAY_MS, timeout=timeout_ms)
    await _blur(loc, timeout_ms)
    return await t.state()


async def segmented(t: Target, value: Value, timeout_ms: int) -> Read:
    """Boxes of a few characters each that the page moves between as they fill (a one-time
    code, a sort code): the first box clicked and the characters typed, as a person does;
    the page's own auto-advance spreads them (separators the person would not type dropped)."""
    if not isinstance(value, str) or not canonical(value):
        raise FillProblem("format", f"expected a code, got {value!r}", "the code's characters")
    first = t.member(0)
    await first.click(timeout=timeout_ms)
    await first.press_sequentially(re.sub(r"[\s-]+", "", value), delay=KEY_DELAY_MS, timeout=timeout_ms)
    await _blur(first, timeout_ms)
    return await t.state()


async def aria_radio(t: Target, value: Value, timeout_ms: int) -> Read:
    opt = match_option(t.f.options or (), str(value))
    if opt is None:
        raise FillProblem(
            "format",
            f"{value!r} is not one of the choices",
            f"one of: {_choices(t.f.options or ())}",
            tuple(o.label for o in close_options(t.f.options or (), str(value))),
        )
    await t.member(t.f.options.index(opt)).click(timeout=timeout_ms)
    return await t.state()


async def switch(t: Target, value: Value, timeout_ms: int) -> Read:
    if not isinstance(value, bool):
        raise FillProblem("format", f"expected yes or no, got {value!r}", "yes or no")
    got = await t.state()
    if got[0] != value:
        await t.loc.click(timeout=timeout_ms)
        got = await t.state()
    if got[0] != value:
        raise FillProblem("error", f"the switch stayed {'on' if got[0] else 'off'} when clicked")
    return got


async def spinbutton(t: Target, value: Value, timeout_ms: int) -> Read:
    f = t.f
    try:
        n = int(str(value).strip())
    except ValueError:
        raise FillProblem("format", f"expected a whole number, got {value!r}", "a whole number") from None
    lo, hi = (int(x) if x not in (None, "") else None for x in (f.min, f.max))
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        raise FillProblem(
            "format",
            f"{n} is outside what the page allows",
            f"a number from {lo if lo is not None else 'any'} to {hi if hi is not None else 'any'}",
        )
    await t.loc.focus(timeout=timeout_ms)
    for _ in range(200):
        got = await t.state()
        try:
            now = int(str(got[0]).strip() or 0)
        except ValueError:
            raise FillProblem("error", f"the spin button shows {got[0]!r}, not a number") from None
        if now == n:
            return got
        await t.loc.press("ArrowUp" if now < n else "ArrowDown", timeout=timeout_ms)
    raise FillProblem("error", f"the spin button did not reach {n}")


async def contenteditable(t: Target, value: Value, timeout_ms: int) -> Read:
    if not isinstance(value, str):
        raise FillProblem("format", f"expected text, got {value!r}", "text")
    await t.loc.click(timeout=timeout_ms)
    await t.loc.press("Control+A", timeout=timeout_ms)
    await t.loc.press("Delete", timeout=timeout_ms)
    if value:
        await t.page.keyboard.insert_text(value)
    await _blur(t.loc, timeout_ms)
    return await t.state()


# ---- second tries: a different way to operate the same widget --------------------------------------

#: field kinds a person types into key by key (a native date input takes the locale's keys: not typed)
TYPED_KINDS = frozenset({"text", "email", "tel", "url", "number", "search", "textarea", "password"})


async def typed(t: Target, value: Value, timeout_ms: int) -> Read:
    """A text field typed into key by key; any other native field as :func:`native` does it."""
    if t.f.kind not in TYPED_KINDS:
        return await native(t, value, timeout_ms)
    if not isinstance(value, str):
        raise FillProblem("format", f"expected text, got {value!r}", "text")
    await t.loc.click(timeout=timeout_ms)
    await t.loc.fill("", timeout=timeout_ms)
    await t.loc.press_sequentially(value, delay=KEY_DELAY_MS, timeout=timeout_ms)
    await _blur(t.loc, timeout_ms)
    return await t.state()


async def autocomplete_slowly(t: Target, value: Value, timeout_ms: int) -> Read:
    """The value's first part typed slowly, a longer wait, ``ArrowDown`` when no list came, a click on the match."""
    if not isinstance(value, str) or not value.strip():
        raise FillProblem("format", f"expected text, got {value!r}", "text")
    loc = t.loc
    await loc.click(timeout=timeout_ms)
    await loc.fill("", timeout=timeout_ms)
    typed_ = _first_part(value)
    await loc.press_sequentially(typed_, delay=KEY_DELAY_MS * 4, timeout=timeout_ms)
    opts = await _settled(t, typed_, SUGGEST_WAIT_S * 2)
    if not opts:
        await loc.press("ArrowDown", timeout=timeout_ms)
        opts = await _settled(t, typed_, SUGGEST_WAIT_S)
    if not opts:
        await loc.fill("", timeout=timeout_ms)
        raise FillProblem("error", "no list of suggestions came up to choose from")
    try:
        await _pick(t, opts, value, timeout_ms)
    except FillProblem:
        await loc.fill("", timeout=timeout_ms)
        raise
    await _blur(loc, timeout_ms)
    await asyncio.sleep(0.2)
    return await t.state()


async def listbox_by_keys(t: Target, value: Value, timeout_ms: int) -> Read:
    """Focus the control and type the option's first letters (type-ahead); else ``ArrowDown`` and a click."""
    f = t.f
    if not isinstance(value, str):
        raise FillProblem("format", f"expected one choice, got {value!r}", "one choice")
    opt = match_option(f.options or (), value) if f.options else None
    if f.options and opt is None:
        raise FillProblem(
            "format",
            f"{value!r} is not one of the choices",
            f"one of: {_choices(f.options)}",
            tuple(o.label for o in close_options(f.options, value)),
        )
    await t.loc.focus(timeout=timeout_ms)
    if opt is not None:
        await t.loc.press_sequentially(opt.label[:12], delay=KEY_DELAY_MS, timeout=timeout_ms)
        got = await t.state()
        if same_value(f, value, got[0]):
            return got
    await t.loc.press("ArrowDown", timeout=timeout_ms)
    deadline, opts = time.monotonic() + timeout_ms / 1000, []
    while not opts and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        opts = await _options(t)
    if not opts:
        raise FillProblem("error", "the list did not open, neither by clicking nor from the keyboard")
    await _pick(t, opts, value, timeout_ms)
    return await t.state()


async def masked_digits(t: Target, value: Value, timeout_ms: int) -> Read:
    """Only the value's digits typed (after any the mask shows already)."""
    if not isinstance(value, str) or not digits(value):
        raise FillProblem("format", f"expected digits, got {value!r}", "digits")
    loc = t.loc
    await loc.click(timeout=timeout_ms)
    await loc.fill("", timeout=timeout_ms)
    shown, keys = digits((await t.state())[0]), digits(value)
    if shown and keys.startswith(shown):
        keys = keys[len(shown) :]
    await loc.press_sequentially(keys, delay=KEY_DELAY_MS * 2, timeout=timeout_ms)
    await _blur(loc, timeout_ms)
    return await t.state()


Strategy = Callable[[Target, Value, int], Awaitable[Read]]
#: widget (``FieldView.widget``) → its strategy
STRATEGIES: dict[str, Strategy] = {
    "native": native,
    "autocomplete": autocomplete,
    "listbox": listbox,
    "date_picker": date_picker,
    "date_parts": date_parts,
    "masked": masked,
    "aria_radio": aria_radio,
    "switch": switch,
    "spinbutton": spinbutton,
    "contenteditable": contenteditable,
    "segmented": segmented,
    "searchable_select": searchable_select,
    "time_picker": time_picker,
}
#: widget → the strategies tried in turn while one cannot operate it (the first is :data:`STRATEGIES`'s)
LADDERS: dict[str, tuple[Strategy, ...]] = {
    **{w: (s, s) for w, s in STRATEGIES.items()},
    "native": (native, typed),
    "autocomplete": (autocomplete, autocomplete_slowly),
    "listbox": (listbox, listbox_by_keys),
    "masked": (masked, masked_digits),
    "searchable_select": (searchable_select, searchable_select_by_keys),
}
