"""The appliance's web server: the page, WebRTC signalling and each session's event stream.

Routes (all on ``server.host:server.port``, 127.0.0.1 by default):

- ``GET /`` — the voice page (``webrtc_page/``, no build step); ``GET /static/*`` its files.
- ``GET /api/status`` — ``{"ready": bool, "stage": str, "error": str|null, "modes", "recording_default"}``
  (``recording.enabled``: the page's "record this call" switch starts there).
- ``GET /api/ice`` — ``{"ice_servers": [{urls, username?, credential?}]}``: ``transport.ice_servers``
  for the page's ``RTCPeerConnection`` (TURN credentials minted per call with ``transport.turn_secret_env``).
- ``POST /api/offer`` ``{sdp, type: "offer", pc_id?, mode?, record?, ...}`` → ``{sdp, type, pc_id}``
  (pipecat SmallWebRTC); ``mode`` picks an agent (e.g. ``form``) instead of the plain
  assistant; ``record: false`` keeps this call out of ``recording.dir`` (nothing of it is stored:
  the person's choice on the page, made before Connect); a recorded call is announced
  (``recording_notice`` event; the plain assistant says it at once, an agent in its opening); an offer naming the
  ``pc_id`` of a live session renegotiates it.
  ``PATCH /api/offer`` ``{pc_id, candidates: [...]}`` trickled ICE candidates.
- ``GET /api/events?pc_id=…`` — WebSocket: that session's events as JSON (transcripts,
  captions, per-turn latencies), the same records as its ``events.jsonl``; closed when
  the session ends.
- ``POST /api/disconnect?pc_id=…`` — end that session.
- ``POST /api/recording/delete?pc_id=…`` — delete that ended session's recording (409 while
  it goes on).
- ``GET /.well-known/agent-card.json`` — the A2A Agent Card (:mod:`appliance.voice.agent_card`), public.

Recordings older than ``recording.retention_days`` are deleted at start and daily
(:mod:`appliance.voice.recordings`).

Every request first passes :mod:`appliance.voice.access` (Host, Origin, content type,
token). Errors are JSON ``{"error": why}``: 400 a malformed request or an SDP offer that
cannot be answered (no audio section, no ICE credentials or DTLS fingerprint, or one
aiortc rejects; nothing is kept), 404 an unknown ``pc_id``, 503 models still loading or
``server.max_sessions`` sessions already open.

**A session's life** (one :class:`Call` per ``pc_id``, owned by one runner task): the
answer is sent, the pipeline starts, and the call is torn down when the first of these
happens: the peer leaves or ``/api/disconnect``; ICE/DTLS not connected within
``server.connect_timeout_ms``; no RTP from the peer for ``server.idle_timeout_ms`` once
connected (aiortc's inbound RTP packet count: ICE and RTCP alone do not keep a call); the
pipeline ends. Tear-down, always
in this order: pipeline task cancelled and awaited, the mode's agent task (e.g. the form
mode's Chromium) cancelled and awaited, peer connection closed, event log closed and its
sockets too, then what it freed handed back to the kernel (a garbage collection, then
:func:`appliance.heap.trim`). A call that failed (the two timeouts, a failed connection)
gets an ``error`` event, and its recording folder a ``failed`` file with the reason — or
the folder is removed when it holds only what was written at the offer (``config.yaml``,
``events.jsonl``: the peer never sent anything).

The server listens at once and loads the models in a worker thread, so the page can
show progress; a connect before the models are ready gets HTTP 503.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import shutil
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import WSMsgType, web
from aiortc.sdp import SessionDescription, candidate_from_sdp

from appliance import heap
from appliance.config import Config, ConfigError
from appliance.voice import access, agent_card, ice, recordings, tls
from appliance.voice.line import LineProcessor
from appliance.voice.pipeline import build_task, run_task
from appliance.voice.runtime import VoiceRuntime
from appliance.voice.session import Session, open_session, recording_notice

log = logging.getLogger(__name__)

PAGE_DIR = Path(__file__).resolve().parent.parent.parent / "webrtc_page"

#: An agent mode: (server, pc_id, session, line, offer body) → the agent's run, awaited for the session's life.
Mode = Callable[["VoiceServer", str, Session, LineProcessor, dict], Awaitable[None]]
#: A mode's check of its offer body, before the offer is answered: raises ValueError naming what is wrong.
OfferCheck = Callable[[dict], None]

CONNECT_POLL_S = 0.05  # how often a connecting call's ICE/DTLS state is looked at
CANCEL_GRACE_S = 10.0  # a cancelled pipeline that has not ended by then has its task cancelled
ENDED_KEPT = 16  # ended sessions whose events stay readable in ``VoiceServer.sessions``
OPENED_FILES = frozenset({"config.yaml", "events.jsonl"})  # what a session folder holds before any audio


def check_offer(sdp: object) -> str:
    """``sdp`` if it is an SDP offer the server can answer.

    Raises:
        ValueError: why not (not a string, no ``m=audio`` section, no ICE credentials or
            no DTLS fingerprint on it).
    """
    if not isinstance(sdp, str) or not sdp.strip():
        raise ValueError("sdp must be a non-empty string")
    try:
        desc = SessionDescription.parse(sdp)
    except (ValueError, KeyError, IndexError, AssertionError) as e:  # aiortc's parser asserts some of its checks
        raise ValueError(f"sdp is not valid SDP: {type(e).__name__} {e}".rstrip()) from None
    audio = [m for m in desc.media if m.kind == "audio"]
    if not audio:
        raise ValueError("sdp has no audio section (m=audio)")
    for m in audio:
        if not (m.ice.usernameFragment and m.ice.password):
            raise ValueError("sdp's audio section has no ICE credentials (a=ice-ufrag, a=ice-pwd)")
        if m.dtls is None or not m.dtls.fingerprints:
            raise ValueError("sdp's audio section has no DTLS set-up (a=setup, a=fingerprint)")
    return sdp


@dataclass(eq=False)
class Call:
    """Everything the server owns for one connection (``pc_id``); see the module docstring.

    ``agent``: the mode's run, not yet started (None for the plain assistant); ``runner``:
    the task that owns the pipeline, the agent and the tear-down; ``end``: set to end the
    call; ``failure``: why it was torn down early, or None; ``finished``: set once torn down.
    """

    pc_id: str
    mode: str | None
    session: Session
    connection: object  # pipecat SmallWebRTCConnection
    pipeline: object  # pipecat PipelineWorker
    agent: Awaitable[None] | None
    runner: asyncio.Task | None = None
    end: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    failure: str | None = None

    def state(self) -> str:
        """The peer connection's state (``new``, ``connecting``, ``connected``, ``failed``, ``closed``)."""
        return self.connection.pc.connectionState


