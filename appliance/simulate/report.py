"""The ``simulate form`` JSON of a finished form session: what the demo site recorded
(:func:`fetch_submissions`) checked against the form's spec and the person's profile, and
the interview's figures read from the session's envelopes (:func:`report`)."""

from __future__ import annotations

import json
import statistics
import urllib.request

from appliance.bus import Envelope
from appliance.demo.profile import Profile
from appliance.demo.spec import FormSpec, evaluate
from appliance.forms.session import SessionResult
from appliance.protocol import FieldFilled, InfoCollected, NeedInfo, SubmitAuthorized, Submitted


def fetch_submissions(url: str) -> list[dict] | None:
    """What a demo site recorded (``GET <origin>/api/submissions``): its submissions, then its
    autosaved drafts (``draft: true``); None when the site does not offer it (not a demo site)."""
    origin = "/".join(url.split("/")[:3])
    try:
        with urllib.request.urlopen(origin + "/api/submissions", timeout=5) as r:
            body = json.load(r)
        return body["submissions"] + [
            {"form": a["form"], "data": a["data"], "ts_ms": a["ts_ms"], "draft": True}
            for a in body["attempts"]
            if a["outcome"] == "draft"
        ]
    except (OSError, ValueError, KeyError):
        return None


def report(
    result: SessionResult, spec: FormSpec | None, profile: Profile | None, submissions: list[dict] | None
) -> dict:
    """The ``simulate form --json`` object (with the interview's figures) of a session (its
    computer agent here, or on a pool worker: then its status and submit time are read from
    the envelopes):

    ``fields`` [{field, expected, filled, ok}] and ``field_accuracy`` (from the demo spec,
    else [] and null: what the page last took, or for a spec whose task is not to submit its
    last autosaved draft); ``accepted`` (the page recorded a submission holding exactly the
    expected values — for a "don't submit" spec: a draft holding them and no submission;
    null without a spec); ``submitted``; ``authorised_before_submit``
    (every submission the site recorded came after a ``submit_authorized``);
    ``fill_lag_ms`` {p50, max} (each ``field_filled`` − the ``info_collected{confirmed}`` it
    answers); ``phone_waits_on_browser``; ``seconds_per_field`` (the interview's real time
    from the first question to the authorisation question ÷ the fields filled: those the
    computer agent read back after a confirmation); ``exchanges_per_field`` (the person's
    turns in that time ÷ the fields filled); ``spelled_fields`` (fields the person was asked
    to spell); ``actions`` (browser actions: fill, click, select, key);
    ``explained_failures`` (times the person was told a step failed and why);
    ``asks`` (the phone agent's questions for a field's value, re-asks included, read-backs
    not) and ``asks_by_field``; ``asks_per_field`` (asks ÷ the page's fields: the spec's
    rules for this person, else the fields named); ``wrong_submission`` (the page accepted
    a payload that differs from the expected one); ``false_submitted`` (the computer agent
    reported ``submitted`` but the page recorded no submission); ``failure`` (why a run
    with a spec was not accepted, or that asked more than :data:`MAX_RUN_ASKS` times, in a
    sentence; null otherwise);
    ``duration_s``; ``messages`` (every envelope: ts, sender, recipient, type, payload).
    """
    envs = result.envelopes
    records = [s for s in (submissions or []) if spec is None or s["form"] == spec.name]
    mine = [s for s in records if not s.get("draft")]
    drafts = [s for s in records if s.get("draft")]
    said_submitted = [e.ts for e in envs if isinstance(e.payload, Submitted) and e.sender == "computer"]
    computer_submitted = result.computer.status == "submitted" if result.computer else bool(said_submitted)
    submitted = bool(mine) if submissions is not None else computer_submitted
    auth_ts = [e.ts for e in envs if isinstance(e.payload, SubmitAuthorized)]
    at_ms = result.computer.submitted_at_ms if result.computer else (said_submitted[0] if said_submitted else None)
    sub_ts = [s["ts_ms"] for s in mine] or ([at_ms] if at_ms else [])
    authorised = all(auth_ts and min(auth_ts) <= t for t in sub_ts)
    lags = _fill_lags(envs)
    fields, accuracy, accepted = [], None, None
    if spec is not None and profile is not None:
        held = mine if spec.submit else drafts
        res = evaluate(spec, profile, held[-1]["data"] if held else None)
        fields = [{"field": r.field, "expected": r.expected, "filled": r.filled, "ok": r.ok} for r in res]
        accuracy = round(sum(r.ok for r in res) / len(res), 3) if res else None
        accepted = bool(held) and bool(res) and all(r.ok for r in res) and (spec.submit or not mine)
    filled = fields_filled(envs)
    stats = result.phone.stats if result.phone else None
    asks_by_field = dict(stats.asks) if stats else {}
    asks = sum(asks_by_field.values())
    page_fields = len(spec.rules_for(profile)) if spec is not None and profile is not None else len(_named(envs))
    wrong = bool(spec is not None and spec.submit and mine and fields and not all(f["ok"] for f in fields))
    false_submitted = submissions is not None and computer_submitted and not mine

    def per_field(x: float | None) -> float | None:
        return round(x / filled, 2) if filled and x is not None else None

    return {
        "fields": fields,
        "field_accuracy": accuracy,
        "accepted": accepted,
        "submitted": submitted,
        "authorised_before_submit": authorised,
        "fill_lag_ms": {"p50": round(statistics.median(lags)) if lags else None, "max": max(lags) if lags else None},
        "phone_waits_on_browser": result.phone.waits_on_browser if result.phone else 0,
        "seconds_per_field": per_field(stats.interview_s if stats else None),
        "exchanges_per_field": per_field(stats.person_turns if stats else None),
        "spelled_fields": len(stats.spelled) if stats else 0,
        "actions": result.actions,
        "explained_failures": result.explained_failures,
        "asks": asks,
        "asks_by_field": asks_by_field,
        "asks_per_field": round(asks / page_fields, 2) if page_fields else None,
        "wrong_submission": wrong,
        "false_submitted": false_submitted,
        "failure": _failure(result, fields, asks_by_field, wrong) if accepted is False or asks > MAX_RUN_ASKS else None,
        "duration_s": round(result.duration_s, 1),
        "messages": [
            {
                "ts": e.ts,
                "sender": e.sender,
                "recipient": e.recipient,
                "type": e.type,
                "payload": e.payload.model_dump(mode="json"),
            }
            for e in envs
        ],
    }


