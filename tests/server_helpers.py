"""Helpers for the voice server tests that need no model: a stand-in runtime, a bare
pipeline (the real SmallWebRTC transport, nothing between input and output) and SDP offers."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from appliance.bench.soak import audio_offer


def stub_runtime() -> SimpleNamespace:
    """Stands in for VoiceRuntime: "loaded" (``asr`` set) but with no models."""
    return SimpleNamespace(asr=object(), stop=lambda: None)


def bare_pipeline(_runtime, transport, _session, line=None):  # noqa: ANN001
    """The session's pipeline without models: transport in → transport out."""
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineWorker

    return PipelineWorker(Pipeline([transport.input(), transport.output()]))


real_offer = audio_offer  # a real aiortc audio offer; candidates=False: a tab closed right after posting


async def eventually(predicate, timeout_s: float, what: str) -> None:  # noqa: ANN001
    """Poll ``predicate()`` every 50 ms until true. Raises AssertionError naming ``what`` after ``timeout_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        await asyncio.sleep(0.05)
