"""ICE host candidates that include 127.0.0.1, and strict loopback for tests.

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

import aioice.ice

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
