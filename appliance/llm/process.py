"""The embedded llama-server's child process: ``python -m appliance.llm.process ARGS``.

Started by :class:`appliance.llm.server.EmbeddedLLMServer`, never by hand. It starts
``xllamacpp.Server`` on 127.0.0.1 (``--port``, 0 = a free one), writes the server's base
URL (``http://127.0.0.1:PORT/v1``) and a newline to the file descriptor ``--ready-fd``, then
serves until its stdin reaches end of file — the parent closed it, or the parent died — and
exits. llama.cpp's own log lines go to this process's stdout/stderr, which the parent sends
to a log file, so they never reach the appliance's console.

It lowers its own CPU priority by ``--nice`` (``llm.nice``) before loading the model: on a
busy machine the voice stages of the parent (VAD, ASR, turn model, TTS), which must keep
up with real time, go first, and the LLM takes what they leave.

Busy-polling is off (``poll = 0``): with another process on a core, polling threads
collapsed generation to ~1 tok/s. Each of the ``--parallel`` slots has its own KV cache of
``--ctx-per-slot`` tokens (``kv_unified`` off).
"""

from __future__ import annotations

import argparse
import os
import sys


def _params(args: argparse.Namespace):
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_ctx = args.ctx_per_slot * args.parallel
    p.n_parallel = args.parallel
    p.kv_unified = False
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads
    p.cpuparams.poll = 0
    p.cpuparams_batch.poll = 0
    p.cache_prompt = True
    p.warmup = True
    return p


def base_url(address: str | bytes) -> str:
    """xllamacpp's ``listening_address`` (``host:port`` or a URL) → the OpenAI base URL."""
    addr = address.decode() if isinstance(address, bytes) else address
    return addr.rstrip("/") + "/v1" if addr.startswith("http") else f"http://{addr}/v1"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m appliance.llm.process")
    ap.add_argument("--model", required=True, help="the gguf file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--parallel", type=int, required=True, help="slots")
    ap.add_argument("--ctx-per-slot", type=int, required=True, help="context tokens per slot")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--nice", type=int, default=0, help="niceness added to this process (0-19)")
    ap.add_argument("--ready-fd", type=int, required=True, help="where to write the base URL once serving")
    args = ap.parse_args(argv)
    os.nice(args.nice)  # llama.cpp's threads inherit it
    import xllamacpp

    server = xllamacpp.Server(_params(args))
    with os.fdopen(args.ready_fd, "w") as ready:
        ready.write(base_url(server.listening_address) + "\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()  # until the parent closes our stdin (or dies)
    del server  # xllamacpp stops the server when the object is collected
    return 0


if __name__ == "__main__":
    sys.exit(main())
