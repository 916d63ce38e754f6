""""Fill a form by voice" on the appliance's page: the ``form`` mode of the voice server.

``appliance serve`` serves the demo forms beside the page (their URLs in ``/api/status``
as ``demo_forms``). When the page connects with ``{"mode": "form", "url": …,
"autonomous": bool}`` in its offer, the session's voice pipeline gets a line in the LLM's
place and :func:`appliance.forms.session.run_session` runs the computer agent (Chromium)
and the phone agent on it: the person is interviewed by voice while the form fills.
A URL the ``browser`` settings refuse (scheme, domain, loopback; see
:meth:`appliance.config.BrowserConfig.check_url`) ends the mode at once with an ``error``
event carrying ``status: 400`` and the reason, which the page shows and the line says.
``POST /api/form/cancel?pc_id=…`` cancels (``terminate`` on the bus: browser closed, call
ended). ``POST /api/form/value`` ``{pc_id, field, value}`` is a value the person typed in the
box on the page: it is published as ``info_collected{confirmed: true}`` from the page
(:mod:`appliance.forms.typed`; 404 no form session, 400 a field the form has not shown or an
empty value). Every decision and message goes to the session's event log, which the page
shows. The offer's ``record: false`` keeps the call unrecorded (the server opens its session
without a folder); the person is told either way before the first question.

When the form task ends — submitted, declined, failed or cancelled — the call ends by
itself: the session gets a ``call_ended`` event and the server ends it (WebRTC closed, the
recording finalised).
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from appliance.chromium import URLRefused
from appliance.demo.site import DemoSite
from appliance.forms.session import SessionResult, run_session
from appliance.forms.typed import TypedValues, UnknownField

log = logging.getLogger(__name__)


class FormFeature:
    """The demo site plus the ``form`` mode.

    ``site``: a demo site already serving (its owner stops it); by default the feature
    serves its own on a free port. :meth:`result` waits for a session's
    :class:`SessionResult` (the simulated person's report is made from it).
    """

    def __init__(self, site: DemoSite | None = None) -> None:
        self._own_site = site is None
        self.site = site or DemoSite(host="127.0.0.1", port=0)
        self._waiters: dict[str, asyncio.Future[SessionResult]] = {}
        self._stops: dict[str, asyncio.Event] = {}
        self._typed: dict[str, TypedValues] = {}
        self._ending: set[asyncio.Task] = set()  # calls being ended (kept so they are not collected)

    async def install(self, server) -> "callable":
        """Serve the demo forms and register the ``form`` mode on ``server`` (a VoiceServer)."""
        if self._own_site:
            await self.site.start()
        server.info["demo_forms"] = self.site.urls
        server.modes["form"] = self._run
        server.app.router.add_post("/api/form/cancel", self._cancel)
        server.app.router.add_post("/api/form/value", self._value)
        return self.site.stop if self._own_site else None

    async def result(self, pc_id: str) -> SessionResult:
        """The form session of connection ``pc_id``, once it has finished. Call it while the
        session runs (right after connecting); a finished session's result is not kept.

        Raises: RuntimeError when the session ended without a result (its error is in the
        session's events and the log)."""
        done = self._waiters.setdefault(pc_id, asyncio.get_running_loop().create_future())
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            if done.cancelled():
                raise RuntimeError(f"the form session of {pc_id} ended without a result; see its events") from None
            raise
        finally:
            if done.done():
                self._waiters.pop(pc_id, None)

    async def _run(self, srv, pc_id: str, session, line, body: dict) -> None:
        try:
            url = srv.cfg.browser.check_url(str(body.get("url") or self.site.urls["flight"]))
        except URLRefused as e:
            session.events.emit("error", error=str(e), status=400)
            await line.say(f"I cannot open that address: {e}")
            return
        autonomous = bool(body.get("autonomous"))
        stop = self._stops.setdefault(pc_id, asyncio.Event())
        typed = self._typed.setdefault(pc_id, TypedValues("page", srv.cfg.forms.date_order))
        result = None
        cancelled = False  # the call itself is ending (the person left, the server stops)
        session.events.emit("form_started", url=url, autonomous=autonomous)
        try:
            result = await run_session(srv.cfg, url, llms=srv.runtime.llm, line=line, emit=session.events.emit,
                                       autonomous=autonomous, folder=session.folder, stop=stop,
                                       task=str(body.get("task", "")), typed=typed)
            session.events.emit("form_finished", status=result.computer.status, detail=result.computer.detail,
                                duration_s=round(result.duration_s, 1))
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            self._stops.pop(pc_id, None)
            self._typed.pop(pc_id, None)
            waiter = self._waiters.get(pc_id)
            if waiter is not None and not waiter.done():
                waiter.set_result(result) if result is not None else waiter.cancel()
            if not cancelled:
                self._end_call(srv, pc_id, session, result)

    def _end_call(self, srv, pc_id: str, session, result: SessionResult | None) -> None:
        """The task is over: end the call from outside this mode's run (the server's end of a
        call cancels the mode's task, which is this one)."""
        session.events.emit("call_ended", reason=result.computer.status if result else "the form session failed")
        ending = asyncio.get_running_loop().create_task(srv.end_session(pc_id), name=f"end call {pc_id[:8]}")
        self._ending.add(ending)
        ending.add_done_callback(self._ending.discard)

    async def _value(self, req: web.Request) -> web.Response:
        try:
            body = await req.json()
            pc_id, field, value = (str(body[k]) for k in ("pc_id", "field", "value"))
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "send JSON {pc_id, field, value}"}, status=400)
        typed = self._typed.get(pc_id)
        if typed is None:
            return web.json_response({"error": "no form task in that session"}, status=404)
        try:
            payload = typed.put(field, value)
        except (UnknownField, ValueError) as e:
            return web.json_response({"error": str(e)}, status=400)
        return web.json_response({"field": payload.field, "value": payload.value})

    async def _cancel(self, req: web.Request) -> web.Response:
        stop = self._stops.get(req.query.get("pc_id", ""))
        if stop is None:
            return web.json_response({"error": "no form task in that session"}, status=404)
        stop.set()
        return web.json_response({"status": "cancelling"})


async def install(server):
    """``serve_forever`` feature: a :class:`FormFeature` on ``server``."""
    return await FormFeature().install(server)
