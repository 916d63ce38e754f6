"""``appliance bench form``: the simulated person over the demo forms; prints
``{"runs": [...], "summary": {...}}`` (CONTRACTS.md "bench form JSON"; the summary is over
the audio runs).

Without selectors: the old profiles on the bundled forms (:data:`BENCH_RUNS`), then each
hard profile on the flight form. With them: every selected form with every selected
profile (``--forms`` alone: the old profiles; ``--profiles`` alone: the flight form).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from appliance.bench.pages import PagesSite, load_pages
from appliance.config import Config
from appliance.demo.profile import PROFILES_DIR, Profile
from appliance.demo.site import FORMS, DemoSite
from appliance.simulate.form_run import simulate_form, simulate_form_text
from appliance.voice.runtime import VoiceRuntime

#: bench form: demo form → the (old, ASR-friendly) profile that fills it
BENCH_RUNS = (("flight", "david"), ("register", "david"), ("flight-injected", "emma"))
#: profiles whose names tiny.en knows; every other bundled profile is a hard one (issue 12)
OLD_PROFILES = ("david", "emma")


def hard_profiles() -> list[str]:
    """The bundled profiles tiny.en gets wrong: every one but :data:`OLD_PROFILES`."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml") if p.stem not in OLD_PROFILES)


def bench_plan(forms: list[str] | None, profiles: list[str] | None) -> list[tuple[str, str]]:
    """(form, profile) runs for the selectors (see the module docstring); ``--forms all``:
    every bundled demo form (today's pages and the widget-library pages), each with
    ``--profiles`` or else with David, the profile every bundled page is written for."""
    if not forms and not profiles:
        return [*BENCH_RUNS, *(("flight", p) for p in hard_profiles())]
    if forms == ["all"]:
        return [(f, p) for f in FORMS for p in (profiles or ["david"])]
    return [(f, p) for f in (forms or ["flight"]) for p in (profiles or list(OLD_PROFILES))]


def bench_summary(runs: list[dict]) -> dict:
    """``{"seconds_per_field": {"median", "max"}, "field_accuracy_min", "person", "runs",
    "accepted", "failed": [form, …], "asks_max", "duration_s_max", "wrong_submissions",
    "false_submitted", "by_group"}`` over the audio runs (the text runs when there are none);
    a run counts as accepted when its ``failure`` is null and the page accepted it.
    ``by_group`` (issue 27; CONTRACTS "bench form"): ``{"easy"|"hard": {"runs",
    "seconds_per_field", "exchanges_per_field": {"median", "max"}, "stages_s": {stage:
    median of the runs' per-field seconds}}}``; easy = a run of :data:`BENCH_RUNS`, hard = a
    hard profile (:func:`hard_profiles`) on the flight form; a group with no run is left out."""
    person = "audio" if any(r["person"] == "audio" for r in runs) else "text"
    mine = [r for r in runs if r["person"] == person]
    acc = [r["field_accuracy"] for r in mine if r["field_accuracy"] is not None]
    groups = {
        "easy": [r for r in mine if (r["form"], r["profile"]) in BENCH_RUNS],
        "hard": [r for r in mine if r["form"] == "flight" and r["profile"] not in OLD_PROFILES],
    }
    return {
        "seconds_per_field": _spread(mine, "seconds_per_field"),
        "field_accuracy_min": min(acc) if acc else None,
        "person": person,
        "runs": len(mine),
        "accepted": sum(bool(r["accepted"]) and r["failure"] is None for r in mine),
        "failed": [r["form"] for r in mine if not (r["accepted"] and r["failure"] is None)],
        "asks_max": max((r["asks"] for r in mine), default=None),
        "duration_s_max": max((r["duration_s"] for r in mine), default=None),
        "wrong_submissions": sum(r["wrong_submission"] for r in mine),
        "false_submitted": sum(r["false_submitted"] for r in mine),
        "by_group": {name: _group(group) for name, group in groups.items() if group},
    }


