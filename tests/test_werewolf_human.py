"""The human user seat of Werewolf through the real voice pipeline, without a browser.

An aiortc client joins the server's ``werewolf`` mode as the page would and plays the
person: it hears the judge's question (real Piper audio over WebRTC, transcribed by
Whisper), answers by voice (Piper in another voice → Opus → the server's VAD and
Whisper), and the game applies only what the transcript says. Seed 1 with 6 seats puts
the user at P4, the first werewolf, so the game's first turn is the user's night attack.
The voice test runs in a loopback-only network namespace (scripts/test.sh); the whole-game
test replaces the line and the AI seats' LLMs with scripts (no models).
"""

from __future__ import annotations

import asyncio
import json
import re

import numpy as np
import pytest
from helpers import loopback_only_network, words

from appliance import config
from appliance.judge.events import Speech
from appliance.judge.state import Role, deal
from appliance.simulate.webrtc_client import WebRTCClient
from appliance.voice.piper_synth import PiperSynth, VoiceStyle
from appliance.voice.server import VoiceServer
from appliance.werewolf import mode, voices
from appliance.werewolf.table_voice import TableVoice, spoken

e2e = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not loopback_only_network(), reason="WebRTC on 127.0.0.1 needs a loopback-only namespace: run scripts/test.sh"
    ),
]

SEED, SEATS = 1, 6
BOOK = voices.load(config.Config().werewolf.voices)


def test_seed_seats_the_user_as_the_first_werewolf():
    g = deal(SEED, SEATS)
    assert g.user_seat == "P4" and g.seats_with(Role.WEREWOLF)[0] == "P4" and g.role("P3") is Role.VILLAGER


class FakeLine:
    """The voice line without audio, and the person on it.

    Records what is said (and in which voice, also as a ``said`` event among those emitted
    through :meth:`emit`, so their order shows). The person answers each ``ww_ask`` with
    ``answer(tool, attempt, question)`` (one transcript, or several in turn), asks
    ``recaps[prefix]`` right after hearing a line that starts with ``prefix``, and before
    anything else says "player one": talk that answers no question, never to be taken.
    """

    def __init__(self, answer, recaps: dict[str, str] | None = None):
        self.answer, self.recaps = answer, recaps or {}
        self.emitted: list[dict] = []
        self.said: list[str] = []
        self.heard: list[str] = []  # what the seat took from the line, in order
        self._talk: asyncio.Queue[str] = asyncio.Queue()
        self._talk.put_nowait("player one")

    def emit(self, event: str, **fields) -> None:
        self.emitted.append({"event": event, **fields})
        if event == "ww_ask":
            answer = self.answer(fields["tool"], fields["attempt"], fields["question"])
            for text in [answer] if isinstance(answer, str) else answer:
                self._talk.put_nowait(text)

    async def say(self, text: str, voice=None) -> None:
        self.said.append(text)
        self.emitted.append({"event": "said", "text": text, "voice": voice})
        for prefix, asked in self.recaps.items():
            if text.startswith(prefix):
                self._talk.put_nowait(asked)
        await asyncio.sleep(0)  # audio takes time: the judge goes on meanwhile

    async def hear(self) -> str:
        self.heard.append(await self._talk.get())
        return self.heard[-1]


class ScriptedAI:
    """An AI seat answering with a fixed legal choice (no LLM)."""

    def __init__(self, seat: str):
        self.seat = seat

    async def run(self, bus, sub) -> None:
        from appliance.judge import tools
        from appliance.judge.tools import ToolSpec
        from appliance.protocol.werewolf import ACTION, ActionPayload

        async for env in sub:
            tool = ToolSpec.from_json(env.payload.tool)
            if tool.name == tools.SPEAK:
                args = {
                    "text": f"Day {env.payload.round}, {self.seat} speaking: I trust {tool.targets[0]}.",
                    "cites": [],
                }
            elif tool.name == tools.WITCH_ACT:
                args = {k: v for k, v in (("save", False), ("poison", None)) if k in tool.schema()["properties"]}
            else:
                args = {"target": tool.targets[-1]}
            await bus.publish(
                env.reply(ACTION, ActionPayload(game_id="g", seat=self.seat, tool=tool.name, arguments=args))
            )


def spoken_answer(tool: str, attempt: int, question: str) -> str:
    """What the scripted person says: first something unparseable, then a legal choice."""
    if tool == "speak":  # any words are a speech
        return "I think player two is lying."
    if attempt == 0:
        return "um, the quiet one"
    if tool == "witch_act":
        return "I do not save, and no poison."
    if tool == "vote":
        return "I abstain."
    first = re.findall(r"P(\d)", question)[0]
    return f"I choose player {first}."


