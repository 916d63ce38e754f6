"""The judge on a real in-process bus with scripted seats (no LLM, no audio): addressed
views, and the user seat's transcript failing closed."""

import asyncio

import pytest

from appliance.bus import InProcBus, read_envelopes
from appliance.judge import isolation, tools
from appliance.judge.events import Votes, WolfProposal
from appliance.judge.rules import new_game
from appliance.judge.state import IllegalAction, Phase, Role
from appliance.judge.tools import ToolSpec
from appliance.protocol import Ack
from appliance.protocol.werewolf import ACTION, TURN, VIEW, ActionPayload
from appliance.werewolf.game import Judge

W, S, X, V = Role.WEREWOLF, Role.SEER, Role.WITCH, Role.VILLAGER
ROLES = (W, W, S, X, V, V, V)  # P1 (the user seat) is the first werewolf: it acts first


def first_legal(tool):
    if tool.name == tools.SPEAK:
        return {"text": "I trust everyone.", "cites": []}
    if tool.name == tools.WITCH_ACT:
        return {k: v for k, v in (("save", False), ("poison", None)) if k in tool.schema()["properties"]}
    return {"target": tool.targets[0]}


async def scripted_seat(bus, sub, seat, script=None):
    """Answer turns: AI seats with their first legal choice; the user seat from ``script``,
    a list of (arguments, transcript) used in order, then the first legal choice said plainly."""
    async for env in sub:
        tool = ToolSpec.from_json(env.payload.tool)
        if script:
            args, transcript = script.pop(0)
        else:
            args = first_legal(tool)
            transcript = None
            if script is not None:  # the user seat, script used up: say the first legal choice
                transcript = args.get("text") or (
                    f"I choose player {args['target'][1:]}" if "target" in args else "No save, no poison."
                )
        await bus.publish(
            env.reply(
                ACTION, ActionPayload(game_id="g", seat=seat, tool=tool.name, arguments=args, transcript=transcript)
            )
        )


async def play(tmp_path, script, retry_limit=2):
    state = new_game(5, 7, user_seat="P1", roles=ROLES)
    bus = InProcBus(tmp_path / "bus.jsonl", log_fsync_ms=0)
    async with bus:
        subs = {s: bus.subscribe(s, types=[TURN]) for s in state.seats}
        judge = Judge(bus, state, "g", retry_limit=retry_limit, turn_timeout_s=30)
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(scripted_seat(bus, subs[s], s, script if s == "P1" else None)) for s in state.seats]
            final = await judge.play()
            for t in tasks:
                t.cancel()
    assert all(t.cancelled() for t in tasks)
    return judge, final, read_envelopes(tmp_path / "bus.jsonl")


async def test_disagreeing_transcript_is_never_applied_and_fails_closed(tmp_path):
    # the tool call says P5, the transcript says P6: three times (1 + asr_retry_limit)
    script = [({"target": "P5"}, "Attack player six.")] * 3
    judge, final, _ = await play(tmp_path, list(script))
    assert judge.status == "failed_closed"
    assert (judge.checks.matched, judge.checks.mismatched, judge.checks.failed_closed) == (0, 3, 1)
    assert final.pending == () and final.phase is Phase.NIGHT
    assert not any(isinstance(e.what, WolfProposal) for e in final.events)


@pytest.mark.parametrize("transcript", ["P1 is not", "um, the quiet one", "Attack player two.", "", "nobody"])
async def test_unparseable_or_illegal_transcripts_are_never_applied(tmp_path, transcript):
    # "player two" is the other werewolf: not a legal night_kill target
    script = [({"target": "P5"}, transcript)] * 3
    judge, final, _ = await play(tmp_path, list(script))
    assert judge.status == "failed_closed" and judge.checks.failed_closed == 1
    assert not any(isinstance(e.what, WolfProposal) for e in final.events)


async def test_dead_seat_in_transcript_is_rejected_then_a_match_is_applied(tmp_path):
    script = [({"target": "P5"}, "Attack player five.")]  # night 1: P5 dies (P1 leads the pack)
    script += [({"text": "hi", "cites": []}, "I trust everyone.")]  # day 1
    script += [({"target": "P3"}, "I vote for player five."), ({"target": "P3"}, "I vote for player 3.")]
    judge, final, _ = await play(tmp_path, script, retry_limit=1)
    votes = next(e.what.votes for e in final.events if isinstance(e.what, Votes))
    assert votes["P1"] == "P3"
    assert judge.checks.mismatched == 1 and judge.checks.failed_closed == 0
    assert judge.checks.matched >= 3


async def test_each_seat_gets_only_its_own_addressed_view(tmp_path):
    judge, final, envs = await play(tmp_path, [])
    assert judge.status == "finished" and final.phase is Phase.OVER
    sent = [e for e in envs if e.type in (VIEW, TURN)]
    assert sent and all(e.recipient in final.seats and e.sender == "judge" for e in sent)
    texts = []
    for e in sent:
        lines = e.payload.view["log"] if e.type == VIEW else [*e.payload.view, e.payload.instruction]
        if e.type == VIEW:
            assert e.payload.view["seat"] == e.recipient
        texts.append((e.recipient, "\n".join(lines)))
    assert isolation.count_violations(texts, final)[0] == 0
    assert isolation.count_violations(judge.sent, final)[0] == 0


async def test_a_seat_that_answers_its_turn_with_another_message_stops_the_game():
    state = new_game(5, 7, user_seat="P1", roles=ROLES)
    async with InProcBus(None) as bus:
        sub = bus.subscribe("P1", types=[TURN])
        judge = Judge(bus, state, "g", retry_limit=0, turn_timeout_s=5)

        async def acking_seat():
            async for env in sub:
                await bus.publish(env.reply(Ack()))

        seat = asyncio.create_task(acking_seat())
        with pytest.raises(IllegalAction, match="P1 answered its .* turn with ack, not werewolf_action"):
            await judge.play()
        seat.cancel()
    assert not any(isinstance(e.what, WolfProposal) for e in judge.state.events)
