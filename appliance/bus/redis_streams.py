"""The Redis Streams backend: one bus shared by agents in several processes or hosts.

Layout on the server (``S`` = the ``stream`` name, default ``appliance:bus``):

* ``S`` — ordinary envelopes, ``S:urgent`` — urgent ones (read first, never stuck behind
  ordinary traffic); each entry is ``{"e": <envelope JSON>}``.
* ``S:dead`` — entries that were not valid envelopes, moved aside with the reason.
* ``S:done:<group>:<envelope id>`` — de-duplication marks (``SET NX``, expiring after
  ``dedup_ttl_s``).

Publishing: one writer task sends everything queued by ``publish`` in a single pipeline
(so concurrent publishers share round trips) and ``publish`` returns once ``XADD`` has
answered. Ephemeral subscriptions read with ``XREAD``. Durable groups are Redis consumer
groups (``XREADGROUP``, ``COUNT`` up to the free room of the subscription's queue); an
envelope is acknowledged by one Lua script that sets the done mark, ``XACK``s the entry
and — only if the mark was new — ``XADD``s the envelopes the handler asked to publish
with it. Entries a dead consumer left pending are taken over with ``XAUTOCLAIM`` once idle
for ``claim_idle_ms``; anything already marked done is acknowledged and skipped. A live
member renews its hold on everything it holds (queued locally or being handled) every
``claim_interval_s`` (≤ half of ``claim_idle_ms``), so a slow handler keeps its envelope;
only a member that died — or whose event loop stalled longer than ``claim_idle_ms`` —
loses what it held.

The stream is the buffer: a subscription holds at most ``maxsize`` envelopes locally and
leaves the rest in Redis, so publishers never wait for a remote consumer. With
``overflow="error"`` a subscription whose queue is full while matching envelopes wait in
the stream fails: its next ``__anext__`` raises :class:`BusOverflowError`.
The bus does not trim the streams; an operator trims old entries with ``XTRIM ... MINID``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import Iterable, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from appliance.bus.base import (DEFAULT_MAXSIZE, Bus, BusClosedError, BusError, BusOverflowError, IdWindow, Lanes,
                                Overflow, Subscription, describe, matches, normalise_filter, not_awaiting_ack)
from appliance.bus.envelope import Envelope, check, uuid7
from appliance.protocol.registry import EnvelopeError

log = logging.getLogger(__name__)

FIELD = b"e"
URGENT_POLL_S = 0.02  # with a full ordinary lane, how often the urgent stream is polled
STOP_DRAIN_S = 5.0  # how long stop() waits for queued publishes to be sent

# KEYS[1] done mark, KEYS[2] stream of the acknowledged entry, KEYS[3..] streams of the outbox
# ARGV[1] group, ARGV[2] entry id, ARGV[3] mark ttl (ms), ARGV[4..] outbox envelopes (JSON)
_COMMIT_LUA = """
local fresh = redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[3])
redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
if not fresh then return 0 end
for i = 3, #KEYS do redis.call('XADD', KEYS[i], '*', 'e', ARGV[i + 1]) end
return 1
"""


# KEYS[1] stream; ARGV[1] group, ARGV[2] consumer, ARGV[3..] entry ids: reset the idle time of
# those this consumer still owns (XCLAIM to itself), so no one takes them over; returns how many
_RENEW_LUA = """
local renewed = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    renewed = renewed + 1
  end
