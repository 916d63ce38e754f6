"""Headless Chromium as the person at the page: its microphone is a WAV file.

Used by the end-to-end tests and ``appliance bench voice``: it opens the appliance's
page, clicks Connect, lets the WAV play into the microphone (once, ``%noloop``), and
reads back what the page measured — every 20 ms window's RMS of the microphone and of
the bot's audio (``window.applianceMeter``, AudioContext ms) — and what it shows.
Needs a loopback-only network namespace for WebRTC on 127.0.0.1 (``scripts/test.sh``
runs the tests in one; see appliance/voice/ice.py).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from appliance import chromium

AUDIBLE_RMS = 0.01  # −40 dBFS: a 20 ms window this loud is "audible" in the voice benchmark


@dataclass
class PageRun:
    """What the page saw: ``mic``/``bot`` = [(t_ms, rms)] per 20 ms window (same clock),
    ``user_lines``/``bot_lines`` = the conversation the page shows, ``status`` text."""

    mic: list[tuple[float, float]]
    bot: list[tuple[float, float]]
    user_lines: list[str]
    bot_lines: list[str]
    interrupted_lines: int
    status: str

    def audible(self, which: str) -> list[float]:
        return [t for t, rms in getattr(self, which) if rms > AUDIBLE_RMS]


async def talk(url: str, wav: Path, listen_s: float, screenshot: Path | None = None,
               done: Callable[[PageRun], bool] | None = None, max_s: float = 60.0) -> PageRun:
    """Open ``url``, connect with ``wav`` as the microphone, wait ``listen_s`` seconds
    after connecting — then, if ``done`` is given, until ``done(run)`` holds (checked
    twice a second, at most ``max_s`` in all) — and collect the page's measurements.

    Raises:
        TimeoutError: the page never became ready to connect (30 s).
        RuntimeError: the page reported a connection error.
    """
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium.executable(), headless=True,
                                          args=chromium.OFFLINE_ARGS + chromium.fake_microphone_args(wav))
        try:
            page = await browser.new_page()
            await page.goto(url)
            await page.wait_for_selector("#connect:not([disabled])", timeout=30_000)
            await page.click("#connect")
            await page.wait_for_function("window.appliancePcId || document.querySelector('.dot.error')",
                                         timeout=30_000)
            if await page.query_selector(".dot.error"):
                raise RuntimeError(await page.inner_text("#status"))
            await asyncio.sleep(listen_s)
            run = await _read(page)
            waited = listen_s
            while done is not None and not done(run) and waited < max_s:
                await asyncio.sleep(0.5)
                waited += 0.5
                run = await _read(page)
            if screenshot:
                await page.screenshot(path=str(screenshot), full_page=True)
            await page.click("#connect")  # disconnect cleanly
            await asyncio.sleep(0.3)
        finally:
            await browser.close()
    return run


async def _read(page) -> PageRun:
    meter = await page.evaluate("window.applianceMeter")
    user = await page.eval_on_selector_all(".msg.user .text", "els => els.map(e => e.textContent)")
    bot = await page.eval_on_selector_all(".msg.bot .text", "els => els.map(e => e.textContent)")
    cut = len(await page.query_selector_all(".msg.bot.cut"))
    return PageRun([tuple(x) for x in meter["mic"]], [tuple(x) for x in meter["bot"]], user, bot, cut,
                   await page.inner_text("#status"))
