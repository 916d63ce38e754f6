"""Replays of recorded form calls (issue 33): a simulated person's run on a bundled form is
recorded (its pages in page.har), then re-run through the agents with the demo site gone
(every page from the recording, nothing from the network): the same values again; a change
that breaks a field shows as "worse" with the field named; a call that was not recorded
cannot be replayed, and says why."""

from __future__ import annotations

import time

import pytest
import pytest_asyncio

from appliance.computer_agent import page as page_mod
from appliance.demo.profile import load_profile
from appliance.demo.site import DemoSite
from appliance.forms import replay
from appliance.simulate.form_run import simulate_form_text

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]  # the embedded LLM and real Chromium


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def recorded(forms_cfg, forms_runtime):
    """One recorded text run of David on the flight form; the demo site is gone afterwards."""
    async with DemoSite() as site:
        out = await simulate_form_text(forms_cfg, forms_runtime, site.urls["flight"], load_profile("david"), site=site)
    assert out.report["accepted"], out.report["failure"]
    return replay.load(out.session.folder)


async def test_a_recorded_call_replays_through_the_agents_offline_to_the_same_values(
    recorded, forms_cfg, forms_runtime
):
    rec = recorded
    assert (rec.form, rec.profile) == ("flight", "david")
    t0 = time.monotonic()
    now = await replay.replay(forms_cfg, rec, forms_runtime.llm)
    report = replay.compare(rec, now, time.monotonic() - t0)
    assert report["same_values"], [f for f in report["fields"] if not f["same"]]
    assert report["verdict"] == "same" and report["accuracy"] == {"then": 1.0, "now": 1.0}
    assert report["pressed_submit"] == {"then": True, "now": True} and report["confirmed"]["now"]
    assert len(report["fields"]) >= 10 and report["diverged_at"] is None
    assert {p["method"] for p in now.sent} == {"POST"}  # the submission went to the recording, not a server


async def test_a_change_that_breaks_a_field_shows_as_worse_with_the_field_named(
    recorded, forms_cfg, forms_runtime, monkeypatch
):
    real_fill = page_mod.PlaywrightDriver.fill

    async def types_the_email_wrong(self, page, f, value, timeout_ms, **kw):
        if f.kind == "email":  # a regression: a wrong address typed, and read back as right
            await real_fill(self, page, f, "someone.else@example.org", timeout_ms, **kw)
            return value, ""
        return await real_fill(self, page, f, value, timeout_ms, **kw)

    monkeypatch.setattr(page_mod.PlaywrightDriver, "fill", types_the_email_wrong)
    now = await replay.replay(forms_cfg, recorded, forms_runtime.llm)
    report = replay.compare(recorded, now, 1.0)
    assert report["verdict"] == "worse" and report["worse_page_fields"] == ["email"], report
    assert report["accuracy"]["now"] < report["accuracy"]["then"] == 1.0
    assert report["same_values"]  # the agents sent the same values: the page got another
    assert not report["confirmed"]["now"]  # the recording holds no answer to that submission


def test_a_call_that_was_not_recorded_cannot_be_replayed_and_says_why(tmp_path):
    with pytest.raises(replay.ReplayError, match="did not allow it to be recorded|no recording"):
        replay.load(tmp_path / "20261207-120000-form")
    (tmp_path / "voice").mkdir()
    (tmp_path / "voice" / "events.jsonl").write_text('{"t_ms": 1, "ts": 1, "event": "say", "text": "Hi"}\n')
    with pytest.raises(replay.ReplayError, match="not a form call"):
        replay.load(tmp_path / "voice")
    assert not replay.is_form_recording(tmp_path / "voice")
