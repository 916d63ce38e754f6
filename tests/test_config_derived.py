"""The named derivations that size a command's runtime (``Config.for_*``), and the slot table."""

from __future__ import annotations

import pytest

from appliance import config
from appliance.config import (
    FORM_SLOTS,
    LLM_SLOTS,
    MAX_SEATS,
    REPLAY_ANSWER_TIMEOUT_S,
    SIMULATED_ANSWER_TIMEOUT_S,
    SIMULATED_REVIEW_TIMEOUT_S,
    ConfigError,
)


def test_forms_get_a_slot_per_prompt_and_their_llm_threads():
    cfg = config.load(overrides={"llm": {"parallel_slots": 1, "threads": 2}, "forms": {"llm_threads": 1}}).for_forms()
    assert all(LLM_SLOTS[name] < cfg.llm.parallel_slots for name in FORM_SLOTS)
    assert cfg.llm.threads == 1
    assert config.load(overrides={"llm": {"parallel_slots": 6}}).for_forms().llm.parallel_slots == 6  # never fewer


def test_simulation_is_loopback_on_a_free_port_with_a_patient_phone_agent():
    cfg = config.load(overrides={"server": {"host": "0.0.0.0", "port": 8765}, "forms": {"answer_timeout_s": 5}})
    sim = cfg.for_simulation()
    assert (sim.server.host, sim.server.port, sim.transport.loopback_only) == ("127.0.0.1", 0, True)
    assert sim.forms.answer_timeout_s == SIMULATED_ANSWER_TIMEOUT_S and sim.llm == cfg.for_forms().llm
    assert sim.forms.review_timeout_s == SIMULATED_REVIEW_TIMEOUT_S < cfg.forms.review_timeout_s  # nobody reviews it


def test_a_replay_is_loopback_and_waits_no_longer_than_its_recording():
    cfg = config.load(overrides={"browser": {"network": "open"}})
    rep = cfg.for_replay(42.0)
    assert rep.browser.network == "loopback" and rep.llm == cfg.for_forms().llm
    assert rep.forms.answer_timeout_s == REPLAY_ANSWER_TIMEOUT_S < cfg.forms.answer_timeout_s
    assert rep.forms.review_timeout_s == 42.0 and cfg.for_replay(0.0).forms.review_timeout_s == 1.0
    assert cfg.for_replay(42.0, recorded_pace=True).forms.answer_timeout_s == cfg.forms.answer_timeout_s


@pytest.mark.parametrize("seats", [6, 7, 8])
def test_werewolf_gets_a_slot_per_seat(seats):
    cfg = config.Config().for_werewolf(seats)
    assert cfg.werewolf.seats == seats
    assert all(LLM_SLOTS[f"P{i}"] < cfg.llm.parallel_slots for i in range(1, seats + 1))


def test_werewolf_page_has_slots_for_the_largest_table():
    cfg = config.Config().for_werewolf_page()
    assert cfg.llm.parallel_slots >= MAX_SEATS and cfg.werewolf.seats == config.Config().werewolf.seats


@pytest.mark.parametrize("seats", [5, 9])
def test_a_table_size_outside_the_rules_is_one_clear_error(seats):
    with pytest.raises(ConfigError, match="werewolf.seats: Input should be"):
        config.Config().for_werewolf(seats)


def test_werewolf_llm_gets_a_slot_per_seat_too_and_is_absent_by_default():
    assert config.Config().werewolf.llm is None and config.Config().for_werewolf(8).werewolf.llm is None
    cfg = config.load(overrides={"werewolf": {"llm": {"model": "qwen2.5-coder-1.5b", "parallel_slots": 2}}})
    assert cfg.werewolf.llm.model == "qwen2.5-coder-1.5b" and cfg.werewolf.llm.threads == cfg.llm.threads
    assert cfg.for_werewolf(7).werewolf.llm.parallel_slots == 7
    assert cfg.for_werewolf_page().werewolf.llm.parallel_slots == MAX_SEATS
    with pytest.raises(ConfigError, match="werewolf.llm"):
        config.load(overrides={"werewolf": {"llm": {"provider": "openai_compatible"}}})


def test_a_call_without_recording():
    cfg = config.load()
    assert cfg.recording.enabled and not cfg.without_recording().recording.enabled
    assert cfg.without_recording().recording.dir == cfg.recording.dir


@pytest.mark.parametrize("wait", ["agent_speech_timeout_ms", "incomplete_timeout_ms"])  # timeout, smart_turn
def test_form_sessions_keep_a_spellings_pauses_in_one_vad_segment_and_wait_no_longer(wait):
    cfg = config.load()
    forms = cfg.for_forms()
    assert forms.vad.stop_ms == cfg.forms.vad_stop_ms == 500
    assert forms.vad.stop_ms + getattr(forms.turn, wait) == cfg.vad.stop_ms + getattr(cfg.turn, wait)
    slow = config.load(overrides={"vad": {"stop_ms": 700}}).for_forms()
    assert slow.vad.stop_ms == 700 and getattr(slow.turn, wait) == getattr(cfg.turn, wait)
    short = config.load(overrides={"turn": {wait: 100}}).for_forms()
    assert getattr(short.turn, wait) == 0  # never below nothing


def test_the_voice_bench_runs_on_its_own_port_unrecorded_without_acks_and_with_short_replies():
    cfg = config.load()
    bench = cfg.for_voice_bench(60)
    assert (bench.server.port, bench.transport.loopback_only, bench.recording.enabled) == (0, True, False)
    assert (bench.llm.max_tokens, bench.turn.ack) == (60, "off")
    assert bench.with_reply_tokens(160).llm.max_tokens == 160 and bench.with_reply_tokens(160).turn.ack == "off"
    with pytest.raises(config.ConfigError, match="max_tokens"):
        cfg.with_reply_tokens(0)


def test_a_game_logs_its_envelopes_into_its_own_folder(tmp_path):
    cfg = config.load()
    assert cfg.with_bus_log_dir(tmp_path).bus.log_dir == str(tmp_path)
    assert cfg.with_bus_log_dir(tmp_path).bus.backend == cfg.bus.backend
