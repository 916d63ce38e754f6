"""The recordings in recording.dir (appliance/voice/recordings.py) and `appliance recordings`."""

from __future__ import annotations

import json
import os
import time

import pytest

from appliance.voice import recordings


def _make(folder, name, age_days, audio=True):
    path = folder / name
    path.mkdir(parents=True)
    (path / "events.jsonl").write_text("{}\n")
    if audio:
        (path / "input.wav").write_bytes(b"RIFF" + bytes(100))
    t = time.time() - age_days * recordings.DAY_S
    for f in path.iterdir():
        os.utime(f, (t, t))
    return path


def test_prune_deletes_only_what_is_older_than_the_limit_by_its_newest_file(tmp_path):
    old = _make(tmp_path, "20261001-120000-webrtc-a", 40)
    _make(tmp_path, "20261101-120000-form-b", 10)
    long_call = _make(tmp_path, "20261001-130000-webrtc-c", 40)
    (long_call / "output.wav").write_bytes(b"RIFF")  # written just now: the call is as old as its end
    assert recordings.prune(tmp_path, 30) == ["20261001-120000-webrtc-a"]
    assert not old.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "20261001-130000-webrtc-c",
        "20261101-120000-form-b",
    ]
    assert recordings.prune(tmp_path, 0) == []  # 0 keeps everything
    assert recordings.prune(tmp_path / "missing", 30) == []


def test_list_says_what_holds_audio_and_delete_refuses_paths(tmp_path):
    _make(tmp_path, "20261101-120000-webrtc-a", 2, audio=False)
    _make(tmp_path, "20261102-120000-form-b", 1)
    found = recordings.list_recordings(tmp_path)
    assert [(r.id, r.audio) for r in found] == [("20261101-120000-webrtc-a", False), ("20261102-120000-form-b", True)]
    for bad in ("../x", "", "..", ".hidden", "a/b"):
        with pytest.raises(ValueError, match="not a recording id"):
            recordings.delete(tmp_path, bad)
    with pytest.raises(ValueError, match="no recording 'nope'"):
        recordings.delete(tmp_path, "nope")
    recordings.delete(tmp_path, "20261102-120000-form-b")
    assert [r.id for r in recordings.list_recordings(tmp_path)] == ["20261101-120000-webrtc-a"]


def test_the_command_lists_deletes_and_prunes(tmp_path, capsys):
    from appliance.cli import main

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"recording:\n  dir: {tmp_path / 'rec'}\n  retention_days: 7\n")
    _make(tmp_path / "rec", "20261101-120000-webrtc-a", 10)
    _make(tmp_path / "rec", "20261102-120000-webrtc-b", 1)
    assert main(["recordings", "list", "--config", str(cfg), "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)["recordings"]] == [
        "20261101-120000-webrtc-a",
        "20261102-120000-webrtc-b",
    ]
    assert main(["recordings", "prune", "--config", str(cfg)]) == 0
    assert "deleted 1 recording(s) older than 7 days" in capsys.readouterr().out
    assert main(["recordings", "delete", "--config", str(cfg), "../../etc"]) == 2
    assert main(["recordings", "delete", "--config", str(cfg), "20261102-120000-webrtc-b"]) == 0
    assert not (tmp_path / "rec").joinpath("20261102-120000-webrtc-b").exists()