@pytest.mark.parametrize("seed", [1, 2, 3, 7])
async def test_whole_game_through_the_human_seat_shows_only_its_own_view(tmp_path, seed):
    from appliance.bus import InProcBus
    from appliance.judge import views
    from appliance.judge.rules import new_game

    state = new_game(seed, SEATS)
    user = state.user_seat
    line = FakeLine(spoken_answer)
    emitted = line.emitted
    table = TableVoice(line, BOOK, line.emit)
    human = mode.HumanSeat(user, line, line.emit, table)
    agents = {s: (human if s == user else ScriptedAI(s)) for s in state.seats}
    async with InProcBus(tmp_path / "bus.jsonl", log_fsync_ms=0) as bus:
        outs: list[list[str]] = []
        judge = await asyncio.wait_for(
            mode.run_table(
                bus, state, agents, line.emit, "g", 2, 30, on_user_out=outs.append, table=table, on_view=human.see
            ),
            60,
        )
    await table.close()
    final = judge.state
    assert len(outs) <= 1 and (user not in final.alive or not outs)  # told once that it is out (unless at the end)
    assert all(user in x for x in outs[0]) if outs else True

    assert judge.status == "finished" and final.winner is not None
    # each user choice: the unparseable answer is asked again, then the legal one applied
    applied = [e for e in emitted if e["event"] == "ww_applied"]
    choices = [e for e in applied if e["tool"] != "speak"]
    retries = [e for e in emitted if e["event"] == "ww_retry"]
    assert choices and len(retries) == len(choices) == judge.checks.mismatched
    assert len(applied) == judge.checks.matched
    assert all(e["transcript"] != "player one" for e in emitted if e["event"] == "ww_heard")
    assert any(s.startswith("Sorry") for s in line.said)
    assert not any(re.search(r"\b(\w+ \d+\.) \1", s) for s in line.said), line.said  # no "Night 1. Night 1."
    # what the page shows holds only the user seat's own view
    mine = views.view(final, user).lines()
    logs = [e["text"] for e in emitted if e["event"] == "ww_log"]
    assert logs and all(t in mine for t in logs), set(logs) - set(mine)
    tables = [e for e in emitted if e["event"] == "ww_table"]
    assert {(t["seat"], t["role"]) for t in tables} == {(user, final.role(user).value)}
    assert tables[-1]["alive"] == list(final.living()) and tables[-1]["phase"] == "over"
    captions = [(e["seat"], e["text"]) for e in emitted if e["event"] == "ww_caption"]
    assert captions == [(e.what.seat, e.what.text) for e in final.events if isinstance(e.what, Speech)]
    shown = json.dumps([e for e in emitted if e["event"] not in ("ww_over", "ww_started", "said")] + line.said)
    for s in final.seats:
        if s != user:
            assert f"{s}, the " not in shown
    # what the person heard: every line of its own view, each AI speech in its seat's voice
    heard = [(e["text"], e["voice"]) for e in emitted if e["event"] == "said"]
    for e in final.events:
        match e.what:
            case Speech(seat=seat, text=text):
                assert seat == user or (text, BOOK.seats[seat]) in heard
            case _ if e.visible_to(user):
                text = views.render_event(e)
                assert (spoken(text), BOOK.narrator) in heard, text


@pytest.mark.parametrize("seed", [1, 2, 3, 7])
async def test_each_ai_speech_is_heard_as_its_own_audio_in_its_voice_before_the_persons_turn(tmp_path, seed):
    from appliance.bus import InProcBus
    from appliance.judge.rules import new_game

    state = new_game(seed, SEATS)
    user = state.user_seat
    line = FakeLine(spoken_answer)
    emitted = line.emitted
    table = TableVoice(line, BOOK, line.emit)
    agents = {s: (mode.HumanSeat(s, line, line.emit, table) if s == user else ScriptedAI(s)) for s in state.seats}
    async with InProcBus(tmp_path / "bus.jsonl", log_fsync_ms=0) as bus:
        judge = await asyncio.wait_for(mode.run_table(bus, state, agents, line.emit, "g", 2, 30, table=table), 60)
    await table.close()
    speeches = [e.what for e in judge.state.events if isinstance(e.what, Speech) and e.what.seat != user]
    assert speeches
    for sp in speeches:
        made = next(
            i
            for i, e in enumerate(emitted)
            if e["event"] == "ww_caption" and e["text"] == sp.text and e["seat"] == sp.seat
        )
        said = [i for i, e in enumerate(emitted) if e["event"] == "said" and e["text"] == sp.text]
        assert len(said) == 1 and emitted[said[0]]["voice"] == BOOK.seats[sp.seat]  # one utterance, its voice
        playing = said[0] - 1
        assert emitted[playing]["event"] == "ww_playing" and emitted[playing]["seat"] == sp.seat
        asks = [i for i, e in enumerate(emitted) if e["event"] == "ww_ask" and i > made]
        if asks:  # the person's next turn comes after the speech was heard
            assert said[0] < asks[0]
    # heard as they were made: in the order of the game, never batched into one utterance
    order = [e["text"] for e in emitted if e["event"] == "said" and e["voice"] in BOOK.seats.values()]
    assert order == [sp.text for sp in speeches]
    assert all(
        e["voice"] == BOOK.narrator for e in emitted if e["event"] == "said" and e["voice"] not in BOOK.seats.values()
    )


