"""``appliance replay FOLDER`` of a Werewolf recording: re-run the game from its seed and
bus log, and show the first envelope where the run differs from the recording.

The game is dealt again from the recorded seed and played by the current code on a fresh
in-process bus: the :class:`~appliance.werewolf.game.Judge` (rules, views, the user seat's
transcript parser) and the AI seats' night actions and votes (their code strategy on their
own beliefs). What the code cannot re-make comes from the log: the AI seats' speeches
(the LLM's words) and the user seat's answers (its transcript, and the simulated user's
tool call). Every envelope of the new run is compared, in order, with the recorded one —
sender, recipient, type, task and payload (ids and times differ by nature). A recorded
answer is used only for the very turn it answered; once the run asks something the
recording never answered, it stops there.

A recording folder holds ``bus.jsonl`` and ``config.json`` (``appliance werewolf --user
sim``, ``bench werewolf``), or ``werewolf.json`` and ``werewolf-bus-<seed>.jsonl`` (a page
session of ``--user human``).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from appliance.bus import Bus, Envelope, InProcBus, Subscription, read_envelopes
from appliance.config import WerewolfConfig
from appliance.judge import rules, tools
from appliance.judge.tools import ToolSpec
from appliance.protocol.werewolf import ACTION, JUDGE, TURN, ActionPayload, TurnPayload
from appliance.werewolf.game import Judge
from appliance.werewolf.seats import AISeat, SeatError, SeatLLM
from appliance.werewolf.trace import Tracer

#: the replayed judge's wait for a seat (every answer is at hand: nothing takes long)
TURN_TIMEOUT_S = 10.0


class ReplayError(RuntimeError):
    """Not a Werewolf recording, or one whose log cannot be read."""


def is_recording(folder: str | Path) -> bool:
    """``folder`` looks like a Werewolf recording (see the module docstring)."""
    return _meta_and_log(Path(folder)) is not None


def _meta_and_log(folder: Path) -> tuple[dict[str, Any], Path] | None:
    cfg = folder / "config.json"
    if cfg.is_file() and (folder / "bus.jsonl").is_file():
        meta = json.loads(cfg.read_text())
        if "seed" in meta and "seats" in meta:
            return meta, folder / "bus.jsonl"
    ww = folder / "werewolf.json"
    if ww.is_file():
        meta = json.loads(ww.read_text())
        log = folder / f"werewolf-bus-{meta['seed']}.jsonl"
        if log.is_file():
            return meta, log
    return None


def comparable(env: Envelope) -> dict[str, Any]:
    """What two runs of the same game must agree on in an envelope (not its id, time or reply id)."""
    return {
        "sender": env.sender,
        "recipient": env.recipient,
        "type": env.type,
        "task_id": env.task_id,
        "payload": env.payload.model_dump(mode="json") if env.payload is not None else None,
    }


class _Diverged(Exception):
    """A turn the recording never answered: the run has left the recorded game."""


class ReplaySeat:
    """One seat of the re-run: answers each turn it is asked, in order, with the current
    code (an AI seat's night action or vote) or the recorded answer to that same turn
    (speeches, the user seat). Raises :class:`_Diverged` on a turn the recording does not
    have next for this seat."""

    def __init__(self, seat: str, recorded: list[tuple[TurnPayload, ActionPayload]], ai: AISeat | None):
        self.seat = seat
        self.recorded = list(recorded)
        self.ai = ai

    async def run(self, bus: Bus, sub: Subscription) -> None:
        async for env in sub:
            p: TurnPayload = env.payload
            if not self.recorded or self.recorded[0][0] != p:
                raise _Diverged(f"{self.seat} was asked a turn the recording does not have next")
            _, answer = self.recorded.pop(0)
            if self.ai is not None and ToolSpec.from_json(p.tool).name != tools.SPEAK:
                answer = answer.model_copy(update={"arguments": await self.ai.answer(p)})
            elif self.ai is not None:
                self.ai.beliefs(p)  # keep its beliefs folding in step
            await bus.publish(env.reply(ACTION, answer))


class _NoLLM:
    """An AI seat's :class:`~appliance.llm.base.LLM` in a replay: never asked (speeches come
    from the recording); every request raises :class:`SeatError`."""

    slot = None

    async def _not_asked(self, *_args: Any, **_options: Any) -> Any:
        raise SeatError("replay: the LLM is not asked again")

    decide = json = complete = text = warm = _not_asked


async def replay(folder: str | Path) -> dict[str, Any]:
    """Re-run the recorded game in ``folder``; returns ``{"folder", "seed", "seats",
    "recorded", "replayed", "matching", "diverged", "first_difference"}`` where
    ``first_difference`` is ``{"index", "recorded", "replayed"}`` (an envelope each, or
    None where one run had no more) or None when the runs are the same.

    Raises:
        ReplayError: not a Werewolf recording.
        LogError: the bus log is unreadable.
    """
    folder = Path(folder)
    found = _meta_and_log(folder)
    if found is None:
        raise ReplayError(f"{folder}: not a Werewolf recording (no config.json with bus.jsonl, nor werewolf.json)")
    meta, log_path = found
    seed, n_seats = int(meta["seed"]), int(meta["seats"])
    recorded = read_envelopes(log_path)
    first = next((e for e in recorded if e.sender == JUDGE), None)
    if first is None:
        raise ReplayError(f"{log_path}: no envelope from the judge")
    game_id = first.payload.game_id
    state = rules.new_game(seed, n_seats)
    replies = {e.reply_to: e.payload for e in recorded if e.type == ACTION}
    turns: dict[str, list[tuple[TurnPayload, ActionPayload]]] = {s: [] for s in state.seats}
    for e in recorded:
        if e.type == TURN and e.id in replies and e.recipient in turns:
            turns[e.recipient].append((e.payload, replies[e.id]))
    cfg = WerewolfConfig()
    with tempfile.TemporaryDirectory(prefix="werewolf-replay-") as tmp:
        log = Path(tmp) / "bus.jsonl"
        seats = {}
        for s in state.seats:
            ai = None
            if s != state.user_seat:
                ai = AISeat(
                    s,
                    SeatLLM(
                        llm=_NoLLM(), seat=s, role=state.role(s), system="", cfg=cfg, tracer=Tracer(None), seed=seed
                    ),
                )
            seats[s] = ReplaySeat(s, turns[s], ai)
        async with InProcBus(log, log_fsync_ms=0) as bus:
            subs = {s: bus.subscribe(s, types=[TURN]) for s in state.seats}
            judge = Judge(bus, state, game_id, cfg.asr_retry_limit, TURN_TIMEOUT_S)
            try:
                async with asyncio.TaskGroup() as tg:
                    tasks = [tg.create_task(seats[s].run(bus, subs[s])) for s in state.seats]
                    await judge.play()
                    for t in tasks:
                        t.cancel()
            except* (_Diverged, SeatError):
                pass  # the run left the recorded game: the comparison below says where
            except* Exception:  # the current judge failed on the recorded game: still say where
                pass
        replayed = read_envelopes(log)
    a, b = [comparable(e) for e in recorded], [comparable(e) for e in replayed]
    same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    diverged = same < max(len(a), len(b))
    return {
        "folder": str(folder),
        "seed": seed,
        "seats": n_seats,
        "recorded": len(a),
        "replayed": len(b),
        "matching": same,
        "diverged": diverged,
        "first_difference": {
            "index": same,
            "recorded": a[same] if same < len(a) else None,
            "replayed": b[same] if same < len(b) else None,
        }
        if diverged
        else None,
    }
