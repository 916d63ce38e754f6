"""``appliance bench replay DIR``: every form recording in DIR replayed through today's agents
(:mod:`appliance.forms.replay`), with a summary (issue 33):

``{"recordings", "same_values", "better", "worse", "diverged_at": {folder: index | null},
"seconds_per_field": {"then", "now"} (medians), "duration_ratio_max" (now ÷ then, the worst
recording), "runs": [the replay report of each], "skipped": {folder: why}}`` — ``same_values``:
recordings whose replay sent every field the value sent then; ``better`` / ``worse``: field
accuracy against the recording's expected values (bench recordings have them) went up / down.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from appliance.config import Config
from appliance.forms import replay
from appliance.llm.base import LLM


def recordings(root: Path) -> list[Path]:
    """The form recordings directly under ``root``, oldest first (by name: their timestamps)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and replay.is_form_recording(p))


def summary(runs: list[dict], skipped: dict[str, str]) -> dict:
    """The bench's JSON object over the replay reports ``runs`` (see the module docstring)."""

    def med(key: str, side: str) -> float | None:
        xs = [r["seconds_per_field"][side] for r in runs if r["seconds_per_field"][side] is not None]
        return round(statistics.median(xs), 2) if xs else None

    ratios = [r["duration_s"]["now"] / r["duration_s"]["then"] for r in runs if r["duration_s"]["then"]]
    return {
        "recordings": len(runs),
        "same_values": sum(r["same_values"] for r in runs),
        "better": sum(r["verdict"] == "better" for r in runs),
        "worse": sum(r["verdict"] == "worse" for r in runs),
        "diverged_at": {r["recording"]: (r["diverged_at"] or {}).get("index") for r in runs},
        "seconds_per_field": {"then": med("seconds_per_field", "then"), "now": med("seconds_per_field", "now")},
        "duration_ratio_max": round(max(ratios), 2) if ratios else None,
        "runs": runs,
        "skipped": skipped,
    }


async def bench(cfg: Config, root: Path, llms: Callable[[str], LLM], *, timing: str = "asked", progress=print) -> dict:
    """Replay every form recording under ``root`` (a folder that cannot be replayed is listed
    in ``skipped`` with the reason) and summarise."""
    runs, skipped = [], {}
    transcribe = replay.asr_transcriber(cfg)  # one engine for every recording's clips
    for folder in recordings(root):
        try:
            rec = replay.load(folder)
        except replay.ReplayError as e:
            skipped[str(folder)] = str(e)
            continue
        progress(f"replaying {folder.name} ({rec.url})")
        t0 = time.monotonic()
        now = await replay.replay(cfg, rec, llms, timing=timing, transcribe=transcribe)
        runs.append(replay.compare(rec, now, time.monotonic() - t0))
    return summary(runs, skipped)
