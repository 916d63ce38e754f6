"""ICE (appliance/voice/ice.py): the loopback candidates, and the STUN/TURN servers a call is
given, with TURN credentials minted per call under coturn's shared secret."""

from __future__ import annotations

import base64
import hashlib
import hmac

import aioice.ice
import pytest

from appliance import config
from appliance.config import ConfigError
from appliance.voice import ice


def test_loopback_only_offers_exactly_127_0_0_1_and_otherwise_adds_it(monkeypatch):
    monkeypatch.setattr(aioice.ice, "get_host_addresses", aioice.ice.get_host_addresses)  # restored after
    ice.use_loopback_only(True)
    assert aioice.ice.get_host_addresses(True, True) == ["127.0.0.1"]
    ice.use_loopback_only(False)
    assert aioice.ice.get_host_addresses(True, False)[-1] == "127.0.0.1"


def test_turn_credentials_are_coturns_rest_scheme():
    username, credential = ice.turn_credentials("s3cret", now=1_000_000, ttl_s=3600)
    assert username == "1003600:appliance"
    expected = base64.b64encode(hmac.new(b"s3cret", username.encode(), hashlib.sha1).digest()).decode()
    assert credential == expected


def test_each_server_reaches_the_call_as_configured_and_turn_without_credentials_gets_minted_ones(monkeypatch):
    transport = config.load(
        overrides={
            "transport": {
                "ice_servers": [
                    "stun:192.0.2.1:3478",
                    {"urls": ["turn:192.0.2.1:3478?transport=udp"], "username": "u", "credential": "p"},
                    {"urls": "turns:turn.example:5349"},
                ],
                "turn_secret_env": "APPLIANCE_TURN_SECRET",
            }
        }
    ).transport
    with pytest.raises(ConfigError, match="APPLIANCE_TURN_SECRET .* is not set"):
        ice.ice_servers(transport)
    monkeypatch.setenv("APPLIANCE_TURN_SECRET", "s3cret")
    stun, static, minted = ice.ice_servers(transport, now=1_000_000)
    assert stun == {"urls": "stun:192.0.2.1:3478"}
    assert static == {"urls": ["turn:192.0.2.1:3478?transport=udp"], "username": "u", "credential": "p"}
    assert minted["username"] == f"{1_000_000 + ice.TURN_TTL_S}:appliance"
    assert minted["credential"] == ice.turn_credentials("s3cret", 1_000_000)[1]
    assert [s.urls for s in ice.rtc_ice_servers(transport)][2] == "turns:turn.example:5349"


def test_a_url_that_is_not_stun_or_turn_is_refused():
    with pytest.raises(ConfigError, match="'http://x' is not a STUN or TURN URL"):
        config.load(overrides={"transport": {"ice_servers": ["http://x"]}})
