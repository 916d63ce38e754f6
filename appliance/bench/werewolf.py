"""``appliance bench werewolf --games N --seats 7 --json [--user text|audio]``: how well the seats play.

Seeds 1..N, each a whole game with the embedded models (one runtime for all of them),
the simulated user seat speaking (``audio``: Piper → Whisper) or typing (``text``: its
utterance is the transcript, through the same fail-closed parser); in the same run the
random baseline (:func:`appliance.judge.selfplay.bench`, every seat a uniformly random
legal choice, empty speeches) over :data:`BASELINE_GAMES` seeds from 1, and over the same
N seeds. Printed:

- ``villager_win_rate`` (with ``villager_win_rate_95``, a Wilson interval) and
  ``baseline_villager_win_rate`` (``…_95``; ``…_same_seeds``): over games that finished —
  failed-closed games have no winner and are left out of both;
- ``code_villager_win_rate`` (``…_95``) — the villagers' win rate over :data:`CODE_GAMES`
  games with the code policy on every seat (no LLM, seeds 1..N, deterministic:
  :func:`appliance.judge.selfplay.bench`): how balanced our policy is against itself
  (both sides play to win; the target is 0.35–0.65);
- ``seer_revealed_by_next_day_rate`` — over games in which the Seer found a werewolf and
  lived to speak the next day: that day's speech claimed the seer and named it
  (:func:`appliance.judge.selfplay.stats`); ``seer_exiled_by_villagers_rate`` — games in
  which the ballots that exiled the Seer were mostly the villagers' ÷ games;
- ``distinct_speech_rate`` — the AI seats' speeches that differ from every earlier speech
  of the same game (after removing seat ids, numbers and case, in more than
  :data:`DISTINCT` of their tokens: word edit distance ÷ the longer speech's length) ÷
  speeches; ``template_speech_rate`` — the AI seats' speeches said by the counted
  fallback rather than the LLM ÷ speeches;
- ``isolation_violations`` (views, prompts and speeches, summed over games),
  ``failed_closed`` (games), ``median_game_s`` (the play, models loaded once before);
- ``model``: what served the seats (``llm`` or ``werewolf.llm``: provider, model).
"""

from __future__ import annotations

import asyncio
import logging
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from appliance.config import Config, ConfigError
from appliance.judge import selfplay
from appliance.simulate.werewolf_user import SimulatedUser
from appliance.voice.runtime import VoiceRuntime
from appliance.werewolf.game import GameRun, play_game

log = logging.getLogger(__name__)

BASELINE_GAMES = 1000
CODE_GAMES = 1000
#: two speeches are distinct when more than this share of their tokens differ
DISTINCT = 0.2

_SEAT_OR_NUMBER = re.compile(
    r"\b(?:(?:p|players?|seats?)[\s\-]*(?:\d+|one|two|three|four|five|six|seven|eight)"
    r"|\d+|one|two|three|four|five|six|seven|eight)\b"
)


def speech_tokens(text: str) -> list[str]:
    """A speech's words after removing seat ids, numbers and case (and punctuation)."""
    return re.findall(r"[a-z']+", _SEAT_OR_NUMBER.sub(" ", text.lower()))


def token_distance(a: Sequence[str], b: Sequence[str]) -> float:
    """Word edit distance ÷ the longer length (0: the same words; 1: nothing in common)."""
    if not a and not b:
        return 0.0
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1] / max(len(a), len(b))


def distinct_count(texts: Sequence[str]) -> int:
    """How many of ``texts`` (one game's speeches, in order) differ from every earlier one
    in more than :data:`DISTINCT` of their tokens (the first always does)."""
    seen: list[list[str]] = []
    n = 0
    for text in texts:
        t = speech_tokens(text)
        if all(token_distance(t, s) > DISTINCT for s in seen):
            n += 1
        seen.append(t)
    return n


