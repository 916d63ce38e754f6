"""The appliance's web server: the page, WebRTC signalling and each session's event stream.

Routes (all on ``server.host:server.port``, 127.0.0.1 by default):

- ``GET /`` — the voice page (``webrtc_page/``, no build step); ``GET /static/*`` its files.
- ``GET /api/status`` — ``{"ready": bool, "stage": str, "error": str|null}`` while models load.
- ``POST /api/offer`` ``{sdp, type, pc_id?, mode?, record?, ...}`` → ``{sdp, type, pc_id}``
  (pipecat SmallWebRTC); ``mode`` picks an agent (e.g. ``form``) instead of the plain
  assistant; ``record: false`` keeps this call out of ``recording.dir``;
  ``PATCH /api/offer`` trickled ICE candidates.
- ``GET /api/events?pc_id=…`` — WebSocket: that session's events as JSON (transcripts,
  captions, per-turn latencies), the same records as its ``events.jsonl``.
- ``POST /api/disconnect?pc_id=…`` — end that session.

The server listens at once and loads the models in a worker thread, so the page can
show progress; a connect before the models are ready gets HTTP 503.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Awaitable, Callable

from aiohttp import WSMsgType, web

from appliance.config import Config
from appliance.voice import ice
from appliance.voice.line import LineProcessor
from appliance.voice.pipeline import build_task, run_task
from appliance.voice.runtime import VoiceRuntime
from appliance.voice.session import Session, open_session

log = logging.getLogger(__name__)

PAGE_DIR = Path(__file__).resolve().parent.parent.parent / "webrtc_page"

#: An agent mode: (server, pc_id, session, line, offer body) → the agent's run, awaited for the session's life.
Mode = Callable[["VoiceServer", str, Session, LineProcessor, dict], Awaitable[None]]


class VoiceServer:
    """Owns the runtime (models), the WebRTC handler and every session's pipeline task.

    ``start()`` binds the port and begins loading models; ``stop()`` ends every session
    (pipeline tasks cancelled and awaited, peer connections closed) and the runtime.
    ``pipeline_builder`` may replace how a connection's pipeline is built.
    """

    def __init__(self, cfg: Config, runtime: VoiceRuntime | None = None):
        from pipecat.transports.smallwebrtc.request_handler import SmallWebRTCRequestHandler

        self.cfg = cfg
        self.runtime = runtime or VoiceRuntime(cfg)  # a started runtime may be shared (tests)
        self.stage = "starting"
        self.error: str | None = None
        self.ready = asyncio.Event()
        self.sessions: dict[str, Session] = {}
        self._tasks: dict[str, asyncio.Task] = {}
        self._pipeline_tasks: dict = {}
        ice.use_loopback_only(cfg.transport.loopback_only)
        self._handler = SmallWebRTCRequestHandler(ice_servers=list(cfg.transport.ice_servers))
        self._runner: web.AppRunner | None = None
        self.app = web.Application()
        self.app.add_routes([
            web.get("/", self._index),
            web.get("/api/status", self._status),
            web.post("/api/offer", self._offer),
            web.patch("/api/offer", self._patch),
            web.get("/api/events", self._events),
            web.post("/api/disconnect", self._disconnect),
            web.static("/static", PAGE_DIR),
        ])
        self.port: int | None = None
        #: agent modes a connection may ask for (``"mode"`` in the offer body): each gets
        #: the session's pipeline with a :class:`LineProcessor` in the LLM's place and is
        #: started as ``modes[mode](server, pc_id, session, line, offer_body)`` (an awaitable run
        #: for the session's life). Forms and Werewolf register theirs.
        self.modes: dict[str, Mode] = {}
        #: extra keys for ``/api/status`` (e.g. the demo forms' URLs)
        self.info: dict = {}
        #: builds a connection's pipeline: (runtime, transport, session) → task; the
        #: plain voice assistant by default (the benchmark swaps in stock pipecat).
        self.pipeline_builder = build_task

    @property
    def url(self) -> str:
        return f"http://{self.cfg.server.host}:{self.port}/"

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.cfg.server.host, self.cfg.server.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        if self.runtime.asr is not None:
            self.stage = "ready"
            self.ready.set()
        else:
            loop = asyncio.get_running_loop()
            threading.Thread(target=self._load, args=(loop,), name="model-loader", daemon=True).start()

    def _load(self, loop: asyncio.AbstractEventLoop) -> None:
        def progress(stage: str) -> None:
            self.stage = stage
            log.info("%s", stage)

        try:
            self.runtime.start(progress)
            loop.call_soon_threadsafe(self.ready.set)
        except Exception as e:  # shown on the page and in the log, never swallowed
            self.error = f"{type(e).__name__}: {e}"
            self.stage = "failed"
            log.error("model loading failed: %s", self.error)
            loop.call_soon_threadsafe(self.ready.set)

    async def stop(self) -> None:
        for pc_id in list(self._tasks):
            await self.end_session(pc_id)
        await self._handler.close()
        if self._runner:
            await self._runner.cleanup()

    async def end_session(self, pc_id: str) -> None:
        task = self._pipeline_tasks.pop(pc_id, None)
        if task is not None:
            await task.cancel()
        runner = self._tasks.pop(pc_id, None)
        if runner is not None:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)

    # --- routes ---------------------------------------------------------------------
    async def _index(self, _req: web.Request) -> web.FileResponse:
        return web.FileResponse(PAGE_DIR / "index.html")

    async def _status(self, _req: web.Request) -> web.Response:
        return web.json_response({"ready": self.ready.is_set() and not self.error, "stage": self.stage,
                                  "error": self.error, "modes": sorted(self.modes), **self.info})

    async def _offer(self, req: web.Request) -> web.Response:
        from pipecat.transports.smallwebrtc.request_handler import SmallWebRTCRequest

        if not self.ready.is_set() or self.error:
            return web.json_response({"error": self.error or f"not ready: {self.stage}"}, status=503)
        try:
            body = await req.json()
            request = SmallWebRTCRequest.from_dict({k: body[k] for k in ("sdp", "type", "pc_id", "restart_pc")
                                                    if k in body})
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            return web.json_response({"error": f"bad offer: {e}"}, status=400)
        mode = body.get("mode")
        if mode is not None and mode not in self.modes:
            return web.json_response({"error": f"unknown mode {mode!r}; known: {sorted(self.modes)}"}, status=400)

        async def on_connection(connection) -> None:
            await self._on_connection(connection, body)

        answer = await self._handler.handle_web_request(request, on_connection)
        return web.json_response(answer)

    async def _patch(self, req: web.Request) -> web.Response:
        from pipecat.transports.smallwebrtc.request_handler import IceCandidate, SmallWebRTCPatchRequest

        body = await req.json()
        cands = [IceCandidate(candidate=c.get("candidate", ""), sdp_mid=c.get("sdp_mid", c.get("sdpMid")),
                              sdp_mline_index=c.get("sdp_mline_index", c.get("sdpMLineIndex")))
                 for c in body.get("candidates", [])]
        await self._handler.handle_patch_request(SmallWebRTCPatchRequest(pc_id=body["pc_id"], candidates=cands))
        return web.json_response({"status": "ok"})

    async def _disconnect(self, req: web.Request) -> web.Response:
        await self.end_session(req.query.get("pc_id", ""))
        return web.json_response({"status": "ok"})

    async def _events(self, req: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=20)
        await ws.prepare(req)
        pc_id = req.query.get("pc_id", "")
        for _ in range(100):  # the offer answer and this socket race: wait up to 5 s
            if pc_id in self.sessions:
                break
            await asyncio.sleep(0.05)
        session = self.sessions.get(pc_id)
        if session is None:
            await ws.send_json({"event": "error", "error": f"no session {pc_id!r}"})
            await ws.close()
            return ws
        queue: asyncio.Queue = asyncio.Queue(maxsize=1000)
        loop = asyncio.get_running_loop()

        def listener(rec: dict) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, rec)

        for rec in list(session.events.events):
            await ws.send_json(rec)
        session.events.listeners.append(listener)
        try:
            sender = asyncio.create_task(self._pump(ws, queue))
            async for msg in ws:
                if msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                    break
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
        finally:
            session.events.listeners.remove(listener)
        return ws

    @staticmethod
    async def _pump(ws: web.WebSocketResponse, queue: asyncio.Queue) -> None:
        while True:
            await ws.send_json(await queue.get())

    # --- sessions -------------------------------------------------------------------
    async def _on_connection(self, connection, body: dict) -> None:
        from pipecat.transports.base_transport import TransportParams
        from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

        pc_id = connection.pc_id
        # the offer's ``record: false``: this call is not recorded (the person's switch on the page)
        cfg = self.cfg.without_recording() if body.get("record") is False else self.cfg
        session = open_session(cfg, f"webrtc-{pc_id[:8]}")
        self.sessions[pc_id] = session
        transport = SmallWebRTCTransport(webrtc_connection=connection, params=TransportParams(
            audio_in_enabled=True, audio_out_enabled=True, audio_in_sample_rate=16_000,
            audio_out_sample_rate=24_000))
        mode = body.get("mode")
        line = LineProcessor() if mode else None
        if line is not None:
            task = build_task(self.runtime, transport, session, line=line)
        else:
            task = self.pipeline_builder(self.runtime, transport, session)
        self._pipeline_tasks[pc_id] = task

        @transport.event_handler("on_client_disconnected")
        async def _gone(_t, _c):
            await task.cancel()

        session.events.emit("connected", pc_id=pc_id, mode=mode or "assistant")
        agent = self.modes[mode](self, pc_id, session, line, body) if mode else None
        self._tasks[pc_id] = asyncio.create_task(self._run(pc_id, task, session, agent))

    async def _run(self, pc_id: str, task, session: Session, agent: Awaitable[None] | None) -> None:
        agent_task = asyncio.create_task(self._run_agent(session, agent)) if agent else None
        try:
            await run_task(task)
        finally:
            if agent_task is not None:
                agent_task.cancel()
                await asyncio.gather(agent_task, return_exceptions=True)
            session.events.emit("disconnected")
            session.events.close()
            self._pipeline_tasks.pop(pc_id, None)
            self._tasks.pop(pc_id, None)

    @staticmethod
    async def _run_agent(session: Session, agent: Awaitable[None]) -> None:
        try:
            await agent
            session.events.emit("agent_done")
        except asyncio.CancelledError:
            raise
        except Exception as e:  # shown on the page and logged, never swallowed
            log.exception("the session's agent failed")
            session.events.emit("error", error=f"{type(e).__name__}: {e}")


#: A feature that plugs into the server (a mode, routes, status info): called before the
#: server starts listening (routes can still be added); returns its clean-up, or None.
Feature = Callable[["VoiceServer"], Awaitable[Callable[[], Awaitable[None]] | None]]


async def serve_forever(cfg: Config, features: list[Feature] = ()) -> None:
    """Run the server with ``features`` until cancelled (Ctrl-C); prints the page's URL."""
    server = VoiceServer(cfg)
    cleanups = [c for c in [await install(server) for install in features] if c is not None]
    await server.start()
    print(f"appliance: open {server.url} in Chromium or Firefox (models loading…)", flush=True)
    try:
        await server.ready.wait()
        if server.error:
            raise SystemExit(f"error: {server.error}")
        print(f"appliance: ready at {server.url}", flush=True)
        await asyncio.Event().wait()
    finally:
        await server.stop()
        for cleanup in cleanups:
            await cleanup()
        server.runtime.stop()
