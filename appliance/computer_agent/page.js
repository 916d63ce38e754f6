// The computer agent's reader of one frame: the form as a person sees it, in one call.
// Evaluated by Playwright as `(arg) => …` (appliance/computer_agent/page.py); `arg.op` picks the entry:
//   perceive {prefix}          → {url, title, fields, buttons, alerts, headings, captcha, document, text}
//   read {ref, kind, widget}    → {value, msg} of one field, or null when it is gone
//   options {ref}               → the visible options of a field's list, tagged data-ap-opt="N" to click
//   calendar {ref}              → the open date picker: {month, year, days, prev, next, year_select}, tagged data-ap-cal
//   clock {ref}                 → the open time popup: {open, ampm}, its hour/minute boxes tagged data-ap-clock
//   search {ref}                → a replaced select's widget: {expanded, search}, its search box tagged data-ap-search
//   highlighted {ref}           → the option that widget's keyboard cursor is on: {label, text} or null
// Nothing here knows a site: every rule reads roles, labels, styles and layout.
// Widgets it names besides the native ones: listbox, searchable_select (a <select> a widget replaced),
// autocomplete, date_picker, time_picker, date_parts, masked,
// segmented (one value typed over consecutive short boxes: a one-time code, a sort code), aria_radio,
// switch, spinbutton, contenteditable.
(arg) => {
  const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
  const SKIP_TYPES = new Set(["hidden", "submit", "button", "reset", "image", "file"]);
  const CONTROL = "input:not([type=hidden]),select,textarea,[role=combobox],[role=listbox],[role=radiogroup]," +
                  "[role=switch],[role=spinbutton],[role=textbox],[role=checkbox],[role=radio],[contenteditable]";
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  // One element this script cannot read (a page's odd markup, a widget mid-render) is skipped and
  // reported in `skipped`; it never ends the reading of the rest of the page.
  const skipped = [];
  const safe = (what, fn, fallback) => {
    try { return fn(); } catch (e) {
      skipped.push({what: String(what).slice(0, 80), error: String((e && e.message) || e).slice(0, 200)});
      return fallback;
    }
  };
  const nameOf = (el) => el ? `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.name ? "[name=" + el.name + "]" : ""}` : "?";

  // ---- the composed tree: the document and every open shadow root, in document order ----
  const all = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      all.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  const tagged = (attr, value) => all.filter((el) => el.getAttribute(attr) === value);

  // ---- what a person sees ----
  const styleHidden = (el) => {
    const st = getComputedStyle(el);
    return st.display === "none" || st.visibility === "hidden" || st.visibility === "collapse";
  };
  const clipped = (el) => {  // the screen-reader-only pattern, fully transparent, or off the page
    const r = el.getBoundingClientRect();
    if (r.width <= 1 && r.height <= 1) return true;
    if (r.right + scrollX <= 0 || r.bottom + scrollY <= 0) return true;
    const st = getComputedStyle(el);
    return st.clip === "rect(0px, 0px, 0px, 0px)" || st.clipPath === "inset(50%)" || parseFloat(st.opacity) === 0;
  };
  const seen = (el) => !!el && el.isConnected && el.getClientRects().length > 0 && !styleHidden(el) && !clipped(el);
  const visText = (node) => {  // the text a person can read in node (controls and hidden parts left out)
    let out = "";
    for (const c of node.childNodes) {
      if (c.nodeType === 3) { out += c.data; continue; }
      if (c.nodeType !== 1 || c.matches("input,select,textarea,script,style,template,[role=listbox]")) continue;
      if (getComputedStyle(c).display !== "contents" && !seen(c)) continue;
      out += " " + visText(c) + " ";
    }
    return clean(out);
  };
  const anyText = (el) => {  // all of el's text, hidden or not, without its controls
    const copy = el.cloneNode(true);
    copy.querySelectorAll("input,select,textarea").forEach((n) => n.remove());
    return clean(copy.textContent);
  };
  const byIds = (el, attr) => {
    const root = el.getRootNode();
    return (el.getAttribute(attr) || "").split(/\s+/).filter(Boolean)
      .map((id) => (root.getElementById ? root.getElementById(id) : document.getElementById(id))).filter(Boolean);
  };
  const roleOf = (el) => (el.getAttribute("role") || "").trim().split(/\s+/)[0];
  const native = (el) => ["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName);
  const controlish = (el) => el.matches(CONTROL) || !!el.querySelector(CONTROL);

  // Visible text just before el (or before one of its first few ancestors), up to another control.
  const nearText = (el) => {
    let node = el;
    for (let depth = 0; depth < 4 && node && node !== document.body; depth++) {
      for (let s = node.previousSibling; s; s = s.previousSibling) {
        if (s.nodeType === 3) {
          const t = clean(s.data);
          if (t) return t.length <= 80 ? t : "";
          continue;
        }
        if (s.nodeType !== 1 || ["SCRIPT", "STYLE", "TEMPLATE"].includes(s.tagName)) continue;
        if (controlish(s)) return "";
        const t = visText(s);
        if (t) return t.length <= 80 ? t : "";
      }
      node = node.parentNode instanceof ShadowRoot ? node.parentNode.host : node.parentNode;
    }
    return "";
  };
  const labelOf = (el) => {
    for (const l of el.labels || []) {
      const t = visText(l) || anyText(l);
      if (t) return t;
    }
    const lb = byIds(el, "aria-labelledby").filter((n) => n !== el && !n.contains(el))
      .map((n) => visText(n) || anyText(n)).join(" ");
    if (clean(lb)) return clean(lb);
    return clean(el.getAttribute("aria-label")) || nearText(el) || clean(el.getAttribute("placeholder")) ||
      clean(el.getAttribute("title"));
  };
  const groupLabel = (box, first) => {
    const legend = box && box.tagName === "FIELDSET" ? [...box.children].find((c) => c.tagName === "LEGEND") : null;
    if (legend) return visText(legend) || anyText(legend);
    if (box) {
      const lb = byIds(box, "aria-labelledby").map((n) => visText(n) || anyText(n)).join(" ");
      if (clean(lb) || box.getAttribute("aria-label")) return clean(lb) || clean(box.getAttribute("aria-label"));
    }
    return nearText(box && box.tagName !== "FIELDSET" ? box : first);
  };

  // ---- lists: the options of a select-like widget ----
  const optionValue = (o) => o.dataset.value || o.getAttribute("value") || o.id || anyText(o);
  const listboxOf = (el) => {
    if (roleOf(el) === "listbox") return el;
    const ref = [...byIds(el, "aria-controls"), ...byIds(el, "aria-owns")];
    const lb = ref.map((n) => (roleOf(n) === "listbox" ? n : n.querySelector("[role=listbox]"))).find(Boolean);
    if (lb) return lb;
    for (let s = el.nextElementSibling; s; s = s.nextElementSibling) if (roleOf(s) === "listbox") return s;
    return null;
  };
  const optionsIn = (lb) => [...lb.querySelectorAll("[role=option]")].filter((o) => o.getAttribute("aria-disabled") !== "true");

  // ---- a native <select> a widget replaced (select2, choices.js, tom-select, the USWDS combo box …) ----
  // The select is hidden or clipped, and a visible combobox stands in for it: an ancestor of the select
  // (choices.js wraps it) or a following sibling, or in one (select2's container, tom-select's wrapper,
  // the USWDS input). {opener: what a person clicks, box: the widget's own markup} or null.
  const COMBO = "[role=combobox],[aria-haspopup=listbox],[aria-haspopup=true]";
  const FIELDISH = "select,input[name],textarea[name]";
  // the combobox in n a person clicks; one the widget hides while it holds a choice (tom-select's input
  // once an item is picked and the focus has left) is clicked by the visible box round it
  const comboIn = (n) => {
    if (n.matches(COMBO) && seen(n)) return n;
    const combos = [...n.querySelectorAll(COMBO)];
    const shown = combos.find(seen);
    if (shown) return shown;
    for (const c of combos) for (let p = c.parentElement; p && n.contains(p); p = p.parentElement) if (seen(p)) return p;
    return null;
  };
  const replacement = (sel) => {
    if (sel.tagName !== "SELECT" || sel.multiple || seen(sel)) return null;
    let node = sel;
    for (let up = 0; up < 3 && node && node.parentElement && node !== document.body; up++) {
      if (node !== sel && node.matches(COMBO) && seen(node)) return {opener: node, box: node};
      let k = 0;
      for (let s = node.nextElementSibling; s && k < 3; s = s.nextElementSibling, k++) {
        if (s.matches(FIELDISH) || s.querySelector(FIELDISH) || s.tagName === "LABEL") break;  // another field
        const c = comboIn(s);
        if (c) return {opener: c, box: s === c ? node.parentElement : s};
      }
      node = node.parentElement;
    }
    return null;
  };
  const deepActive = () => {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  };
  // the lists a replaced select's widget shows: tied to its opener or its search box by ARIA, or in its box
  const widgetLists = (w) => {
    const a = deepActive();
    const lbs = [listboxOf(w.opener), a && a !== document.body ? listboxOf(a) : null,
                 ...w.box.querySelectorAll("[role=listbox]")].filter(Boolean);
    return [...new Set(lbs)];
  };
  // a suggestion list not tied to its input by ARIA (jQuery UI's autocomplete menu, a site's own <ul>): a
  // visible list floating over the page (absolute or fixed), not inside the field's form, its items
  // the choices; the first such list after the field in the document, else the last one
  const suggestionItems = (el) => {
    const lists = all.filter((l) => l.matches("ul,ol,[role=listbox],[role=menu]") && seen(l) && !l.contains(el) &&
      !l.closest("nav,header,footer") &&
      ["absolute", "fixed"].includes(getComputedStyle(l).position));
    const items = (l) => [...l.children].map((c) => (c.matches("li,[role=option],[role=menuitem]") ? c : null))
      .filter((c) => c && seen(c) && anyText(c) && !c.matches("[aria-disabled=true],.ui-state-disabled"));
    const withItems = lists.filter((l) => items(l).length);
    const after = withItems.find((l) => el.compareDocumentPosition(l) & Node.DOCUMENT_POSITION_FOLLOWING);
    const pick = after || withItems[withItems.length - 1];
    return pick ? items(pick) : [];
  };
  const openerOf = (ref) => all.find((n) => n.getAttribute("data-ap-widget") === ref) || null;
  // controls inside a calendar or time popup (jQuery UI's datepicker, flatpickr, a site's own calendar):
  // they belong to the date field that opened it, never fields of their own. A popup: absolutely placed
  // (or a dialog) and either named a date or time picker (outside any form) or holding a month of days.
  const POPUP = /(^|[\s_-])(ui-datepicker|datepicker|date-picker|flatpickr-calendar|calendar|timepicker|time-picker)([\s_-]|$)/i;
  const DAY_CELL = "button,a,td,[role=gridcell],[class*=day]";
  const daysIn = new Map();  // container → whether it holds a month of day cells (each asked once)
  const monthOfDays = (c) => {
    if (!daysIn.has(c)) daysIn.set(c, [...c.querySelectorAll(DAY_CELL)]
      .filter((d) => !d.querySelector(DAY_CELL) && /^\d{1,2}$/.test(clean(d.textContent))).length >= 28);
    return daysIn.get(c);
  };
  const inPopup = (el) => {
    if (el.getAttribute("name")) return false;
    for (let c = el.parentElement, i = 0; c && c !== document.body && i < 6; c = c.parentElement, i++) {
      const cls = typeof c.className === "string" ? c.className : "";
      const floating = ["absolute", "fixed"].includes(getComputedStyle(c).position) || roleOf(c) === "dialog";
      if (floating && (POPUP.test(cls) || POPUP.test(c.id)) && !c.closest("form")) return true;
      if (monthOfDays(c)) return floating;
    }
    return false;
  };

  // ---- dates ----
  const monthOf = (text) => MONTHS.indexOf(clean(text).toLowerCase().slice(0, 3)) + 1;
  const partOf = (el) => {  // "day" | "month" | "year" | "" for one control of a split date
    if (el.tagName === "SELECT") {
      const opts = [...el.options].filter((o) => o.value !== "");
      const nums = opts.map((o) => parseInt(o.value, 10));
      if (opts.length === 12 && opts.every((o) => monthOf(o.text) > 0)) return "month";
      if (opts.length > 1 && opts.every((o) => /^\d{4}$/.test(o.value.trim()))) return "year";
      if (opts.length >= 28 && opts.length <= 31 && nums.every((n, i) => n === i + 1)) return "day";
      if (opts.length === 12 && nums.every((n, i) => n === i + 1)) return "month";
    }
    const hay = [el.name, el.id, el.getAttribute("autocomplete"), el.getAttribute("placeholder"), labelOf(el)]
      .join(" ").toLowerCase();
    for (const [part, re] of [["day", /(^|[^a-z])(day|dd)([^a-z]|$)/], ["month", /(^|[^a-z])(month|mm)([^a-z]|$)/],
                              ["year", /(^|[^a-z])(year|yyyy|yy)([^a-z]|$)/]])
      if (re.test(hay)) return part;
    return "";
  };
  const partValue = (el, part) => {
    if (el.tagName === "SELECT" && el.selectedIndex >= 0 && el.value !== "") {
      const o = el.options[el.selectedIndex], n = parseInt(o.value, 10);
      if (part === "month") return n >= 1 && n <= 12 ? n : monthOf(o.text);
      return n || parseInt(o.text, 10) || 0;
    }
    return parseInt(el.value, 10) || 0;
  };
  const pad = (n, w) => String(n).padStart(w, "0");
  const pickerLike = (el) => el.readOnly && !el.disabled &&
    (/^(dialog|grid|true)$/.test(el.getAttribute("aria-haspopup") || "") ||
     /date|calendar|(^|[^a-z])(dd|yyyy)([^a-z]|$)/i.test([el.name, el.id, el.className, el.placeholder, labelOf(el)].join(" ")));
  // a suggestion library's own mark on its input, where it sets no ARIA (jQuery UI's autocomplete)
  const AUTOCOMPLETE_CLASS = /(^|\s)ui-autocomplete-input(\s|$)/;
  // a read-only time input a popup of hour and minute boxes sets (flatpickr's noCalendar picker)
  const clockLike = (el) => el.readOnly && !el.disabled &&
    /time|hh:mm|(^|[^a-z])(hh|hours?)([^a-z]|$)/i.test([el.name, el.id, el.placeholder, labelOf(el)].join(" "));
  const maskLike = (el) => /[_#]{2,}|9{3,}|0{3,}/.test(el.getAttribute("placeholder") || "") ||
    [...el.attributes].some((a) => /mask/i.test(a.name));

  // ---- one field's value ----
  const valueOf = (kind, widget, members) => {
    const el = members[0];
    if (widget === "date_parts") {
      const [d, m, y] = ["day", "month", "year"].map((p, i) => partValue(members[i], p));
      return d && m && y >= 1000 ? `${y}-${pad(m, 2)}-${pad(d, 2)}` : "";
    }
    if (widget === "segmented") return members.map((m) => m.value).join("");
    if (widget === "listbox") {
      const lb = listboxOf(el), opts = lb ? optionsIn(lb) : [];
      const shown = native(el) ? clean(el.value) : visText(el);
      const hit = opts.find((o) => anyText(o) === shown) || opts.find((o) => o.getAttribute("aria-selected") === "true");
      return hit ? optionValue(hit) : (opts.length ? "" : shown);
    }
    if (widget === "aria_radio") {
      const on = members.find((m) => m.getAttribute("aria-checked") === "true");
      return on ? optionValue(on) : "";
    }
    if (widget === "switch") return el.getAttribute("aria-checked") === "true";
    if (widget === "spinbutton") return el.getAttribute("aria-valuenow") || "";
    if (widget === "contenteditable") return clean(el.innerText);
    if (kind === "select" || kind === "multiselect")
      return kind === "select" ? el.value : [...el.selectedOptions].map((o) => o.value);
    if (kind === "radio") { const on = members.find((m) => m.checked); return on ? on.value : ""; }
    if (kind === "checkboxes") return members.filter((m) => m.checked).map((m) => m.value);
    if (kind === "checkbox") return el.checked;
    return el.value;
  };
  const browserMsg = (members) => members.filter((m) => m.willValidate && m.value && !m.validity.valid &&
                                                         !m.validity.valueMissing).map((m) => m.validationMessage);

  // ---- entry: read one field back ----
  const membersOf = (ref) => all.filter((el) => {
    const r = el.getAttribute("data-ap-ref");
    return r === ref || (r && r.startsWith(ref + ".") && /^\d+$/.test(r.slice(ref.length + 1)));
  }).sort((a, b) => (+a.getAttribute("data-ap-ref").split(".").pop() || 0) - (+b.getAttribute("data-ap-ref").split(".").pop() || 0));
  if (arg.op === "read") {
    const members = membersOf(arg.ref);
    if (!members.length) return null;
    return {value: valueOf(arg.kind, arg.widget, members), msg: browserMsg(members).join(" ")};
  }

  // ---- entry: the visible options of a field's list ----
  if (arg.op === "options") {
    const [el] = membersOf(arg.ref);
    if (!el) return null;
    const w = openerOf(arg.ref) && replacement(el);  // a replaced select: its widget's lists
    const lb = w ? null : listboxOf(el);  // else: the list that appeared, not tied to the field by ARIA
    let opts = w ? widgetLists(w).flatMap(optionsIn) : (lb ? optionsIn(lb) : all.filter((o) => roleOf(o) === "option"));
    if (!w && !lb && !opts.some(seen)) opts = suggestionItems(el);
    opts = [...new Set(opts)].filter(seen);
    all.forEach((o) => o.removeAttribute("data-ap-opt"));
    return opts.map((o, i) => {
      o.setAttribute("data-ap-opt", String(i));
      return {value: optionValue(o), label: visText(o), text: anyText(o)};
    });
  }

  // ---- entry: a replaced select's widget: {expanded, search} (its search box, tagged data-ap-search) ----
  if (arg.op === "search") {
    const [el] = membersOf(arg.ref);
    const w = el && openerOf(arg.ref) && replacement(el);
    if (!w) return null;
    all.forEach((n) => n.removeAttribute("data-ap-search"));
    const expanded = [w.opener, deepActive()].some((n) => n && n.getAttribute("aria-expanded") === "true");
    const lists = widgetLists(w);
    const a = deepActive();
    const texty = (n) => n && ((n.tagName === "INPUT" && /^(text|search|)$/.test((n.type || "").toLowerCase()) &&
                                !n.readOnly && !n.disabled) || n.isContentEditable);
    const box = [a, ...w.box.querySelectorAll("input")].find((n) => texty(n) && seen(n) &&
      (n === w.opener || w.box.contains(n) || lists.includes(listboxOf(n))));
    if (box) box.setAttribute("data-ap-search", arg.ref);
    return {search: !!box, expanded};
  }

  // ---- entry: the option the open widget of a replaced select highlights (its keyboard cursor) ----
  if (arg.op === "highlighted") {
    const [el] = membersOf(arg.ref);
    const w = el && openerOf(arg.ref) && replacement(el);
    if (!w) return null;
    const a = deepActive();
    const cur = [a, w.opener].map((n) => n && byIds(n, "aria-activedescendant")[0]).find(Boolean);
    return cur && seen(cur) ? {label: visText(cur), text: anyText(cur)} : null;
  }

  // ---- entry: the open calendar near a date field ----
  if (arg.op === "calendar") {
    const [input] = membersOf(arg.ref);
    if (!input) return null;
    const dayText = (c) => { const t = visText(c); return /^\d{1,2}$/.test(t) ? +t : 0; };
    const boxes = all.filter((b) => b.matches("[role=dialog],[role=grid],[role=application],table,[class*=calendar]," +
                                              "[class*=datepicker],[class*=picker]") && seen(b));
    const CELL = "button,a,td,[role=gridcell],[class*=day]";  // flatpickr's days are spans
    const box = boxes.filter((b) => b.querySelectorAll(CELL).length >= 28 &&
                                    [...b.querySelectorAll(CELL)].filter(dayText).length >= 28)
      .sort((a, b) => b.querySelectorAll("*").length - a.querySelectorAll("*").length)[0];
    if (!box) return {open: false};
    all.forEach((n) => n.removeAttribute("data-ap-cal"));
    const outside = /outside|other|adjacent|prev-?month|next-?month|not-current|muted/i;
    const days = [];
    for (const c of box.querySelectorAll(CELL)) {
      const n = dayText(c);
      if ([...c.querySelectorAll(CELL)].some((d) => dayText(d) === n)) continue;  // its button is the day
      if (!n || outside.test(c.className + " " + (c.parentElement ? c.parentElement.className : ""))) continue;
      c.setAttribute("data-ap-cal", "d" + n);
      days.push({n, disabled: c.disabled || c.getAttribute("aria-disabled") === "true" || /disabled/i.test(c.className)});
    }
    let month = 0, year = 0, yearSelect = false;
    for (const s of box.querySelectorAll("select")) {
      const texts = [...s.options].map((o) => o.text);
      if (texts.length && texts.every((t) => /^\d{4}$/.test(t.trim()))) {
        s.setAttribute("data-ap-cal", "year");
        yearSelect = true;
        year = +s.options[s.selectedIndex].text;
      } else if (texts.filter((t) => monthOf(t)).length >= 12) {
        s.setAttribute("data-ap-cal", "month");
        month = monthOf(s.options[s.selectedIndex].text);
      } else if (texts.length && texts.every((t) => monthOf(t)) && s.selectedIndex >= 0) {
        month = monthOf(s.options[s.selectedIndex].text);  // only the months the picker allows (flatpickr)
      }
    }
    for (const i of box.querySelectorAll("input")) {  // a year box (flatpickr's "cur-year" number input)
      if (!year && /^\d{4}$/.test(i.value.trim()) && (i.type === "number" || /year/i.test(i.className + " " + i.getAttribute("aria-label"))))
        year = +i.value.trim();
    }
    for (const h of box.querySelectorAll("*")) {  // the caption "June 2027"
      if (month && year) break;
      if (h.matches("button,a,select,td,th,[role=gridcell]") || h.closest("table,[role=grid]") && h.closest("tbody")) continue;
      const m = /([A-Za-z]{3,})\.?\s+(\d{4})/.exec(visText(h));
      if (m && monthOf(m[1]) && visText(h).length <= 40) { month = month || monthOf(m[1]); year = year || +m[2]; }
    }
    const nav = [...box.querySelectorAll("button,a,[role=button],[class*=prev],[class*=next]")]
      .filter((b) => !b.hasAttribute("data-ap-cal") && !dayText(b) && !b.querySelector("[data-ap-cal]") && seen(b));
    const label = (b) => [b.getAttribute("aria-label"), b.getAttribute("title"), visText(b),
                          b.matches("button,a,[role=button]") ? "" : b.getAttribute("class")].join(" ");
    const prev = nav.find((b) => /prev|previous|back|earlier|‹|«|←|</i.test(label(b)));
    const next = nav.find((b) => /next|forward|later|›|»|→|>/i.test(label(b)));
    if (prev) prev.setAttribute("data-ap-cal", "prev");
    if (next) next.setAttribute("data-ap-cal", "next");
    return {open: true, month, year, days, prev: !!prev, next: !!next, year_select: yearSelect};
  }

  // ---- entry: the open time popup of a time field: its hour and minute boxes (and AM/PM), tagged data-ap-clock ----
  if (arg.op === "clock") {
    const [input] = membersOf(arg.ref);
    if (!input) return null;
    all.forEach((n) => n.removeAttribute("data-ap-clock"));
    const words = (n) => [n.getAttribute("class"), n.getAttribute("aria-label"), n.getAttribute("name"),
                          n.getAttribute("placeholder"), n.getAttribute("title")].join(" ");
    const boxes = all.filter((n) => n.tagName === "INPUT" && n !== input && !n.hasAttribute("data-ap-ref") && seen(n));
    const hour = boxes.find((n) => /hour|(^|[^a-z])hh([^a-z]|$)/i.test(words(n)));
    const minute = boxes.find((n) => /minute|(^|[^a-z])(mm|min)([^a-z]|$)/i.test(words(n)));
    if (!hour || !minute) return {open: false};
    hour.setAttribute("data-ap-clock", "hour");
    minute.setAttribute("data-ap-clock", "minute");
    const ampm = all.find((n) => n !== input && /am-?pm|meridi/i.test(words(n)) && seen(n) && /^(am|pm)$/i.test(visText(n) || n.value || ""));
    if (ampm) ampm.setAttribute("data-ap-clock", "ampm");
    return {open: true, ampm: ampm ? (visText(ampm) || ampm.value).toUpperCase() : ""};
  }

  // ---- entry: perceive ----
  const prefix = arg.prefix || "";
  const candidates = all.filter((el) => {
    if (native(el)) return !SKIP_TYPES.has((el.type || "").toLowerCase());
    const role = roleOf(el);
    if (["combobox", "listbox", "radiogroup", "switch", "checkbox", "spinbutton", "textbox"].includes(role)) return true;
    if (el.matches("button,[role=button]") && el.getAttribute("aria-haspopup") === "listbox") return true;
    return el.isContentEditable && el.hasAttribute("contenteditable") && !(el.parentElement && el.parentElement.isContentEditable);
  });
  const owned = new Set();  // listboxes that belong to a trigger
  for (const el of candidates) if (roleOf(el) !== "listbox" && (roleOf(el) === "combobox" || el.getAttribute("aria-haspopup") === "listbox")) {
    const lb = listboxOf(el);
    if (lb) owned.add(lb);
  }
  const fields = [], used = new Set(), groups = new Set();
  // a replaced select is one field (the select's name, label and options); its widget's own controls
  // (the combobox, its search box, its lists, select2's rendered text) are none; nor are a popup
  // calendar's month and year lists or a time popup's hour and minute boxes
  const replaced = new Map();
  for (const el of candidates) safe(nameOf(el), () => {
    const w = el.tagName === "SELECT" ? replacement(el) : null;
    if (!w) return;
    replaced.set(el, w);
    const lists = [listboxOf(w.opener)].filter(Boolean);
    for (const c of candidates) if (c !== el && !c.getAttribute("name") &&
        (w.box.contains(c) || c === w.opener || lists.includes(c) || lists.includes(listboxOf(c)))) used.add(c);
  });
  for (const el of candidates) safe(nameOf(el), () => { if (!replaced.has(el) && inPopup(el)) used.add(el); });
  // split dates: day, month and year controls alone in one box
  for (const el of candidates) safe(nameOf(el), () => {
    if (used.has(el) || !native(el) || !["SELECT", "INPUT"].includes(el.tagName) || !partOf(el)) return;
    let box = el.closest("fieldset,[role=group]");
    for (let up = el.parentElement, i = 0; !box && up && i < 3; up = up.parentElement, i++)
      if (candidates.filter((c) => up.contains(c)).length >= 3) box = up;
    if (!box) return;
    const inside = candidates.filter((c) => box.contains(c));
    const parts = inside.map(partOf);
    if (inside.length !== 3 || new Set(parts).size !== 3 || parts.includes("")) return;
    const members = ["day", "month", "year"].map((p) => inside[parts.indexOf(p)]);
    const label = groupLabel(box, members[0]);
    members.forEach((m) => used.add(m));
    fields.push({el: members[0], members, kind: "date", widget: "date_parts", label, box});
  });
  // segmented: one value typed over consecutive short boxes (maxlength 1–4: a one-time code's digits,
  // a sort code's pairs), next to each other in the candidates (no other control between, nothing a
  // person reads as words between two boxes: "-", "/", "(" may be) and alone in their common box; at
  // most one of them has a visible label of its own (two short fields each with its own label, like
  // "House number" and "Flat", stay two fields), and none is named as a part of a time or a date
  // (flatpickr's hour and minute boxes; split dates are date_parts). Label: the group's (legend,
  // aria-labelledby), else the first box's visible <label>, else the text before the boxes.
  const TIME_PART = /(^|[^a-z])(hours?|minutes?|seconds?|hh|mm|ss|am|pm|day|month|year|dd|yy|yyyy)([^a-z]|$)/;
  const timePart = (el) => TIME_PART.test([el.name, el.id, el.getAttribute("class"), el.getAttribute("placeholder"),
                                           el.getAttribute("aria-label")].join(" ").toLowerCase());
  const wordsBetween = (a, b) => {  // whether a person reads a word (letters, digits) between a and b
    if (a.getRootNode() !== b.getRootNode()) return true;
    const r = document.createRange();
    r.setStartAfter(a);
    r.setEndBefore(b);
    const w = document.createTreeWalker(r.commonAncestorContainer, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode())
      if (r.intersectsNode(n) && /[\p{L}\p{N}]/u.test(n.data) && n.parentElement && seen(n.parentElement)) return true;
    return false;
  };
  const segLike = (el) => el.tagName === "INPUT" && !used.has(el) && !owned.has(el) && !el.readOnly &&
    ["text", "tel", "number", "password"].includes((el.type || "").toLowerCase()) &&
    el.maxLength >= 1 && el.maxLength <= 4 && !["combobox", "spinbutton"].includes(roleOf(el));
  for (let i = 0; i < candidates.length; i++) safe(nameOf(candidates[i]), () => {
    const run = [];
    for (let j = i; j < candidates.length && segLike(candidates[j]) &&
                    (j === i || !wordsBetween(candidates[j - 1], candidates[j])); j++) run.push(candidates[j]);
    if (run.length < 2) return;
    i += run.length - 1;  // a run is looked at once, whatever comes of it
    let common = run[0].parentElement;
    while (common && !run.every((m) => common.contains(m))) common = common.parentElement;
    if (!common || candidates.some((c) => common.contains(c) && !run.includes(c))) return;
    if (run.filter((m) => [...(m.labels || [])].some((l) => seen(l) && visText(l))).length > 1 || run.some(timePart)) return;
    const group = run[0].closest("fieldset,[role=group]");
    const own = group && !candidates.some((c) => group.contains(c) && !run.includes(c)) ? group : null;
    const label = (own && groupLabel(own, run[0])) ||
      [...(run[0].labels || [])].map((l) => seen(l) && visText(l)).find(Boolean) || nearText(common) || labelOf(run[0]);
    run.forEach((m) => used.add(m));
    fields.push({el: run[0], members: run, kind: "text", widget: "segmented", label, box: own || common});
  });
  for (const el of candidates) safe(nameOf(el), () => {
    if (used.has(el) || owned.has(el)) return;
    const role = roleOf(el);
    if (native(el)) {
      const t = (el.type || el.tagName).toLowerCase();
      if ((t === "radio" || t === "checkbox") && el.name) {
        const same = candidates.filter((x) => x.type === el.type && x.name === el.name && x.form === el.form &&
                                               x.getRootNode() === el.getRootNode());
        if (t === "radio" || same.length > 1) {
          const gk = t + ":" + el.name + ":" + (el.form ? el.form.id : "");
          if (groups.has(gk)) return;
          groups.add(gk);
          same.forEach((m) => used.add(m));
          const box = el.closest("fieldset,[role=radiogroup],[role=group]");
          fields.push({el, members: same, kind: t === "radio" ? "radio" : "checkboxes", widget: "native",
                       label: groupLabel(box, el) || el.name});
          return;
        }
      }
      let kind = t === "select-one" ? "select" : (t === "select-multiple" ? "multiselect" : t);
      let widget = "native";
      const w = replaced.get(el);
      if (w) {
        const own = [...(el.labels || [])].map((l) => visText(l) || anyText(l)).find(Boolean);
        used.add(el);
        fields.push({el, members: [el], kind, widget: "searchable_select", opener: w.opener,
                     label: own || labelOf(w.opener) || labelOf(el)});
        return;
      }
      if (t === "text" || t === "search" || t === "tel" || t === "email" || t === "url") {
        if (el.readOnly && (role === "combobox" || el.getAttribute("aria-haspopup") === "listbox") && listboxOf(el)) {
          widget = "listbox";
          kind = "select";
        } else if (t === "text" && pickerLike(el)) {
          widget = "date_picker";
          kind = "date";
        } else if (t === "text" && clockLike(el)) {
          widget = "time_picker";
          kind = "time";
        } else if (!el.readOnly && (role === "combobox" || /^(list|both)$/.test(el.getAttribute("aria-autocomplete") || "") ||
                                    AUTOCOMPLETE_CLASS.test(el.getAttribute("class") || ""))) {
          widget = "autocomplete";
        } else if (maskLike(el)) {
          widget = "masked";
        }
      }
      const label = labelOf(el);
      used.add(el);
      fields.push({el, members: [el], kind, widget, label});
      return;
    }
    if (role === "radiogroup") {
      const members = [...el.querySelectorAll("[role=radio]")];
      if (!members.length) return;  // a group with no choices yet: nothing to operate
      members.forEach((m) => used.add(m));
      fields.push({el, members, kind: "radio", widget: "aria_radio", label: groupLabel(el, members[0])});
    } else if (role === "switch" || role === "checkbox") {
      fields.push({el, members: [el], kind: "checkbox", widget: "switch", label: labelOf(el) || visText(el)});
    } else if (role === "spinbutton") {
      fields.push({el, members: [el], kind: "number", widget: "spinbutton", label: labelOf(el)});
    } else if (role === "combobox" || role === "listbox" || el.getAttribute("aria-haspopup") === "listbox") {
      const lb = listboxOf(el);
      const multi = lb && lb.getAttribute("aria-multiselectable") === "true";
      fields.push({el, members: [el], kind: lb && optionsIn(lb).length ? (multi ? "multiselect" : "select") : "text",
                   widget: "listbox", label: labelOf(el)});
    } else {
      fields.push({el, members: [el], kind: "textarea", widget: "contenteditable", label: labelOf(el)});
    }
    used.add(el);
  });
  fields.sort((a, b) => all.indexOf(a.el) - all.indexOf(b.el));

  // The same label on two fields (repeated blocks: passenger 1, passenger 2 …): each one is told apart
  // by its block's title (a fieldset's legend, a group's name, else the block's first heading), the block
  // being the largest box round the field that holds none of its namesakes. First, a field whose label
  // carries screen-reader-only words that its block's title shows too ("<span class=visually-hidden>
  // Passenger 2 </span>First name" in the block "Passenger 2") gets those words: "Passenger 2: First
  // name" (hidden words the title does not show stay out: an injection is not a label). Then any field
  // still sharing its label gets its block's title before it. A unique label never changes.
  const foldL = (t) => clean(t).toLowerCase();
  const namesakes = (f) => fields.filter((g) => g !== f && foldL(g.label) === foldL(f.label) && f.label);
  const blockTitle = (f, others) => {
    let block = null;
    for (let c = f.el.parentElement; c && c !== document.body && !others.some((o) => c.contains(o.el)); c = c.parentElement)
      block = c;
    if (!block) return "";
    for (let c = f.el.parentElement; c && block.contains(c); c = c.parentElement) {
      if (!c.matches("fieldset,[role=group],[role=region],section[aria-labelledby],section[aria-label]")) continue;
      const t = groupLabel(c, f.el);
      if (t && foldL(t) !== foldL(f.label)) return t;  // not the field's own group (a radio group's legend)
    }
    const head = [...block.querySelectorAll("h1,h2,h3,h4,h5,h6,legend,[role=heading]")]
      .find((h) => seen(h) && visText(h) && (h.compareDocumentPosition(f.el) & Node.DOCUMENT_POSITION_FOLLOWING));
    return head ? visText(head) : "";
  };
  const hiddenWords = (f) => {  // the words of f's label a person cannot see, when they come before or after the visible ones
    const src = [...(f.el.labels || [])].find((l) => visText(l)) ||
      byIds(f.el, "aria-labelledby").find((n) => visText(n));
    if (!src || f.members.length > 1) return "";
    const full = anyText(src), vis = visText(src);
    if (foldL(full) === foldL(vis)) return "";
    if (foldL(full).endsWith(foldL(vis))) return clean(full.slice(0, full.length - vis.length));
    if (foldL(full).startsWith(foldL(vis))) return clean(full.slice(vis.length));
    return "";
  };
  safe("repeated labels", () => {
    const dup = fields.filter((f) => namesakes(f).length);
    const titles = new Map(dup.map((f) => [f, blockTitle(f, namesakes(f))]));
    // a repeating group (FieldSpec.group, group_index): the words every namesake's block title shares
    // ("Passenger 1", "Passenger 2": "Passenger"; none: ""), and the field's place among its namesakes from 1
    for (const f of dup) {
      const items = [f, ...namesakes(f)].sort((a, b) => fields.indexOf(a) - fields.indexOf(b));
      const words = items.map((g) => foldL(titles.get(g) || "").split(/[^\p{L}]+/u).filter(Boolean));
      f.group = clean((titles.get(f) || "").split(/[^\p{L}]+/u).filter((w) => w && words.every((ws) => ws.includes(foldL(w)))).join(" "));
      f.groupIndex = items.indexOf(f) + 1;
    }
    for (const f of dup) {
      const words = hiddenWords(f).replace(/^\W+|\W+$/g, "");
      if (words && foldL(titles.get(f)).includes(foldL(words))) f.label = `${words}: ${f.label}`;
    }
    const still = fields.filter((g) => namesakes(g).length).map((g) => [g, namesakes(g)]);
    for (const [f, others] of still) {
      const t = titles.get(f) || blockTitle(f, others);
      if (t && others.some((o) => foldL(titles.get(o) || "") !== foldL(t)) && !foldL(f.label).startsWith(foldL(t)))
        f.label = `${t}: ${f.label}`;
    }
  });

  // stable refs: an element keeps its tag from one reading to the next
  const keep = new Set();
  const newRef = (letter) => prefix + letter + (window.__apSeq = (window.__apSeq || 0) + 1);
  const esc = prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const single = new RegExp("^" + esc + "f\\d+$"), member = new RegExp("^(" + esc + "f\\d+)\\.0$");
  for (const f of fields) {
    const grouped = f.members.length > 1 || ["radio", "checkboxes"].includes(f.kind) ||
      ["date_parts", "segmented"].includes(f.widget);
    const first = f.members[0].getAttribute("data-ap-ref") || "";
    if (!grouped) {
      f.ref = single.test(first) ? first : newRef("f");
    } else {
      const m = member.exec(first);
      f.ref = m && f.members.every((x, j) => x.getAttribute("data-ap-ref") === m[1] + "." + j) ? m[1] : newRef("f");
    }
    f.members.forEach((x, j) => {
      const r = grouped ? f.ref + "." + j : f.ref;
      x.setAttribute("data-ap-ref", r);
      keep.add(x);
    });
  }
  all.forEach((n) => n.removeAttribute("data-ap-widget"));
  for (const f of fields) if (f.opener) f.opener.setAttribute("data-ap-widget", f.ref);
  const fieldEls = new Set(fields.flatMap((f) => f.members).concat(fields.map((f) => f.el)));

  // problems and hints: tied by ARIA, or in the field's own box
  const isErr = (n) => /error|invalid|alert/i.test((typeof n.className === "string" ? n.className : "") + " " + n.id + " " + roleOf(n));
  const boxOf = (f) => {
    for (let c = f.el.parentElement; c && c !== document.body; c = c.parentElement) {
      if ([...fieldEls].some((x) => !f.members.includes(x) && x !== f.el && c.contains(x))) return null;
      if (c.matches("div,fieldset,li,p,section,td,tr,label")) return c;
    }
    return null;
  };
  const problems = (f) => {
    const out = browserMsg(f.members);
    const invalid = f.members.some((m) => m.getAttribute("aria-invalid") === "true");
    for (const m of f.members) for (const d of [...byIds(m, "aria-describedby"), ...byIds(m, "aria-errormessage")])
      if ((invalid || isErr(d)) && seen(d) && visText(d)) out.push(visText(d));
    const c = f.box || boxOf(f);
    if (c) c.querySelectorAll(".error,[class*=error],[class*=invalid],[role=alert]").forEach((n) => {
      if (seen(n) && visText(n)) out.push(visText(n));
    });
    return [...new Set(out)].join(" ");
  };
  const hintOf = (f) => {
    const out = [];
    for (const m of f.members) {
      for (const d of byIds(m, "aria-describedby")) if (!isErr(d) && visText(d)) out.push(visText(d));
      if (m.title) out.push(clean(m.title));
    }
    const c = f.box || boxOf(f);
    if (c) c.querySelectorAll("small,[class*=hint],[class*=help],[id*=hint],[id*=help]").forEach((n) => {
      if (!isErr(n) && seen(n) && visText(n)) out.push(visText(n));
    });
    const uniq = out.filter((t, i) => !out.some((u, j) => j !== i && u.length > t.length && u.includes(t)));
    return [...new Set(uniq)].join(". ");
  };
  // the part of the page a field is in (FieldSpec.section): its fieldset's legend or group's name (not
  // its own radio group's), else the last heading before it
  const heads = safe("headings", () => all.filter((n) => n.matches("h1,h2,h3,h4,legend,[role=heading]") && seen(n) && visText(n)), []);
  const sectionOf = (f) => safe("section", () => {
    for (let c = f.el.parentElement; c && c !== document.body; c = c.parentElement) {
      if (!c.matches("fieldset,[role=group],[role=region],section[aria-labelledby],section[aria-label]")) continue;
      const t = groupLabel(c, f.el);
      if (t && foldL(t) !== foldL(f.label)) return t;
    }
    const before = heads.filter((h) => h.compareDocumentPosition(f.el) & Node.DOCUMENT_POSITION_FOLLOWING);
    return before.length ? visText(before[before.length - 1]) : "";
  }, "");
  const keyCount = {};
  const out = fields.flatMap((f) => safe(nameOf(f.el), () => [readField(f)], []));
  function readField(f) {
    const el = f.el;
    let options = null;
    if (f.widget === "listbox") {
      const lb = listboxOf(el);
      options = lb && optionsIn(lb).length ? optionsIn(lb).map((o) => ({value: optionValue(o), label: anyText(o)})) : null;
    } else if (f.widget === "aria_radio") {
      options = f.members.map((m) => ({value: optionValue(m), label: visText(m) || anyText(m)}));
    } else if (f.kind === "select" || f.kind === "multiselect") {
      options = [...el.options].filter((o) => o.value !== "" && !o.disabled).map((o) => ({value: o.value, label: clean(o.label || o.text)}));
    } else if (f.kind === "radio" || f.kind === "checkboxes") {
      options = f.members.map((m) => ({value: m.value, label: labelOf(m) || m.value}));
    }
    // an input with no name of its own that stands for the hidden one just before it (flatpickr's altInput)
    const twin = el.previousElementSibling;
    const hiddenName = !el.name && !el.id && twin && twin.tagName === "INPUT" && twin.type === "hidden" ? twin.name : "";
    const base = f.widget === "date_parts" ? "" : (el.name || el.id || hiddenName || "");
    keyCount[base] = (keyCount[base] || 0) + 1;
    const aria = (name) => [f.el, ...f.members].some((m) => m.getAttribute(name) === "true");
    return {
      ref: f.ref, kind: f.kind, widget: f.widget, label: f.label,
      key: base && keyCount[base] > 1 ? base + "#" + keyCount[base] : base,
      required: f.members.some((m) => m.required) || aria("aria-required") ||
                !!(f.box && f.box.getAttribute("aria-required") === "true"),
      pattern: el.getAttribute("pattern"), hint: hintOf(f), placeholder: el.getAttribute("placeholder") || "",
      options, value: valueOf(f.kind, f.widget, f.members),
      visible: f.members.some((m) => seen(m) || [...(m.labels || [])].some(seen)) || !!(f.opener && seen(f.opener)),
      enabled: !f.members.every((m) => m.disabled || (m.readOnly && !["date_picker", "time_picker"].includes(f.widget)) ||
                                       m.getAttribute("aria-disabled") === "true" || m.getAttribute("aria-readonly") === "true"),
      error: problems(f), min: el.getAttribute("min") ?? el.getAttribute("aria-valuemin"),
      max: el.getAttribute("max") ?? el.getAttribute("aria-valuemax"),
      autocomplete: (el.getAttribute("autocomplete") || "").toLowerCase(),
      section: sectionOf(f), group: f.group || "", group_index: f.groupIndex || 0,
    };
  }
  // while a modal dialog is open (aria-modal, a <dialog> shown modal) a person can press only what is in it
  const modals = safe("modals", () => all.filter((n) => (n.getAttribute("aria-modal") === "true" ||
                                                          (n.tagName === "DIALOG" && n.matches(":modal"))) && seen(n)), []);
  const buttons = all.filter((b) => b.matches("button,input[type=submit],input[type=button],[role=button]") &&
                                    !fieldEls.has(b) && seen(b) && (!modals.length || modals.some((m) => m.contains(b))))
    .flatMap((b) => safe(nameOf(b), () => [readButton(b)], []));
  function readButton(b) {
    const old = b.getAttribute("data-ap-ref") || "";
    const ref = new RegExp("^" + esc + "b\\d+$").test(old) ? old : newRef("b");
    b.setAttribute("data-ap-ref", ref);
    keep.add(b);
    const type = (b.getAttribute("type") || (b.tagName === "BUTTON" ? "submit" : "")).toLowerCase();
    // what pressing it reveals, as the page declares it (ButtonView.role: an `opener`): aria-expanded
    // ("false": something shut it opens; "true": open, pressing shuts it), aria-haspopup ("dialog" …),
    // aria-controls (the ids it shows or hides), data-bs-toggle / data-toggle (Bootstrap: modal, collapse …)
    const attr = (n) => clean(b.getAttribute(n)).toLowerCase();
    return {ref, text: visText(b) || clean(b.value || b.getAttribute("aria-label") || ""), type, in_form: !!b.form,
            name: b.getAttribute("name") || "", formnovalidate: b.hasAttribute("formnovalidate"),
            expanded: attr("aria-expanded"), haspopup: attr("aria-haspopup"), controls: clean(b.getAttribute("aria-controls")),
            toggle: attr("data-bs-toggle") || attr("data-toggle")};
  }
  for (const el of all) if (el.hasAttribute("data-ap-ref") && !keep.has(el)) el.removeAttribute("data-ap-ref");
  const alerts = all.filter((n) => n.matches("[role=alert],.error-summary") && seen(n)).map(visText).filter(Boolean);
  const headings = all.filter((n) => n.matches("h1,h2,h3,legend") && seen(n)).map(visText).filter(Boolean);
  // a challenge a person must solve: a visible element named like one, or its usual words
  const CAPTCHA = /captcha|recaptcha|hcaptcha|turnstile/i;
  const captcha = all.some((n) => seen(n) && [n.id, n.getAttribute("class"), n.getAttribute("name"),
                                              n.getAttribute("src"), n.getAttribute("title")].some((a) => a && CAPTCHA.test(a))) ||
                  /\b(i'?m|i am) not a robot\b|\bverify (that )?you('| a)re (a )?human\b/i.test(document.body ? document.body.innerText : "");
  return {url: location.href, title: document.title, fields: out, buttons, alerts, headings, captcha, skipped,
          lang: (document.documentElement.getAttribute("lang") || "").trim(),
          document: String(performance.timeOrigin),  // a new value for every document loaded
          text: prefix ? "" : clean(document.body ? document.body.innerText : "").slice(0, 1500)};
}
