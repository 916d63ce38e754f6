"""The word-accuracy set's plan and noise, and the summary ``bench asr`` prints (no model file)."""

from __future__ import annotations

import numpy as np
import pytest

from appliance import config
from appliance.bench import asr_accuracy
from appliance.bench.asr import _summary, run_bench
from appliance.cli import build_parser
from appliance.config import ConfigError
from appliance.voice.asr import SAMPLE_RATE_HZ, Transcript

SR = SAMPLE_RATE_HZ


def _tone(seconds: float, level: float, hz: float) -> np.ndarray:
    return (level * np.sin(2 * np.pi * hz * np.arange(int(seconds * SR)) / SR)).astype(np.float32)


def test_the_set_covers_each_kind_of_speech_with_both_synthesisers_clean_and_noisy():
    plan = asr_accuracy.plan()
    sets = {u.set for u, *_ in plan}
    assert sets == {"names", "digits", "emails", "one_word", "commands"}
    assert any(len(u.parts) > 1 for u, *_ in plan if u.set == "digits")  # groups with pauses
    for u in asr_accuracy.UTTERANCES:
        voices = {(v.name, cond) for w, v, cond, _noise in plan if w == u}
        kinds = {"piper" if v.style else "espeak" for w, v, *_ in plan if w == u}
        assert kinds == {"piper", "espeak"} and {c for _v, c in voices} == {"clean", "noisy"}
        if u.set == "one_word":
            assert {v for v, _c in voices} == {v.name for v in asr_accuracy.VOICES}
    assert {noise for *_, cond, noise in plan if cond == "noisy"} == set(asr_accuracy.NOISES)
    assert asr_accuracy.set_digest() == asr_accuracy.set_digest()


def test_noise_is_mixed_at_the_asked_level():
    rng = np.random.default_rng(4)
    pool = [_tone(1.0, 0.3, f) for f in (200.0, 300.0, 400.0)]
    brown = np.cumsum(rng.standard_normal(5 * SR))
    for kind in asr_accuracy.NOISES:
        x = asr_accuracy._noise(kind, SR, 0.01, rng, pool, brown)
        assert len(x) == SR and np.sqrt((x.astype(np.float64) ** 2).mean()) == pytest.approx(0.01, rel=1e-3)


def test_summary_has_the_contract_shape():
    clips = [
        asr_accuracy.Clip("a.wav", "one_word", "Yes.", "piper", "clean"),
        asr_accuracy.Clip("b.wav", "one_word", "No.", "espeak-us", "noisy", "pink"),
        asr_accuracy.Clip("c.wav", "commands", "Call my sister.", "piper", "clean"),
    ]
    heard = [
        Transcript("yes", 0.0, 1.0, 0.100),
        Transcript("", 1.0, 1.0, 0.200),
        Transcript("Call my sister", 0.0, 2.0, 0.300),
    ]
    s = _summary(clips, heard, load_s=1.234)
    assert s["wer"] == pytest.approx(0.2)
    assert s["latency_ms"] == {"p50": 200, "p95": 290}
    assert s["by_set"] == {"one_word": 0.5, "commands": 0.0}
    assert s["by_condition"] == {"clean": 0.0, "noisy": 1.0}
    assert s["one_word_dropped"] == 1 and s["load_s"] == 1.23


def test_bench_asr_is_a_command():
    args = build_parser().parse_args(["bench", "asr", "--json", "--engines", "whisper,whisper:base:beam5"])
    assert args.json and args.engines == "whisper,whisper:base:beam5" and callable(args.func)


def test_a_bad_variant_stops_the_bench_before_it_renders_anything(monkeypatch):
    monkeypatch.setattr(asr_accuracy, "build", lambda *_a, **_k: pytest.fail("rendered the set"))
    with pytest.raises(ConfigError, match="moonshine:beam5"):
        run_bench(config.load(), ["whisper:base:beam5", "moonshine:beam5"])
