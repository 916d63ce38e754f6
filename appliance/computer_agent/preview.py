"""The person watches: a live picture of the agent's browser, and their hands on it.

:class:`Preview` attaches to the agent's page and keeps its latest picture: frames of
Chromium's own screencast (CDP ``Page.startScreencast``: a JPEG each time the page
repaints, so the picture is as fresh as the page), or, where the screencast cannot be
started, a screenshot after each action (:meth:`Preview.snap`, which the agent calls; it
does nothing while the screencast runs). The person's page fetches pictures with
:meth:`Preview.next_frame` (it waits for one newer than the last it has) and draws
:attr:`Preview.focus` — the box of the field being worked on, in the page's CSS pixels —
over them; it is never drawn into the form's own page. The person may click into the
picture and type (:meth:`click`, :meth:`key`): their own mouse and keys on the form, which
the agent does not count as its actions.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: Keys the person may press in the preview besides printable characters.
KEYS = frozenset(
    {
        "Backspace",
        "Delete",
        "Tab",
        "Enter",
        "Escape",
        "ArrowUp",
        "ArrowDown",
        "ArrowLeft",
        "ArrowRight",
        "Home",
        "End",
        "PageUp",
        "PageDown",
        " ",
    }
)


@dataclass(frozen=True)
class Frame:
    """One picture: ``seq`` (1, 2, …), JPEG ``data``, and the page's viewport in CSS pixels."""

    seq: int
    data: bytes
    width: int
    height: int


class Preview:
    """The live picture of one agent's page (see the module docstring).

    Args:
        quality: JPEG quality of the pictures (1–100).
        max_width: pictures are at most this wide (the page's viewport scaled down).
    """

    def __init__(self, quality: int = 60, max_width: int = 1280):
        self.quality, self.max_width = quality, max_width
        self.frame: Frame | None = None
        self.focus: dict | None = None  # {field, x, y, width, height} of the field worked on, or None
        self.screencast = False
        self._page = None
        self._cdp = None
        self._new = asyncio.Event()
        self._acks: set[asyncio.Task] = set()

    async def attach(self, page) -> None:
        """Start the picture of ``page`` (the screencast; screenshots if it cannot start)."""
        self._page = page
        try:
            self._cdp = await page.context.new_cdp_session(page)
            self._cdp.on("Page.screencastFrame", self._on_frame)
            await self._cdp.send(
                "Page.startScreencast",
                {"format": "jpeg", "quality": self.quality, "maxWidth": self.max_width, "maxHeight": self.max_width},
            )
            self.screencast = True
        except Exception as e:  # no CDP (another browser, a closed page): a screenshot after each action instead
            log.info("preview: no screencast (%s); screenshots after each action", str(e).splitlines()[0])
            self._cdp, self.screencast = None, False
            await self.snap()

    async def detach(self) -> None:
        """Stop the picture (the last one stays)."""
        cdp, self._cdp, self._page = self._cdp, None, None
        for t in self._acks:
            t.cancel()
        if cdp is not None:
            try:
                await cdp.send("Page.stopScreencast")
                await cdp.detach()
            except Exception as e:  # the browser is closing: nothing to stop
                log.debug("preview: stop: %s", str(e).splitlines()[0])

    def _on_frame(self, params: dict) -> None:
        meta = params.get("metadata") or {}
        self.put(
            base64.b64decode(params["data"]), int(meta.get("deviceWidth") or 0), int(meta.get("deviceHeight") or 0)
        )
        if self._cdp is not None:
            task = asyncio.ensure_future(self._cdp.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]}))
            self._acks.add(task)
            task.add_done_callback(self._acked)

    def _acked(self, task: asyncio.Task) -> None:
        self._acks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("preview: ack: %s", task.exception())

    def put(self, data: bytes, width: int = 0, height: int = 0) -> None:
        """A new picture (a screencast frame, a screenshot) of the page, ``width`` × ``height``
        CSS pixels (0: the page's viewport)."""
        if not (width and height) and self._page is not None and self._page.viewport_size:
            width, height = self._page.viewport_size["width"], self._page.viewport_size["height"]
        self.frame = Frame((self.frame.seq if self.frame else 0) + 1, data, width, height)
        new, self._new = self._new, asyncio.Event()
        new.set()

    async def snap(self) -> None:
        """A screenshot as the next picture, unless the screencast runs (then nothing)."""
        if self.screencast or self._page is None:
            return
        try:
            data = await self._page.screenshot(type="jpeg", quality=self.quality)
        except Exception as e:  # the page is navigating or closed: the next action brings a picture
            log.debug("preview: screenshot: %s", str(e).splitlines()[0])
            return
        self.put(data, 0, 0)

    async def show_focus(self, field: str, loc) -> None:
        """The field labelled ``field`` (its Playwright locator ``loc``) is being worked on: its box
        becomes :attr:`focus` (scrolled into view first, as the agent's action would)."""
        try:
            await loc.scroll_into_view_if_needed(timeout=1000)
            box = await loc.bounding_box(timeout=1000)
        except Exception as e:  # gone or hidden: no box to draw
            log.debug("preview: no box for %s: %s", field, str(e).splitlines()[0])
            box = None
        self.focus = {"field": field, **{k: round(v) for k, v in box.items()}} if box else None

    def clear_focus(self) -> None:
        self.focus = None

    async def next_frame(self, after: int = 0, timeout_s: float = 2.0) -> Frame | None:
        """The latest picture when it is newer than ``after``, else the next one within
        ``timeout_s`` (None: none came)."""
        if self.frame is not None and self.frame.seq > after:
            return self.frame
        new = self._new
        try:
            await asyncio.wait_for(new.wait(), timeout_s)
        except TimeoutError:
            return None
        return self.frame

    async def click(self, x: float, y: float) -> None:
        """The person clicks at ``(x, y)`` (CSS pixels of the page's viewport).

        Raises:
            ValueError: the point is not in the viewport (a NaN, an infinity, 1e308 …: Chromium
                would wait on such a click for ever, and every later action with it).
            RuntimeError: no page is attached, or its browser has closed (the form has ended).
        """
        from playwright.async_api import Error as PlaywrightError

        page = self._live()
        size = page.viewport_size or {"width": 0, "height": 0}
        if not (0 <= x <= size["width"] and 0 <= y <= size["height"]):  # False for NaN too
            raise ValueError(f"({x}, {y}) is not in the page's viewport ({size['width']}×{size['height']} CSS pixels)")
        try:
            await page.mouse.click(x, y)
        except PlaywrightError as e:
            raise RuntimeError(f"the form's browser is not open any more ({str(e).splitlines()[0]})") from None
        await self.snap()

    async def key(self, key: str) -> None:
        """The person types ``key`` (one character, or a name of :data:`KEYS`).

        Raises:
            ValueError: any other key name.
            RuntimeError: no page is attached, or its browser has closed (the form has ended).
        """
        if len(key) != 1 and key not in KEYS:
            raise ValueError(f"key {key!r} is not a character nor one of {', '.join(sorted(KEYS))}")
        from playwright.async_api import Error as PlaywrightError

        page = self._live()
        try:
            if len(key) == 1 and key != " ":
                await page.keyboard.type(key)
            else:
                await page.keyboard.press("Space" if key == " " else key)
        except PlaywrightError as e:
            raise RuntimeError(f"the form's browser is not open any more ({str(e).splitlines()[0]})") from None
        await self.snap()

    def _live(self):
        if self._page is None:
            raise RuntimeError("the form's browser is not open any more")
        return self._page
