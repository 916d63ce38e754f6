"""``bench pool``'s figures (:func:`appliance.bench.pool.summarise`) from hand-made runs: the
throughput of each run and their ratio, lost tasks, submissions per task, the LLM's busy share
and the failover's claim and re-asks. The runs themselves need redis-server, Chromium and the
LLM: ``appliance bench pool``."""

from __future__ import annotations

import json

from appliance import config
from appliance.bench.pool import busy_s, summarise, worker_config


def _task(task_id: str, start: float | None, end: float | None, **over) -> dict:
    return {
        "task_id": task_id,
        "form": "contact-reveal",
        "start_s": start,
        "end_s": end,
        "finished": end is not None,
        "accepted": end is not None,
        "submissions": 1 if end is not None else 0,
        "status": "submitted" if end is not None else None,
        "takers": ["w1"],
        "asked": [],
        **over,
    }


def _runs(kill: dict | None, takers: list[str]) -> dict:
    asked = [(201.0, "given_name"), (203.0, "email"), (210.0, "email"), (212.0, "phone")]
    return {
        "2": {
            "workers": 2,
            "tasks": [
                _task("a", 0, 10),
                _task("b", 0, 12),
                _task("c", 10, 20, submissions=2),
                _task("d", 12, 24),
            ],
            "llm_spans": [(0.0, 24.0)],
        },
        "1": {
            "workers": 1,
            "tasks": [_task("e", 100, 110), _task("f", 110, 120), _task("g", 120, 130), _task("h", 130, 140)],
            # 1 s (clipped at the run's start) + 102..108 (two overlapping) + 1 s (clipped at its end) = 8 of 40 s
            "llm_spans": [(95.0, 101.0), (102.0, 105.0), (104.0, 108.0), (139.0, 150.0)],
        },
        "failover": {
            "workers": 2,
            "tasks": [_task("k", 200, 230, takers=takers, asked=asked), _task("l", None, None)],
            "llm_spans": [],
            "kill": kill,
        },
    }


def test_the_summary_has_the_issues_figures_over_the_three_runs():
    out = summarise(_runs({"worker": "w1", "task_id": "k", "at_s": 205.0, "filled": 2}, ["w1", "w2"]), workers=2)
    assert list(out)[:10] == [
        "tasks",
        "accepted",
        "task_s",
        "throughput_per_min",
        "throughput_ratio",
        "submissions_per_task",
        "lost",
        "failover",
        "llm_busy_share",
        "runs",
    ]
    assert (out["tasks"], out["accepted"], out["lost"]) == (10, 9, 1)  # "l" was never finished by any worker
    assert out["throughput_per_min"] == {"1": 6.0, "2": 10.0}  # 4 tasks in 40 s; 4 tasks in 24 s
    assert out["throughput_ratio"] == 1.67
    assert out["task_s"] == {"p50": 10.0, "p95": 12.0}  # runs "2" and "1" only
    assert out["submissions_per_task"]["c"] == 2 and out["submissions_per_task"]["l"] == 0
    assert out["llm_busy_share"] == 0.2
    # email was asked before the kill and again after it; phone only after it
    assert out["failover"] == {"claimed": True, "accepted": True, "asked_again": 1}
    assert out["runs"]["failover"]["kill"]["asked_again_fields"] == ["email"]
    assert out["runs"]["2"]["wall_s"] == 24.0 and out["runs"]["2"]["llm_busy_share"] == 1.0
    json.dumps(out)  # printable as it is


def test_a_task_only_the_killed_worker_took_is_not_claimed_and_no_kill_gives_nulls():
    out = summarise(_runs({"worker": "w1", "task_id": "k", "at_s": 205.0, "filled": 2}, ["w1"]), workers=2)
    assert out["failover"]["claimed"] is False
    out = summarise(_runs(None, ["w1"]), workers=2)
    assert out["failover"] == {"claimed": None, "accepted": None, "asked_again": None}
    assert out["runs"]["failover"]["kill"] is None


def test_busy_time_is_the_union_of_the_spans_inside_the_window():
    assert busy_s([(0, 2), (1, 3), (5, 6), (5.5, 5.7)], 0, 10) == 4
    assert busy_s([(0, 10), (2, 3)], 4, 6) == 2
    assert busy_s([], 0, 10) == 0


def test_the_workers_config_loads_with_the_llm_as_an_openai_compatible_endpoint(tmp_path):
    cfg = config.load(overrides={"bus": {"backend": "redis"}, "forms": {"computer": "pool", "claim_idle_ms": 5000}})
    path = tmp_path / "worker.json"
    path.write_text(json.dumps(worker_config(cfg, "http://127.0.0.1:9/v1", tmp_path)))
    got = config.load(path)
    assert (got.llm.provider, got.llm.base_url) == ("openai_compatible", "http://127.0.0.1:9/v1")
    assert (got.bus.backend, got.forms.computer, got.forms.claim_idle_ms) == ("redis", "pool", 5000)
