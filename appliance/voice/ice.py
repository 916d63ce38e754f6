"""Strict-loopback ICE: offer 127.0.0.1 host candidates only.

aioice's ``get_host_addresses`` deliberately skips 127.0.0.1 (aioice 0.13,
``aioice/ice.py``), so on a machine whose only interface is loopback (or inside
``unshare -n``) aiortc gathers no candidate at all, and on other machines it offers LAN
addresses. With ``transport.loopback_only`` (the default) the appliance replaces that
function so aiortc offers exactly 127.0.0.1; Chromium then needs
``--allow-loopback-in-peer-connection`` to pair with it (OFFLINE.md §3). This is the one
place the workaround lives; ``tests/test_ice.py`` checks it.
"""

from __future__ import annotations

import aioice.ice

_original = aioice.ice.get_host_addresses


def _loopback_addresses(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    return ["127.0.0.1"] if use_ipv4 else []


def use_loopback_only(enabled: bool = True) -> None:
    """Make aiortc offer only 127.0.0.1 (``enabled``) or restore aioice's own choice."""
    aioice.ice.get_host_addresses = _loopback_addresses if enabled else _original
