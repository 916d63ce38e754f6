"""Helpers shared by the bus tests."""

from __future__ import annotations

import asyncio

from appliance.bus import Envelope


def work(n: int, sender: str = "phone", recipient: str = "agent") -> Envelope:
    """An ordinary ``status_update`` envelope numbered ``n`` (in ``payload.message``)."""
    return Envelope.new("status_update", {"state": "working", "message": str(n)}, sender=sender, recipient=recipient)


async def take(sub, n: int, timeout_s: float = 15.0) -> list[Envelope]:
    """The next ``n`` envelopes of subscription ``sub``. Raises TimeoutError after ``timeout_s``."""
    out = []
    async with asyncio.timeout(timeout_s):
        async for env in sub:
            out.append(env)
            if len(out) == n:
                break
    return out
