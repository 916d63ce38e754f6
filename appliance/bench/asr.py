"""``appliance bench asr``: word error rate and latency of each ASR engine variant on the word-accuracy set.

A variant is ``ENGINE[:MODEL][:beamN]`` (``whisper``, ``whisper:base:beam5``, ``moonshine``;
:meth:`~appliance.config.Config.for_asr_engine`). Every variant hears every clip of
:mod:`~appliance.bench.asr_accuracy`, the variants taking turns clip by clip (in order, then
in reverse), so a busy moment on a shared machine costs them alike. WER is :func:`~appliance.bench.wer.wer` over the clips of each group;
``latency_ms`` is each ``transcribe`` call's own compute time. ``one_word_dropped`` counts
one-word answers that came back empty (the pipeline would have heard no turn at all).
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from appliance.bench import asr_accuracy
from appliance.bench.wer import normalise, wer
from appliance.config import Config
from appliance.voice.asr import load_asr

log = logging.getLogger(__name__)


def run_bench(
    cfg: Config, engines: list[str], folder: Path | None = None, progress: Callable[[str], None] = log.info
) -> dict:
    """Render (or reuse) the set in ``folder``, run each variant of ``engines``
    (``ENGINE[:MODEL][:beamN]``, named so in the result) on it, and summarise. Per-clip results go to ``results.jsonl`` in the
    set's folder.

    Returns ``{"engines": {NAME: {"wer", "latency_ms": {"p50", "p95"}, "by_set": {SET: wer},
    "by_condition": {...}, "by_voice": {...}, "one_word_dropped", "load_s"}}, "clips", "details"}``.

    Raises:
        ConfigError: a variant is not ``ENGINE[:MODEL][:beamN]``.
        ModelError: an engine's model files are missing.
    """
    variants = {name: cfg.for_asr_engine(name).asr for name in engines}  # a bad one fails before rendering
    folder, clips = asr_accuracy.build(folder, progress)
    audio = [asr_accuracy.read(folder, c) for c in clips]
    asrs, load_s = {}, {}
    for name, asr_cfg in variants.items():
        progress(f"loading ASR engine {name}")
        t0 = time.monotonic()
        asrs[name] = load_asr(asr_cfg)
        load_s[name] = time.monotonic() - t0
        asrs[name].transcribe(audio[0])  # warm-up, not counted
    progress(f"transcribing {len(clips)} clips with {', '.join(engines)}")
    heard: dict[str, list] = {name: [None] * len(clips) for name in engines}
    for i, a in enumerate(audio):
        for name in engines if i % 2 == 0 else engines[::-1]:
            heard[name][i] = asrs[name].transcribe(a)
    details = folder / "results.jsonl"
    with open(details, "w") as out:
        for i, clip in enumerate(clips):
            for name in engines:
                r = heard[name][i]
                out.write(
                    json.dumps(
                        {
                            "clip": clip.file,
                            "engine": name,
                            "set": clip.set,
                            "voice": clip.voice,
                            "condition": clip.condition,
                            "noise": clip.noise,
                            "reference": clip.text,
                            "text": r.text,
                            "ok": normalise(r.text) == normalise(clip.text),
                            "compute_ms": round(r.compute_s * 1000),
                        }
                    )
                    + "\n"
                )
    return {
        "engines": {name: _summary(clips, heard[name], load_s[name]) for name in engines},
        "clips": len(clips),
        "details": str(details),
    }


def _summary(clips: list[asr_accuracy.Clip], results: list, load_s: float) -> dict:
    groups: dict[str, dict[str, list]] = {
        "by_set": defaultdict(list),
        "by_condition": defaultdict(list),
        "by_voice": defaultdict(list),
    }
    for clip, r in zip(clips, results):
        pair = (clip.text, r.text)
        groups["by_set"][clip.set].append(pair)
        groups["by_condition"][clip.condition].append(pair)
        groups["by_voice"][clip.voice].append(pair)
    ms = np.array([r.compute_s * 1000 for r in results])
    return {
        "wer": round(wer((c.text, r.text) for c, r in zip(clips, results)), 4),
        "latency_ms": {"p50": round(float(np.percentile(ms, 50))), "p95": round(float(np.percentile(ms, 95)))},
        **{g: {k: round(wer(v), 4) for k, v in by.items()} for g, by in groups.items()},
        "one_word_dropped": sum(c.set == "one_word" and not r.text for c, r in zip(clips, results)),
        "load_s": round(load_s, 2),
    }
