"""ICE: host candidates that include 127.0.0.1 and strict loopback for tests; the STUN/TURN
servers a call is given (:func:`ice_servers`).

aioice's ``get_host_addresses`` deliberately skips 127.0.0.1 (aioice 0.13,
``aioice/ice.py``), so on a machine whose only interface is loopback (or inside
``unshare -n``) aiortc gathers no candidate at all. The appliance replaces that function:
with ``transport.loopback_only`` aiortc offers exactly 127.0.0.1 (tests and benchmarks,
which run in a loopback-only namespace), otherwise the machine's addresses plus
127.0.0.1. Chromium needs
``--allow-loopback-in-peer-connection`` to pair with it. This is the one
place the workaround lives; ``tests/test_ice.py`` checks it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time

import aioice.ice
from aiortc import RTCIceServer

from appliance.config import ConfigError, TransportConfig

_original = aioice.ice.get_host_addresses


def _loopback_addresses(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    return ["127.0.0.1"] if use_ipv4 else []


def _with_loopback(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    return _original(use_ipv4, use_ipv6) + _loopback_addresses(use_ipv4, use_ipv6)


def use_loopback_only(enabled: bool) -> None:
    """``enabled``: offer only 127.0.0.1 (strict loopback: tests, benchmarks).
    Otherwise offer the machine's own addresses plus 127.0.0.1, so a browser on this
    machine connects whether or not it gathers loopback candidates. Never a STUN or
    outside address either way."""
    aioice.ice.get_host_addresses = _loopback_addresses if enabled else _with_loopback


# --- STUN/TURN servers (transport.ice_servers) for the page and aiortc ----------------------
#: how long minted TURN credentials stay valid (s): longer than any call, since a TURN
#: allocation is refreshed with them for as long as the call lasts
TURN_TTL_S = 12 * 3600


def turn_credentials(secret: str, now: float, ttl_s: int = TURN_TTL_S, user: str = "appliance") -> tuple[str, str]:
    """Time-limited TURN credentials under a shared secret (the TURN REST scheme that
    coturn's ``use-auth-secret`` checks, draft-uberti-behave-turn-rest-00): ``username`` =
    ``<expiry unix s>:<user>``, ``credential`` = base64(HMAC-SHA1(secret, username))."""
    username = f"{int(now) + ttl_s}:{user}"
    digest = hmac.new(secret.encode(), username.encode(), hashlib.sha1).digest()
    return username, base64.b64encode(digest).decode()


def _is_turn(urls: str | list[str]) -> bool:
    return any(u.startswith(("turn:", "turns:")) for u in ([urls] if isinstance(urls, str) else urls))


def ice_servers(transport: TransportConfig, now: float | None = None) -> list[dict]:
    """``transport.ice_servers`` as WebRTC's ``RTCIceServer`` dicts (``urls``, and
    ``username``/``credential`` when a TURN server has them): what the page's
    ``RTCPeerConnection`` and aiortc are given for one call. A TURN server without static
    credentials gets minted ones when ``transport.turn_secret_env`` names the secret.

    Raises:
        ConfigError: ``transport.turn_secret_env`` names a variable that is not set.
    """
    secret = None
    if transport.turn_secret_env:
        secret = os.environ.get(transport.turn_secret_env)
        if not secret:
            raise ConfigError(
                f"transport.turn_secret_env: the environment variable {transport.turn_secret_env} "
                "(the TURN server's shared secret) is not set"
            )
    out = []
    for server in transport.ice_servers:
        entry: dict = {"urls": server.urls}
        if server.username is not None:
            entry |= {"username": server.username, "credential": server.credential or ""}
        elif secret is not None and _is_turn(server.urls):
            username, credential = turn_credentials(secret, time.time() if now is None else now)
            entry |= {"username": username, "credential": credential}
        out.append(entry)
    return out


def rtc_ice_servers(transport: TransportConfig) -> list[RTCIceServer]:
    """:func:`ice_servers` for aiortc (its ``RTCIceServer``)."""
    return [RTCIceServer(**s) for s in ice_servers(transport)]
