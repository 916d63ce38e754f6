"""Headless Chromium as the person at the page.

Used by the end-to-end tests and ``appliance bench voice``: it opens the appliance's
page, clicks Connect, and reads back what the page measured — every 20 ms window's RMS of
the microphone and of the bot's audio after the page's own output gain
(``window.applianceMeter``, AudioContext ms) — and what it shows.

- :func:`talk`: the microphone is a WAV file (Chromium's fake capture, once, ``%noloop``).
- :class:`ScriptedMic` (with :func:`open_page`): the microphone is WebAudio — a
  ``MediaStreamAudioDestinationNode`` playing clips handed to the page, each started at
  once or once the page has heard the bot for a while (:data:`BENCH_HOOK`, a script only
  the benchmark and tests add to the page; the person's page never has it).

Needs a loopback-only network namespace for WebRTC on 127.0.0.1 (``scripts/test.sh``
runs the tests in one; see appliance/voice/ice.py).
"""

from __future__ import annotations

import asyncio
import base64
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable

import numpy as np

from appliance import chromium

AUDIBLE_RMS = 0.01  # −40 dBFS: a 20 ms window this loud is "audible" in the voice benchmark


@dataclass
class PageRun:
    """What the page saw: ``mic``/``bot`` = [(t_ms, rms)] per 20 ms window (same clock),
    ``user_lines``/``bot_lines`` = the conversation the page shows, ``status`` text,
    ``ducks`` = the meter-clock ms at which the page lowered the bot for an onset, ``line`` =
    what the live transcript line showed, in order (``"interim"`` or ``"final"``),
    ``epoch_offset_ms`` = Unix epoch ms − meter ms (the page's ``applianceClock``; None
    before the page had audio), so that a meter time can be set beside the server's events."""

    mic: list[tuple[float, float]]
    bot: list[tuple[float, float]]
    user_lines: list[str]
    bot_lines: list[str]
    interrupted_lines: int
    status: str
    ducks: list[float]
    line: list[str]
    epoch_offset_ms: float | None = None

    def epoch_ms(self, t_ms: float) -> float:
        """A meter time as Unix epoch ms (this machine's wall clock, which the server's events
        also use on loopback).

        Raises:
            ValueError: the page never had an audio clock.
        """
        if self.epoch_offset_ms is None:
            raise ValueError("the page had no audio clock to set beside the wall clock")
        return t_ms + self.epoch_offset_ms

    def audible(self, which: str) -> list[float]:
        return [t for t, rms in getattr(self, which) if rms > AUDIBLE_RMS]


async def talk(
    url: str,
    wav: Path,
    listen_s: float,
    screenshot: Path | None = None,
    done: Callable[[PageRun], bool] | None = None,
    max_s: float = 60.0,
    executable: str | None = None,
    extra_args: tuple[str, ...] = (),
) -> PageRun:
    """Open ``url``, connect with ``wav`` as the microphone, wait ``listen_s`` seconds
    after connecting — then, if ``done`` is given, until ``done(run)`` holds (checked
    twice a second, at most ``max_s`` in all) — and collect the page's measurements.
    ``executable``: the Chromium to launch (default :func:`appliance.chromium.executable`; a
    test may wrap it, e.g. in another network namespace); ``extra_args``: more switches.

    Raises:
        TimeoutError: the page never became ready to connect (30 s).
        RuntimeError: the page reported a connection error.
    """
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=executable or chromium.executable(),
            headless=True,
            args=chromium.OFFLINE_ARGS + chromium.fake_microphone_args(wav) + list(extra_args),
        )
        try:
            page = await browser.new_page()
            await page.goto(url)
            await _connect(page)
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
    ducks = [t for t, what in await page.evaluate("window.applianceBargeLog || []") if what == "duck"]
    clock = await page.evaluate("window.applianceClock ? window.applianceClock() : null")
    return PageRun(
        [tuple(x) for x in meter["mic"]],
        [tuple(x) for x in meter["bot"]],
        user,
        bot,
        cut,
        await page.inner_text("#status"),
        ducks,
        await page.evaluate("window.applianceLineLog || []"),
        clock[1] - clock[0] if clock else None,
    )


