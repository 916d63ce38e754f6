"""Reading a page into a compact indexed field list, and acting on one field by its ref.

:func:`perceive` runs one ``page.evaluate`` that walks every form control of the page and
returns a :class:`PageView`: fields (label, type, required, pattern, options, current
value, visibility, validation error) and buttons, each tagged in the DOM with a
``data-ap-ref`` attribute so an action can find it again. Nothing here knows any site:
labels come from ``<label>``, ``aria-labelledby``/``aria-label``, a radio group's
``<legend>``, then ``placeholder``/``name``; errors from the browser's own constraint
validation (for non-empty values), ``aria-invalid`` + ``aria-describedby``, and
error-looking elements in the field's own container.

:func:`fill` sets one field (text-like, date, select, radio, checkbox) and returns what the
page then holds, read back from the DOM.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

_PERCEIVE_JS = r"""
() => {
  const vis = (el) => {
    if (!el || !el.isConnected) return false;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.display === 'none') return false;
    return el.getClientRects().length > 0;
  };
  const clean = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const textOf = (el) => el ? clean(el.innerText !== undefined ? el.innerText : el.textContent) : '';
  const byIds = (ids) => (ids || '').split(/\s+/).filter(Boolean).map(id => document.getElementById(id)).filter(Boolean);
  const labelOf = (el) => {
    if (el.labels && el.labels.length) {
      const l = el.labels[0].cloneNode(true);
      l.querySelectorAll('input,select,textarea,.error,[role=alert]').forEach(n => n.remove());
      const t = clean(l.textContent);
      if (t) return t;
    }
    const lb = byIds(el.getAttribute('aria-labelledby')).map(textOf).join(' ');
    if (lb) return lb;
    return clean(el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.getAttribute('title') || '');
  };
  const isErr = (n) => /error|invalid|alert/i.test((n.className || '') + ' ' + (n.id || '') + ' ' + (n.getAttribute('role') || ''));
  const container = (el, members) => {
    let c = el.parentElement;
    while (c && c !== document.body) {
      const ctrls = c.querySelectorAll('input:not([type=hidden]),select,textarea');
      if ([...ctrls].some(x => !members.includes(x))) return null;
      if (c.matches('div,fieldset,li,p,section,td,tr')) return c;
      c = c.parentElement;
    }
    return null;
  };
  const problems = (el, members) => {
    const out = [];
    for (const m of members) {
      if (m.willValidate && m.value && !m.validity.valid && !m.validity.valueMissing) out.push(m.validationMessage);
    }
    const invalid = members.some(m => m.getAttribute('aria-invalid') === 'true');
    for (const m of members) for (const d of byIds(m.getAttribute('aria-describedby')))
      if ((invalid || isErr(d)) && vis(d) && textOf(d)) out.push(textOf(d));
    const c = container(el, members);
    if (c) c.querySelectorAll('.error,[class*=error],[class*=invalid],[role=alert]').forEach(n => {
      if (vis(n) && textOf(n) && !out.includes(textOf(n))) out.push(textOf(n));
    });
    return [...new Set(out)].join(' ');
  };
  const hintOf = (members) => {
    const out = [];
    for (const m of members) {
      for (const d of byIds(m.getAttribute('aria-describedby'))) if (!isErr(d) && textOf(d)) out.push(textOf(d));
      if (m.title) out.push(clean(m.title));
    }
    const uniq = out.filter((t, i) => !out.some((u, j) => j !== i && u.length > t.length && u.includes(t)));
    return [...new Set(uniq)].join('. ');
  };
  const controls = [...document.querySelectorAll('input,select,textarea')].filter(
    el => !['hidden', 'submit', 'button', 'reset', 'image', 'file'].includes((el.type || '').toLowerCase()));
  const fields = [];
  const groups = new Map();
  for (const el of controls) {
    const t = (el.type || el.tagName).toLowerCase();
    if ((t === 'radio' || t === 'checkbox') && el.name) {
      const same = controls.filter(x => x.type === el.type && x.name === el.name && x.form === el.form);
      if (t === 'radio' || same.length > 1) {
        const gk = t + ':' + el.name;
        if (groups.has(gk)) continue;
        groups.set(gk, true);
        const fs = el.closest('fieldset');
        const rg = el.closest('[role=radiogroup],[role=group]');
        let label = '';
        if (fs && fs.querySelector('legend')) label = textOf(fs.querySelector('legend'));
        if (!label && rg) label = byIds(rg.getAttribute('aria-labelledby')).map(textOf).join(' ') || clean(rg.getAttribute('aria-label'));
        if (!label) label = el.name;
        fields.push({el, members: same, kind: t === 'radio' ? 'radio' : 'checkboxes', label});
        continue;
      }
    }
    fields.push({el, members: [el], kind: t === 'select-one' ? 'select' : (t === 'select-multiple' ? 'multiselect' : t), label: labelOf(el)});
  }
  const out = fields.map((f, i) => {
    const ref = 'f' + i;
    const el = f.el;
    f.members.forEach((m, j) => m.setAttribute('data-ap-ref', f.members.length > 1 || f.kind === 'radio' ? ref + '.' + j : ref));
    let options = null, value = '';
    if (f.kind === 'select' || f.kind === 'multiselect') {
      options = [...el.options].filter(o => o.value !== '' && !o.disabled).map(o => ({value: o.value, label: clean(o.label || o.text)}));
      value = f.kind === 'select' ? el.value : [...el.selectedOptions].map(o => o.value);
    } else if (f.kind === 'radio' || f.kind === 'checkboxes') {
      options = f.members.map(m => ({value: m.value, label: labelOf(m) || m.value}));
      const on = f.members.filter(m => m.checked).map(m => m.value);
      value = f.kind === 'radio' ? (on[0] || '') : on;
    } else if (f.kind === 'checkbox') {
      value = el.checked;
    } else {
      value = el.value;
    }
    return {
      ref, kind: f.kind, key: el.name || el.id || '', label: f.label,
      required: f.members.some(m => m.required || m.getAttribute('aria-required') === 'true'),
      pattern: el.getAttribute('pattern'), hint: hintOf(f.members),
      placeholder: el.getAttribute('placeholder') || '', options, value,
      visible: f.members.some(m => vis(m) || (m.labels && [...m.labels].some(vis))),
      enabled: !f.members.every(m => m.disabled || m.readOnly),
      error: problems(el, f.members),
      min: el.getAttribute('min'), max: el.getAttribute('max'),
      autocomplete: (el.getAttribute('autocomplete') || '').toLowerCase(),
    };
  });
  const buttons = [...document.querySelectorAll('button,input[type=submit],input[type=button],[role=button]')]
    .filter(vis).map((b, i) => {
      b.setAttribute('data-ap-ref', 'b' + i);
      const type = (b.getAttribute('type') || (b.tagName === 'BUTTON' ? 'submit' : '')).toLowerCase();
      return {ref: 'b' + i, text: clean(b.innerText || b.value || b.getAttribute('aria-label') || ''),
              type, in_form: !!b.form, name: b.getAttribute('name') || '', formnovalidate: b.hasAttribute('formnovalidate')};
    });
  const alerts = [...document.querySelectorAll('[role=alert],.error-summary')].filter(vis).map(textOf).filter(Boolean);
  const headings = [...document.querySelectorAll('h1,h2,h3,legend')].filter(vis).map(textOf).filter(Boolean);
  return {url: location.href, title: document.title, fields: out, buttons, alerts, headings,
          text: clean(document.body ? document.body.innerText : '').slice(0, 1500)};
}
"""

_READ_JS = r"""
(ref) => {
  const els = [...document.querySelectorAll(`[data-ap-ref="${ref}"],[data-ap-ref^="${ref}."]`)];
  if (!els.length) return null;
  const el = els[0];
  if (el.type === 'checkbox' && els.length === 1) return {value: el.checked, msg: ''};
  if (el.type === 'radio') { const on = els.find(e => e.checked); return {value: on ? on.value : '', msg: ''}; }
  if (el.type === 'checkbox') return {value: els.filter(e => e.checked).map(e => e.value), msg: ''};
  if (el.multiple) return {value: [...el.selectedOptions].map(o => o.value), msg: ''};
  const msg = (el.value && !el.validity.valid && !el.validity.valueMissing) ? el.validationMessage : '';
  return {value: el.value, msg};
}
"""

#: Texts of buttons that only move between steps (never the final submit).
STEP_BUTTON = re.compile(r"^\W*(next|continue|proceed|next step|save and continue|go on)\b", re.I)
#: Texts of buttons the agent never presses.
AVOID_BUTTON = re.compile(r"^\W*(back|previous|prev|cancel|reset|clear|delete|remove|close|log ?out|sign ?out)\b",
                          re.I)
TEXT_KINDS = frozenset({"text", "email", "tel", "url", "number", "search", "textarea", "password", "date",
                        "datetime-local", "month", "week", "time"})


@dataclass(frozen=True)
class Option:
    value: str
    label: str


@dataclass(frozen=True)
class FieldView:
    """One field as read from the page. ``kind``: an input type, ``select``, ``multiselect``,
    ``radio`` (a group), ``checkbox`` (one box, value bool) or ``checkboxes`` (a group).
    ``key``: the control's name or id (stable across re-renders); ``ref``: this reading's
    DOM tag; ``value``: str, bool or list of str; ``error``: validation text ('' = none)."""

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
    ref: str
    text: str
    type: str
    in_form: bool
    name: str
    formnovalidate: bool

    @property
    def role(self) -> str:
        """``step`` (moves to the next step), ``avoid`` (back, cancel, …) or ``final``
        (anything else that submits: treated as the final submit, which needs authorisation)."""
        if AVOID_BUTTON.search(self.text) or self.type == "reset" or self.formnovalidate:
            return "avoid"
        if STEP_BUTTON.search(self.text):
            return "step"
        if self.type == "submit" and self.in_form:
            return "final"
        return "avoid"


@dataclass(frozen=True)
class PageView:
    """One reading of the page: its fields and buttons plus a little context text."""

    url: str
    title: str
    fields: tuple[FieldView, ...]
    buttons: tuple[ButtonView, ...]
    alerts: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    text: str = field(default="", repr=False)

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


def _view(d: dict) -> PageView:
    fields = []
    for f in d["fields"]:
        opts = tuple(Option(o["value"], o["label"]) for o in f["options"]) if f["options"] is not None else None
        v = f["value"]
        fields.append(FieldView(ref=f["ref"], kind=f["kind"], key=f["key"], label=f["label"], required=f["required"],
                                pattern=f["pattern"], hint=f["hint"], placeholder=f["placeholder"], options=opts,
                                value=tuple(v) if isinstance(v, list) else v, visible=f["visible"],
                                enabled=f["enabled"], error=f["error"], min=f["min"], max=f["max"],
                                autocomplete=f["autocomplete"]))
    buttons = tuple(ButtonView(b["ref"], b["text"], b["type"], b["in_form"], b["name"], b["formnovalidate"])
                    for b in d["buttons"])
    return PageView(d["url"], d["title"], tuple(fields), buttons, tuple(d["alerts"]), tuple(d["headings"]), d["text"])


async def perceive(page) -> PageView:
    """Read the page (one ``page.evaluate``; ~10 ms) into a :class:`PageView`."""
    return _view(await page.evaluate(_PERCEIVE_JS))


def match_option(options: tuple[Option, ...], wanted: str) -> Option | None:
    """The option whose value or label is ``wanted`` (case and spacing ignored), else the only
    option whose label starts with or contains it; None when none or several match."""
    w = _fold(wanted)
    if not w:
        return None
    for o in options:
        if w in (_fold(o.value), _fold(o.label)):
            return o
    for test in (lambda o: _fold(o.label).startswith(w), lambda o: w in _fold(o.label) or _fold(o.label) in w):
        hits = [o for o in options if test(o)]
        if len(hits) == 1:
            return hits[0]
    return None


def _fold(s: str) -> str:
    return re.sub(r"[\W_]+", " ", str(s)).strip().casefold()


class FillProblem(Exception):
    """A value could not be put into a field: ``kind`` is ``format`` (the value does not fit
    the field: ``expected`` says what would) or ``error`` (the field is gone, disabled, …)."""

    def __init__(self, kind: str, reason: str, expected: str = ""):
        super().__init__(reason)
        self.kind, self.reason, self.expected = kind, reason, expected


async def fill(page, f: FieldView, value: str | bool | tuple[str, ...], timeout_ms: int) -> tuple[object, str]:
    """Put ``value`` into field ``f`` and read the field back from the page.

    ``value``: str for text-like, date (``YYYY-MM-DD``), select and radio (an option's value
    or label); bool for a single checkbox; tuple of str for multi-select / checkbox groups.

    Returns:
        ``(value_read_back, validation_message)`` — the message is the browser's
        constraint-validation text for a non-empty invalid value, else ''.

    Raises:
        FillProblem: ``format`` when no option matches or the value has the wrong shape;
            ``error`` when the field vanished or Playwright failed (its message included).
    """
    from playwright.async_api import Error as PlaywrightError

    loc = page.locator(f'[data-ap-ref="{f.ref}"]')
    try:
        if f.kind == "checkbox":
            if not isinstance(value, bool):
                raise FillProblem("format", f"expected yes or no, got {value!r}", "yes or no")
            await loc.set_checked(value, timeout=timeout_ms)
        elif f.kind in ("radio", "select"):
            opt = match_option(f.options or (), str(value))
            if opt is None:
                choices = ", ".join(o.label for o in f.options or ())
                raise FillProblem("format", f"{value!r} is not one of the choices", f"one of: {choices}")
            if f.kind == "select":
                await loc.select_option(value=opt.value, timeout=timeout_ms)
            else:
                idx = f.options.index(opt)
                await page.locator(f'[data-ap-ref="{f.ref}.{idx}"]').check(timeout=timeout_ms)
        elif f.kind in ("multiselect", "checkboxes"):
            wanted = [value] if isinstance(value, str) else list(value)
            opts = [match_option(f.options or (), w) for w in wanted]
            if None in opts:
                choices = ", ".join(o.label for o in f.options or ())
                raise FillProblem("format", f"{value!r} are not all among the choices", f"some of: {choices}")
            if f.kind == "multiselect":
                await loc.select_option(value=[o.value for o in opts], timeout=timeout_ms)
            else:
                for i, o in enumerate(f.options or ()):
                    await page.locator(f'[data-ap-ref="{f.ref}.{i}"]').set_checked(o in opts, timeout=timeout_ms)
        elif f.kind in TEXT_KINDS:
            if not isinstance(value, str):
                raise FillProblem("format", f"expected text, got {value!r}", "text")
            await loc.fill(value, timeout=timeout_ms)
            await loc.dispatch_event("change", timeout=timeout_ms)
            await loc.evaluate("e => e.blur()", timeout=timeout_ms)
        else:
            raise FillProblem("error", f"cannot fill a field of kind {f.kind!r}")
        got = await page.evaluate(_READ_JS, f.ref)
    except PlaywrightError as e:
        raise FillProblem("error", f"the page did not take the value: {str(e).splitlines()[0]}") from None
    if got is None:
        raise FillProblem("error", "the field is no longer on the page")
    v = got["value"]
    return (tuple(v) if isinstance(v, list) else v), got["msg"]
