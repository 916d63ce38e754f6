"""CLI for form filling by voice.

* ``appliance demo`` — serve the demo forms on 127.0.0.1 and print their URLs.
* ``appliance form --url URL [--autonomous]`` — fill a form with the person on this
  terminal (the assistant's words are printed, the person's answers typed; a line
  ``=field value`` is a value typed into the form itself, taken as confirmed, as the page's
  box does); the voice page wires the same session to the microphone and speaker.
* ``appliance form --agent computer --task-id ID --url URL`` and ``appliance form --agent
  phone --task-id ID`` — the same session split over two processes that talk only over
  the Redis stream ``form-ID`` (``bus.backend: redis``): the first drives Chromium, the
  second is the person's terminal; start them in either order.

Exit status: 0 the form was submitted, 1 the task ended otherwise (declined, failed,
cancelled: the last line printed, a JSON object, says how), 2 refused (the reason in one
line: a bad option or URL, or the bus cannot be reached), 130 interrupted twice. The first
Ctrl-C or SIGTERM cancels the task: ``terminate`` on its bus stops both agents, wherever
they run.

* ``appliance worker computer --max-tasks N`` — a pool worker (``bus.backend: redis``): takes
  form calls' computer agents from the ``form_tasks`` stream that ``appliance serve`` with
  ``forms.computer: pool`` publishes, N at a time (one Chromium each); one JSON line per
  event on stdout. SIGTERM or Ctrl-C: it takes no more, finishes the ones it holds, exits 0.
* ``appliance pool status`` — the workers, their free slots, tasks in flight and pending
  claims, as one JSON object (:func:`appliance.forms.pool.status`).

The simulated person's commands (``simulate form``, ``bench form``) are in
:mod:`appliance.cli.simulate`.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
import time
from pathlib import Path

from appliance import config
from appliance.bench import form_replay
from appliance.bus import BusError
from appliance.config import add_config_arg
from appliance.demo.site import DemoSite, resolve_url, site_for
from appliance.errors import ApplianceError
from appliance.forms import pool, replay
from appliance.forms.session import AGENTS, PageSide, check_split, run_session
from appliance.forms.typed import is_typed_line
from appliance.forms.worker import computer_task
from appliance.llm.runtime import LLMRuntime
from appliance.phone_agent.line import QueueLine
from appliance.protocol.line import SayOutcome
from appliance.voice.session import open_session


def register(parsers) -> None:
    p = parsers.top.add_parser("demo", help="serve the bundled demo forms on 127.0.0.1 and print their URLs")
    add_config_arg(p)
    p.add_argument("--port", type=int, help="override forms.demo_port (0 = any free port)")
    p.set_defaults(func=_demo)

    p = parsers.top.add_parser("form", help="fill the web form at URL with the person on this terminal")
    add_config_arg(p)
    p.add_argument(
        "--url", help="the form's first page (demo:NAME serves a bundled demo form); required but with --agent phone"
    )
    p.add_argument(
        "--autonomous",
        action="store_true",
        help="start only the computer agent; it decides whether to call the phone agent",
    )
    p.add_argument("--task", default="", help="the task in words, for the computer agent's decision")
    p.add_argument(
        "--agent",
        choices=AGENTS,
        help="run only this agent; the other runs in another process with the same --task-id (bus.backend: redis)",
    )
    p.add_argument("--task-id", help="the task's id; its bus is the Redis stream form-<id> (default: a new one)")
    p.set_defaults(func=_form)

    p = parsers.top.add_parser("worker", help="a pool worker: run form calls' computer agents taken from Redis")
    p.add_argument("agent", choices=("computer",), help="the agent this worker runs")
    add_config_arg(p)
    p.add_argument("--max-tasks", type=int, default=1, help="tasks at a time, one Chromium each (default: 1)")
    p.set_defaults(func=_worker)

    parsers.replayers.append((_is_form_recording, _replay))
    p = parsers.bench.add_parser(
        "replay", help="replay every form recording in DIR through today's agents and compare (issue 33)"
    )
    add_config_arg(p)
    p.add_argument("dir", help="a folder of recordings (e.g. ~/.cache/appliance/recordings)")
    p.add_argument("--timing", choices=("asked", "recorded"), default="asked", help=TIMING_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object on one line")
    p.set_defaults(func=_bench_replay)

    pool_ = parsers.top.add_parser("pool", help="the form workers' pool on Redis").add_subparsers(
        dest="pool_command", required=True, metavar="SUBCOMMAND"
    )
    p = pool_.add_parser("status", help="workers, free slots, tasks in flight and pending claims, as JSON")
    add_config_arg(p)
    p.set_defaults(func=_pool_status)


def _demo(args) -> int:
    cfg = config.load(args.config)
    port = cfg.forms.demo_port if args.port is None else args.port

    async def serve() -> None:
        async with DemoSite(port=port) as site:
            for name, url in site.urls.items():
                print(f"{name}: {url}", flush=True)
            await asyncio.Event().wait()

    asyncio.run(serve())
    return 0


class TerminalLine(QueueLine):
    """The person on this terminal: the assistant's words printed, answers typed."""

    async def say(self, text: str) -> SayOutcome:
        print(f"assistant: {text}", flush=True)
        return SayOutcome(interrupted=False, heard=text)


