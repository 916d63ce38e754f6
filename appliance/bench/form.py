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

from appliance.config import Config
from appliance.demo.profile import PROFILES_DIR, Profile
from appliance.demo.site import DemoSite
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
    """(form, profile) runs for the selectors (see the module docstring)."""
    if not forms and not profiles:
        return [*BENCH_RUNS, *(("flight", p) for p in hard_profiles())]
    return [(f, p) for f in (forms or ["flight"]) for p in (profiles or list(OLD_PROFILES))]


def bench_summary(runs: list[dict]) -> dict:
    """``{"seconds_per_field": {"median", "max"}, "field_accuracy_min", "person", "runs"}`` over
    the audio runs (the text runs when there are none)."""
    person = "audio" if any(r["person"] == "audio" for r in runs) else "text"
    mine = [r for r in runs if r["person"] == person]
    spf = [r["seconds_per_field"] for r in mine if r["seconds_per_field"] is not None]
    acc = [r["field_accuracy"] for r in mine if r["field_accuracy"] is not None]
    return {
        "seconds_per_field": {
            "median": round(statistics.median(spf), 2) if spf else None,
            "max": max(spf) if spf else None,
        },
        "field_accuracy_min": min(acc) if acc else None,
        "person": person,
        "runs": len(mine),
    }


async def run_bench(
    cfg: Config,
    runtime: VoiceRuntime,
    plan: list[tuple[str, str]],
    profiles: dict[str, Profile],
    person: str,
    progress: Callable[[str], None],
) -> dict:
    """Each (form, profile) run of ``plan`` on the started ``runtime``; ``person``: ``audio``
    (the simulated person over WebRTC) or ``text`` (a scripted typist).

    Raises:
        SystemExit: a form of the plan is not a bundled demo form.
    """
    runs = []
    async with DemoSite() as site:
        for form, name in plan:
            progress(f"bench form: {form} with profile {name} ({person} person)")
            if form not in site.urls:
                raise SystemExit(f"bench form: no demo form {form!r}; known: {', '.join(site.urls)}")
            simulate = simulate_form if person == "audio" else simulate_form_text
            out = await simulate(cfg, runtime, site.urls[form], profiles[name], site=site, progress=progress)
            runs.append({"form": form, "profile": name, "person": person, **out.report})
    return {"runs": runs, "summary": bench_summary(runs)}
