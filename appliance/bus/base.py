"""The bus API every backend implements, its errors, and :class:`Lanes` (a subscription's two-lane queue).

Delivery semantics (both backends):

* **Routing.** An envelope reaches every subscription whose ``recipient`` is None (all
  traffic), equals the envelope's recipient, or whose envelope is a broadcast (``"*"``),
  and whose ``types`` is None or contains the envelope's type.
* **Order.** Envelopes from one sender reach a subscription in publish order within each
  priority class; urgent envelopes (``terminate``, ``interrupt``, any type registered
  ``urgent=True``) overtake queued ordinary ones.
* **Ephemeral subscriptions** (``group=None``) see what is published after ``subscribe``
  returns, each a copy (fan-out); nothing is acknowledged or redelivered.
* **Durable groups** (``group="name"``): each matching envelope is handled by one member of
  the group and counts as handled once acknowledged — implicitly when the member asks for
  the next envelope, or explicitly with :meth:`Subscription.ack`. Unacknowledged envelopes
  are redelivered (after a restart, or to another member when one dies) and de-duplicated by
  envelope id, so a handler sees each id at most once per group unless it died before acking.
  On Redis, an envelope given to a group ``max_deliveries`` times without an acknowledgement
  (its handler keeps failing) goes to the dead stream instead (:mod:`appliance.bus.redis_streams`).
  :meth:`Subscription.ack` with ``publish=[...]`` commits the handler's output envelopes
  atomically with the acknowledgement, so those effects happen exactly once.
* **Bounds.** Every subscription holds at most ``maxsize`` ordinary and ``maxsize`` urgent
  envelopes. When full, ``overflow="block"`` makes publishers wait and ``overflow="error"``
  makes :meth:`Bus.publish` raise :class:`BusOverflowError` with nothing delivered to anyone.
  Nothing is ever dropped silently.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Literal

from appliance.bus.envelope import Envelope
from appliance.protocol.registry import type_spec

Overflow = Literal["block", "error"]
DEFAULT_MAXSIZE = 1024


class BusError(RuntimeError):
    """A bus operation failed; the message says which and why."""


class BusClosedError(BusError):
    """The bus (or the subscription) is not running."""


class BusOverflowError(BusError):
    """A subscription with ``overflow="error"`` is full; the envelope was delivered to no one."""


class BusTimeoutError(BusError, TimeoutError):
    """No reply arrived before a :meth:`Bus.request` deadline."""


def describe(recipient: str | None, types: frozenset[str] | None, group: str | None) -> str:
    """A short human description of a subscription filter, for errors and logs."""
    parts = [f"recipient={recipient or 'any'}"]
    if types is not None:
        parts.append("types=" + ",".join(sorted(types)))
    if group is not None:
        parts.append(f"group={group}")
    return " ".join(parts)


def normalise_filter(
    recipient: str | None, types: Iterable[str] | str | None, maxsize: int, overflow: str
) -> frozenset[str] | None:
    """Validate subscription arguments; return ``types`` as a frozenset (None = all types).

    Raises:
        ValueError: a bad maxsize, overflow policy, recipient or type name.
    """
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"maxsize must be a positive int, got {maxsize!r}")
    if overflow not in ("block", "error"):
        raise ValueError(f"overflow must be 'block' or 'error', got {overflow!r}")
    if recipient is not None and (not recipient or recipient.split() != [recipient]):
        raise ValueError(f"recipient must be a non-empty id without spaces, got {recipient!r}")
    if types is None:
        return None
    ts = frozenset([types] if isinstance(types, str) else types)
    for t in ts:
        type_spec(t)  # an unknown type in a filter is a bug: fail now, not by never matching
    return ts


def not_awaiting_ack(sub: object, env: Envelope, n_publish: int) -> str:
    """The error for an acknowledgement with effects of an envelope that is not awaiting one."""
    return (
        f"{sub}: envelope {env.type} {env.id} is not awaiting acknowledgement (acknowledged already, "
        f"implicitly when the next envelope was requested, or never delivered here); "
        f"its {n_publish} envelope(s) were not published"
    )


def matches(recipient: str | None, types: frozenset[str] | None, env: Envelope) -> bool:
    """Whether a subscription filter selects ``env`` (see the module docstring)."""
    return (recipient is None or env.recipient == recipient or env.recipient == "*") and (
        types is None or env.type in types
    )


class IdWindow:
    """A set of the most recent ``maxlen`` envelope ids (older ones are forgotten first)."""

    __slots__ = ("maxlen", "_ids", "_order")

    def __init__(self, maxlen: int) -> None:
        self.maxlen = maxlen
        self._ids: set[str] = set()
        self._order: deque[str] = deque()

    def __contains__(self, env_id: str) -> bool:
        return env_id in self._ids

    def add(self, env_id: str) -> None:
        if env_id in self._ids:
            return
        self._ids.add(env_id)
        self._order.append(env_id)
        if len(self._order) > self.maxlen:
            self._ids.discard(self._order.popleft())


class Lanes:
    """A subscription's bounded queue: an ordinary lane and an urgent lane that is always served first.

    Each lane holds at most ``maxsize`` envelopes. Not thread-safe: one event loop.
    """

    __slots__ = ("maxsize", "urgent", "normal", "_getter", "_putters", "closed")

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.urgent: deque[Envelope] = deque()
        self.normal: deque[Envelope] = deque()
        self._getter: asyncio.Future[None] | None = None
        self._putters: list[asyncio.Future[None]] = []
        self.closed = False

    def __len__(self) -> int:
        return len(self.urgent) + len(self.normal)

    def room(self, urgent: bool) -> int:
        """Free places in the lane an envelope of this urgency goes to."""
        return self.maxsize - len(self.urgent if urgent else self.normal)

    def put(self, env: Envelope, urgent: bool) -> None:
        """Append without checking room (the caller has checked) and wake the reader."""
        (self.urgent if urgent else self.normal).append(env)
        g = self._getter
        if g is not None:
            self._getter = None
            if not g.done():
                g.set_result(None)

    def take(self, urgent_only: bool = False) -> Envelope | None:
        """The next envelope (urgent lane first), or None when empty; wakes blocked publishers."""
        if self.urgent:
            env = self.urgent.popleft()
        elif self.normal and not urgent_only:
            env = self.normal.popleft()
        else:
            return None
        if self._putters:
            self._wake_putters()
        return env

    def drain(self) -> list[Envelope]:
        """Remove and return everything queued, urgent lane first."""
        out = [*self.urgent, *self.normal]
        self.urgent.clear()
        self.normal.clear()
        self._wake_putters()
        return out

    async def wait_item(self) -> None:
        """Wait until something is put or the lanes are closed."""
        if self.closed or self.urgent or self.normal:
            return
        self._getter = asyncio.get_running_loop().create_future()
        await self._getter

    async def wait_room(self) -> None:
        """Wait until an envelope is taken or the lanes are closed (then re-check room)."""
        if self.closed:
            return
        fut = asyncio.get_running_loop().create_future()
        self._putters.append(fut)
        await fut

    def room_freed(self) -> None:
        """Room came from outside the lanes (a held envelope acknowledged): wake whoever waits for room."""
        self._wake_putters()

    def close(self) -> None:
        """Mark closed and wake the reader and every waiting publisher."""
        self.closed = True
        g, self._getter = self._getter, None
        if g is not None and not g.done():
            g.set_result(None)
        self._wake_putters()

    def _wake_putters(self) -> None:
        putters, self._putters = self._putters, []
        for f in putters:
            if not f.done():
                f.set_result(None)


class Subscription(ABC):
    """An async iterator of envelopes for one filter; close it (or use ``async with``) when done.

    Iterating ends (``StopAsyncIteration``) once the subscription or its bus is closed.
    Attributes: ``recipient`` (None = any), ``types`` (frozenset or None = all), ``group``
    (None = ephemeral), ``maxsize``, ``overflow``.
    """

    recipient: str | None
    types: frozenset[str] | None
    group: str | None
    maxsize: int
    overflow: Overflow

    def __aiter__(self) -> "Subscription":
        return self

    @abstractmethod
    async def __anext__(self) -> Envelope:
        """The next envelope; acknowledges the previous one first (durable groups)."""

    @abstractmethod
    async def ack(self, env: Envelope, publish: Sequence[Envelope] = ()) -> None:
        """Acknowledge ``env`` as handled, publishing ``publish`` atomically with the acknowledgement.

        For ephemeral subscriptions there is nothing to acknowledge and ``publish`` is
        simply published. Acknowledging an envelope twice is a no-op.

        Raises:
            EnvelopeError: an envelope in ``publish`` is invalid (nothing is published or acked).
            BusOverflowError, BusClosedError: as for :meth:`Bus.publish`.
        """

    @abstractmethod
    async def close(self) -> None:
        """Stop receiving. Durable groups keep what was not acknowledged for redelivery."""

    async def __aenter__(self) -> "Subscription":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Bus(ABC):
    """A typed publish/subscribe bus; see the module docstring for the delivery semantics.

    Use ``async with bus:`` or :meth:`start` / :meth:`stop`, all from one event loop (a bus
    is not thread-safe). Every method that sends raises
    :class:`~appliance.protocol.registry.EnvelopeError` for an invalid envelope before anything
    is written or delivered.
    """

    def __init__(self) -> None:
        self._waiters: dict[str, asyncio.Future[Envelope]] = {}

    @abstractmethod
    async def start(self) -> None:
        """Open logs and connections and start background tasks."""

    @abstractmethod
    async def stop(self) -> None:
        """Close every subscription, cancel background tasks, flush and fsync logs."""

    @abstractmethod
    async def publish(self, env: Envelope) -> None:
        """Write ``env`` ahead to the log (or stream) and deliver it to every matching subscription.

        Returns once the envelope is durable in the backend (in-process: written to the log
        and queued for each subscriber; Redis: added to the stream).

        Raises:
            EnvelopeError: unknown type or invalid payload; nothing written or delivered.
            BusOverflowError: a matching ``overflow="error"`` subscription is full; nothing delivered.
            BusClosedError: the bus is not running.
        """

    @abstractmethod
    async def publish_many(self, envs: Sequence[Envelope]) -> None:
        """Publish ``envs`` in order; all are validated before any is sent.

        Raises:
            As :meth:`publish`.
        """

    @abstractmethod
    def subscribe(
        self,
        recipient: str | None = None,
        types: Iterable[str] | str | None = None,
        *,
        group: str | None = None,
        maxsize: int = DEFAULT_MAXSIZE,
        overflow: Overflow = "block",
    ) -> Subscription:
        """Subscribe to envelopes for ``recipient`` (None = all; broadcasts included) of ``types`` (None = all).

        ``group`` makes the subscription a member of a durable group (see the module
        docstring); ``maxsize`` bounds each lane of its queue; ``overflow`` is what happens
        to publishers when it is full.

        Raises:
            ValueError: bad arguments or an unregistered type in ``types``.
            BusClosedError: the bus is not running.
        """

    @abstractmethod
    async def read_mark(self, name: str) -> str | None:
        """The value of this bus's mark ``name``, or None when it was never set.

        A mark is a small value every process on the bus shares (on Redis the key
        ``<stream>:mark:<name>``, kept as long as the de-duplication horizon): a form task's
        submit guard (:mod:`appliance.computer_agent.agent`).

        Raises:
            BusError: the backend did not answer.
        """

    @abstractmethod
    async def swap_mark(self, name: str, value: str) -> str | None:
        """Set mark ``name`` to ``value`` and return the value it held (None: unset), atomically:
        of several processes swapping in the same value, exactly one gets back something else.

        Raises:
            BusError: the backend did not answer.
        """

    async def request(self, env: Envelope, timeout_s: float) -> Envelope:
        """Publish ``env`` and return the first envelope whose ``reply_to`` is ``env.id``.

        The deadline ``timeout_s`` (seconds) covers publishing too.

        Raises:
            BusTimeoutError: no reply within ``timeout_s``.
            EnvelopeError, BusOverflowError, BusClosedError: as for :meth:`publish`.
        """
        fut: asyncio.Future[Envelope] = asyncio.get_running_loop().create_future()
        self._waiters[env.id] = fut
        try:
            async with asyncio.timeout(timeout_s):
                await self._watch_replies()
                await self.publish(env)
                return await fut
        except TimeoutError:
            raise BusTimeoutError(
                f"no reply to {env.type} {env.id} from {env.recipient} within {timeout_s:g} s"
            ) from None
        finally:
            self._waiters.pop(env.id, None)

    async def _watch_replies(self) -> None:
        """Make sure replies reach :meth:`_resolve_reply` (a backend may need a reader)."""
        return None  # in-process: a reply is resolved as it is published

    def _resolve_reply(self, env: Envelope) -> None:
        fut = self._waiters.get(env.reply_to)  # type: ignore[arg-type]
        if fut is not None and not fut.done():
            fut.set_result(env)

    def _fail_waiters(self, why: str) -> None:
        for fut in self._waiters.values():
            if not fut.done():
                fut.set_exception(BusClosedError(why))

    async def __aenter__(self) -> "Bus":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
