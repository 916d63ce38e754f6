"""AI seat plumbing without a model: speech grammar, decoding, prompt fitting, voices, CLI;
and two seats' voices through Piper (e2e)."""

import itertools
import json
import re

import numpy as np
import pytest

from appliance import cli, config
from appliance.judge import isolation, tools
from appliance.judge.rules import new_game
from appliance.judge.state import Role
from appliance.judge.tools import ToolSpec
from appliance.judge.transcript import parse
from appliance.simulate.werewolf_user import system_prompt as user_prompt
from appliance.simulate.werewolf_user import utterance
from appliance.werewolf import voices
from appliance.werewolf.seats import REASONS, SEER_REASONS, SeatError, decode, fit, reason_grammar, system_prompt


def test_every_speech_the_grammar_allows_is_legal():
    speak = ToolSpec(tools.SPEAK, targets=("P1", "P8"))
    g = reason_grammar(speak, Role.SEER)
    assert '"I am the seer. "' in g and "P8" in g and "P2" not in g
    assert "I am the seer" not in reason_grammar(speak, Role.WEREWOLF)
    for claim, stance, seat, reason, other in itertools.product(
        ("", "I am the seer. "), ("I suspect ", "I trust "), speak.targets, REASONS + SEER_REASONS, speak.targets
    ):
        text = f"{claim}{stance}{seat} because {reason.format(seat=other)}."
        assert speak.to_action({"text": text, "cites": []}).text == text


def test_decode_closes_a_cut_off_speech_and_rejects_garbage():
    speak = ToolSpec(tools.SPEAK)
    assert decode('{"cites":[],"text":"I suspect P2 because they voted for P3. I trust P4 bec', speak) == {
        "text": "I suspect P2 because they voted for P3.",
        "cites": [],
    }
    assert decode('{"cites":[],"text":"I suspect P2 because they', speak) == {
        "text": "I suspect P2 because",
        "cites": [],
    }
    vote = {"kind": "vote", "day": 1, "by": "P2", "target": "P4"}
    cut = '{"cites":[' + json.dumps(vote, separators=(",", ":")) + '],"text":"I suspect P2. They voted for P4 and'
    assert decode(cut, speak) == {"cites": [vote], "text": "I suspect P2."}  # cut at its last sentence, cites kept
    with pytest.raises(SeatError):
        decode('{"target":"P', ToolSpec(tools.VOTE, targets=("P2",), can_abstain=True))
    with pytest.raises(SeatError):
        decode("[1]", speak)


def test_fit_drops_oldest_speeches_only():
    lines = ["Table: P1, P2.", 'P1 said: "' + "a" * 50 + '"', "== Vote 1 ==", 'P2 said: "' + "b" * 50 + '"']
    out = fit(lines, 100)
    assert out == ["Table: P1, P2.", "== Vote 1 ==", lines[3]]
    assert fit(lines, 10_000) == lines


def test_system_prompts_name_no_other_seat():
    final = new_game(9, 8)
    for seat in final.seats:
        for make in (system_prompt, user_prompt):
            text = make(seat, final.role(seat), 8)
            assert set(re.findall(r"\bP\d\b", text)) == {seat}
            assert not isolation.scan(text, seat, final, static=True)


@pytest.mark.parametrize(
    "tool,args",
    [
        (ToolSpec(tools.VOTE, targets=("P3", "P7"), can_abstain=True), {"target": "P7"}),
        (ToolSpec(tools.VOTE, targets=("P3",), can_abstain=True), {"target": "abstain"}),
        (ToolSpec(tools.NIGHT_KILL, targets=("P5",)), {"target": "P5"}),
        (ToolSpec(tools.SEER_CHECK, targets=("P2",)), {"target": "P2"}),
        (ToolSpec(tools.WITCH_ACT, targets=("P4",), victim="P1", can_poison=True), {"save": True, "poison": "P4"}),
        (ToolSpec(tools.WITCH_ACT, targets=("P4",), victim="P1", can_poison=True), {"save": False, "poison": None}),
        (ToolSpec(tools.WITCH_ACT, targets=("P4",), can_poison=True), {"poison": "P4"}),
    ],
)
def test_simulated_utterances_parse_back_to_the_tool_call(tool, args):
    import random

    rng = random.Random(0)
    for _ in range(5):
        assert parse(utterance(tool, args, rng), tool) == tool.to_action(args)


