"""``bench werewolf`` without models: its speech metrics, and whole typed games through
:func:`play_game` on a runtime whose LLM answers every grammar with its first choice."""

from __future__ import annotations

import json

import pytest
from fakes import ScriptedLLM
from judge_helpers import offered_cites, opening_of

from appliance import cli, config
from appliance.bench import werewolf
from appliance.judge.events import Speech
from appliance.llm.base import Reply
from appliance.simulate.werewolf_user import SimulatedUser
from appliance.werewolf.game import play_game


def test_distinct_speeches_ignore_seat_ids_numbers_and_case():
    assert werewolf.speech_tokens("I suspect P4 because they voted for player two on day 1.") == [
        "i",
        "suspect",
        "because",
        "they",
        "voted",
        "for",
        "on",
        "day",
    ]
    same = ["I suspect P4 because they voted for P2 on day 1.", "i suspect p5 because they voted for P3 on day 2."]
    assert werewolf.distinct_count(same) == 1
    assert werewolf.distinct_count(["I suspect P4 because they lied.", "I trust P4 because they sound honest."]) == 2
    # one word of eight differs: 12.5 % is not distinct; two of eight (25 %) is
    base = "a b c d e f g h"
    assert werewolf.distinct_count([base, "a b c d e f g x"]) == 1
    assert werewolf.distinct_count([base, "a b c d e f x y"]) == 2
    assert werewolf.token_distance([], []) == 0.0 and werewolf.token_distance(["a"], []) == 1.0


class FirstChoiceLLM(ScriptedLLM):
    """Answers every request with the first legal value of its schema; a speech is the
    grammar's forced opening and a few words citing the first fact offered (or a fixed
    sentence citing nothing for the simulated user)."""

    async def complete(self, system, user, *, grammar, schema, **options):
        props = schema["properties"]
        if "text" in props:
            opening = opening_of(grammar)
            text = opening + "they keep changing their story." if opening else "I suspect P1 because they were quiet."
            return Reply(json.dumps({"text": text, "cites": offered_cites(grammar)[:1]}), None, None, None, 0)
        args = {}
        for key, prop in props.items():
            args[key] = False if prop.get("type") == "boolean" else prop["enum"][0]
        return Reply(json.dumps(args), None, None, None, 0)


class FakeRuntime:
    synth = asr = None

    def llm(self, name):
        return FirstChoiceLLM()

    def describe_llm(self, name):
        return {"config": "llm", "provider": "fake", "model": "first-choice"}


async def test_typed_games_give_every_figure_of_the_benchmark(tmp_path):
    cfg = config.load(overrides={"recording": {"dir": str(tmp_path)}}).for_werewolf(7)
    runs = [
        await play_game(FakeRuntime(), cfg, seed, 7, SimulatedUser(FakeRuntime(), cfg, "text")) for seed in (1, 2, 3)
    ]
    for run in runs:
        assert run.result.status == "finished" and run.result.isolation_violations == 0
        assert run.speeches and all(sp.seat != run.final.user_seat for sp in run.speeches)
        said = [
            e.what.text for e in run.final.events if isinstance(e.what, Speech) and e.what.seat != run.final.user_seat
        ]
        assert [sp.text for sp in run.speeches] == said
        assert (run.folder / "result.json").is_file() and not (run.folder / "audio").exists()
        assert json.loads((run.folder / "config.json").read_text())["user_voice"] == "text"
    out = werewolf.summarise(runs, 7, "text", FakeRuntime().describe_llm("P1"), baseline_games=50, code_games=50)
    assert list(out)[:14] == [
        "games",
        "villager_win_rate",
        "baseline_villager_win_rate",
        "code_villager_win_rate",
        "seer_revealed_by_next_day_rate",
        "seer_exiled_by_villagers_rate",
        "distinct_speech_rate",
        "template_speech_rate",
        "grounded_draft_rate",
        "said_grounded_rate",
        "isolation_violations",
        "failed_closed",
        "median_game_s",
        "model",
    ]
    assert out["games"] == 3 and out["failed_closed"] == 0 and out["baseline_games"] == 50 and out["code_games"] == 50
    lo, hi = out["code_villager_win_rate_95"]
    assert lo <= out["code_villager_win_rate"] <= hi
    assert out["speeches"] == sum(len(r.speeches) for r in runs)
    assert 0 <= out["template_speech_rate"] < 0.5  # the openings conform
    assert out["said_grounded_rate"] == 1.0 and out["drafts"] == out["speeches"]
    assert (
        out["grounded_draft_rate"] == 1.0
    )  # the first fact offered is true; "they keep changing their story" names no other
    assert out["distinct_speech_rate"] < 0.5  # one wording for every speech: hardly any is distinct
    lo, hi = out["villager_win_rate_95"]
    assert lo <= out["villager_win_rate"] <= hi
    assert out["asr_checks"]["failed_closed"] == 0 and out["asr_checks"]["matched"] > 0
    assert out["seeds"] == [1, 3]
    # by_model's figures for one model are the same figures over the same games
    per_model = werewolf.model_figures(runs, out["model"])
    speech_keys = ("grounded_draft_rate", "said_grounded_rate", "template_speech_rate", "distinct_speech_rate")
    assert {k: per_model[k] for k in speech_keys} == {k: out[k] for k in speech_keys}
    assert per_model["games"] == 3 and per_model["median_game_s"] == out["median_game_s"]
    assert per_model["villager_win_rate"] == out["villager_win_rate"]


def test_bench_cli_passes_its_options(monkeypatch, capsys):
    seen = {}

    def fake_run(cfg, seeds, seats, user, compare, compare_games):
        seen.update(seeds=seeds, seats=seats, user=user, compare=compare, compare_games=compare_games)
        return {"games": len(seeds)}

    monkeypatch.setattr(werewolf, "run_bench", fake_run)
    assert cli.main(["bench", "werewolf", "--games", "3", "--seats", "6", "--user", "text", "--json"]) == 0
    assert seen == {"seeds": range(1, 4), "seats": 6, "user": "text", "compare": None, "compare_games": 10}
    assert json.loads(capsys.readouterr().out) == {"games": 3}
    argv = ["bench", "werewolf", "--seeds", "101..140", "--compare-model", "qwen2.5-coder-1.5b", "--json"]
    assert cli.main(argv) == 0
    assert seen["seeds"] == range(101, 141) and seen["compare"] == "qwen2.5-coder-1.5b"
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # one clear line, no game played
        cli.main(["bench", "werewolf", "--seeds", "140..101"])
    assert e.value.code == 2 and "seeds must be A..B" in capsys.readouterr().err
