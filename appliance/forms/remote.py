"""The live preview across processes (issue 29, ``forms.computer: pool``): the browser is on a
pool worker, the person's page on the server that hosts their call.

* **Pictures.** The worker's :class:`~appliance.computer_agent.preview.Preview` is relayed by
  :func:`relay_preview` to the Redis stream ``form-<task id>:preview`` (:func:`preview_stream`):
  one entry per picture (``jpeg``, ``width``, ``height``, ``focus`` as JSON), at most
  :data:`MAX_FPS` a second (a newer picture replaces one not yet sent), the stream trimmed to
  its last :data:`KEEP` entries (a reader that lags gets the newest, never a backlog). The
  serving side's :class:`RemotePreview` reads it; a picture's ``seq`` is its entry's
  millisecond time on the Redis server, so pictures from a worker that took the task over
  follow those of the one before.
* **The person's hands.** A click or key in the preview (:meth:`RemotePreview.click`,
  :meth:`RemotePreview.key`) is a ``preview_click`` / ``preview_key`` envelope to the computer
  agent's process on the task's stream; :func:`relay_preview` puts it on the worker's page. A
  value the person types and a Submit during the review travel as they do in one process
  (``info_collected``, ``submit_authorized`` from ``page``: :class:`~appliance.forms.session.PageSide`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from appliance.bus import Bus, now_ms
from appliance.computer_agent.preview import KEYS, Frame, Preview
from appliance.protocol import Emit, Payload, PreviewClick, PreviewKey

log = logging.getLogger(__name__)

#: the most pictures a second a worker sends (issue 29: ≤ 5)
MAX_FPS = 5
#: entries the preview stream keeps (older ones are trimmed away)
KEEP = 4


def preview_stream(task_id: str) -> str:
    """The Redis stream of task ``task_id``'s pictures."""
    return f"form-{task_id}:preview"


async def relay_preview(preview: Preview, bus: Bus, redis_url: str, task_id: str, emit: Emit) -> None:
    """Worker side, until cancelled: ``preview``'s pictures to :func:`preview_stream`, and the
    person's ``preview_click`` / ``preview_key`` envelopes on ``bus`` (the task's stream, read
    from its start: those sent before this relay began were for a page that is gone and are
    dropped) onto the page. The stream is deleted when the relay ends."""
    r = aioredis.from_url(redis_url)
    key = preview_stream(task_id)
    since = now_ms()
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(_pictures(preview, r, key))
            tg.create_task(_hands(preview, bus, since, emit))
    finally:
        with contextlib.suppress(OSError, aioredis.RedisError):
            await r.delete(key)
        await r.aclose()


async def _pictures(preview: Preview, r: aioredis.Redis, key: str) -> None:
    seq, focus = 0, None
    while True:
        t0 = time.monotonic()
        frame = await preview.next_frame(seq, timeout_s=1.0)
        if frame is not None and (frame.seq != seq or preview.focus != focus):
            seq, focus = frame.seq, preview.focus
            fields = {"jpeg": frame.data, "width": frame.width, "height": frame.height, "focus": json.dumps(focus)}
            try:
                await r.xadd(key, fields, maxlen=KEEP, approximate=False)
            except (OSError, aioredis.RedisError) as e:  # the bus reports a lost server; pictures just pause
                log.debug("preview relay: %s", e)
        await asyncio.sleep(max(0.0, 1 / MAX_FPS - (time.monotonic() - t0)))


async def _hands(preview: Preview, bus: Bus, since: int, emit: Emit) -> None:
    async with bus.subscribe("computer", ("preview_click", "preview_key")) as sub:
        async for env in sub:
            if env.ts < since:
                continue
            try:
                match env.payload:
                    case PreviewClick(x=x, y=y):
                        await preview.click(x, y)
                    case PreviewKey(key=k):
                        await preview.key(k)
            except (ValueError, RuntimeError) as e:  # off the page, or the browser is closing: nothing to do
                emit("decision", agent="preview", what="preview_action_dropped", type=env.type, why=str(e)[:200])


class RemotePreview:
    """Serving side: the person's preview of a browser on a pool worker, with
    :class:`~appliance.computer_agent.preview.Preview`'s reading and hands (``next_frame``,
    ``focus``, ``click``, ``key``). ``send``: publishes a payload to the computer agent's
    process (:meth:`PageSide.to_computer <appliance.forms.session.PageSide.to_computer>`)."""

    def __init__(self, redis_url: str, task_id: str, send: Callable[[Payload], Awaitable[None]]):
        self._r = aioredis.from_url(redis_url)
        self._key = preview_stream(task_id)
        self._send = send
        self.frame: Frame | None = None
        self.focus: dict | None = None

    async def next_frame(self, after: int = 0, timeout_s: float = 2.0) -> Frame | None:
        """The newest picture when it is newer than ``after`` (its ``seq``), else the next one
        within ``timeout_s`` (None: none came, or Redis did not answer)."""
        try:
            got = await self._r.xrevrange(self._key, count=1)
            if not got or self._seq(got[0][0]) <= after:
                last = got[0][0] if got else b"0-0"
                read = await self._r.xread({self._key: last}, count=1, block=max(1, int(timeout_s * 1000)))
                got = read[0][1][-1:] if read else []
        except (OSError, aioredis.RedisError) as e:
            log.debug("remote preview: %s", e)
            return None
        if not got:
            return None
        entry_id, f = got[0]
        self.focus = json.loads(f[b"focus"])
        self.frame = Frame(self._seq(entry_id), f[b"jpeg"], int(f[b"width"]), int(f[b"height"]))
        return self.frame

    @staticmethod
    def _seq(entry_id: bytes) -> int:
        return int(entry_id.split(b"-")[0])

    async def click(self, x: float, y: float) -> None:
        """The person clicks at ``(x, y)``, CSS pixels of the page's viewport (the last picture's).

        Raises:
            ValueError: the point is not in the viewport. RuntimeError: no picture yet.
        """
        if self.frame is None:
            raise RuntimeError("the form's browser has shown no picture yet")
        if not (0 <= x <= self.frame.width and 0 <= y <= self.frame.height):  # False for NaN too
            raise ValueError(f"({x}, {y}) is not in the page's viewport ({self.frame.width}×{self.frame.height})")
        await self._send(PreviewClick(x=x, y=y))

    async def key(self, key: str) -> None:
        """The person types ``key`` (one character, or a name of :data:`~appliance.computer_agent.preview.KEYS`).

        Raises:
            ValueError: any other key name.
        """
        if len(key) != 1 and key not in KEYS:
            raise ValueError(f"key {key!r} is not a character nor one of {', '.join(sorted(KEYS))}")
        await self._send(PreviewKey(key=key))

    async def close(self) -> None:
        await self._r.aclose()
