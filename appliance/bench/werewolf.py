"""``appliance bench werewolf --games N --seats 7 --json [--user text|audio] [--seeds A..B]
[--compare-model MODEL --compare-games K]``: how well the seats play.

Seeds 1..N (``--seeds A..B``: A..B instead), each a whole game with the embedded models (one runtime for all of them),
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
- ``grounded_draft_rate`` — the LLM's own first drafts (before any re-wording or
  template) whose cited facts are all true and whose words name nothing else
  (:func:`appliance.judge.grounding.check`, against the speaker's view of the game's log
  just before the speech; a draft that cites nothing is not grounded) ÷ drafts;
  ``said_grounded_rate`` — the same over the speeches said;
- ``isolation_violations`` (views, prompts and speeches, summed over games),
  ``failed_closed`` (games), ``median_game_s`` (the play, models loaded once before);
- ``model``: what served the seats (``llm`` or ``werewolf.llm``: provider, model);
- ``by_model`` (with ``--compare-model``): for the seats' model and for ``MODEL``
  (``werewolf.llm`` = ``llm`` serving ``MODEL``, :meth:`~appliance.config.Config.with_werewolf_model`),
  each over the first K seeds (``--compare-games``, default :data:`COMPARE_GAMES`), the
  speech and time figures (:func:`model_figures`); the first model's come from the games
  already played, so only ``MODEL``'s games are played again.
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
from appliance.judge import events, grounding, selfplay
from appliance.simulate.werewolf_user import SimulatedUser
from appliance.voice.runtime import VoiceRuntime
from appliance.werewolf.game import GameRun, play_game
from appliance.werewolf.seats import Speech

log = logging.getLogger(__name__)

BASELINE_GAMES = 1000
CODE_GAMES = 1000
#: games per model in ``by_model`` (the issue's N = 10 for the bundled 1.5B)
COMPARE_GAMES = 10
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


def grounded(run: GameRun) -> tuple[int, int, int, int]:
    """``(drafts, grounded drafts, speeches, grounded speeches)`` of one game's AI seats,
    each checked against the speaker's view of the final log just before its speech."""
    counts = [0, 0, 0, 0]
    for sp in run.speeches:
        log = _log_before(run, sp)
        if sp.draft is not None:
            counts[0] += 1
            counts[1] += grounding.check(sp.seat, sp.draft.text, sp.draft.cites, log, sp.round) is None
        counts[2] += 1
        counts[3] += grounding.check(sp.seat, sp.text, sp.cites, log, sp.round) is None
    return counts[0], counts[1], counts[2], counts[3]


def _log_before(run: GameRun, sp: Speech) -> list[events.Event]:
    """``sp``'s speaker's view of the game's events before ``sp`` was said."""
    out = []
    for e in run.final.events:
        if isinstance(e.what, events.Speech) and e.round == sp.round and e.what.seat == sp.seat:
            break
        if e.visible_to(sp.seat):
            out.append(e)
    return out


def summarise(
    runs: list[GameRun],
    n_seats: int,
    user: str,
    model: dict[str, str],
    baseline_games: int = BASELINE_GAMES,
    code_games: int = CODE_GAMES,
) -> dict[str, Any]:
    """The benchmark's JSON from the games played (see the module docstring); ``runs``
    are in seed order."""
    seeds = [r.final.seed for r in runs]
    finished = [r for r in runs if r.result.status == "finished"]
    wins = sum(1 for r in finished if r.result.winner == "villagers")
    stats = [selfplay.stats(r.final) for r in runs]
    found = [s for s in stats if s.seer_found_wolf]
    speeches = [sp for r in runs for sp in r.speeches]
    speech = summarise_speech(runs)
    base = selfplay.bench(baseline_games, n_seats, selfplay.RANDOM)
    same = selfplay.bench(len(runs), n_seats, selfplay.RANDOM, first_seed=seeds[0]) if runs else None
    code = selfplay.bench(code_games, n_seats, selfplay.CODE)
    return {
        "games": len(runs),
        "villager_win_rate": _rate(wins, len(finished)),
        "baseline_villager_win_rate": base["villager_win_rate"],
        "code_villager_win_rate": code["villager_win_rate"],
        "seer_revealed_by_next_day_rate": _rate(sum(s.seer_revealed for s in found), len(found)),
        "seer_exiled_by_villagers_rate": _rate(sum(s.seer_exiled_by_villagers for s in stats), len(stats)),
        **speech,
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
        "seeds": [seeds[0], seeds[-1]] if runs else None,
        "seer_found_wolf_games": len(found),
        "speeches": len(speeches),
        "drafts": sum(1 for sp in speeches if sp.draft is not None),
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
                "grounded_drafts": grounded(r)[1],
            }
            for r in runs
        ],
    }


