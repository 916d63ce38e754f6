"""``appliance bench soak`` in small: a real ``appliance serve`` (models, the form mode's
Chromium), plain and form sessions from the aiortc client, garbage and abandoned offers."""

from __future__ import annotations

import pytest
from helpers import loopback_only_network

from appliance.bench.soak import run_soak

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not loopback_only_network(), reason="WebRTC on 127.0.0.1 needs a loopback-only namespace: run scripts/test.sh"
    ),
]


async def test_a_short_soak_answers_every_session_refuses_bad_offers_and_leaves_no_chromium():
    result = await run_soak(None, sessions=2, bad_offers=4)
    assert result["sessions"] == {"run": 2, "completed": 2, "errors": []}
    assert result["bad_offers"] == {
        "garbage": {"sent": 2, "refused_400": 2},
        "abandoned": {"sent": 2, "answered": 2, "busy_503": 0},
    }
    assert result["end"]["chromium"] == 0
    assert result["end"]["fds"] <= result["start"]["fds"] + 2  # a short run: no leak beyond noise
