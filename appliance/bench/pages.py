"""``appliance bench form --pages DIR``: form pages a user brings, in the ``pages.json`` format
of CONTRACTS ("bench form").

DIR is served as the web root on 127.0.0.1 (a free port; a page's library files live in DIR).
``DIR/pages.json`` is ``{"pages": [{"id", "file", "task", "profile": {KEY: VALUE}, "person":
{"authorise_submit", "first_answers", "not_sure", "adds_at_summary", "otp"}, "expected_submitted":
{KEY: VALUE}, "compare": {KEY: "exact"|"casefold"|"alnum"|"digits"|"phone"|"date"}, "checks": [JS
expressions]}]}``. The person's keys are the profile's (:mod:`appliance.demo.profile`); ``otp`` is
the code the page "sends" them, their ``one_time_code``. A page
records what it accepted in ``window.__submitted`` (null until then). The agents never read
any of this: an instrumentation script added to each HTML page the server sends (never
shown, never read by perception: it adds no element) reports ``window.__submitted`` and the
values of ``checks`` to the server whenever they change (at once: on the assignment and on each
change of the document), so they are known after the run, when the agent's browser is gone.

A run is ``accepted`` when the page recorded a submission equal to ``expected_submitted``
(each key by its ``compare``) and every check held.

Raises ``SystemExit`` naming the file and the key for a ``pages.json`` this does not read
(a key it does not know is refused, never ignored).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from appliance.demo.profile import Profile
from appliance.demo.spec import comparable

_PAGE_KEYS = {"id", "file", "task", "profile", "person", "expected_submitted", "compare", "checks"}
_PERSON_KEYS = {"authorise_submit", "first_answers", "not_sure", "adds_at_summary", "otp"}
_COMPARE = {"exact", "casefold", "alnum", "digits", "phone", "date"}

_RECORDER = """<script>
(() => {  // bench instrumentation (appliance/bench/pages.py): reports window.__submitted and the checks
  const checks = %s;
  let last = "";
  const tick = () => {
    const out = {submitted: window.__submitted === undefined ? null : window.__submitted,
                 checks: checks.map((c) => { try { return !!(0, eval)(c); } catch (e) { return false; } })};
    const s = JSON.stringify(out);
    if (s !== last) {
      last = s;
      navigator.sendBeacon("/__bench/record", new Blob([JSON.stringify({page: %s, ...out})], {type: "application/json"}));
    }
  };
  // reported at once, not only on the next tick: the agent may close the browser within 100 ms of the
  // page's confirmation (bench: a submitted callback went unrecorded)
  let submitted = window.__submitted;
  Object.defineProperty(window, "__submitted", {configurable: true, get: () => submitted,
                                                set: (v) => { submitted = v; tick(); }});
  new MutationObserver(tick).observe(document, {subtree: true, childList: true, characterData: true});
  setInterval(tick, 200);
  addEventListener("pagehide", tick);
})();
</script>"""


@dataclass(frozen=True)
class BroughtPage:
    """One page of ``pages.json``."""

    id: str
    file: str
    task: str
    profile: Profile
    expected: dict[str, str]
    compare: dict[str, str]
    checks: tuple[str, ...]


def load_pages(folder: Path) -> list[BroughtPage]:
    """The pages of ``folder/pages.json``.

    Raises:
        SystemExit: the file is missing or not JSON, a key is unknown or a value malformed
            (names which).
    """
    path = folder / "pages.json"
    try:
        pages = json.loads(path.read_text())["pages"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"bench form --pages: cannot read {path}: {e}") from None
    out = []
    for i, p in enumerate(pages):
        where = f"{path}: pages[{i}]"
        unknown = set(p) - _PAGE_KEYS or set(p.get("person") or {}) - _PERSON_KEYS
        if unknown:
            raise SystemExit(f"{where}: keys not read by this bench: {', '.join(sorted(unknown))}")
        compare = {str(k): str(v) for k, v in (p.get("compare") or {}).items()}
        if bad := {v for v in compare.values()} - _COMPARE:
            raise SystemExit(f"{where}: compare {', '.join(sorted(bad))} is not one of {', '.join(sorted(_COMPARE))}")
        person = p.get("person") or {}
        try:
            otp = {"one_time_code": _text(person["otp"])} if "otp" in person else {}
            profile = Profile(
                name=str(p["id"]),
                facts={str(k): _text(v) for k, v in (p.get("profile") or {}).items()} | otp,
                first_answers={str(k): _text(v) for k, v in (person.get("first_answers") or {}).items()},
                authorise_submit=bool(person.get("authorise_submit", True)),
                not_sure=tuple(str(k) for k in person.get("not_sure") or ()),
                adds_at_summary=str(person.get("adds_at_summary") or ""),
            )
            out.append(
                BroughtPage(
                    id=str(p["id"]),
                    file=str(p["file"]),
                    task=str(p.get("task") or ""),
                    profile=profile,
                    expected={str(k): _text(v) for k, v in (p.get("expected_submitted") or {}).items()},
                    compare=compare,
                    checks=tuple(str(c) for c in p.get("checks") or ()),
                )
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise SystemExit(f"{where}: malformed: {e!r}") from None
        if not (folder / out[-1].file).is_file():
            raise SystemExit(f"{where}: no file {out[-1].file!r} in {folder}")
    return out


def _text(v: object) -> str:
    return ("yes" if v else "no") if isinstance(v, bool) else str(v)


def same(expected: str, got: object, how: str) -> bool:
    """``got`` (what the page submitted) is ``expected`` by ``how``, as the bundled specs compare
    (:func:`appliance.demo.spec.comparable`); ``exact`` is exact."""
    g = _text(got) if got is not None else ""
    return expected == g if how == "exact" else comparable(expected, how) == comparable(g, how)


class PagesSite:
    """DIR served on 127.0.0.1 with the instrumentation script in each page of ``pages``;
    :attr:`records` holds each page's last report: ``{"submitted", "checks"}`` by page id."""

    def __init__(self, folder: Path, pages: list[BroughtPage]):
        self.folder, self.pages = folder, {p.file: p for p in pages}
        self.records: dict[str, dict] = {}
        self.base_url = ""
        self._runner: web.AppRunner | None = None

    async def __aenter__(self) -> PagesSite:
        app = web.Application()
        app.add_routes(
            [
                web.post("/__bench/record", self._record),
                web.get("/{path:.*}", self._file),
            ]
        )
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def url(self, page: BroughtPage) -> str:
        return f"{self.base_url}/{page.file}"

    def verdict(self, page: BroughtPage) -> dict:
        """``{"accepted", "submitted", "fields": [{field, expected, filled, ok}], "checks": [bool]}``."""
        rec = self.records.get(page.id) or {}
        sub = rec.get("submitted")
        sub = sub if isinstance(sub, dict) else None
        fields = [
            {
                "field": k,
                "expected": v,
                "filled": _text(sub.get(k, "")) if sub else "",
                "ok": sub is not None and same(v, sub.get(k), page.compare.get(k, "exact")),
            }
            for k, v in page.expected.items()
        ]
        checks = [bool(c) for c in rec.get("checks") or [False] * len(page.checks)]
        accepted = sub is not None and all(f["ok"] for f in fields) and all(checks)
        return {"accepted": accepted, "submitted": sub is not None, "fields": fields, "checks": checks}

    async def _record(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read() or b"{}")
        self.records[str(body.get("page"))] = {"submitted": body.get("submitted"), "checks": body.get("checks")}
        return web.Response(status=204)

    async def _file(self, request: web.Request) -> web.StreamResponse:
        rel = request.match_info["path"]
        p = (self.folder / rel).resolve()
        if not p.is_relative_to(self.folder.resolve()) or not p.is_file():
            raise web.HTTPNotFound()
        page = self.pages.get(rel)
        if page is None:
            return web.FileResponse(p)
        script = _RECORDER % (json.dumps(list(page.checks)), json.dumps(page.id))
        html = p.read_text()
        html = (
            re.sub(r"</body>", lambda _: script + "</body>", html, count=1, flags=re.I)
            if "</body>" in html.lower()
            else html + script
        )
        return web.Response(text=html, content_type="text/html")