end
return renewed
"""


def stream_keys(stream: str) -> tuple[str, str]:
    """The ordinary and urgent stream names of a bus whose base stream name is ``stream``."""
    return stream, f"{stream}:urgent"


def _sid(entry_id: bytes | str) -> tuple[int, int]:
    s = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = s.partition("-")
    return int(ms), int(seq or 0)


class _RedisSubscription(Subscription):
    """Ephemeral: XREAD from the position the bus estimates for "now" at subscribe time."""

    def __init__(self, bus: "RedisBus", recipient: str | None, types: frozenset[str] | None,
                 maxsize: int, overflow: Overflow) -> None:
        self.recipient = recipient
        self.types = types
        self.group = None
        self.maxsize = maxsize
        self.overflow = overflow
        self.lanes = Lanes(maxsize)
        self._bus = bus
        self._error: BaseException | None = None
        self._closed = False
        self._pos: dict[str, Any] = {key: bus._start_id(key) for key in bus._keys}  # read positions
        # the reader's own connection: closing it is what reliably interrupts a blocked read
        self._conn = aioredis.Redis.from_url(bus.url, decode_responses=False)
        self._task = asyncio.get_running_loop().create_task(self._guard(), name=f"bus reader {self}")

    def __repr__(self) -> str:
        return f"<redis subscription {describe(self.recipient, self.types, self.group)}>"

    async def __anext__(self) -> Envelope:
        while True:
            if self._error is not None:
                raise self._error
            if self._closed:
                raise StopAsyncIteration
            env = self.lanes.take()
            if env is not None:
                self._delivered(env)
                return env
            await self.lanes.wait_item()

    def _delivered(self, env: Envelope) -> None:
        """Hook for durable groups: remember what to acknowledge."""

    async def ack(self, env: Envelope, publish: Sequence[Envelope] = ()) -> None:
        if publish:
            await self._bus.publish_many(publish)

    async def close(self) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._bus._subs.discard(self)
        await self._stop_reader()
        await self._finish()

    async def _finish(self) -> None:
        """After the reader stopped: drop what was not received (it stays in the stream)."""
        left = self.lanes.drain()
        if left:
            log.warning("%s closed with %d envelopes not yet received (they stay in the stream)", self, len(left))
        self.lanes.close()

    async def _stop_reader(self) -> None:
        """End the reader task: disconnect its connection (a blocked read fails at once), then cancel."""
        await self._conn.aclose()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _guard(self) -> None:
        """Run the reader; retry on connection errors, surface anything else to the consumer."""
        delay = 0.1
        while True:
            try:
                await self._run()
                return
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as e:
                if self._closed:  # redis-py may turn our cancellation into a connection error
                    return
                log.warning("%s: redis error, retrying in %.1f s: %s", self, delay, e)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            except BaseException as e:  # a bug or an overflow: fail loudly, never silently stop
                if not isinstance(e, BusError):
                    log.exception("%s: reader failed", self)
                    e = BusError(f"{self}: reader failed: {e!r}")
                self._error = e
                self.lanes.close()
                return

    def _lanes(self) -> tuple[dict[str, Any], int]:
        """The streams there is room to read now (urgent first) and the COUNT to ask for."""
        room_u, room_n = self.lanes.room(True), self.lanes.room(False)
        keys: dict[str, Any] = {}
        count = self._bus.batch
        if room_u > 0:
            keys[self._bus._urgent_key] = None
            count = min(count, room_u)
        if room_n > 0:
            keys[self._bus.stream] = None
            count = min(count, room_n)
        return keys, count

    async def _run(self) -> None:
        """Read while there is room; with the ordinary lane full, keep polling the urgent stream."""
        bus = self._bus
        await self._prepare()
        while not self._closed:  # also checked: redis-py can swallow a cancellation
            block = await self._maintain()
            keys, count = self._lanes()
            if bus.stream in keys:
                await self._read(keys, count, block)
                continue
            if self.overflow == "error":
                env = await self._waiting_match()
                if env is not None:
                    raise BusOverflowError(f"{self} is full ({self.maxsize} queued) and {env.type} {env.id} "
                                           f"is waiting in stream {bus.stream}")
            if not (keys and await self._read(keys, count, None)):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.lanes.wait_room(), URGENT_POLL_S)

    async def _prepare(self) -> None:
        """Set-up before the first read (durable groups create the consumer group)."""

    async def _maintain(self) -> int:
        """Periodic work before a read; returns how long the next read may block, in ms."""
        return self._bus.block_ms

    async def _read(self, keys: dict[str, Any], count: int, block: int | None) -> bool:
        """One read of ``keys`` into the lanes; whether anything arrived."""
        bus = self._bus
        res = await self._conn.xread({k: self._pos[k] for k in keys}, count=count, block=block)
        for key, entries in res or ():
            key = key.decode()
            for entry_id, fields in entries:
                self._pos[key] = entry_id
                env = bus._parse(key, entry_id, fields)
                if isinstance(env, str):
                    log.warning("%s: stream %s entry %s is not a valid envelope (%s); skipped",
                                self, key, entry_id.decode(), env)
                elif matches(self.recipient, self.types, env):
                    self.lanes.put(env, key == bus._urgent_key)
        return bool(res)

    async def _waiting_match(self) -> Envelope | None:
        """A matching envelope waiting in the ordinary stream beyond what this subscription read."""
        return await self._bus._first_match(self._pos[self._bus.stream], self.recipient, self.types)


class _RedisGroupSubscription(_RedisSubscription):
    """A member of a Redis consumer group (see the module docstring)."""

    def __init__(self, bus: "RedisBus", recipient: str | None, types: frozenset[str] | None, group: str,
                 consumer: str, maxsize: int, overflow: Overflow) -> None:
        self._group_name = group
        self.consumer = consumer
        self._held: dict[str, tuple[str, bytes]] = {}  # envelope id -> (stream, entry id), queued or yielded
        self._last: Envelope | None = None
        self._acks: list[tuple[str, str, bytes]] = []  # (envelope id, stream, entry id) to acknowledge
        self._ack_wake = asyncio.Event()
        self._acked = IdWindow(10_000)
        super().__init__(bus, recipient, types, maxsize, overflow)
        self.group = group
        self._acker = asyncio.get_running_loop().create_task(self._ack_loop(), name=f"bus acker {self}")

    def _delivered(self, env: Envelope) -> None:
        self._last = env

    async def __anext__(self) -> Envelope:
        if self._last is not None:
            self._queue_ack(self._last)
            self._last = None
        return await super().__anext__()

    def _queue_ack(self, env: Envelope) -> None:
        where = self._held.pop(env.id, None)
        if where is not None:
            self._acks.append((env.id, *where))
            self._acked.add(env.id)
            self._ack_wake.set()

    async def ack(self, env: Envelope, publish: Sequence[Envelope] = ()) -> None:
        for e in publish:
            check(e)
        where = self._held.get(env.id)
        if where is None:
            if publish:
                raise BusError(not_awaiting_ack(self, env, len(publish)))
            return
        del self._held[env.id]
        if self._last is env:
            self._last = None
        try:
            fresh = await self._bus._commit(self._group_name, env.id, *where, publish)
        except BaseException:
            self._held[env.id] = where
            raise
        self._acked.add(env.id)
        if not fresh:
            log.warning("%s: %s %s was already handled in group %s; its %d envelope(s) were not published "
                        "again", self, env.type, env.id, self._group_name, len(publish))

    async def close(self) -> None:
        """Acknowledge the envelope last yielded, flush acknowledgements and give the rest back.

        Envelopes queued here but not yet yielded are released for other members at once.
        """
        if self._last is not None and not self._closed:
            self._queue_ack(self._last)
            self._last = None
        await self._shutdown()

    async def __aexit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self._shutdown()

    async def _finish(self) -> None:
        """After the reader stopped: flush acknowledgements and release what this member
        holds (unacknowledged envelopes are redelivered to other members)."""
        self._acker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._acker
        self.lanes.drain()
        self.lanes.close()
        try:
            await self._flush_acks()
            await self._release()
        except (RedisError, OSError) as e:
            log.warning("%s: could not flush acknowledgements / release on close (they will be redelivered): %s",
                        self, e)

    async def _release(self) -> None:
        """Make what this member still holds immediately claimable by other members."""
        held, self._held = self._held, {}
        by_key: dict[str, list[bytes]] = {}
        for key, entry_id in held.values():
            by_key.setdefault(key, []).append(entry_id)
        for key, ids in by_key.items():
            await self._bus._r.xclaim(key, self._group_name, self.consumer, 0, ids, idle=2**40, justid=True)

    async def _ack_loop(self) -> None:
        while not self._closed:
            await self._ack_wake.wait()
            self._ack_wake.clear()
            try:
                await self._flush_acks()
            except (RedisError, OSError) as e:
                log.warning("%s: acknowledgement failed, retrying: %s", self, e)
                await asyncio.sleep(0.2)
                self._ack_wake.set()

    async def _flush_acks(self) -> None:
        if not self._acks:
            return
        batch, self._acks = self._acks, []
        try:
            results = await self._bus._commit_many(self._group_name, batch)
        except BaseException:
            self._acks[:0] = batch
            raise
        for (env_id, _, _), fresh in zip(batch, results):
            if not fresh:
                log.warning("%s: envelope %s was already handled in group %s", self, env_id, self._group_name)

    async def _prepare(self) -> None:
        for key in self._bus._keys:
            try:
                await self._conn.xgroup_create(key, self._group_name, id=self._pos[key], mkstream=True)
            except ResponseError as e:
                if "BUSYGROUP" not in str(e):  # the group exists: continue where it is
                    raise
        self._cursors = {key: b"0-0" for key in self._bus._keys}
        self._next_claim = 0.0

    async def _maintain(self) -> int:
        """Every ``claim_interval_s``: renew what this member holds, take over what dead ones left."""
        bus, now = self._bus, time.monotonic()
        if now >= self._next_claim:
            self._next_claim = now + bus.claim_interval_s
            await self._renew()
            for key in bus._keys:
                urgent = key == bus._urgent_key
                while self.lanes.room(urgent) > 0:
                    cursor, entries, deleted = await self._conn.xautoclaim(
                        key, self._group_name, self.consumer, bus.claim_idle_ms, start_id=self._cursors[key],
                        count=min(bus.batch, self.lanes.room(urgent)))
                    self._cursors[key] = cursor
                    if deleted:
                        log.error("%s: %d pending entries of %s were deleted from the stream before being "
                                  "handled (trimmed?): %s", self, len(deleted), key, deleted[:5])
                    if entries:
                        log.info("%s: took over %d envelopes left pending in %s", self, len(entries), key)
                        await self._accept(key, entries)
                    if cursor in (b"0-0", "0-0"):
                        break
        return max(1, min(bus.block_ms, int((self._next_claim - time.monotonic()) * 1000)))

    async def _renew(self) -> None:
        """Reset the idle time of every entry this member holds (queued here or being handled), so
        that only a dead member's entries ever reach ``claim_idle_ms`` and get taken over."""
        by_key: dict[str, list[bytes]] = {}
        for key, entry_id in self._held.values():
            by_key.setdefault(key, []).append(entry_id)
        for key, ids in by_key.items():
            renewed = await self._bus._renew_script(keys=[key], args=[self._group_name, self.consumer, *ids],
                                                    client=self._conn)
            if renewed < len(ids):
                log.warning("%s: %d held envelopes were taken over by another member (this one stalled longer "
                            "than %d ms); they may be handled twice", self, len(ids) - renewed,
                            self._bus.claim_idle_ms)

    async def _read(self, keys: dict[str, Any], count: int, block: int | None) -> bool:
        res = await self._conn.xreadgroup(self._group_name, self.consumer, {k: ">" for k in keys},
                                            count=count, block=block)
        for key, entries in res or ():
            await self._accept(key.decode(), entries)
        return bool(res)

    async def _waiting_match(self) -> Envelope | None:
        for info in await self._bus._r.xinfo_groups(self._bus.stream):
            if info["name"] == self._group_name.encode():
                return await self._bus._first_match(info["last-delivered-id"], self.recipient, self.types)
        return None

    async def _accept(self, key: str, entries: list) -> None:
        """Parse, filter and de-duplicate a batch of entries now pending on this consumer."""
        bus = self._bus
        skip: list[bytes] = []
        fresh: list[tuple[bytes, Envelope]] = []
        dead: list[tuple[bytes, str]] = []
        for entry_id, fields in entries:
            env = bus._parse(key, entry_id, fields)
            if isinstance(env, str):
                skip.append(entry_id)
                if fields:
                    dead.append((entry_id, env))
                    log.error("%s: stream %s entry %s is not a valid envelope (%s); moved to %s",
                              self, key, entry_id.decode(), env, bus._dead_key)
            elif not matches(self.recipient, self.types, env):
                skip.append(entry_id)  # not for this group
            elif self._held.get(env.id) == (key, entry_id):
                continue  # our own entry, taken back after this member stalled: still held here
            elif env.id in self._held or env.id in self._acked:
                skip.append(entry_id)  # the same envelope published twice
            else:
                fresh.append((entry_id, env))
        if fresh:
            done = await self._conn.mget([bus._done_key(self._group_name, env.id) for _, env in fresh])
            for (entry_id, env), mark in zip(fresh, done):
                if mark is not None:
                    skip.append(entry_id)
                    log.debug("%s: %s already handled in group %s; skipped", self, env.id, self._group_name)
                elif env.id not in self._held:
                    self._held[env.id] = (key, entry_id)
                    self.lanes.put(env, key == bus._urgent_key)
                else:
                    skip.append(entry_id)
        if dead:
            pipe = self._conn.pipeline(transaction=False)
            for entry_id, why in dead:
                pipe.xadd(bus._dead_key, {b"stream": key, b"entry": entry_id, b"group": self._group_name,
                                          b"reason": why})
            await pipe.execute()
        if skip:
            await self._conn.xack(key, self._group_name, *skip)


