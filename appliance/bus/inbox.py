"""An agent's inbox: envelopes taken from its subscription as they arrive and applied by the
agent at its next safe point between steps — never by blocking a step."""

from __future__ import annotations

import asyncio

from appliance.bus.base import Subscription
from appliance.bus.envelope import Envelope
from appliance.protocol import Emit, Terminate


class Terminated(Exception):
    """A ``terminate`` envelope arrived: the agent stops."""


class AgentInbox:
    """Run ``await inbox.read(sub)`` as a task for the agent's life: each envelope is logged
    (``emit("bus_in", agent=…, type=…, sender=…, payload=…)``), kept in ``items`` (oldest
    first) and ``arrived`` is set; a ``terminate`` raises :class:`Terminated` out of ``read``.

    ``arrived``: the event to set (an agent may share it with its other wake-ups).
    """

    def __init__(self, agent_id: str, emit: Emit, arrived: asyncio.Event | None = None):
        self.agent_id, self.emit = agent_id, emit
        self.items: list[Envelope] = []
        self.arrived = arrived or asyncio.Event()

    async def read(self, sub: Subscription) -> None:
        async for env in sub:
            self.emit("bus_in", agent=self.agent_id, type=env.type, sender=env.sender, payload=env.payload.model_dump())
            if isinstance(env.payload, Terminate):
                raise Terminated()
            self.items.append(env)
            self.arrived.set()