def _spread(runs: list[dict], key: str) -> dict:
    """``{"median", "max"}`` of the runs' ``key`` (runs without it left out; None for none)."""
    xs = [r[key] for r in runs if r.get(key) is not None]
    return {"median": round(statistics.median(xs), 2) if xs else None, "max": max(xs) if xs else None}


def _group(runs: list[dict]) -> dict:
    """One group of :func:`bench_summary`'s ``by_group``."""
    stages: dict[str, list[float]] = {}
    for r in runs:
        for stage, figures in (r.get("stages_s") or {}).items():
            if isinstance(figures, dict) and figures.get("per_field") is not None:
                stages.setdefault(stage, []).append(figures["per_field"])
    return {
        "runs": len(runs),
        "seconds_per_field": _spread(runs, "seconds_per_field"),
        "exchanges_per_field": _spread(runs, "exchanges_per_field"),
        "stages_s": {stage: round(statistics.median(xs), 2) for stage, xs in stages.items()},
    }


async def run_bench(
    cfg: Config,
    runtime: VoiceRuntime,
    plan: list[tuple[str, str]],
    profiles: dict[str, Profile],
    person: str,
    progress: Callable[[str], None],
    pages: Path | None = None,
) -> dict:
    """Each (form, profile) run of ``plan`` on the started ``runtime``; ``person``: ``audio``
    (the simulated person over WebRTC) or ``text`` (a scripted typist). ``pages``: a folder
    a user brings (:mod:`appliance.bench.pages`) run instead, each page with the text person.

    Raises:
        SystemExit: a form of the plan is not a bundled demo form.
    """
    runs = []
    if pages is not None:
        return await _run_pages(cfg, runtime, pages, progress)
    async with DemoSite() as site:
        for form, name in plan:
            progress(f"bench form: {form} with profile {name} ({person} person)")
            if form not in site.urls:
                raise SystemExit(f"bench form: no demo form {form!r}; known: {', '.join(site.urls)}")
            simulate = simulate_form if person == "audio" else simulate_form_text
            out = await simulate(cfg, runtime, site.urls[form], profiles[name], site=site, progress=progress)
            runs.append({"form": form, "profile": name, "person": person, **out.report})
    return {"runs": runs, "summary": bench_summary(runs)}


async def _run_pages(cfg: Config, runtime: VoiceRuntime, folder: Path, progress: Callable[[str], None]) -> dict:
    """Every page of ``folder/pages.json`` with the text person; each run judged by what the
    page itself recorded (:meth:`PagesSite.verdict`)."""
    brought = load_pages(folder)
    runs = []
    async with PagesSite(folder, brought) as site:
        for page in brought:
            progress(f"bench form: {page.id} ({page.file}) with the text person")
            out = await simulate_form_text(
                cfg, runtime, site.url(page), page.profile, progress=progress, task=page.task
            )
            report, verdict = out.report, site.verdict(page)
            ok = [f["ok"] for f in verdict["fields"]]
            report.update(
                accepted=verdict["accepted"],
                fields=verdict["fields"],
                checks=verdict["checks"],
                field_accuracy=round(sum(ok) / len(ok), 3) if ok else None,
                wrong_submission=verdict["submitted"] and not all(ok),
                false_submitted=out.session.computer.status == "submitted" and not verdict["submitted"],
                asks_per_field=round(report["asks"] / len(ok), 2) if ok else report["asks_per_field"],
            )
            if report["failure"] is None and not verdict["accepted"]:
                report["failure"] = _pages_failure(out.session, verdict)
            runs.append({"form": page.id, "profile": page.id, "person": "text", **report})
    return {"runs": runs, "summary": bench_summary(runs)}


def _pages_failure(result, verdict: dict) -> str:
    wrong = [f"{f['field']} ({f['filled']!r}, expected {f['expected']!r})" for f in verdict["fields"] if not f["ok"]]
    if not verdict["submitted"]:
        c = result.computer
        return f"the page recorded no submission; computer agent {c.status}: {c.detail}" if c else "no submission"
    if wrong:
        return f"the page took wrong values: {', '.join(wrong)}"
    return f"checks failed: {[i for i, ok in enumerate(verdict['checks']) if not ok]}"