def _form(args) -> int:
    cfg = config.load(args.config).for_forms()
    check_split(cfg, args.agent, args.task_id, args.autonomous)  # all refused before any model loads
    if (args.url is None) != (args.agent == "phone"):
        raise ApplianceError("--url is the computer agent's: give it, except with --agent phone")
    if args.url is not None and not args.url.startswith("demo:"):
        cfg.browser.check_url(args.url)
    llms = LLMRuntime(cfg).start()

    async def run() -> int:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()  # Ctrl-C or SIGTERM: terminate on the bus, so the other process stops too
        main = asyncio.current_task()

        def on_signal() -> None:
            if stop.is_set():  # the second time: stop now, without waiting for the agents
                main.cancel()
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        session = open_session(cfg, "form" if args.agent is None else f"form-{args.agent}")
        if args.agent == "computer":  # the person is at the phone agent's process
            line = hands = None
        else:
            line = TerminalLine()
            hands = PageSide(sender="terminal", date_order=cfg.forms.date_order)  # typed values; no preview here
            _read_terminal(line, hands, session.events.emit, loop)
        try:
            async with site_for(args.url or "") as site:
                url = cfg.browser.check_url(resolve_url(args.url, site)) if args.url else None
                result = await run_session(
                    cfg,
                    url,
                    llms=llms.llm,
                    line=line,
                    emit=session.events.emit,
                    autonomous=args.autonomous,
                    task=args.task,
                    folder=session.folder,
                    page_side=hands,
                    stop=stop,
                    task_id=args.task_id,
                    agent=args.agent,
                )
        finally:
            session.events.close()
        out = result.computer or result.phone
        print(
            json.dumps(
                {
                    "agent": args.agent or "both",
                    "status": out.status,
                    "detail": out.detail,
                    "phone_started_by": result.phone_started_by,
                    "recording": str(result.folder),
                }
            ),
            flush=True,
        )
        return 0 if out.status == "submitted" else 1

    try:
        return asyncio.run(run())
    except asyncio.CancelledError:  # interrupted twice
        return 130
    except BusError as e:  # e.g. no redis-server at bus.redis_url: the operator's to fix
        raise ApplianceError(str(e)) from None
    finally:
        llms.stop()