def asks_a_recap_first(tool: str, attempt: int, question: str) -> list[str]:
    """The person asks for a recap before each answer, in words that would otherwise be a
    move: a speech, or (at a vote) a ballot for the first seat offered."""
    if attempt:
        return [spoken_answer(tool, attempt, question)]
    if tool == "vote":
        first = re.findall(r"P(\d)", question)[0]
        asked = f"Who voted for player {first}?"
    else:
        asked = "What happened last night?" if tool == "speak" else "Where are we?"
    return [asked, spoken_answer(tool, attempt, question)]


@pytest.mark.parametrize("seed", [1, 2, 3, 7])
async def test_a_recap_is_answered_at_any_time_from_the_seats_own_view_and_never_taken_as_a_move(tmp_path, seed):
    from appliance.bus import InProcBus
    from appliance.judge import isolation, recap
    from appliance.judge.events import VoteCast
    from appliance.judge.rules import new_game

    state = new_game(seed, SEATS)
    user = state.user_seat
    # outside its moves too: right after the dawn and the ballots are heard
    line = FakeLine(
        asks_a_recap_first, recaps={"Dawn:": "What happened last night?", "Ballots:": "Who voted for whom?"}
    )
    table = TableVoice(line, BOOK, line.emit)
    human = mode.HumanSeat(user, line, line.emit, table)
    agents = {s: (human if s == user else ScriptedAI(s)) for s in state.seats}
    async with InProcBus(tmp_path / "bus.jsonl", log_fsync_ms=0) as bus:
        judge = await asyncio.wait_for(
            mode.run_table(bus, state, agents, line.emit, "g", 2, 30, table=table, on_view=human.see), 60
        )
    await table.close()
    final, emitted = judge.state, line.emitted
    assert judge.status == "finished"

    # never a move: no attempt counted for a recap (only the unparseable answers are asked again),
    # never heard as the answer, never a speech, and "who voted for player N?" never a ballot
    choices = [e for e in emitted if e["event"] == "ww_applied" and e["tool"] != "speak"]
    assert judge.checks.mismatched == len(choices) == len([e for e in emitted if e["event"] == "ww_retry"])
    assert all(recap.request(e["transcript"]) is None for e in emitted if e["event"] == "ww_heard")
    ballots = [e.what.target for e in final.events if isinstance(e.what, VoteCast) and e.what.seat == user]
    speeches = [e.what.text for e in final.events if isinstance(e.what, Speech) and e.what.seat == user]
    assert ballots and set(ballots) == {None}  # "I abstain.", said after "Who voted for player N?"
    assert speeches and not any(recap.request(text) for text in speeches)

    # each question heard is answered once (the last one may come after the game is over), on
    # the line in the narrator's voice, from the seat's own view
    recaps = [(i, e) for i, e in enumerate(emitted) if e["event"] == "ww_recap"]
    assert [r["question"] for _, r in recaps] == [t for t in line.heard if recap.request(t)]
    asked = len([e for e in emitted if e["event"] == "ww_ask" and e["attempt"] == 0])
    outside = len([e for e in emitted if e["event"] == "said" and e["text"].startswith(("Dawn:", "Ballots:"))])
    assert asked + outside - 1 <= len(recaps) <= asked + outside
    said = [(i, e["text"], e["voice"]) for i, e in enumerate(emitted) if e["event"] == "said"]
    for i, r in recaps:
        assert any(j > i and (text, voice) == (r["text"], BOOK.narrator) for j, text, voice in said)
    n, found = isolation.count_violations([(user, r["text"]) for _, r in recaps], final)
    assert n == 0, found
    for s in final.seats:
        assert s == user or not any(f"{s}, the " in r["text"] for _, r in recaps)
    # asked right after the dawn: the night just heard
    for i, r in recaps:
        if r["question"] == "What happened last night?" and r["kind"] == "night":
            dawn = [text for j, text, _ in said if j < i and text.startswith("Dawn:")]
            assert dawn and r["text"].startswith("Last night was night") and r["text"].endswith(dawn[-1])


