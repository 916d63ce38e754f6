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
ended). Every decision and message goes to the session's event log, which the page shows.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from appliance.chromium import URLRefused
from appliance.demo.site import DemoSite
from appliance.forms.session import SessionResult, run_session

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

    async def install(self, server) -> "callable":
        """Serve the demo forms and register the ``form`` mode on ``server`` (a VoiceServer)."""
        if self._own_site:
            await self.site.start()
        server.info["demo_forms"] = self.site.urls
        server.modes["form"] = self._run
        server.app.router.add_post("/api/form/cancel", self._cancel)
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
        result = None
        session.events.emit("form_started", url=url, autonomous=autonomous)
        try:
            result = await run_session(srv.cfg, url, llms=srv.runtime.llm, line=line, emit=session.events.emit,
                                       autonomous=autonomous, folder=session.folder, stop=stop,
                                       task=str(body.get("task", "")))
            session.events.emit("form_finished", status=result.computer.status, detail=result.computer.detail,
                                duration_s=round(result.duration_s, 1))
        finally:
            self._stops.pop(pc_id, None)
            waiter = self._waiters.get(pc_id)
            if waiter is not None and not waiter.done():
                waiter.set_result(result) if result is not None else waiter.cancel()

    async def _cancel(self, req: web.Request) -> web.Response:
        stop = self._stops.get(req.query.get("pc_id", ""))
        if stop is None:
            return web.json_response({"error": "no form task in that session"}, status=404)
        stop.set()
        return web.json_response({"status": "cancelling"})


async def install(server):
    """``serve_forever`` feature: a :class:`FormFeature` on ``server``."""
    return await FormFeature().install(server)