class RedisBus(Bus):
    """The bus on Redis Streams (see the module docstring).

    Args:
        url: e.g. ``redis://127.0.0.1:6379/0``.
        stream: base stream name.
        claim_idle_ms: an entry pending this long on one consumer is taken over by another.
        dedup_ttl_s: how long done marks are kept (de-duplication horizon), in seconds.
        batch: the most entries one read or one publish pipeline carries.
        block_ms: how long one blocking read waits before it looks again, in ms.
    """

    def __init__(self, url: str, *, stream: str = "appliance:bus", claim_idle_ms: int = 5000,
                 dedup_ttl_s: int = 86_400, batch: int = 256, block_ms: int = 1000) -> None:
        super().__init__()
        self.url = url
        self.stream = stream
        self._keys = stream_keys(stream)
        self._urgent_key = self._keys[1]
        self._dead_key = f"{stream}:dead"
        self.claim_idle_ms = claim_idle_ms
        self.claim_interval_s = min(claim_idle_ms / 2000, 1.0)
        self.dedup_ttl_ms = dedup_ttl_s * 1000
        self.batch = batch
        self.block_ms = block_ms
        self._r: aioredis.Redis = None  # type: ignore[assignment]
        self._script: Any = None
        self._renew_script: Any = None
        self._outbox: list[tuple[str, bytes, asyncio.Future[bytes]]] = []
        self._outbox_wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._subs: set[_RedisSubscription] = set()
        self._reply_sub: _RedisSubscription | None = None
        self._reply_task: asyncio.Task[None] | None = None
        self._last_id: dict[str, tuple[int, int]] = {k: (0, 0) for k in self._keys}
        self._clock_offset_ms = 0.0
        self._clock_margin_ms = 1
        self._running = False

    async def start(self) -> None:
        """Connect, measure the server clock against ours and start the writer.

        Raises:
            BusError: the server cannot be reached.
        """
        if self._running:
            return
        self._r = aioredis.Redis.from_url(self.url, decode_responses=False)
        try:
            t0 = time.time()
            sec, usec = await self._r.time()
            t1 = time.time()
        except (RedisError, OSError) as e:
            await self._r.aclose()
            raise BusError(f"cannot reach redis at {self.url}: {e}") from None
        self._clock_offset_ms = (sec * 1000 + usec / 1000) - (t0 + t1) * 500
        self._clock_margin_ms = math.ceil((t1 - t0) * 500) + 1
        self._script = self._r.register_script(_COMMIT_LUA)
        self._renew_script = self._r.register_script(_RENEW_LUA)
        self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="bus writer")
        self._running = True

    async def stop(self) -> None:
        """Close subscriptions (flushing their acknowledgements), send what is queued, disconnect."""
        if not self._running:
            return
        self._running = False
        for sub in list(self._subs):
            await sub.close()
        if self._reply_task is not None:
            self._reply_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reply_task
        self._fail_waiters("bus stopped")
        self._outbox_wake.set()  # the writer sends what is queued, then ends
        if self._writer is not None:
            try:
                await asyncio.wait_for(self._writer, STOP_DRAIN_S)
            except TimeoutError:
                log.error("bus writer did not drain within %.0f s; %d envelopes not published",
                          STOP_DRAIN_S, len(self._outbox))
            for _, _, fut in self._outbox:
                if not fut.done():
                    fut.set_exception(BusClosedError("bus stopped before this envelope was sent"))
            self._outbox.clear()
        await self._r.aclose()

    def subscribe(self, recipient: str | None = None, types: Iterable[str] | str | None = None, *,
                  group: str | None = None, maxsize: int = DEFAULT_MAXSIZE, overflow: Overflow = "block",
                  consumer: str | None = None) -> Subscription:
        """See :meth:`Bus.subscribe`; ``consumer`` names this member of ``group`` (default: host:pid:random).

        Members of one group must use the same filter.

        Raises:
            ValueError: bad arguments.
            BusClosedError: the bus is not running.
        """
        ts = normalise_filter(recipient, types, maxsize, overflow)
        if not self._running:
            raise BusClosedError("bus is not running")
        sub: _RedisSubscription
        if group is None:
            sub = _RedisSubscription(self, recipient, ts, maxsize, overflow)
        else:
            consumer = consumer or f"{socket.gethostname()}:{os.getpid()}:{uuid7()[-8:]}"
            sub = _RedisGroupSubscription(self, recipient, ts, group, consumer, maxsize, overflow)
        self._subs.add(sub)
        return sub

    async def publish(self, env: Envelope) -> None:
        urgent = check(env)
        await self._enqueue([(self._urgent_key if urgent else self.stream, env.to_json())])[0]

    async def publish_many(self, envs: Sequence[Envelope]) -> None:
        """Validate all of ``envs``, then send them in order in as few pipelines as possible.

        Raises:
            As :meth:`publish`.
        """
        items = [(self._urgent_key if check(e) else self.stream, e.to_json()) for e in envs]
        await asyncio.gather(*self._enqueue(items))

    # -- internals -------------------------------------------------------------------------

    def _enqueue(self, items: list[tuple[str, bytes]]) -> list[asyncio.Future[bytes]]:
        if not self._running:
            raise BusClosedError("bus is not running")
        loop = asyncio.get_running_loop()
        futs = []
        for key, data in items:
            fut = loop.create_future()
            self._outbox.append((key, data, fut))
            futs.append(fut)
        self._outbox_wake.set()
        return futs

    async def _write_loop(self) -> None:
        while self._running or self._outbox:
            await self._outbox_wake.wait()
            self._outbox_wake.clear()
            while self._outbox:
                batch, self._outbox = self._outbox[:self.batch], self._outbox[self.batch:]
                pipe = self._r.pipeline(transaction=False)
                for key, data, _ in batch:
                    pipe.xadd(key, {FIELD: data})
                try:
                    ids = await pipe.execute()
                except (RedisError, OSError) as e:
                    err = BusError(f"redis XADD to {self.url} failed: {e}")
                    for _, _, fut in batch:
                        if not fut.done():
                            fut.set_exception(err)
                    continue
                for (key, _, fut), entry_id in zip(batch, ids):
                    sid = _sid(entry_id)
                    if sid > self._last_id[key]:
                        self._last_id[key] = sid
                    if not fut.done():
                        fut.set_result(entry_id)

    def _start_id(self, key: str) -> str:
        """Where a subscription made now starts reading ``key``: entries after this id.

        The server's "now" is estimated from our clock and the offset measured at start,
        minus the measurement's uncertainty; envelopes this bus published already are
        excluded exactly.
        """
        est = (int(time.time() * 1000 + self._clock_offset_ms) - self._clock_margin_ms, 0)
        ms, seq = max(est, self._last_id[key])
        return f"{ms}-{seq}"

    def _done_key(self, group: str, env_id: str) -> str:
        return f"{self.stream}:done:{group}:{env_id}"

    @staticmethod
    def _parse(key: str, entry_id: bytes, fields: dict[bytes, bytes] | None) -> Envelope | str:
        """The envelope in a stream entry, or why it is not one."""
        if not fields:
            return "entry deleted"
        try:
            return Envelope.from_json(fields[FIELD])
        except KeyError:
            return f"missing field {FIELD!r}"
        except EnvelopeError as e:
            return str(e)

    async def _first_match(self, after: bytes | str, recipient: str | None,
                           types: frozenset[str] | None, scan: int = 1024) -> Envelope | None:
        """The first envelope after entry ``after`` in the ordinary stream that a filter selects
        (looking at most ``scan`` entries ahead), or None."""
        after = after.decode() if isinstance(after, bytes) else after
        seen = 0
        while seen < scan:
            entries = await self._r.xrange(self.stream, min=f"({after}", count=64)
            if not entries:
                return None
            for entry_id, fields in entries:
                env = self._parse(self.stream, entry_id, fields)
                if isinstance(env, Envelope) and matches(recipient, types, env):
                    return env
            seen += len(entries)
            after = entries[-1][0].decode()
        return None

    async def _commit(self, group: str, env_id: str, key: str, entry_id: bytes,
                      publish: Sequence[Envelope]) -> bool:
        """Run the commit script for one envelope; True if this was its first acknowledgement."""
        outbox = [(self._urgent_key if e.urgent else self.stream, e.to_json()) for e in publish]
        try:
            return bool(await self._script(
                keys=[self._done_key(group, env_id), key, *(k for k, _ in outbox)],
                args=[group, entry_id, self.dedup_ttl_ms, *(d for _, d in outbox)]))
        except (RedisError, OSError) as e:
            raise BusError(f"acknowledging {env_id} in group {group} failed: {e}") from e

    async def _commit_many(self, group: str, batch: list[tuple[str, str, bytes]]) -> list[bool]:
        """Acknowledge ``(envelope id, stream, entry id)`` items in one pipeline; first-time flags."""
        pipe = self._r.pipeline(transaction=False)
        for env_id, key, entry_id in batch:
            await self._script(keys=[self._done_key(group, env_id), key],
                               args=[group, entry_id, self.dedup_ttl_ms], client=pipe)
        return [bool(x) for x in await pipe.execute()]

    async def _watch_replies(self) -> None:
        if self._reply_sub is None:
            self._reply_sub = sub = _RedisSubscription(self, None, None, DEFAULT_MAXSIZE, "block")
            self._subs.add(sub)

            async def resolve() -> None:
                async for env in sub:
                    if env.reply_to is not None:
                        self._resolve_reply(env)

            self._reply_task = asyncio.get_running_loop().create_task(resolve(), name="bus replies")