#: The benchmark's microphone (added with ``add_init_script`` before the page loads):
#: ``getUserMedia`` answers a WebAudio destination's stream; ``applianceBench.add(name,
#: base64 int16 mono 48 kHz)`` stores a clip; ``play(name)`` starts it now and
#: ``playWhenBotHeard(name, minMs, extraMs, timeoutMs, sinceMs)`` once the page's bot meter
#: has been audible for ``minMs`` (within the current reply: gaps under 500 ms; only windows
#: from meter time ``sinceMs`` on) plus ``extraMs`` and is audible at that moment. Both
#: return the page's AudioContext time (the meter's clock, ms) at the start, or null on
#: timeout.
BENCH_HOOK = """
(() => {
  const clips = {};
  let ctx = null, dest = null;
  navigator.mediaDevices.getUserMedia = async () => {
    ctx = new AudioContext({ sampleRate: 48000 });
    dest = ctx.createMediaStreamDestination();
    return dest.stream;
  };
  const meter = () => window.applianceMeter || { mic: [], bot: [] };
  const now = () => { const m = meter(); const last = [m.mic.at(-1), m.bot.at(-1)].filter(Boolean);
                      return last.length ? Math.max(...last.map((x) => x[0])) : 0; };
  const heardMs = (since) => {  // audible bot time in the current reply (from `since`), and whether it is audible now
    const bot = meter().bot; let total = 0, last = null;
    for (let i = bot.length - 1; i >= 0 && bot[i][0] >= since; i--) {
      if (bot[i][1] <= 0.01) continue;
      if (last !== null && last - bot[i][0] > 500) break;
      total += 20; last = bot[i][0];
    }
    const end = bot.length ? bot.at(-1)[0] : 0;
    const audibleNow = bot.slice(-4).some((x) => x[1] > 0.01);
    return { total, audibleNow, end };
  };
  window.applianceBench = {
    add(name, b64) {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const pcm = new Int16Array(bytes.buffer);
      clips[name] = Float32Array.from(pcm, (v) => v / 32768);
    },
    play(name) {
      const buf = ctx.createBuffer(1, clips[name].length, 48000);
      buf.copyToChannel(clips[name], 0);
      const src = ctx.createBufferSource(); src.buffer = buf; src.connect(dest); src.start();
      return now();
    },
    async playWhenBotHeard(name, minMs, extraMs, timeoutMs, sinceMs) {
      const t0 = performance.now(); let heardSince = null;
      while (performance.now() - t0 < timeoutMs) {
        const h = heardMs(sinceMs);
        if (h.total >= minMs && heardSince === null) heardSince = performance.now();
        if (heardSince !== null && performance.now() - heardSince >= extraMs && h.audibleNow) return this.play(name);
        await new Promise((r) => setTimeout(r, 10));
      }
      return null;
    },
  };
})();
"""


def _b64_pcm(audio: np.ndarray) -> str:
    """float32 mono 48 kHz → base64 int16 little-endian."""
    return base64.b64encode((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()).decode()


class ScriptedMic:
    """The page's WebAudio microphone (:data:`BENCH_HOOK`) on an open page."""

    def __init__(self, page):
        self.page = page

    async def add(self, name: str, audio: np.ndarray) -> None:
        """Hand the page a clip (float32 mono 48 kHz)."""
        await self.page.evaluate("([n, b]) => window.applianceBench.add(n, b)", [name, _b64_pcm(audio)])

    async def play(self, name: str) -> float:
        """Start clip ``name`` now; returns the page's meter time (ms) at its start."""
        return await self.page.evaluate("(n) => window.applianceBench.play(n)", name)

    async def play_when_bot_heard(
        self, name: str, min_ms: float = 200, extra_ms: float = 0, timeout_s: float = 20.0, since: float = 0.0
    ) -> float | None:
        """Start clip ``name`` once the page has heard the bot for ``min_ms`` (counting only
        from meter time ``since`` on: e.g. the end of the question whose reply it interrupts)
        + ``extra_ms`` and hears it now; returns the meter time at its start, or None (timeout)."""
        return await self.page.evaluate(
            "([n, a, b, t, s]) => window.applianceBench.playWhenBotHeard(n, a, b, t, s)",
            [name, min_ms, extra_ms, timeout_s * 1000, since],
        )

    async def read(self) -> PageRun:
        return await _read(self.page)


@asynccontextmanager
async def open_page(url: str) -> AsyncIterator[ScriptedMic]:
    """Open ``url`` in headless Chromium with the WebAudio microphone, connect, and yield it.

    Raises:
        TimeoutError: the page never became ready to connect (30 s).
        RuntimeError: the page reported a connection error.
    """
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=chromium.executable(),
            headless=True,
            args=chromium.OFFLINE_ARGS + chromium.webaudio_microphone_args(),
        )
        try:
            page = await browser.new_page()
            await page.add_init_script(BENCH_HOOK)
            await page.goto(url)
            await _connect(page)
            yield ScriptedMic(page)
            await page.click("#connect")  # disconnect cleanly
            await asyncio.sleep(0.3)
        finally:
            await browser.close()


async def _connect(page) -> None:  # noqa: ANN001
    """Click Connect once the page's models are ready and wait for the call (its pc_id).

    Raises:
        RuntimeError: the page showed an error (its status line's text).
    """
    await page.wait_for_selector("#connect:not([disabled])", timeout=30_000)
    await page.click("#connect")
    await page.wait_for_function("window.appliancePcId || document.querySelector('.dot.error')", timeout=30_000)
    if await page.query_selector(".dot.error"):
        raise RuntimeError(await page.inner_text("#status"))