def summarise(
    runs: list[GameRun],
    n_seats: int,
    user: str,
    model: dict[str, str],
    baseline_games: int = BASELINE_GAMES,
    code_games: int = CODE_GAMES,
) -> dict[str, Any]:
    """The benchmark's JSON from the games played (see the module docstring)."""
    finished = [r for r in runs if r.result.status == "finished"]
    wins = sum(1 for r in finished if r.result.winner == "villagers")
    stats = [selfplay.stats(r.final) for r in runs]
    found = [s for s in stats if s.seer_found_wolf]
    speeches = [sp for r in runs for sp in r.speeches]
    distinct = sum(distinct_count([sp.text for sp in r.speeches]) for r in runs)
    base = selfplay.bench(baseline_games, n_seats, selfplay.RANDOM)
    same = selfplay.bench(len(runs), n_seats, selfplay.RANDOM) if runs else None
    code = selfplay.bench(code_games, n_seats, selfplay.CODE)
    return {
        "games": len(runs),
        "villager_win_rate": _rate(wins, len(finished)),
        "baseline_villager_win_rate": base["villager_win_rate"],
        "code_villager_win_rate": code["villager_win_rate"],
        "seer_revealed_by_next_day_rate": _rate(sum(s.seer_revealed for s in found), len(found)),
        "seer_exiled_by_villagers_rate": _rate(sum(s.seer_exiled_by_villagers for s in stats), len(stats)),
        "distinct_speech_rate": _rate(distinct, len(speeches)),
        "template_speech_rate": _rate(sum(1 for sp in speeches if sp.template is not None), len(speeches)),
        "isolation_violations": sum(r.result.isolation_violations for r in runs),
        "failed_closed": len(runs) - len(finished),
        "median_game_s": round(statistics.median(r.play_s for r in runs), 1) if runs else None,
        "model": model,
        "villager_win_rate_95": [round(x, 4) for x in selfplay.wilson(wins, len(finished))] if finished else None,
        "baseline_villager_win_rate_95": base["villager_win_rate_95"],
        "baseline_games": base["games"],
        "baseline_villager_win_rate_same_seeds": same["villager_win_rate"] if same else None,
        "code_villager_win_rate_95": code["villager_win_rate_95"],
        "code_games": code["games"],
        "seats": n_seats,
        "user": user,
        "seeds": [1, len(runs)],
        "seer_found_wolf_games": len(found),
        "speeches": len(speeches),
        "asr_checks": {
            k: sum(getattr(r.result.asr_checks, k) for r in runs) for k in ("matched", "mismatched", "failed_closed")
        },
        "per_game": [
            {
                "seed": r.final.seed,
                "status": r.result.status,
                "winner": r.result.winner,
                "complete_rounds": r.result.complete_rounds,
                "play_s": r.play_s,
                "speeches": len(r.speeches),
                "templates": sum(1 for sp in r.speeches if sp.template),
            }
            for r in runs
        ],
    }


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def run_bench(
    cfg: Config, games: int, n_seats: int = 7, user: str = "text", progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Play seeds 1..``games`` and return the benchmark's JSON (blocking).

    Raises:
        ConfigError: ``n_seats`` outside 6–8, ``games`` < 1, or ``user`` audio without Piper.
        ModelError, LLMError: the models did not come up.
    """
    if games < 1:
        raise ConfigError("bench werewolf: --games must be at least 1")
    if user == "audio" and cfg.tts.provider != "piper":
        raise ConfigError("bench werewolf --user audio: the simulated user speaks with Piper; set tts.provider: piper")
    return asyncio.run(_run(cfg.for_werewolf(n_seats), games, n_seats, user, progress or _stderr))


async def _run(cfg: Config, games: int, n_seats: int, user: str, progress: Callable[[str], None]) -> dict[str, Any]:
    runtime = VoiceRuntime(cfg)
    t0 = time.monotonic()
    runs: list[GameRun] = []
    try:
        await asyncio.to_thread(runtime.start, lambda _stage: None)
        model = runtime.describe_llm("P1")
        progress(f"bench werewolf: models ready in {time.monotonic() - t0:.0f} s; seats on {model}")
        for seed in range(1, games + 1):
            run = await play_game(runtime, cfg, seed, n_seats, SimulatedUser(runtime, cfg, user))
            runs.append(run)
            r = run.result
            progress(
                f"bench werewolf: seed {seed}/{games}: {r.status}, {r.winner}, {r.complete_rounds} rounds, "
                f"{run.play_s:.0f} s, {sum(1 for sp in run.speeches if sp.template)}/{len(run.speeches)} "
                f"template speeches"
            )
    finally:
        runtime.stop()
    return summarise(runs, n_seats, user, model)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
