"""``appliance replay`` of a Werewolf recording: the game re-run from its seed and bus log
by the current code, compared envelope by envelope (no model: a typed game recorded with
the first-choice fake LLM of the benchmark's test)."""

from __future__ import annotations

import json

import pytest
from test_werewolf_bench import FakeRuntime

from appliance import cli, config
from appliance.protocol.werewolf import ACTION
from appliance.simulate.werewolf_user import SimulatedUser
from appliance.werewolf.game import play_game
from appliance.werewolf.replay import ReplayError, is_recording, replay


@pytest.fixture
async def recording(tmp_path):
    cfg = config.load(overrides={"recording": {"dir": str(tmp_path)}}).for_werewolf(7)
    run = await play_game(FakeRuntime(), cfg, 3, 7, SimulatedUser(FakeRuntime(), cfg, "text"))
    return run


async def test_a_recorded_game_replays_to_the_same_envelopes(recording):
    out = await replay(recording.folder)
    assert out["diverged"] is False and out["first_difference"] is None
    assert out["recorded"] == out["replayed"] == out["matching"] > 100 and (out["seed"], out["seats"]) == (3, 7)


async def test_replay_shows_the_first_envelope_where_the_current_code_differs(recording):
    log = recording.folder / "bus.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    user = recording.final.user_seat
    # the recording says an AI seat voted otherwise than today's strategy does (an older strategy)
    i, vote = next(
        (i, r)
        for i, r in enumerate(records)
        if r.get("type") == ACTION and r["payload"]["tool"] == "vote" and r["payload"]["seat"] != user
    )
    turn = next(r for r in records if r.get("id") == vote["reply_to"])
    legal = turn["payload"]["tool"]["targets"] + ["abstain"]
    vote["payload"]["arguments"]["target"] = next(t for t in legal if t != vote["payload"]["arguments"]["target"])
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = await replay(recording.folder)
    d = out["first_difference"]
    assert out["diverged"] and out["matching"] == d["index"] == i
    assert d["recorded"]["payload"]["arguments"] != d["replayed"]["payload"]["arguments"]
    assert d["recorded"]["sender"] == d["replayed"]["sender"] == vote["payload"]["seat"]


async def test_only_a_werewolf_recording_is_replayed_as_one(recording, tmp_path):
    assert is_recording(recording.folder) and not is_recording(tmp_path)
    with pytest.raises(ReplayError, match="not a Werewolf recording"):
        await replay(tmp_path)


def test_replay_cli_prints_the_outcome(tmp_path, capsys):
    import asyncio

    cfg = config.load(overrides={"recording": {"dir": str(tmp_path)}}).for_werewolf(6)
    run = asyncio.run(play_game(FakeRuntime(), cfg, 5, 6, SimulatedUser(FakeRuntime(), cfg, "text")))
    assert cli.main(["replay", str(run.folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["diverged"] is False
    assert cli.main(["replay", str(run.folder)]) == 0
    assert "match the recording" in capsys.readouterr().out