def test_the_page_gets_each_claim_and_the_ballots_only_once_all_are_in():
    """The table's events after every state of 50 code-policy games: ``ww_claim`` with each
    speech that claims something, ``ww_ballots`` exactly when the judge reveals them (never
    while a vote is open), and the user seat's view handed on whenever it grows."""
    from appliance.judge import claims, selfplay, views
    from appliance.judge.events import Votes
    from appliance.judge.state import Phase

    for seed in range(1, 51):
        states = selfplay.states(seed, 6 + seed % 3)
        judge = mode.TableJudge(None, next(states), "g", 2, 1.0)
        emitted: list[tuple[str, dict]] = []
        judge.emit = lambda event, **f: emitted.append((event, f))  # noqa: B023
        seen = []
        judge.on_view = seen.append
        judge._log_events()
        for s in states:
            new, before = s.events[len(judge.state.events) :], len(emitted)
            judge.state = s
            judge._log_events()
            out = emitted[before:]
            ballots = [f for event, f in out if event == "ww_ballots"]
            assert ballots == [
                {"round": e.round, "votes": dict(e.what.votes)} for e in new if isinstance(e.what, Votes)
            ]
            assert not ballots or s.phase in (Phase.RESOLUTION, Phase.OVER)
            spoke = [e.what for e in new if isinstance(e.what, Speech)]
            assert [f for event, f in out if event == "ww_claim"] == [
                {"seat": sp.seat, "text": claims.summary(claims.read(sp.seat, sp.text, s.round))}
                for sp in spoke
                if claims.read(sp.seat, sp.text, s.round)
            ]
            if any(e.visible_to(s.user_seat) for e in new):
                assert seen[-1] == views.view(s, s.user_seat)


async def test_the_line_says_one_utterance_at_a_time_a_recap_after_the_question_it_came_during():
    class SlowLine:
        def __init__(self):
            self.log: list[tuple[str, str]] = []

        async def say(self, text: str, voice=None) -> None:
            self.log.append(("start", text))
            await asyncio.sleep(0.01)
            self.log.append(("end", text))

    line = SlowLine()
    table = TableVoice(line, BOOK, lambda *a, **k: None)
    question = asyncio.create_task(table.say("Vote 1. Vote for P2 or P3, or say I abstain."))
    await asyncio.sleep(0.001)  # the question is being said when the person asks
    table.announce("No ballots have been revealed yet.")
    await question
    await table.close()
    assert line.log == [
        ("start", "Vote 1. Vote for P2 or P3, or say I abstain."),
        ("end", "Vote 1. Vote for P2 or P3, or say I abstain."),
        ("start", "No ballots have been revealed yet."),
        ("end", "No ballots have been revealed yet."),
    ]


def test_question_names_the_choices():
    from appliance.judge.tools import ToolSpec

    q = mode.question(ToolSpec("seer_check", targets=("P2", "P3", "P5")), 1)
    assert q == "Night 1. Choose a player to check: P2, P3 or P5."
    assert "abstain" in mode.question(ToolSpec("vote", targets=("P1", "P2"), can_abstain=True), 2)