class VoiceServer:
    """Owns the runtime (models), every :class:`Call` and its pipeline task.

    ``start()`` binds the port and begins loading models; ``stop()`` ends every call (as in
    the module docstring) and the web server. ``calls``: the live calls by ``pc_id``;
    ``sessions``: the :class:`Session` of each live call and of the last ``ENDED_KEPT``
    ended ones, so their events can still be read. ``token``: what clients must present
    (see :mod:`appliance.voice.access`), or None.
    """

    def __init__(self, cfg: Config, runtime: VoiceRuntime | None = None):
        self.cfg = cfg
        self.runtime = runtime or VoiceRuntime(cfg)  # a started runtime may be shared (tests)
        self.stage = "starting"
        self.error: str | None = None
        self.ready = asyncio.Event()
        self.calls: dict[str, Call] = {}
        self.sessions: dict[str, Session] = {}
        self._admitting = 0  # offers past the session cap check, still being answered
        policy = access.policy_for(cfg.server)
        self.token = policy.token
        ice.use_loopback_only(cfg.transport.loopback_only)
        self._runner: web.AppRunner | None = None
        self._pruner: asyncio.Task | None = None
        self.app = web.Application(middlewares=[_json_errors, access.middleware(policy)])
        self.app.add_routes(
            [
                web.get("/", self._index),
                web.get("/api/status", self._status),
                web.get("/api/ice", self._ice),
                web.post("/api/offer", self._offer),
                web.patch("/api/offer", self._patch),
                web.get("/api/events", self._events),
                web.post("/api/disconnect", self._disconnect),
                web.post("/api/recording/delete", self._delete_recording),
                web.get(agent_card.PATH, self._agent_card),
                web.static("/static", PAGE_DIR),
            ]
        )
        self.port: int | None = None
        #: agent modes a connection may ask for (``"mode"`` in the offer body): each gets
        #: the session's pipeline with a :class:`LineProcessor` in the LLM's place and is
        #: started as ``modes[mode](server, pc_id, session, line, offer_body)`` (an awaitable run
        #: for the session's life). Forms and Werewolf register theirs.
        self.modes: dict[str, Mode] = {}
        #: a mode's check of the offer body (``offer_checks[mode](body)``, e.g. the form's URL):
        #: its ValueError is the offer's 400, with its message, and nothing starts.
        self.offer_checks: dict[str, OfferCheck] = {}
        #: extra keys for ``/api/status`` (e.g. the demo forms' URLs)
        self.info: dict = {}
        #: what the modes can do, for the Agent Card (:mod:`appliance.voice.agent_card`); the forms add theirs
        self.skills: list[agent_card.Skill] = []
        #: builds a plain connection's pipeline: (runtime, transport, session) → task; the
        #: voice assistant by default (the benchmark swaps in stock pipecat).
        self.pipeline_builder = build_task
        #: builds an agent mode's pipeline: (runtime, transport, session, line=line) → task.
        self.mode_pipeline_builder = build_task

    @property
    def url(self) -> str:
        """The page's base URL (``http://host:port/``; ``https`` with ``server.tls_cert``), without the token."""
        scheme = "https" if self.cfg.server.tls_cert else "http"
        return f"{scheme}://{self.cfg.server.host}:{self.port}/"

    @property
    def page_url(self) -> str:
        """The URL to open: :attr:`url`, with ``?token=…`` when a token is required."""
        return self.url + (f"?token={self.token}" if self.token else "")

    async def start(self) -> None:
        """Listen on ``server.host:port`` and start loading the models (module docstring).
        With ``server.heap_trim``, this process's malloc is set up for a long-lived server
        (:func:`appliance.heap.configure`).

        Over TLS with ``server.tls_cert``/``server.tls_key`` (:mod:`appliance.voice.tls`).

        Raises:
            ConfigError: the address cannot be listened on (no such host, not this
                machine's, the port taken), naming ``server.host``/``server.port`` and why;
                or the TLS files are missing or not a key pair.
            OSError: ``server.heap_trim`` and the C library is not glibc.
        """
        if self.cfg.server.heap_trim:
            heap.configure()
        tls_context = tls.server_context(self.cfg)
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        srv = self.cfg.server
        site = web.TCPSite(self._runner, srv.host, srv.port, ssl_context=tls_context)
        try:
            await site.start()
        except OSError as e:  # socket.gaierror included
            await self._runner.cleanup()
            raise ConfigError(
                f"server.host {srv.host!r}, server.port {srv.port}: cannot listen there: {e.strerror or e}"
            ) from None
        self.port = site._server.sockets[0].getsockname()[1]
        if self.cfg.recording.retention_days:
            self._pruner = asyncio.create_task(self._prune_daily(), name="recordings pruner")
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

    async def _prune_daily(self) -> None:
        """Delete recordings older than ``recording.retention_days``, now and then once a day."""
        rec = self.cfg.recording
        while True:
            gone = await asyncio.to_thread(recordings.prune, Path(rec.dir).expanduser(), rec.retention_days)
            if gone:
                log.info(
                    "deleted %d recording(s) older than %d days (recording.retention_days)",
                    len(gone),
                    rec.retention_days,
                )
            await asyncio.sleep(recordings.DAY_S)

    async def stop(self) -> None:
        """End every call (torn down as in the module docstring), then stop serving."""
        if self._pruner is not None:
            self._pruner.cancel()
            await asyncio.gather(self._pruner, return_exceptions=True)
            self._pruner = None
        runners = [call.runner for call in self.calls.values() if call.runner is not None]
        for call in self.calls.values():
            call.end.set()
        if runners:
            await asyncio.wait(runners)
        if self._runner:
            await self._runner.cleanup()

    async def end_session(self, pc_id: str) -> bool:
        """End call ``pc_id`` and wait until it is torn down; False if there is no such call."""
        call = self.calls.get(pc_id)
        if call is None:
            return False
        call.end.set()
        if call.runner is not None:
            await asyncio.wait([call.runner])  # not cancelled if our caller is
        return True

    # --- routes ---------------------------------------------------------------------
    async def _index(self, _req: web.Request) -> web.FileResponse:
        return web.FileResponse(PAGE_DIR / "index.html")

    async def _status(self, _req: web.Request) -> web.Response:
        return web.json_response(
            {
                "ready": self.ready.is_set() and not self.error,
                "stage": self.stage,
                "error": self.error,
                "modes": sorted(self.modes),
                "recording_default": self.cfg.recording.enabled,
                **self.info,
            }
        )

    async def _ice(self, _req: web.Request) -> web.Response:
        """The STUN/TURN servers for the page's next call (TURN credentials minted now, when a secret is set)."""
        return web.json_response({"ice_servers": ice.ice_servers(self.cfg.transport)})

    async def _agent_card(self, req: web.Request) -> web.Response:
        """The A2A Agent Card, public; its URLs are the ones the asking client used."""
        base = f"{req.scheme}://{req.host}"
        return web.json_response(agent_card.card(base, self.skills, token_required=self.token is not None))

    @staticmethod
    def _refuse(status: int, error: str) -> web.Response:
        return web.json_response({"error": error}, status=status)

    @staticmethod
    async def _json_object(req: web.Request) -> dict:
        """The request's JSON object body. Raises: ValueError saying what is wrong with it."""
        try:
            body = await req.json()
        except ValueError as e:
            raise ValueError(f"the body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise ValueError(f"the body must be a JSON object, not {type(body).__name__}")
        return body

    async def _offer(self, req: web.Request) -> web.Response:
        if not self.ready.is_set() or self.error:
            return self._refuse(503, self.error or f"not ready: {self.stage}")
        try:
            body = await self._json_object(req)
            if body.get("type") != "offer":
                raise ValueError(f"type must be 'offer', not {body.get('type')!r}")
            sdp = check_offer(body.get("sdp"))
        except ValueError as e:
            return self._refuse(400, f"bad offer: {e}")
        mode = body.get("mode")
        if mode is not None and mode not in self.modes:
            return self._refuse(400, f"unknown mode {mode!r}; known: {sorted(self.modes)}")
        if mode in self.offer_checks:
            try:
                self.offer_checks[mode](body)
            except ValueError as e:
                return self._refuse(400, str(e))
        pc_id = body.get("pc_id")
        if pc_id is not None:
            return await self._renegotiate(pc_id, sdp, bool(body.get("restart_pc")))
        cap = self.cfg.server.max_sessions
        if len(self.calls) + self._admitting >= cap:
            return self._refuse(
                503,
                f"the appliance is busy: {cap} sessions are open (server.max_sessions); try again when one has ended",
            )
        self._admitting += 1
        try:
            return await self._admit(sdp, mode, body)
        finally:
            self._admitting -= 1

    async def _admit(self, sdp: str, mode: str | None, body: dict) -> web.Response:
        """Answer a new offer and start its call; a 400 leaves nothing behind."""
        from pipecat.transports.smallwebrtc.connection import SmallWebRTCConnection

        connection = SmallWebRTCConnection(ice_servers=ice.rtc_ice_servers(self.cfg.transport))
        try:
            await connection.initialize(sdp=sdp, type="offer")
            answer = connection.get_answer()
            if answer is None:
                raise ValueError("no SDP answer could be made for it")
        except Exception as e:  # aiortc raises ValueError, KeyError, InvalidStateError… for an offer it cannot use
            await connection.disconnect()
            log.info("refused an offer aiortc could not answer: %r", e)
            return self._refuse(400, f"bad offer: {type(e).__name__}: {e}")
        try:
            self._start_call(connection, mode, body)
        except BaseException:
            await connection.disconnect()
            raise
        return web.json_response(answer)

    async def _renegotiate(self, pc_id: object, sdp: str, restart: bool) -> web.Response:
        call = self.calls.get(pc_id) if isinstance(pc_id, str) else None
        if call is None:
            return self._refuse(404, f"no session {pc_id!r} to renegotiate")
        try:
            await call.connection.renegotiate(sdp=sdp, type="offer", restart_pc=restart)
        except Exception as e:  # as in _admit: aiortc's errors for an unusable offer
            return self._refuse(400, f"bad offer: {type(e).__name__}: {e}")
        return web.json_response(call.connection.get_answer())

    async def _patch(self, req: web.Request) -> web.Response:
        try:
            body = await self._json_object(req)
            raw = body.get("candidates", [])
            if not isinstance(raw, list) or not all(isinstance(c, dict) for c in raw):
                raise ValueError("candidates must be a list of objects")
            cands = [(candidate_from_sdp(c["candidate"]) if c.get("candidate") else None, c) for c in raw]
        except (ValueError, KeyError, IndexError, AssertionError) as e:  # aiortc's parser asserts on garbage
            return self._refuse(400, f"bad candidates: {type(e).__name__}: {e}")
        call = self.calls.get(body.get("pc_id"))
        if call is None:
            return self._refuse(404, f"no session {body.get('pc_id')!r}")
        for cand, c in cands:
            if cand is not None:
                cand.sdpMid = c.get("sdp_mid", c.get("sdpMid"))
                cand.sdpMLineIndex = c.get("sdp_mline_index", c.get("sdpMLineIndex"))
            # None: an RFC 8840 end-of-candidates marker (Firefox sends one per media line)
            await call.connection.add_ice_candidate(cand)
        return web.json_response({"status": "ok"})

    async def _disconnect(self, req: web.Request) -> web.Response:
        pc_id = req.query.get("pc_id", "")
        if not await self.end_session(pc_id):
            return self._refuse(404, f"no session {pc_id!r}")
        return web.json_response({"status": "ok"})

    async def _delete_recording(self, req: web.Request) -> web.Response:
        """The person deletes the recording of their call, once it has ended (the page's button)."""
        pc_id = req.query.get("pc_id", "")
        session = self.sessions.get(pc_id)
        if session is None:
            return self._refuse(404, f"no session {pc_id!r}")
        if pc_id in self.calls:
            return self._refuse(409, "the call is still going on: end it first, then delete its recording")
        folder, session.folder = session.folder, None
        if folder is not None and folder.exists():
            await asyncio.to_thread(shutil.rmtree, folder)
        return web.json_response({"status": "deleted" if folder is not None else "not recorded"})

    async def _events(self, req: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=20)
        await ws.prepare(req)
        pc_id = req.query.get("pc_id", "")
        session = self.sessions.get(pc_id)  # registered before its offer was answered
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
        call = self.calls.get(pc_id)
        if call is None:  # already ended: its history was all there is
            await ws.close()
            return ws
        session.events.listeners.append(listener)
        sender = asyncio.create_task(self._pump(ws, queue), name=f"events {pc_id[:8]}")
        closer = asyncio.create_task(self._close_when(call.finished, ws, queue), name=f"events end {pc_id[:8]}")
        try:
            async for msg in ws:
                if msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                    break
        finally:
            for t in (sender, closer):
                t.cancel()
            await asyncio.gather(sender, closer, return_exceptions=True)
            if listener in session.events.listeners:
                session.events.listeners.remove(listener)
        return ws

    @staticmethod
    async def _pump(ws: web.WebSocketResponse, queue: asyncio.Queue) -> None:
        while True:
            await ws.send_json(await queue.get())

    @staticmethod
    async def _close_when(finished: asyncio.Event, ws: web.WebSocketResponse, queue: asyncio.Queue) -> None:
        """Once the call is torn down: send what is queued, then close the socket."""
        await finished.wait()
        await asyncio.sleep(0)  # let the last events' call_soon_threadsafe land
        while not queue.empty():
            await ws.send_json(queue.get_nowait())
        await ws.close()

    # --- calls ----------------------------------------------------------------------
    def _start_call(self, connection, mode: str | None, body: dict) -> Call:
        from pipecat.frames.frames import TTSSpeakFrame
        from pipecat.transports.base_transport import TransportParams
        from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport

        pc_id = connection.pc_id
        # the offer's ``record: false``: this call is not recorded (the person's switch on the page)
        cfg = self.cfg.without_recording() if body.get("record") is False else self.cfg
        session = open_session(cfg, f"webrtc-{pc_id[:8]}")
        transport = SmallWebRTCTransport(
            webrtc_connection=connection,
            params=TransportParams(
                audio_in_enabled=True, audio_out_enabled=True, audio_in_sample_rate=16_000, audio_out_sample_rate=24_000
            ),
        )
        line = LineProcessor(self.cfg.turn) if mode else None
        if line is not None:
            pipeline = self.mode_pipeline_builder(self.runtime, transport, session, line=line)
        else:
            pipeline = self.pipeline_builder(self.runtime, transport, session)
        session.events.emit("connected", pc_id=pc_id, mode=mode or "assistant")
        folder = str(session.folder) if session.folder else None
        session.events.emit("recording_notice", recorded=folder is not None, folder=folder)
        agent = self.modes[mode](self, pc_id, session, line, body) if mode else None
        call = Call(pc_id=pc_id, mode=mode, session=session, connection=connection, pipeline=pipeline, agent=agent)

        @transport.event_handler("on_client_disconnected")
        async def _gone(_t, _c):
            call.end.set()

        if mode is None and session.folder is not None:  # an agent mode's agent says it in its own opening

            @transport.event_handler("on_client_connected")
            async def _notice(_t, _c):
                await pipeline.queue_frame(TTSSpeakFrame(recording_notice(True), append_to_context=False))

        self.calls[pc_id] = call
        self.sessions[pc_id] = session
        call.runner = asyncio.create_task(self._run(call), name=f"call {pc_id[:8]}")
        return call

    async def _run(self, call: Call) -> None:
        """The call's life (module docstring): run until the first end condition, then tear down."""
        pipeline = asyncio.create_task(run_task(call.pipeline), name=f"pipeline {call.pc_id[:8]}")
        agent = (
            asyncio.create_task(self._run_agent(call.session, call.agent), name=f"agent {call.pc_id[:8]}")
            if call.agent is not None
            else None
        )
        watchdog = asyncio.create_task(self._watch(call), name=f"watchdog {call.pc_id[:8]}")
        ended = asyncio.create_task(call.end.wait(), name=f"end {call.pc_id[:8]}")
        try:
            await asyncio.wait({pipeline, watchdog, ended}, return_when=asyncio.FIRST_COMPLETED)
            if watchdog.done():
                failed = watchdog.exception()
                call.failure = watchdog.result() if failed is None else f"the session's watchdog failed: {failed!r}"
            elif pipeline.done() and not pipeline.cancelled() and pipeline.exception() is not None:
                call.failure = f"the pipeline failed: {pipeline.exception()!r}"
        finally:
            await self._tear_down(call, pipeline, agent, (watchdog, ended))

    async def _tear_down(
        self, call: Call, pipeline: asyncio.Task, agent: asyncio.Task | None, helpers: tuple[asyncio.Task, ...]
    ) -> None:
        for t in helpers:
            t.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        try:
            if not pipeline.done():
                await call.pipeline.cancel(reason=call.failure or "session ended")
                try:
                    await asyncio.wait_for(pipeline, CANCEL_GRACE_S)
                except TimeoutError:
                    log.warning(
                        "call %s: the pipeline did not end within %.0f s of its cancel; its task was cancelled",
                        call.pc_id,
                        CANCEL_GRACE_S,
                    )
            elif not pipeline.cancelled() and pipeline.exception() is not None:
                log.error("call %s: pipeline failed", call.pc_id, exc_info=pipeline.exception())
            if agent is not None:
                agent.cancel()
                await asyncio.gather(agent, return_exceptions=True)
            await call.connection.disconnect()
        finally:
            session = call.session
            if call.failure is not None:
                log.warning("call %s torn down: %s", call.pc_id, call.failure)
                session.events.emit("error", error=call.failure)
            session.events.emit("disconnected")
            session.events.close()
            session.recorder = None  # lets the ended pipeline go; its events and context stay readable
            self._finish_folder(session, call.failure)
            self.calls.pop(call.pc_id, None)
            self._forget_ended()
            call.finished.set()
            # A pipeline is a web of reference cycles (processors link both ways) holding its VAD's
            # onnxruntime session, threads and ~40 MB; CPython's own full collection would wait
            # for ~15 ended sessions. ~10 ms once serve_forever has frozen the start-up objects.
            gc.collect()
            if self.cfg.server.heap_trim:
                heap.trim()  # what the session freed leaves the process (see appliance.heap)

    async def _watch(self, call: Call) -> str | None:
        """Wait for the first reason to tear ``call`` down: a failure message, or None when
        the connection closed normally. Never returns while the call is healthy."""
        srv = self.cfg.server
        loop = asyncio.get_running_loop()
        deadline = loop.time() + srv.connect_timeout_ms / 1000
        while (state := call.state()) != "connected":
            if state in ("failed", "closed"):
                return f"the peer connection {state} before it connected"
            if loop.time() >= deadline:
                return (
                    f"ICE/DTLS did not connect within {srv.connect_timeout_ms} ms "
                    f"(server.connect_timeout_ms); state {state}"
                )
            await asyncio.sleep(CONNECT_POLL_S)
        log.info("call %s connected", call.pc_id)
        idle_s = srv.idle_timeout_ms / 1000
        seen, heard_at = -1, loop.time()
        while True:
            await asyncio.sleep(min(1.0, idle_s / 4))
            state = call.state()
            if state == "closed":
                return None
            if state == "failed":
                return "the peer connection failed"
            count = await _packets_received(call.connection.pc)
            if count != seen:
                seen, heard_at = count, loop.time()
            elif loop.time() - heard_at >= idle_s:
                return f"no audio (RTP) from the peer for {srv.idle_timeout_ms} ms (server.idle_timeout_ms)"

    @staticmethod
    def _finish_folder(session: Session, failure: str | None) -> None:
        folder = session.folder
        if folder is None or failure is None or not folder.exists():
            return
        if {p.name for p in folder.iterdir()} <= OPENED_FILES:
            shutil.rmtree(folder)
        else:
            (folder / "failed").write_text(failure + "\n")

    def _forget_ended(self) -> None:
        ended = [pc_id for pc_id in self.sessions if pc_id not in self.calls]
        for pc_id in ended[: max(0, len(ended) - ENDED_KEPT)]:
            del self.sessions[pc_id]

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


@web.middleware
async def _json_errors(req: web.Request, handler) -> web.StreamResponse:
    """aiohttp's own refusals (413 a body over 1 MiB, 404, 405 …) as ``{"error": why}``, as ours are."""
    try:
        return await handler(req)
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return web.json_response({"error": e.text or e.reason}, status=e.status)


async def _packets_received(pc) -> int:
    """RTP packets (the peer's audio) the peer connection has received so far: a peer whose
    ICE and RTCP still answer but that sends no audio holds a session slot all the same."""
    stats = await pc.getStats()
    return sum(s.packetsReceived for s in stats.values() if s.type == "inbound-rtp")


#: A feature that plugs into the server (a mode, routes, status info): called before the
#: server starts listening (routes can still be added); returns its clean-up, or None.
Feature = Callable[["VoiceServer"], Awaitable[Callable[[], Awaitable[None]] | None]]


async def serve_forever(cfg: Config, features: list[Feature] = ()) -> None:
    """Run the server with ``features`` until cancelled (Ctrl-C); prints the page's URL."""
    server = VoiceServer(cfg)
    cleanups = [c for c in [await install(server) for install in features] if c is not None]
    await server.start()
    if (warning := tls.plain_http_warning(cfg)) is not None:
        print(warning, flush=True)
    print(f"appliance: open {server.page_url} in Chromium or Firefox (models loading…)", flush=True)
    try:
        await server.ready.wait()
        if server.error:
            raise SystemExit(f"error: {server.error}")
        # the modules and models loaded by now live as long as the process: freezing them keeps each
        # full collection (one per ended session) to what sessions made since (~10 ms, not ~0.2 s)
        gc.collect()
        gc.freeze()
        print(f"appliance: ready at {server.page_url}", flush=True)
        await asyncio.Event().wait()
    finally:
        await server.stop()
        for cleanup in cleanups:
            await cleanup()
        server.runtime.stop()