def test_voice_library_gives_every_seat_its_own_voice():
    book = voices.load(config.Config().werewolf.voices)
    styles = [book.seats[f"P{i}"] for i in range(1, 9)]
    assert len(set(styles + [book.user_sim, book.narrator])) == 10
    assert all(book.descriptions[s] for s in book.descriptions)


@pytest.mark.e2e  # Piper
def test_two_seats_sound_different():
    from appliance.voice.piper_synth import PiperSynth

    synth = PiperSynth()
    book = voices.load(config.Config().werewolf.voices)
    a = synth.synthesize("I suspect player three.", book.seats["P1"]).astype(np.float32)
    b = synth.synthesize("I suspect player three.", book.seats["P7"]).astype(np.float32)

    def centroid(x):
        spec = np.abs(np.fft.rfft(x))
        return float((spec * np.arange(len(spec))).sum() / spec.sum() / len(x))

    assert centroid(b) > 1.3 * centroid(a)  # P7 is pitched well above P1


def test_human_user_serves_the_page_with_the_werewolf_mode(monkeypatch, capsys):
    import types

    from appliance.voice import server

    seen = {}

    async def fake_serve(cfg, features):
        srv = types.SimpleNamespace(cfg=cfg, modes={}, info={})
        for install in features:
            await install(srv)
        seen.update(cfg=cfg, srv=srv)

    monkeypatch.setattr(server, "serve_forever", fake_serve)
    assert cli.main(["werewolf", "--user", "human", "--seats", "6", "--seed", "5"]) == 0
    srv = seen["srv"]
    assert "werewolf" in srv.modes and srv.info["werewolf"] == {"seats": 6, "seed": 5}
    assert seen["cfg"].llm.parallel_slots >= 6  # one slot per seat
    assert "Werewolf card" in capsys.readouterr().out


async def test_seat_llm_seeds_each_turn_traces_it_and_closes_a_cut_off_speech(tmp_path):
    from fake_openai import FakeOpenAI

    from appliance.llm.client import OpenAICompatibleClient
    from appliance.werewolf.seats import SeatLLM
    from appliance.werewolf.trace import Tracer

    vote = ToolSpec(tools.VOTE, targets=("P2", "P3"), can_abstain=True)
    speak = ToolSpec(tools.SPEAK, targets=("P2", "P3"))
    script = [
        '{"target":"P3"}',
        '{"target":"P3"}',
        '{"cites":[],"text":"I suspect P2 because they were quiet. I tr',
        "nope",
    ]
    async with FakeOpenAI(script) as fake:
        llm = OpenAICompatibleClient(
            fake.base_url, "m", slot=4, api_key="none", timeout_s=5, max_retries=0, retry_backoff_ms=0
        )
        tracer = Tracer(tmp_path)
        seat = SeatLLM(
            llm=llm, seat="P5", role=Role.SEER, system="sys", cfg=config.Config().werewolf, tracer=tracer, seed=7
        )
        assert await seat.call(["== Vote 1 =="], "Vote.", vote, round=1, phase="vote") == {"target": "P3"}
        assert await seat.call(["== Vote 1 =="], "Vote.", vote, round=1, phase="vote", attempt=1) == {"target": "P3"}
        assert await seat.call([], "Speak.", speak, round=1, phase="day") == {
            "text": "I suspect P2 because they were quiet.",
            "cites": [],
        }
        with pytest.raises(SeatError, match="not the vote tool's JSON: 'nope'"):
            await seat.call([], "Vote.", vote, round=2, phase="vote")
        tracer.close()
    first, retry, speech, _ = fake.requests
    assert first["seed"] != retry["seed"] and first["id_slot"] == 4 and first["grammar"] == vote.grammar()
    assert speech["grammar"] == reason_grammar(speak, Role.SEER)
    rec = tracer.records[0]
    assert rec["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "== Vote 1 ==\nVote."}]
    assert (rec["seat"], rec["tool"], rec["response"], rec["cached_tokens"], rec["grammar"]) == (
        "P5",
        "vote",
        '{"target":"P3"}',
        18,
        vote.grammar(),
    )
    assert len((tmp_path / "P5.jsonl").read_text().splitlines()) == 4