def _read_terminal(line: TerminalLine, hands: PageSide, emit, loop: asyncio.AbstractEventLoop) -> None:
    """Feed the person's typed lines to the session from a reader thread: answers to ``line``,
    ``=field value`` lines to ``hands`` (each printed back as taken or not)."""
    typing: set[asyncio.Task] = set()

    async def typed(raw: str) -> None:
        try:
            payload = await hands.value_line(raw, emit)
            print(f"(typed {payload.field} = {payload.value!r})", flush=True)
        except (RuntimeError, ValueError) as e:  # no session yet, a field the form has not shown, no value
            print(f"(not taken: {e})", flush=True)

    def take(raw: str) -> None:
        if not is_typed_line(raw):
            line.heard(raw.strip())
            return
        task = loop.create_task(typed(raw))
        typing.add(task)
        task.add_done_callback(typing.discard)

    def read_stdin() -> None:
        for raw in sys.stdin:
            if loop.is_closed():  # the task has ended: a line typed after it goes nowhere
                return
            try:
                loop.call_soon_threadsafe(take, raw)
            except RuntimeError:  # closed between the check and the call
                return

    threading.Thread(target=read_stdin, daemon=True).start()


def _worker(args) -> int:
    cfg = config.load(args.config).for_forms()
    pool.check_pool(cfg)
    if args.max_tasks < 1:
        raise ApplianceError(f"--max-tasks {args.max_tasks}: a worker runs 1 task or more at a time")
    try:
        asyncio.run(pool.status(cfg))  # Redis answers before the LLM loads
    except BusError as e:
        raise ApplianceError(str(e)) from None
    llms = LLMRuntime(cfg).start()

    def emit(event: str, **fields) -> None:
        print(json.dumps({"event": event, **fields}, default=str), flush=True)

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        worker = pool.Worker(cfg, computer_task(cfg, llms.llm, emit), max_tasks=args.max_tasks, emit=emit)
        await worker.run(stop)
        emit("worker_stopped", worker=worker.id)

    try:
        asyncio.run(run())
    except BusError as e:
        raise ApplianceError(str(e)) from None
    finally:
        llms.stop()
    return 0


def _pool_status(args) -> int:
    cfg = config.load(args.config)
    try:
        print(json.dumps(asyncio.run(pool.status(cfg))), flush=True)
    except BusError as e:
        raise ApplianceError(str(e)) from None
    return 0


TIMING_HELP = (
    "form recordings: asked (each utterance answers the agent's next wait for one) or recorded "
    "(each is heard at its recorded time)"
)


def _is_form_recording(folder: str) -> bool:
    return replay.is_form_recording(folder)


def _replay(args) -> int:
    """``appliance replay FOLDER`` of a form recording (:mod:`appliance.forms.replay`)."""
    cfg = config.load(args.config).for_forms()
    rec = replay.load(args.folder)
    llms = LLMRuntime(cfg).start()
    try:
        t0 = time.monotonic()
        now = asyncio.run(replay.replay(cfg, rec, llms.llm, timing=args.timing, transcribe=replay.asr_transcriber(cfg)))
        report = replay.compare(rec, now, time.monotonic() - t0)
    finally:
        llms.stop()
    if args.json:
        print(json.dumps(report, default=str))
    else:
        for f in report["fields"]:
            print(f"{f['field']}: then {f['then']!r}, now {f['now']!r}{'' if f['same'] else '  <- differs'}")
        print(f"verdict: {report['verdict']}; diverged at: {report['diverged_at']}")
    return 0


def _bench_replay(args) -> int:
    cfg = config.load(args.config).for_forms()
    root = Path(args.dir).expanduser()
    if not root.is_dir():
        raise ApplianceError(f"{root}: not a folder of recordings")
    llms = LLMRuntime(cfg).start()
    try:
        result = asyncio.run(
            form_replay.bench(cfg, root, llms.llm, timing=args.timing, progress=lambda m: print(m, file=sys.stderr))
        )
    finally:
        llms.stop()
    print(json.dumps(result, default=str) if args.json else json.dumps(result, indent=2, default=str))
    return 0
