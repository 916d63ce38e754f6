"""The voice benchmark's measurements on made-up page meters (appliance/bench/voice.py):
what counts as a barge-in, a bot that a backchannel stopped, and the rates."""

from __future__ import annotations

from types import SimpleNamespace

from appliance.bench.voice import (
    Trial,
    barge_in_figures,
    barge_in_steps,
    barge_in_trial,
    speculation_kept_rate,
    stopped_by,
    v2v_from_run,
)


def windows(a: float, b: float) -> list[float]:
    """Audible 20 ms windows from ``a`` to ``b`` ms."""
    return [float(t) for t in range(int(a), int(b) + 1, 20)]


def test_barge_in_is_the_last_bot_window_before_its_silence_after_the_onset():
    mic = windows(5000, 6000)
    bot = windows(3000, 5060) + windows(8000, 9000)  # cut 60 ms after the onset; the reply to it later
    assert barge_in_trial(mic, bot, start=4990) == 60


def test_a_trial_where_the_bot_was_quiet_does_not_count():
    assert barge_in_trial(windows(5000, 6000), windows(3000, 4500), start=4990) is None


def test_a_backchannel_that_the_bot_talked_through_did_not_stop_it():
    bot = windows(0, 2000) + windows(2100, 6000)  # a 100 ms dip between words
    assert stopped_by(windows(1000, 1400), bot, start=1000, clip_ms=400) is False


def test_a_bot_silent_300_ms_after_a_backchannel_was_stopped():
    bot = windows(0, 1040) + windows(1900, 6000)  # ducked, resumed 0.9 s later
    assert stopped_by(windows(1000, 1400), bot, start=1000, clip_ms=400) is True


def test_the_bots_own_pause_after_the_onset_is_not_a_stop():
    bot = windows(0, 1400) + windows(2000, 6000)  # the LLM fell behind, 400 ms into the clip
    assert stopped_by(windows(1000, 1400), bot, start=1000, clip_ms=400) is False


def test_yield_is_the_pages_duck_after_the_onset_and_none_without_one():
    from appliance.bench.voice import yield_ms

    mic = windows(5000, 6000)
    assert yield_ms(mic, [1000.0, 5040.0], start=4990) == 40
    assert yield_ms(mic, [1000.0], start=4990) is None  # stock pipecat: the page never ducks for it


def test_v2v_and_unanswered():
    mic = windows(1000, 2000) + windows(12000, 13000)
    bot = windows(2700, 4000)
    assert v2v_from_run(mic, bot, fallback_ms=8000) == ([700, 8000], 1)


def test_speculation_kept_rate():
    events = [
        {"event": "speculation", "state": s} for s in ("started", "kept", "started", "cancelled", "started", "kept")
    ]
    assert speculation_kept_rate(events) == 0.667 and speculation_kept_rate([]) is None


def test_figures_count_valid_trials_and_false_barge_ins():
    mic = windows(5000, 5800) + windows(20000, 20400) + windows(30000, 30300)
    bot = windows(3000, 5050) + windows(18000, 25000) + windows(28000, 30040) + windows(31000, 33000)
    run = SimpleNamespace(audible=lambda which: mic if which == "mic" else bot, ducks=[5030.0, 20030.0])
    trials = [Trial("stop0", 4990, (0, 1), 800), Trial("stop1", None, (1, 2), 800)]
    falses = [Trial("mm-hm", 19990, (10, 11), 400), Trial("knock", 29990, (20, 21), 300)]
    events = [{"event": "duck_released", "ts": 10_500}, {"event": "interruption", "ts": 20_500}]
    got = barge_in_figures(run, trials, falses, events)
    assert got["barge_in_trials"] == {"valid": 1, "run": 2} and got["barge_in_all_ms"] == [40.0, None]
    assert got["yield_ms"] == {"p50": 30.0, "p95": 30.0}  # the page lowered the bot 30 ms after the onset
    assert got["false_barge_in_rate"] == 0.5  # the knock stopped it (silent 1 s, and a cancelled reply)
    assert got["false_barge_in"] == {"clips": 2, "stopped": ["knock"], "ducks_released": 1}


def test_transport_is_paired_turn_by_turn():
    from appliance.bench.voice import transport_ms

    events = [{"event": "turn", "first_audio_sent_ms": v} for v in (700, 900, 650)]
    assert transport_ms([1100, 1250, 1000], events) == 350
    assert transport_ms([1100, 1250], events) == 475  # unpaired: the medians (1175 − 700)


def test_barge_in_steps_are_timed_from_each_trials_duck():
    def ev(name: str, t_ms: float) -> dict:
        return {"event": name, "t_ms": t_ms, "ts": 1_000_000 + t_ms}

    events = [
        ev("user_started_speaking", -500),  # long before the duck: the story question's own speech
        ev("duck", 100),
        ev("user_started_speaking", 180),
        ev("interim_transcript", 600),
        ev("barge_in_confirmed", 610),
        ev("user_started_speaking", 5000),
        ev("duck", 5100),  # the VAD before the page's message
        ev("barge_in_confirmed", 6000),
    ]
    trials = [
        Trial("stop0", 1.0, (999.9, 1004.0), 800),
        Trial("stop1", 2.0, (1004.9, 1009.0), 800),
        Trial("stop2", None, (1010.0, 1011.0), 800),
    ]  # no duck in its span: left out
    assert barge_in_steps(trials, events) == {"vad_start": -10.0, "first_interim": 500.0, "confirmed": 705.0}
    assert barge_in_steps(trials[2:], events) == {"vad_start": None, "first_interim": None, "confirmed": None}


def test_interim_on_page_counts_turns_whose_words_showed_before_their_final():
    from appliance.bench.voice import interim_on_page

    assert interim_on_page(["interim", "interim", "final", "final", "interim", "final"]) == round(2 / 3, 3)
    assert interim_on_page(["interim"]) is None


def test_transport_splits_into_uplink_and_downlink_on_the_shared_wall_clock():
    """The page's meter runs 1,000,000 ms behind the epoch; the server put the first end of
    speech 90 ms after the page's and sent the reply 700 ms after that, heard 150 ms later."""
    from appliance.bench.voice import link_ms
    from appliance.simulate.page_client import PageRun

    def rms(ts):
        return [(t, 0.1) for t in ts]

    mic = windows(1000, 2000) + windows(12000, 13000)
    bot = windows(2940, 4000) + windows(13900, 15000)
    run = PageRun(rms(mic), rms(bot), [], [], 0, "", [], [], epoch_offset_ms=1_000_000)
    turns = [  # ts: when the first audio was sent (epoch ms); its first_audio_sent_ms from the end of speech
        {"event": "turn", "ts": 1_000_000 + 2090 + 700, "first_audio_sent_ms": 700},
        {"event": "turn", "ts": 1_000_000 + 13110 + 600, "first_audio_sent_ms": 600},
    ]
    assert link_ms(run, [{"event": "vad_stopped"}, *turns]) == {"uplink_ms": 100.0, "downlink_ms": 170.0}
    assert link_ms(run, []) == {"uplink_ms": None, "downlink_ms": None}  # no turn to pair
    no_clock = PageRun(rms(mic), rms(bot), [], [], 0, "", [], [])
    assert link_ms(no_clock, turns) == {"uplink_ms": None, "downlink_ms": None}
