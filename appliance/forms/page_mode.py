""""Fill a form by voice" on the appliance's page: the ``form`` mode of the voice server.

``appliance serve`` serves the demo forms beside the page (their URLs in ``/api/status``
as ``demo_forms``). When the page connects with ``{"mode": "form", "url": …,
"autonomous": bool}`` in its offer, the session's voice pipeline gets a line in the LLM's
place and :func:`appliance.forms.session.run_session` runs the computer agent (Chromium)
and the phone agent on it: the person is interviewed by voice while the form fills.
``POST /api/form/cancel?pc_id=…`` cancels (``terminate`` on the bus: browser closed, call
ended). Every decision and message goes to the session's event log, which the page shows.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

from appliance.demo.site import DemoSite
from appliance.forms.llm import LLM
from appliance.forms.session import run_session

log = logging.getLogger(__name__)


async def install(server):
    """Serve the demo forms and register the ``form`` mode on ``server`` (a VoiceServer)."""
    site = DemoSite(host="127.0.0.1", port=0)
    await site.start()
    server.info["demo_forms"] = site.urls
    stops: dict[str, asyncio.Event] = {}

    async def form_mode(srv, pc_id: str, session, line, body: dict) -> None:
        url = body.get("url") or site.urls["flight"]
        runtime = srv.runtime
        llm = LLM(runtime.llm_base_url, runtime.llm_model, slot=0 if runtime.llm_server else None,
                  api_key=runtime.llm_api_key)
        stop = stops.setdefault(pc_id, asyncio.Event())
        session.events.emit("form_started", url=url, autonomous=bool(body.get("autonomous")))
        try:
            result = await run_session(srv.cfg, url, llm=llm, line=line, emit=session.events.emit,
                                       autonomous=bool(body.get("autonomous")), folder=session.folder, stop=stop)
            session.events.emit("form_finished", status=result.computer.status, detail=result.computer.detail,
                                duration_s=round(result.duration_s, 1))
        finally:
            stops.pop(pc_id, None)

    async def cancel(req: web.Request) -> web.Response:
        stop = stops.get(req.query.get("pc_id", ""))
        if stop is None:
            return web.json_response({"error": "no form task in that session"}, status=404)
        stop.set()
        return web.json_response({"status": "cancelling"})

    server.modes["form"] = form_mode
    server.app.router.add_post("/api/form/cancel", cancel)
    return site.stop