async def _event(session, name: str, timeout_s: float, **match) -> dict:
    """The first event ``name`` whose fields include ``match`` (waits up to ``timeout_s``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while True:
        for e in session.events.events:
            if e["event"] == name and all(e.get(k) == v for k, v in match.items()):
                return e
        if loop.time() > end:
            seen = [e["event"] for e in session.events.events]
            raise TimeoutError(f"no {name} {match} within {timeout_s} s; events: {seen}")
        await asyncio.sleep(0.1)


async def _heard_bot(client: WebRTCClient, runtime, first_timeout_s: float) -> str:
    """Everything the bot said until it falls silent, transcribed."""
    parts = [await client.next_bot_utterance(first_timeout_s)]
    while True:
        try:
            parts.append(await client.next_bot_utterance(3.0))
        except TimeoutError:
            break
    return runtime.asr.transcribe(np.concatenate(parts)).text


@pytest.fixture(scope="module")
def werewolf_runtime(voice_cfg):
    """The real models with one LLM slot per seat, as ``appliance werewolf --user human`` sizes them."""
    from appliance.voice.runtime import VoiceRuntime

    rt = VoiceRuntime(voice_cfg.for_werewolf_page()).start()
    yield rt
    rt.stop()


@e2e[0]
@e2e[1]
async def test_human_seat_is_asked_again_then_its_spoken_choice_is_applied(werewolf_runtime):
    runtime = werewolf_runtime
    server = VoiceServer(runtime.cfg.without_recording(), runtime=runtime)  # the first words are the judge's question
    await mode.install(server)
    await server.start()
    client = WebRTCClient(server.url)
    synth = PiperSynth()
    person = VoiceStyle(pitch_semitones=-3)
    try:
        await client.connect(mode="werewolf", seats=SEATS, seed=SEED)
        for _ in range(100):
            if server.sessions:
                break
            await asyncio.sleep(0.05)
        (session,) = server.sessions.values()

        first = await _event(session, "ww_table", 30)
        assert (first["seat"], first["role"], first["phase"], first["round"]) == ("P4", "werewolf", "night", 1)
        assert first["alive"] == [f"P{i}" for i in range(1, 7)]
        await _event(session, "ww_ask", 120, attempt=0, tool="night_kill")
        asked = words(await _heard_bot(client, runtime, 30))
        assert "attack" in asked and "player" in asked, asked

        # A recap during the move: answered from the seat's own view, not an answer to the question
        await client.say(synth.synthesize("What happened last night?", person), synth.sample_rate_hz)
        told = await _event(session, "ww_recap", 60)
        assert (told["kind"], told["text"]) == ("night", "No night has ended yet."), told
        assert "night" in words(await _heard_bot(client, runtime, 30))
        assert not [e for e in session.events.events if e["event"] in ("ww_heard", "ww_retry")]

        # Not a legal action: asked again, nothing applied
        await client.say(synth.synthesize("Um, the quiet one.", person), synth.sample_rate_hz)
        heard = await _event(session, "ww_heard", 60, attempt=0)
        assert heard["transcript"].strip(), heard  # Whisper tiny's wording varies ("the quite one", "I'm required 1")
        await _event(session, "ww_retry", 30, attempt=1)
        await _event(session, "ww_ask", 60, attempt=1)
        assert not [e for e in session.events.events if e["event"] == "ww_applied"]
        again = words(await _heard_bot(client, runtime, 30))
        assert "sorry" in again, again

        # A legal spoken choice: applied as said
        await client.say(synth.synthesize("I attack player three.", person), synth.sample_rate_hz)
        applied = await _event(session, "ww_applied", 60)
        assert applied["tool"] == "night_kill" and applied["action"] == {"target": "P3"}, applied
        (heard_ok,) = [e for e in session.events.events if e["event"] == "ww_heard" and e["attempt"] == 1]
        assert "3" in heard_ok["transcript"] or "three" in heard_ok["transcript"].lower()

        # The page saw only the user seat's own view: no other seat's role
        shown = json.dumps([e for e in session.events.events if e["event"].startswith("ww_")])
        assert "seer" not in shown and "witch" not in shown, shown
    finally:
        await client.close()
        await server.stop()


async def test_a_page_game_with_ai_seats_is_heard_seat_by_seat_and_replays(tmp_path):
    """The mode's own entry (play_on_line): real AI seats on a first-choice fake LLM, the
    person on a fake line; then ``appliance replay`` of the session's recording."""
    from test_werewolf_bench import FakeRuntime

    from appliance.voice.session import recording_notice
    from appliance.werewolf.replay import replay

    line = FakeLine(spoken_answer)
    emitted = line.emitted
    cfg = config.load(overrides={"recording": {"dir": str(tmp_path)}}).for_werewolf_page()
    over = await asyncio.wait_for(
        mode.play_on_line(
            cfg,
            FakeRuntime(),
            line,
            line.emit,
            seats=SEATS,
            seed=2,
            folder=tmp_path,
        ),
        60,
    )
    assert over["status"] == "finished"
    user = next(e for e in emitted if e["event"] == "ww_started")["seat"]
    captions = [e for e in emitted if e["event"] == "ww_caption" and e["seat"] != user]
    said = [(e["text"], e["voice"]) for e in emitted if e["event"] == "said"]
    assert captions and all((c["text"], BOOK.seats[c["seat"]]) in said for c in captions)
    assert said[-1] == (f"Game over: the {over['winner']} win.", BOOK.narrator)
    # issue 30: a recorded game says so before anything else is heard
    assert said[0] == (recording_notice(True), BOOK.narrator)
    out = await replay(tmp_path)
    assert out["diverged"] is False and out["recorded"] > 50