def model_figures(runs: list[GameRun], model: dict[str, str]) -> dict[str, Any]:
    """One model's speech and time figures over ``runs`` (the module docstring's
    definitions): ``games``, ``grounded_draft_rate``, ``said_grounded_rate``,
    ``template_speech_rate``, ``distinct_speech_rate``, ``villager_win_rate``,
    ``isolation_violations``, ``median_game_s`` (seconds) and ``model``."""
    full = summarise_speech(runs)
    finished = [r for r in runs if r.result.status == "finished"]
    return {
        "games": len(runs),
        **full,
        "villager_win_rate": _rate(sum(1 for r in finished if r.result.winner == "villagers"), len(finished)),
        "isolation_violations": sum(r.result.isolation_violations for r in runs),
        "median_game_s": round(statistics.median(r.play_s for r in runs), 1) if runs else None,
        "model": model,
    }


def summarise_speech(runs: list[GameRun]) -> dict[str, float | None]:
    """``distinct_speech_rate``, ``template_speech_rate``, ``grounded_draft_rate`` and
    ``said_grounded_rate`` over ``runs``' AI speeches (the module docstring's definitions)."""
    speeches = [sp for r in runs for sp in r.speeches]
    drafts, grounded_drafts, said, grounded_said = (
        (sum(x) for x in zip(*map(grounded, runs), strict=True)) if runs else (0, 0, 0, 0)
    )
    return {
        "distinct_speech_rate": _rate(sum(distinct_count([sp.text for sp in r.speeches]) for r in runs), len(speeches)),
        "template_speech_rate": _rate(sum(1 for sp in speeches if sp.template is not None), len(speeches)),
        "grounded_draft_rate": _rate(grounded_drafts, drafts),
        "said_grounded_rate": _rate(grounded_said, said),
    }


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def run_bench(
    cfg: Config,
    seeds: range,
    n_seats: int = 7,
    user: str = "text",
    compare: str | None = None,
    compare_games: int = COMPARE_GAMES,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play ``seeds`` and return the benchmark's JSON (blocking); with ``compare`` (a model
    name), also its ``by_model`` (module docstring).

    Raises:
        ConfigError: ``n_seats`` outside 6–8, no seed or a seed < 1, ``compare_games`` < 1,
            or ``user`` audio without Piper.
        ModelError, LLMError: the models did not come up (``compare``: not fetched).
    """
    if not seeds or seeds[0] < 1:
        raise ConfigError(f"bench werewolf: seeds must be 1 or more, got {seeds.start}..{seeds.stop - 1}")
    if compare is not None and compare_games < 1:
        raise ConfigError("bench werewolf: --compare-games must be at least 1")
    if user == "audio" and cfg.tts.provider != "piper":
        raise ConfigError("bench werewolf --user audio: the simulated user speaks with Piper; set tts.provider: piper")
    say = progress or _stderr
    runs, model = asyncio.run(_games(cfg.for_werewolf(n_seats), seeds, n_seats, user, say))
    out = summarise(runs, n_seats, user, model)
    if compare is not None:
        other = cfg.with_werewolf_model(compare).for_werewolf(n_seats)
        few = seeds[:compare_games]
        theirs, their_model = asyncio.run(_games(other, few, n_seats, user, say))
        out["by_model"] = {
            model["model"]: model_figures(runs[: len(few)], model),
            their_model["model"]: model_figures(theirs, their_model),
        }
    return out


async def _games(
    cfg: Config, seeds: range, n_seats: int, user: str, progress: Callable[[str], None]
) -> tuple[list[GameRun], dict[str, str]]:
    """Play ``seeds`` on one runtime; returns the games and what served the seats."""
    runtime = VoiceRuntime(cfg)
    t0 = time.monotonic()
    runs: list[GameRun] = []
    try:
        await asyncio.to_thread(runtime.start, lambda _stage: None)
        model = runtime.describe_llm("P1")
        progress(f"bench werewolf: models ready in {time.monotonic() - t0:.0f} s; seats on {model}")
        for seed in seeds:
            run = await play_game(runtime, cfg, seed, n_seats, SimulatedUser(runtime, cfg, user))
            runs.append(run)
            r = run.result
            progress(
                f"bench werewolf: seed {seed} ({seeds.start}..{seeds.stop - 1}): {r.status}, {r.winner}, "
                f"{r.complete_rounds} rounds, {run.play_s:.0f} s, "
                f"{sum(1 for sp in run.speeches if sp.template)}/{len(run.speeches)} template speeches"
            )
    finally:
        runtime.stop()
    return runs, model


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
