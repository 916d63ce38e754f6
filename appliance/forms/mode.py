""" "Fill a form by voice" on the appliance's page: the ``form`` mode of the voice server.

``appliance serve`` serves the demo forms beside the page (their URLs in ``/api/status``
as ``demo_forms``). When the page connects with ``{"mode": "form", "url": …,
"autonomous": bool}`` in its offer, the session's voice pipeline gets a line in the LLM's
place and :func:`appliance.forms.session.run_session` runs the computer agent (Chromium)
and the phone agent on it: the person is interviewed by voice while the form fills.
A URL the ``browser`` settings refuse (scheme, domain, loopback; see
:meth:`appliance.config.BrowserConfig.check_url`) is the offer's 400 answer, naming the URL
and why, which the page shows: no session, no Chromium (``VoiceServer.offer_checks``).
``POST /api/form/cancel?pc_id=…`` cancels (``terminate`` on the bus: browser closed, call
ended). Every decision and message goes to the session's event log, which the page shows.
The offer's ``task`` is the person's words ("fill it but don't submit" → the form is left
for their review: the browser and its preview stay up after the interview, until they
submit from the preview, cancel, or ``forms.review_timeout_s`` passes). The offer's
``record: false`` keeps the call unrecorded (the server opens its session without a
folder); the person is told either way before the first question.

When the form task ends — submitted, declined, reviewed, failed or cancelled — the call
ends by itself: the session gets a ``call_ended`` event and the server ends it (WebRTC
closed, the recording finalised).

The person watches and lends a hand (routes, each for one running form session; 404: no
form session for that ``pc_id``, 409: it is not running yet or any more):

* ``GET /api/form/preview?pc_id=…&after=N`` — the agent's browser as a JPEG, the first
  picture newer than ``N`` (waits up to 2 s; 204: none came); headers ``X-Frame-Seq``,
  ``X-Viewport`` (``WxH`` CSS pixels) and ``X-Focus`` (JSON box of the field being worked on);
* ``POST /api/form/preview/click {pc_id, x, y}`` and ``POST /api/form/preview/key {pc_id,
  key}`` — the person's click (CSS pixels of the viewport) and key in the form itself;
* ``POST /api/form/value {pc_id, field, value}`` — a value the person typed for a field
  (its name or label; text, a yes/no as a boolean, several choices as a list):
  ``info_collected{confirmed: true}`` from the page (:mod:`appliance.forms.typed`), answered
  with the value as taken ``{status, field, value}``; 400: a field the form has not shown,
  or no value for it;
* ``POST /api/form/submit {pc_id}`` — the person's Submit from their page (a review).

With ``forms.computer: pool`` the browser is on a worker: the same routes serve its pictures,
read from Redis, and send the clicks and keys back as envelopes (:mod:`appliance.forms.remote`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid

from aiohttp import web
from pydantic import ValidationError

from appliance.computer_agent.preview import Preview
from appliance.demo.site import DemoSite
from appliance.forms import pool
from appliance.forms.remote import RemotePreview
from appliance.forms.session import PageSide, SessionResult, run_session
from appliance.voice.agent_card import Skill

log = logging.getLogger(__name__)

#: the Agent Card's form-filling skill (appliance/voice/agent_card.py)
FORM_SKILL = Skill(
    id="form",
    name="Fill a web form by voice",
    description=(
        "Given a form's address, a computer agent fills the form in a browser while a phone agent interviews "
        "the person by voice; the person watches a live preview and can type; nothing is submitted without "
        "the person's go-ahead. Start it with an offer whose mode is \"form\" and whose url is the form's "
        "address (http or https), with an optional task in words."
    ),
    tags=("forms", "voice", "computer-use", "browser"),
    examples=("Fill in this flight booking for me: https://example.com/book", "I'm Ada Lovelace, book me a seat."),
)


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
        self._sides: dict[str, tuple[PageSide, object]] = {}  # pc_id → (its page side, the session's emit)
        self._ending: set[asyncio.Task] = set()  # calls being ended (kept so they are not collected)

    async def install(self, server) -> "callable":
        """Serve the demo forms and register the ``form`` mode on ``server`` (a VoiceServer)."""
        if self._own_site:
            await self.site.start()
        server.info["demo_forms"] = self.site.urls
        server.modes["form"] = self._run
        server.skills.append(FORM_SKILL)
        server.offer_checks["form"] = lambda body: self._url(server.cfg, body)
        server.app.router.add_post("/api/form/cancel", self._cancel)
        server.app.router.add_get("/api/form/preview", self._preview)
        server.app.router.add_post("/api/form/preview/click", self._click)
        server.app.router.add_post("/api/form/preview/key", self._key)
        server.app.router.add_post("/api/form/value", self._value)
        server.app.router.add_post("/api/form/submit", self._submit)
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

    def _url(self, cfg, body: dict) -> str:
        """The offer's form URL (none: the demo flight form), as ``cfg.browser`` allows it.

        Raises:
            appliance.chromium.URLRefused: naming the URL and why (a ValueError: the offer's 400).
            ValueError: an autonomous launch with ``forms.computer: pool`` (it runs in one process).
        """
        if body.get("autonomous") and cfg.forms.computer == "pool":
            raise ValueError(
                "the autonomous launch runs both agents in one process; this server has forms.computer: pool"
            )
        return cfg.browser.check_url(str(body.get("url") or self.site.urls["flight"]))

    async def _run(self, srv, pc_id: str, session, line, body: dict) -> None:
        url = self._url(srv.cfg, body)  # checked when the offer came (offer_checks): it opens
        autonomous = bool(body.get("autonomous"))
        task = str(body.get("task") or "")
        pooled = srv.cfg.forms.computer == "pool"  # a worker runs the computer agent (forms/pool.py)
        task_id = str(uuid.uuid4()) if pooled else None
        stop = self._stops.setdefault(pc_id, asyncio.Event())
        side = PageSide(None if pooled else Preview(), date_order=srv.cfg.forms.date_order)
        if pooled:  # the browser is on a worker: its pictures come over Redis, the clicks go back
            side.preview = RemotePreview(srv.cfg.bus.redis_url, task_id, side.to_computer)
        self._sides[pc_id] = (side, session.events.emit)
        result = None
        cancelled = False  # the call itself is ending (the person left, the server stops)
        session.events.emit("form_started", url=url, autonomous=autonomous, task=task)
        try:
            if pooled:
                async with pool.tasks_bus(srv.cfg) as tasks:
                    await pool.offer(tasks, task_id, url, task=task, wait_s=srv.cfg.forms.pool_wait_s, preview=True)
            result = await run_session(
                srv.cfg,
                url,
                llms=srv.runtime.llm,
                line=line,
                emit=session.events.emit,
                autonomous=autonomous,
                folder=session.folder,
                stop=stop,
                task=task,
                page_side=side,
                task_id=task_id,
                agent="phone" if pooled else None,
                taken_within_s=srv.cfg.forms.pool_wait_s if pooled else None,
            )
            session.events.emit(
                "form_finished",
                status=result.status,
                detail=result.detail,
                duration_s=round(result.duration_s, 1),
                actions=result.actions,
                explained_failures=result.explained_failures,
            )
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            if isinstance(side.preview, RemotePreview):
                await side.preview.close()
            self._stops.pop(pc_id, None)
            self._sides.pop(pc_id, None)
            waiter = self._waiters.get(pc_id)
            if waiter is not None and not waiter.done():
                waiter.set_result(result) if result is not None else waiter.cancel()
            if not cancelled:
                self._end_call(srv, pc_id, session, result)

    def _end_call(self, srv, pc_id: str, session, result: SessionResult | None) -> None:
        """The task is over: end the call from outside this mode's run (the server's end of a
        call cancels the mode's task, which is this one)."""
        session.events.emit("call_ended", reason=result.status if result else "the form session failed")
        ending = asyncio.get_running_loop().create_task(srv.end_session(pc_id), name=f"end call {pc_id[:8]}")
        self._ending.add(ending)
        ending.add_done_callback(self._ending.discard)

    # ---- the person's page on a running session ------------------------------------------------

    def _side(self, pc_id: str) -> tuple[PageSide, object]:
        got = self._sides.get(pc_id)
        if got is None:
            raise web.HTTPNotFound(
                text=json.dumps({"error": "no form task in that session"}), content_type="application/json"
            )
        return got

    @staticmethod
    async def _body(req: web.Request, *keys: str) -> dict:
        try:
            body = await req.json()
            if not isinstance(body, dict) or any(k not in body for k in keys):
                raise ValueError(f"expected a JSON object with {', '.join(keys)}")
        except ValueError as e:
            raise web.HTTPBadRequest(
                text=json.dumps({"error": f"bad request: {e}"}), content_type="application/json"
            ) from None
        return body

    async def _preview(self, req: web.Request) -> web.Response:
        side, _ = self._side(req.query.get("pc_id", ""))
        try:
            after = int(req.query.get("after", "0"))
        except ValueError:
            return web.json_response({"error": "after must be a number"}, status=400)
        frame = await side.preview.next_frame(after, timeout_s=2.0)
        if frame is None:
            return web.Response(status=204)
        return web.Response(
            body=frame.data,
            content_type="image/jpeg",
            headers={
                "X-Frame-Seq": str(frame.seq),
                "X-Viewport": f"{frame.width}x{frame.height}",
                "X-Focus": json.dumps(side.preview.focus),
                "Cache-Control": "no-store",
            },
        )

    async def _click(self, req: web.Request) -> web.Response:
        body = await self._body(req, "pc_id", "x", "y")
        side, emit = self._side(str(body["pc_id"]))
        try:
            await side.preview.click(float(body["x"]), float(body["y"]))
            emit("preview_click", x=float(body["x"]), y=float(body["y"]))  # a replay does it again
        except (TypeError, ValueError) as e:
            return web.json_response({"error": f"bad click: {e}"}, status=400)
        except RuntimeError as e:
            return web.json_response({"error": str(e)}, status=409)
        return web.json_response({"status": "clicked"})

    async def _key(self, req: web.Request) -> web.Response:
        body = await self._body(req, "pc_id", "key")
        side, emit = self._side(str(body["pc_id"]))
        try:
            await side.preview.key(str(body["key"]))
            emit("preview_key", key=str(body["key"]))
        except ValueError as e:
            return web.json_response({"error": str(e)}, status=400)
        except RuntimeError as e:
            return web.json_response({"error": str(e)}, status=409)
        return web.json_response({"status": "pressed"})

    async def _value(self, req: web.Request) -> web.Response:
        body = await self._body(req, "pc_id", "field", "value")
        side, emit = self._side(str(body["pc_id"]))
        try:
            payload = await side.value(str(body["field"]), body["value"], emit)
        except ValidationError as e:
            return web.json_response({"error": f"not a field value: {e.errors()[0]['msg']}"}, status=400)
        except ValueError as e:  # a field the form has not shown, an empty value
            return web.json_response({"error": str(e)}, status=400)
        except RuntimeError as e:
            return web.json_response({"error": str(e)}, status=409)
        return web.json_response({"status": "sent", "field": payload.field, "value": payload.value})

    async def _submit(self, req: web.Request) -> web.Response:
        body = await self._body(req, "pc_id")
        side, emit = self._side(str(body["pc_id"]))
        try:
            await side.submit(emit)
        except RuntimeError as e:
            return web.json_response({"error": str(e)}, status=409)
        return web.json_response({"status": "submitting"})

    async def _cancel(self, req: web.Request) -> web.Response:
        stop = self._stops.get(req.query.get("pc_id", ""))
        if stop is None:
            return web.json_response({"error": "no form task in that session"}, status=404)
        stop.set()
        return web.json_response({"status": "cancelling"})


async def install(server):
    """``serve_forever`` feature: a :class:`FormFeature` on ``server``."""
    return await FormFeature().install(server)
