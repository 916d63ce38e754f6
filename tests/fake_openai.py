"""A tiny OpenAI-compatible chat server on 127.0.0.1 that plays a script (no model).

Each request to ``POST /v1/chat/completions`` takes the next item of ``script``: an int is
answered as that HTTP status with an error body; ``"drop"`` closes the connection without
an answer; ``"slow"`` answers nothing for ``slow_s``; ``"cut:TEXT"`` streams TEXT, then
closes the connection mid-answer; any other string is the answer's text, streamed in
chunks of ``chunk_chars`` (SSE, as llama-server does, with a final usage chunk).
``requests`` keeps every request body.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web


class FakeOpenAI:
    def __init__(self, script: list[int | str], chunk_chars: int = 4, slow_s: float = 2.0):
        self.script = list(script)
        self.chunk_chars = chunk_chars
        self.slow_s = slow_s
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    async def __aenter__(self) -> "FakeOpenAI":
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc) -> None:
        await self._runner.cleanup()

    async def _chat(self, req: web.Request) -> web.StreamResponse:
        body = await req.json()
        self.requests.append(body)
        step = self.script.pop(0)
        if step == "drop":
            req.transport.close()
            return web.Response(status=500)
        if isinstance(step, int):
            return web.json_response({"error": {"code": step, "message": f"scripted {step}"}}, status=step)
        if step == "slow":
            await asyncio.sleep(self.slow_s)
            return web.Response(status=500)
        cut = step.startswith("cut:")
        text = step.removeprefix("cut:")
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(req)
        for i in range(0, len(text), self.chunk_chars):
            await self._event(
                resp, [{"index": 0, "delta": {"content": text[i : i + self.chunk_chars]}, "finish_reason": None}]
            )
        if cut:
            req.transport.close()
            return resp
        await self._event(
            resp,
            [],
            usage={
                "prompt_tokens": 20,
                "completion_tokens": 5,
                "total_tokens": 25,
                "prompt_tokens_details": {"cached_tokens": 18},
            },
        )
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    @staticmethod
    async def _event(resp: web.StreamResponse, choices: list, **extra) -> None:
        chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": choices, **extra}
        await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
