"""Headless Debian Chromium through Playwright, with a guaranteed clean stop.

Its path and switches come from :mod:`appliance.chromium` (``browser.network`` picks
``open`` or ``loopback``). :meth:`Browser.close`
closes Playwright's browser and then makes sure no process of this launch survives:
it finds the browser's process tree (by the launch's own PID, never by name) and kills
what is left, so after ``close()`` returns no Chromium process of ours exists.
:attr:`Browser.lost` says whether this launch died under us (its process exited or its page
crashed): the computer agent then starts a new one (:meth:`~appliance.computer_agent.agent.ComputerAgent.run`).
A :class:`Har` records the pages a recorded form call saw, or serves them again offline to
its replay (:mod:`appliance.forms.replay`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from appliance import chromium
from appliance.chromium import alive, descendants
from appliance.config import BrowserConfig

log = logging.getLogger(__name__)


@dataclass
class Har:
    """The pages of a form recording as a HAR file (Playwright's ``record_har_path`` /
    ``route_from_har``): ``mode`` ``record`` writes each browser start's pages to
    :meth:`recorded` (``page.har``, then ``page-2.har`` … after a restart); ``replay`` answers
    every request from ``path`` and nothing from the network (a request it does not hold is
    aborted), keeping what the page sends in ``sent`` (``{url, method, body}``: a form's POST,
    whether or not the HAR holds an answer for it)."""

    path: Path
    mode: Literal["record", "replay"]
    sent: list[dict] = field(default_factory=list)

    def recorded(self, start: int) -> Path:
        """Where browser start number ``start`` (1, 2, …) records its pages."""
        return self.path if start == 1 else self.path.with_name(f"{self.path.stem}-{start}{self.path.suffix}")


class Browser:
    """One headless Chromium (Playwright). ``await start()`` then ``page``; ``await close()``.

    Args:
        cfg: the ``browser`` section (binary, ``network``).
        extra_args: more command-line switches (after :func:`appliance.chromium.launch_args`).

    Raises (from ``start``):
        FileNotFoundError: the binary does not exist.
    """

    def __init__(self, cfg: BrowserConfig, extra_args: tuple[str, ...] = (), har: Har | None = None):
        self.cfg = cfg
        self.extra_args = extra_args
        self.har = har
        self.starts = 0
        self._pw = None
        self._browser = None
        self.context = None
        self.page = None
        self.pids: list[int] = []
        self.lost: str | None = None  # why this launch died under us (None: alive, or closed by us)

    async def start(self):
        """Launch Chromium and open one page; returns the Playwright ``Page``. Call :meth:`close`
        before starting again."""
        executable = chromium.executable(self.cfg.chromium_path)
        from playwright.async_api import async_playwright

        self._pw = await async_playwright().start()
        before = set(descendants(os.getpid()))
        self._browser = await self._pw.chromium.launch(
            executable_path=executable, headless=True, args=[*chromium.launch_args(self.cfg.network), *self.extra_args]
        )
        self.pids = [p for p in descendants(os.getpid()) if p not in before]
        self.lost = None
        self._browser.on("disconnected", lambda _b: self._lose("Chromium exited"))
        self.starts += 1
        if self.har is not None and self.har.mode == "record":  # written when the context closes
            self.context = await self._browser.new_context(
                record_har_path=str(self.har.recorded(self.starts)), record_har_content="embed"
            )
        else:
            self.context = await self._browser.new_context()
        if self.har is not None and self.har.mode == "replay":
            await self.context.route_from_har(self.har.path, not_found="abort")
            await self.context.route("**/*", self._note_post)
        self.page = await self.context.new_page()
        self.page.on("crash", lambda _p: self._lose("the page crashed"))
        log.info("chromium started (%d processes, network %s)", len(self.pids), self.cfg.network)
        return self.page

    async def _note_post(self, route) -> None:
        """Replaying a HAR: keep what the page sends (a form's POST body), then let the HAR answer."""
        req = route.request
        if req.method != "GET":
            self.har.sent.append({"url": req.url, "method": req.method, "body": req.post_data or ""})
        await route.fallback()

    def _lose(self, why: str) -> None:
        if self._browser is not None and self.lost is None:  # not while close() is closing it
            self.lost = why
            log.warning("chromium lost: %s", why)

    def processes(self) -> list[int]:
        """PIDs of this launch's Chromium processes still alive (the launch's root and its tree)."""
        roots = [p for p in self.pids if alive(p)]
        tree = set(roots)
        for r in roots:
            tree.update(c for c in descendants(r) if alive(c))
        return sorted(tree)

    async def close(self, timeout_s: float = 1.5) -> None:
        """Close the browser; whatever of it is alive after ``timeout_s`` is killed (SIGKILL).

        Safe to call twice and after a failed ``start``.
        """
        tree = self.processes()
        browser, self._browser = self._browser, None  # its "disconnected" is ours, not a loss
        try:
            if browser is not None and self.har is not None and self.har.mode == "record" and self.context:
                await asyncio.wait_for(self.context.close(), timeout_s)  # writes the HAR
            if browser is not None:
                await asyncio.wait_for(browser.close(), timeout_s)
        except Exception as e:  # a dead or hung browser: the kill below finishes the job
            log.warning("chromium close: %r; killing its processes", e)
        finally:
            self.context = self.page = None
            for pid in tree + self.processes():
                if alive(pid):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            if self._pw is not None:
                try:
                    await asyncio.wait_for(self._pw.stop(), timeout_s)
                except Exception as e:
                    log.warning("playwright stop: %r", e)
                self._pw = None
        log.info("chromium closed")