#: asks in one run above which the run is a failure whatever the page says (issue 26: a loop asked 11,866 times)
MAX_RUN_ASKS = 30


def _failure(result: SessionResult, fields: list[dict], asks_by_field: dict[str, int], wrong: bool) -> str:
    """Why a run was not accepted, in one sentence: a loop of asks, a wrong payload, or how the
    agents ended."""
    if result.busy:
        return "no pool worker took the task in time: the person was told all the form helpers are busy"
    if sum(asks_by_field.values()) > MAX_RUN_ASKS:
        worst = max(asks_by_field, key=asks_by_field.get)
        return (
            f"{sum(asks_by_field.values())} asks (more than {MAX_RUN_ASKS}): {worst} asked {asks_by_field[worst]} times"
        )
    wrong_fields = [f"{f['field']} ({f['filled']!r}, expected {f['expected']!r})" for f in fields if not f["ok"]]
    if wrong:
        return f"the page accepted wrong values: {', '.join(wrong_fields)}"
    c, p = result.computer, result.phone
    ended = f"computer agent {c.status}: {c.detail}" if c else "computer agent elsewhere (a pool worker)"
    if p is not None:
        ended += f"; phone agent {p.status}: {p.detail}"
    missing = f"; not as expected: {', '.join(wrong_fields)}" if wrong_fields and len(wrong_fields) <= 4 else ""
    return ended + missing


def _named(envs: list[Envelope]) -> set[str]:
    return {f.name for e in envs if isinstance(e.payload, NeedInfo) for f in e.payload.fields}


def fields_filled(envs: list[Envelope]) -> int:
    """The fields the computer agent read back from the page (``field_filled``), each once."""
    return len({e.payload.field for e in envs if isinstance(e.payload, FieldFilled)})


def _fill_lags(envs: list[Envelope]) -> list[int]:
    """ms from each confirmed ``info_collected`` to the ``field_filled`` that reads it back."""
    pending: dict[str, int] = {}
    lags = []
    for e in envs:
        match e.payload:
            case InfoCollected(field=name, confirmed=True):
                pending[name] = e.ts
            case FieldFilled(field=name) if name in pending:
                lags.append(e.ts - pending.pop(name))
    return lags
