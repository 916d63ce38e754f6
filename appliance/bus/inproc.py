"""The in-process bus on asyncio (the default backend), with its JSONL write-ahead log.

Publishing validates the envelope, checks every matching subscription has room (or waits,
or fails with nothing delivered), appends the envelope to the log with one ``write(2)``
and then puts it in each subscriber's lanes — all without yielding to the event loop in
between, so a publish is all-or-nothing. A publisher that finds a subscriber with
``yield_depth`` or more envelopes waiting yields once to the event loop, so a tight
publishing loop cannot starve the consumers (that keeps queues, and latency, short).

Durable groups (see :mod:`appliance.bus.base`) record their creation and every
acknowledgement in the log. Opening a bus with ``resume=True`` on an existing log rebuilds
each group's unacknowledged envelopes, which its next member receives first; ids a group
already acknowledged (or holds) are ignored if published again, so handlers are idempotent
by envelope id. In-process, a group has at most one live member at a time; competing
consumers across processes are the Redis backend's job.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path

from appliance.bus.base import (
    DEFAULT_MAXSIZE,
    Bus,
    BusClosedError,
    BusError,
    BusOverflowError,
    IdWindow,
    Lanes,
    Overflow,
    Subscription,
    describe,
    matches,
    normalise_filter,
    not_awaiting_ack,
)
from appliance.bus.envelope import Envelope, check
from appliance.bus.log import Acked, EnvelopeLog, GroupCreated, ack_line, group_line, iter_log

log = logging.getLogger(__name__)


class _Group:
    """A durable group: its filter, live member, backlog of unacknowledged envelopes and seen ids."""

    __slots__ = ("name", "recipient", "types", "member", "backlog", "seen")

    def __init__(self, name: str, recipient: str | None, types: frozenset[str] | None, window: int) -> None:
        self.name = name
        self.recipient = recipient
        self.types = types
        self.member: _InProcSubscription | None = None
        self.backlog: deque[Envelope] = deque()
        self.seen = IdWindow(window)


class _InProcSubscription(Subscription):
    def __init__(
        self,
        bus: "InProcBus",
        recipient: str | None,
        types: frozenset[str] | None,
        group: _Group | None,
        maxsize: int,
        overflow: Overflow,
    ) -> None:
        self.recipient = recipient
        self.types = types
        self.group = group.name if group is not None else None
        self.maxsize = maxsize
        self.overflow = overflow
        self.lanes = Lanes(maxsize)
        self._bus = bus
        self._group = group
        self._last: Envelope | None = None  # yielded, to be acknowledged on the next __anext__
        self._unacked: dict[str, Envelope] = {}
        self._closed = False

    def __repr__(self) -> str:
        return f"<subscription {describe(self.recipient, self.types, self.group)}>"

    async def __anext__(self) -> Envelope:
        g = self._group
        if g is not None and self._last is not None:
            self._bus._record_ack(self, self._last)
        lanes = self.lanes
        while True:
            if self._closed:
                raise StopAsyncIteration
            if lanes.urgent or g is None or not g.backlog:
                env = lanes.take()
            else:
                env = g.backlog.popleft()
            if env is not None:
                if g is not None:
                    self._unacked[env.id] = env
                    self._last = env
                return env
            await lanes.wait_item()

    async def ack(self, env: Envelope, publish: Sequence[Envelope] = ()) -> None:
        urgents = [check(e) for e in publish]
        g = self._group
        if g is None:
            if publish:
                await self._bus.publish_many(publish)
            return
        if env.id not in self._unacked:
            if publish:
                raise BusError(not_awaiting_ack(self, env, len(publish)))
            return  # acknowledged already
        await self._bus._commit(publish, urgents, ack=(self, env))

    async def close(self) -> None:
        """Stop receiving; the envelope last yielded counts as handled (acknowledged).

        Leaving ``async with`` because of an exception does not acknowledge it, so a durable
        group gets it again.
        """
        if self._group is not None and self._last is not None and not self._closed:
            self._bus._record_ack(self, self._last)
        self._shutdown()

    async def __aexit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            await self.close()
        else:
            self._shutdown()

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._bus._detach(self)
        left = self.lanes.drain()
        g = self._group
        if g is not None:
            g.backlog.extendleft(reversed([*self._unacked.values(), *left]))
            self._unacked.clear()
            self._last = None
        elif left:
            log.warning("%s closed with %d envelopes not yet received; they are discarded", self, len(left))
        self.lanes.close()


class InProcBus(Bus):
    """The in-process bus (see the module docstring).

    Args:
        log_path: the JSONL write-ahead log; None keeps no log (no replay, no resume).
        log_fsync_ms: fsync the log at most this often, in ms; 0 = after every record.
        resume: rebuild durable groups from an existing ``log_path`` at start.
        yield_depth: a publisher yields once to the loop when a subscriber has at least this
            many envelopes waiting (0 = never).
        dedup_window: envelope ids remembered per durable group for de-duplication.
    """

    def __init__(
        self,
        log_path: str | Path | None = None,
        *,
        log_fsync_ms: int = 100,
        resume: bool = False,
        yield_depth: int = 32,
        dedup_window: int = 100_000,
    ) -> None:
        super().__init__()
        self.log_path = Path(log_path).expanduser() if log_path is not None else None
        self._log = EnvelopeLog(self.log_path, log_fsync_ms) if self.log_path is not None else None
        self._resume = resume
        self._yield_depth = yield_depth
        self._window = dedup_window
        self._subs: list[_InProcSubscription] = []
        self._groups: dict[str, _Group] = {}
        self._marks: dict[str, str] = {}
        self._running = False

    async def start(self) -> None:
        """Load the log when resuming, then open it for appending.

        Raises:
            LogError: the log to resume from is unreadable.
            OSError: the log cannot be opened.
        """
        if self._running:
            return
        if self._resume and self.log_path is not None and self.log_path.exists():
            self._load(self.log_path)
        if self._log is not None:
            self._log.open()
        self._running = True

    async def stop(self) -> None:
        """Close all subscriptions (durable groups keep their unacknowledged envelopes in the log),
        fail pending requests and fsync and close the log."""
        if not self._running:
            return
        self._running = False
        for sub in [*self._subs, *(g.member for g in self._groups.values() if g.member is not None)]:
            sub._shutdown()
        self._fail_waiters("bus stopped")
        if self._log is not None:
            await self._log.close()

    def subscribe(
        self,
        recipient: str | None = None,
        types: Iterable[str] | str | None = None,
        *,
        group: str | None = None,
        maxsize: int = DEFAULT_MAXSIZE,
        overflow: Overflow = "block",
    ) -> Subscription:
        """See :meth:`Bus.subscribe`. In-process, a durable group has one live member at a time.

        Raises:
            ValueError: bad arguments.
            BusError: ``group`` exists with another filter, or already has a live member.
            BusClosedError: the bus is not running.
        """
        ts = normalise_filter(recipient, types, maxsize, overflow)
        if not self._running:
            raise BusClosedError("bus is not running")
        if group is None:
            sub = _InProcSubscription(self, recipient, ts, None, maxsize, overflow)
            self._subs.append(sub)
            return sub
        g = self._groups.get(group)
        if g is None:
            if self._log is not None:
                self._log.append(group_line(group, recipient, ts))
            g = self._groups[group] = _Group(group, recipient, ts, self._window)
        elif (g.recipient, g.types) != (recipient, ts):
            raise BusError(
                f"group {group!r} exists with filter {describe(g.recipient, g.types, None)}, "
                f"not {describe(recipient, ts, None)}"
            )
        if g.member is not None:
            raise BusError(f"group {group!r} already has a live member in this process")
        sub = _InProcSubscription(self, recipient, ts, g, maxsize, overflow)
        g.member = sub
        if g.backlog:  # redelivered envelopes: urgent ones first
            ordered = [e for e in g.backlog if e.urgent] + [e for e in g.backlog if not e.urgent]
            g.backlog = deque(ordered)
        return sub

    async def read_mark(self, name: str) -> str | None:
        return self._marks.get(name)

    async def swap_mark(self, name: str, value: str) -> str | None:
        old, self._marks[name] = self._marks.get(name), value
        return old

    async def publish(self, env: Envelope) -> None:
        await self._commit((env,), (check(env),))

    async def publish_many(self, envs: Sequence[Envelope]) -> None:
        """Validate all of ``envs``, then publish them one by one in order.

        Raises:
            As :meth:`publish`; a BusOverflowError part-way leaves the earlier ones published.
        """
        urgents = [check(e) for e in envs]
        for env, urgent in zip(envs, urgents):
            await self._commit((env,), (urgent,))

    # -- internals -------------------------------------------------------------------------

    async def _commit(
        self, envs: Sequence[Envelope], urgents: Sequence[bool], ack: tuple[_InProcSubscription, Envelope] | None = None
    ) -> None:
        """Deliver ``envs`` (and record ``ack``) all at once, or raise with nothing delivered."""
        while True:
            if not self._running:
                raise BusClosedError("bus is not running")
            if ack is not None and ack[1].id not in ack[0]._unacked:
                raise BusClosedError(f"{ack[0]} closed before envelope {ack[1].id} was acknowledged")
            plan = [(env, urgent, self._route(env)) for env, urgent in zip(envs, urgents)]
            full = self._full_target(plan)
            if full is None:
                break
            sub, env = full
            if sub.overflow == "error":
                raise BusOverflowError(
                    f"{sub} is full ({sub.maxsize} queued); {env.type} {env.id} "
                    f"from {env.sender} was delivered to no one"
                )
            await sub.lanes.wait_room()
        if self._log is not None:
            lines = [env.to_json() + b"\n" for env in envs]
            if ack is not None:
                lines.append(ack_line(ack[0]._group.name, ack[1].id))  # type: ignore[union-attr]
            try:
                self._log.append(b"".join(lines))
            except OSError as e:
                raise BusError(f"bus log {self.log_path}: write failed ({e}); nothing delivered") from e
        crowded = False
        for env, urgent, targets in plan:
            for t in targets:
                if t.__class__ is _Group:
                    t.seen.add(env.id)
                    if t.member is None:
                        t.backlog.append(env)
                        continue
                    t = t.member
                lanes = t.lanes
                lanes.put(env, urgent)
                if len(lanes.normal) >= self._yield_depth:
                    crowded = True
            if env.reply_to is not None and self._waiters:
                self._resolve_reply(env)
        if ack is not None:
            self._mark_acked(*ack)
        if crowded and self._yield_depth:
            await asyncio.sleep(0)

    def _route(self, env: Envelope) -> list[_InProcSubscription | _Group]:
        r, t = env.recipient, env.type
        out: list[_InProcSubscription | _Group] = [
            s
            for s in self._subs
            if (s.recipient is None or s.recipient == r or r == "*") and (s.types is None or t in s.types)
        ]
        for g in self._groups.values():
            if matches(g.recipient, g.types, env) and env.id not in g.seen:
                out.append(g)
        return out

    @staticmethod
    def _full_target(plan: list) -> tuple[_InProcSubscription, Envelope] | None:
        """The first subscription without room for its share of ``plan``, or None."""
        if len(plan) == 1:
            env, urgent, targets = plan[0]
            for t in targets:
                sub = t.member if t.__class__ is _Group else t
                if sub is not None and sub.lanes.room(urgent) < 1:
                    return sub, env
            return None
        need: dict[tuple[int, bool], int] = {}
        for env, urgent, targets in plan:
            for t in targets:
                sub = t.member if t.__class__ is _Group else t
                if sub is None:
                    continue
                key = (id(sub), urgent)
                need[key] = need.get(key, 0) + 1
                if need[key] > sub.lanes.room(urgent):
                    if need[key] > sub.maxsize:
                        raise BusOverflowError(
                            f"{sub}: {need[key]} envelopes at once exceed its bound of {sub.maxsize}; nothing delivered"
                        )
                    return sub, env
        return None

    def _record_ack(self, sub: _InProcSubscription, env: Envelope) -> None:
        if env.id not in sub._unacked:
            sub._last = None
            return
        if self._log is not None and self._running:
            try:
                self._log.append(ack_line(sub._group.name, env.id))  # type: ignore[union-attr]
            except OSError as e:
                raise BusError(
                    f"bus log {self.log_path}: acknowledging {env.id} failed ({e}); "
                    f"it will be delivered again after a restart"
                ) from e
        self._mark_acked(sub, env)

    @staticmethod
    def _mark_acked(sub: _InProcSubscription, env: Envelope) -> None:
        sub._unacked.pop(env.id, None)
        if sub._last is env:
            sub._last = None

    def _detach(self, sub: _InProcSubscription) -> None:
        if sub._group is not None:
            if sub._group.member is sub:
                sub._group.member = None
        elif sub in self._subs:
            self._subs.remove(sub)

    def _load(self, path: Path) -> None:
        """Rebuild durable groups (filters, unacknowledged envelopes, seen ids) from a log."""
        pending: dict[str, dict[str, Envelope]] = {}
        n = 0
        for rec in iter_log(path):
            if isinstance(rec, Envelope):
                n += 1
                for g in self._groups.values():
                    if matches(g.recipient, g.types, rec) and rec.id not in g.seen:
                        g.seen.add(rec.id)
                        pending[g.name][rec.id] = rec
            elif isinstance(rec, GroupCreated):  # again: a run that did not resume started it afresh
                self._groups[rec.group] = _Group(rec.group, rec.recipient, rec.types, self._window)
                pending[rec.group] = {}
            elif isinstance(rec, Acked) and rec.group in self._groups:
                self._groups[rec.group].seen.add(rec.id)
                pending[rec.group].pop(rec.id, None)
        for g in self._groups.values():
            g.backlog = deque(pending[g.name].values())
        log.info(
            "resumed from %s: %d envelopes, %s",
            path,
            n,
            ", ".join(f"group {g.name}: {len(g.backlog)} unacknowledged" for g in self._groups.values())
            or "no durable groups",
        )
