"""The Redis Streams backend: one bus shared by agents in several processes or hosts.

Layout on the server (``S`` = the ``stream`` name, default ``appliance:bus``):

* ``S`` — ordinary envelopes, ``S:urgent`` — urgent ones (read first, never stuck behind
  ordinary traffic); each entry is ``{"e": <envelope JSON>}``.
* ``S:dead`` — dead letters, never trimmed: entries that were not valid envelopes, and
  envelopes a durable group was given ``max_deliveries`` times without acknowledging them
  (``{stream, entry, group, reason}``, plus ``e`` and ``deliveries`` for the latter).
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

**Poison envelopes.** Redis counts deliveries per group entry. A member that closes with
an exception, or dies, leaves the envelope it was handling unacknowledged; the next member
takes it over and the count grows. Taking over an entry delivered more than
``max_deliveries`` times moves it to ``S:dead`` with the reason instead (one transaction:
dead-letter ``XADD`` + ``XACK``), and the stream flows on. Envelopes a member had fetched
but not yet handed to its handler are released on a clean close with their count put back
(``XCLAIM … RETRYCOUNT``), so restarts do not count against them; a member *killed* with
fetched envelopes does count one delivery against each.

**Trimming** (``maxlen`` > 0): every ``TRIM_INTERVAL_S`` a bus that has published trims each
stream with one Lua script: the floor is the oldest entry some group has not acknowledged
(its oldest pending entry, or the one after its last-delivered id), and ``XTRIM MINID ~
floor LIMIT (XLEN - maxlen)`` removes only whole radix nodes below the floor and never
more than the excess. So a stream holds about ``maxlen`` entries (plus up to one node, 100
entries) once every group has acknowledged, and grows past it, never losing an entry,
while a group lags. ``XADD MAXLEN ~`` would cost no extra round trip but drops entries a
lagging or dead group has not read (``XAUTOCLAIM`` then reports them deleted). The script
costs one round trip per stream per second; ``appliance bench bus`` reports its cost as
``redis.trim`` (on this machine, 2026-12: 18,981 of 20,000 acknowledged entries removed in
0.8 ms, since whole nodes go at once), and the throughput run includes the trimmer.
Ephemeral subscribers are not protected: one that falls more than ``maxlen`` entries
behind misses the oldest.

**Redis restarts** (AOF ``appendfsync everysec`` loses up to about the last second, or two,
of writes on a kill). Every bus detects a lost connection within ``HEARTBEAT_S`` (its
writer pings when idle); our clients do not retry commands silently. On reconnecting, the
writer compares the server's ``run_id``: if the server restarted, it re-sends, before
anything new, every envelope of its own JSONL log (``log_path``; one line per envelope it
published, written before the ``XADD``, and per output envelope of a first-time
acknowledgement) from the last ``resend_window_s`` before the connection was lost that the
stream no longer holds. Acknowledgements retry until the server answers (the done mark
makes that idempotent). Consumers de-duplicate by envelope id: the done marks, and each
member's memory of the last ``ACKED_KEPT`` envelopes it handled (done marks written in the
lost second are gone, so that memory is what stops a second handling; a member restarted
together with the server may handle such an envelope again). Without ``log_path`` nothing
can be re-sent: a restart may lose the last second.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import socket
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

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
from appliance.bus.envelope import Envelope, check, uuid7
from appliance.bus.log import EnvelopeLog
from appliance.protocol.registry import EnvelopeError

log = logging.getLogger(__name__)

FIELD = b"e"
URGENT_POLL_S = 0.02  # with a full ordinary lane, how often the urgent stream is polled
STOP_DRAIN_S = 5.0  # how long stop() waits for queued publishes to be sent
HEARTBEAT_S = 1.0  # an idle writer pings this often, so a restarted server is noticed soon
TRIM_INTERVAL_S = 1.0  # how often a bus that has published trims the streams (maxlen > 0)
ACKED_KEPT = 10_000  # envelope ids a group member remembers having acknowledged
RECONNECT_BACKOFF_S = (0.05, 1.0)  # first and longest wait between reconnection attempts
# connection trouble (the server died, restarts, or is loading its AOF): retried, never fatal
#: connection attempts :meth:`RedisBus.start` makes when the server times out (not when it refuses):
#: three form calls of ``bench pool``'s six failed at once on a loaded 2-core machine with one
START_TRIES = 3
CONNECTION_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)

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


# KEYS[1] stream; ARGV[1] maxlen: trim below the oldest entry a group has not acknowledged,
# at most XLEN - maxlen entries, whole radix nodes only (see the module docstring); returns removed
_TRIM_LUA = """
local excess = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[1])
if excess <= 0 then return 0 end
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local fms, fseq = nil, nil
local function lower(ms, seq)
  if fms == nil or ms < fms or (ms == fms and seq < fseq) then fms, fseq = ms, seq end
end
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local info = {}
  for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
  if tonumber(info['pending']) > 0 then
    local ms, seq = parse(redis.call('XPENDING', KEYS[1], info['name'])[2])
    lower(ms, seq)
  else
    local ms, seq = parse(info['last-delivered-id'])
    lower(ms, seq + 1)
  end
end
if fms == nil then
  return redis.call('XTRIM', KEYS[1], 'MAXLEN', '~', ARGV[1])
end
return redis.call('XTRIM', KEYS[1], 'MINID', '~', fms .. '-' .. fseq, 'LIMIT', excess)
"""


def _client(url: str) -> aioredis.Redis:
    """A client that never retries a command by itself: a lost connection must reach our code
    (see the module docstring on restarts)."""
    return aioredis.Redis.from_url(url, decode_responses=False, retry=Retry(NoBackoff(), 0))


def stream_keys(stream: str) -> tuple[str, str]:
    """The ordinary and urgent stream names of a bus whose base stream name is ``stream``."""
    return stream, f"{stream}:urgent"


def _sid(entry_id: bytes | str) -> tuple[int, int]:
    s = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = s.partition("-")
    return int(ms), int(seq or 0)


class _RedisSubscription(Subscription):
    """Ephemeral: XREAD from the position the bus estimates for "now" at subscribe time (its first entry: ``from_start``)."""

    def __init__(
        self, bus: "RedisBus", recipient: str | None, types: frozenset[str] | None, maxsize: int, overflow: Overflow
    ) -> None:
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
        self._seen = IdWindow(ACKED_KEPT)  # an envelope re-sent after a server restart is a copy
        # the reader's own connection: closing it is what reliably interrupts a blocked read
        self._conn = _client(bus.url)
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
                if isinstance(e, CONNECTION_ERRORS):
                    self._bus._lost(e)  # the writer checks whether the server restarted
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
        room_u, room_n = self._room(True), self._room(False)
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
                    raise BusOverflowError(
                        f"{self} is full ({self.maxsize} queued) and {env.type} {env.id} "
                        f"is waiting in stream {bus.stream}"
                    )
            if not (keys and await self._read(keys, count, None)):
                # no room at all (a member holding its ``hold``): wait for room, or for the next renewal
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.lanes.wait_room(), URGENT_POLL_S if keys else block / 1000)

    def _room(self, urgent: bool) -> int:
        """How many more envelopes of this urgency may be read now."""
        return self.lanes.room(urgent)

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
                    log.warning(
                        "%s: stream %s entry %s is not a valid envelope (%s); skipped",
                        self,
                        key,
                        entry_id.decode(),
                        env,
                    )
                elif matches(self.recipient, self.types, env) and env.id not in self._seen:
                    self._seen.add(env.id)
                    self.lanes.put(env, key == bus._urgent_key)
        return bool(res)

    async def _waiting_match(self) -> Envelope | None:
        """A matching envelope waiting in the ordinary stream beyond what this subscription read."""
        return await self._bus._first_match(self._pos[self._bus.stream], self.recipient, self.types)


class _RedisGroupSubscription(_RedisSubscription):
    """A member of a Redis consumer group (see the module docstring)."""

    def __init__(
        self,
        bus: "RedisBus",
        recipient: str | None,
        types: frozenset[str] | None,
        group: str,
        consumer: str,
        maxsize: int,
        overflow: Overflow,
        hold: int | None = None,
    ) -> None:
        self._group_name = group
        self.hold = hold
        self.consumer = consumer
        self._held: dict[str, tuple[str, bytes]] = {}  # envelope id -> (stream, entry id), queued or yielded
        self._deliveries: dict[str, int] = {}  # held envelopes taken over: envelope id -> Redis delivery count
        self._last: Envelope | None = None
        self._acks: list[tuple[str, str, bytes]] = []  # (envelope id, stream, entry id) to acknowledge
        self._ack_wake = asyncio.Event()
        self._acked = IdWindow(ACKED_KEPT)
        super().__init__(bus, recipient, types, maxsize, overflow)
        self.group = group
        self._acker = asyncio.get_running_loop().create_task(self._ack_loop(), name=f"bus acker {self}")

    def _delivered(self, env: Envelope) -> None:
        self._last = env

    def _room(self, urgent: bool) -> int:
        room = self.lanes.room(urgent)
        return room if self.hold is None else min(room, self.hold - len(self._held))

    async def __anext__(self) -> Envelope:
        if self._last is not None:
            self._queue_ack(self._last)
            self._last = None
        return await super().__anext__()

    def _queue_ack(self, env: Envelope) -> None:
        where = self._held.pop(env.id, None)
        self._deliveries.pop(env.id, None)
        if where is not None:
            self._acks.append((env.id, *where))
            self._acked.add(env.id)
            self._ack_wake.set()
            self._released()

    def _released(self) -> None:
        """A held envelope was acknowledged: with a ``hold``, that is room to read another, and
        what dead members left is taken over first (a form task whose worker died waits for no
        task offered after it: the bench saw it wait 30–60 s behind new ones)."""
        if self.hold is not None:
            self._next_claim = 0.0
            self.lanes.room_freed()

    async def ack(self, env: Envelope, publish: Sequence[Envelope] = ()) -> None:
        for e in publish:
            check(e)
        where = self._held.get(env.id)
        if where is None:
            if publish:
                raise BusError(not_awaiting_ack(self, env, len(publish)))
            return
        if self._last is env:
            self._last = None
        # still held while the commit runs (it may wait out a restart): a redelivered copy is skipped
        fresh = await self._bus._commit(self._group_name, env.id, *where, publish)
        self._held.pop(env.id, None)
        self._deliveries.pop(env.id, None)
        self._acked.add(env.id)
        self._released()
        if not fresh:
            log.warning(
                "%s: %s %s was already handled in group %s; its %d envelope(s) were not published again",
                self,
                env.type,
                env.id,
                self._group_name,
                len(publish),
            )

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
        unhandled = {env.id for env in self.lanes.drain()}
        self.lanes.close()
        try:
            await self._flush_acks()
            await self._release(unhandled)
        except (RedisError, OSError) as e:
            log.warning(
                "%s: could not flush acknowledgements / release on close (they will be redelivered): %s", self, e
            )

    async def _release(self, unhandled: set[str]) -> None:
        """Make what this member still holds immediately claimable by other members; the
        ``unhandled`` envelope ids (never handed to the handler) get their delivery count back."""
        held, self._held = self._held, {}
        counts, self._deliveries = self._deliveries, {}
        by_key: dict[tuple[str, int | None], list[bytes]] = {}
        for env_id, (key, entry_id) in held.items():
            retry = counts.get(env_id, 1) - 1 if env_id in unhandled else None
            by_key.setdefault((key, retry), []).append(entry_id)
        for (key, retry), ids in by_key.items():
            await self._bus._r.xclaim(
                key, self._group_name, self.consumer, 0, ids, idle=2**40, retrycount=retry, justid=True
            )

    async def _ack_loop(self) -> None:
        while not self._closed:
            await self._ack_wake.wait()
            self._ack_wake.clear()
            try:
                await self._flush_acks()
            except (RedisError, OSError) as e:
                if isinstance(e, CONNECTION_ERRORS):
                    self._bus._lost(e)
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
                while self._room(urgent) > 0:
                    cursor, entries, deleted = await self._conn.xautoclaim(
                        key,
                        self._group_name,
                        self.consumer,
                        bus.claim_idle_ms,
                        start_id=self._cursors[key],
                        count=min(bus.batch, self._room(urgent)),
                    )
                    self._cursors[key] = cursor
                    if deleted:
                        log.error(
                            "%s: %d pending entries of %s were deleted from the stream before being "
                            "handled (trimmed?): %s",
                            self,
                            len(deleted),
                            key,
                            deleted[:5],
                        )
                    if entries:
                        log.info("%s: took over %d envelopes left pending in %s", self, len(entries), key)
                        await self._accept(key, entries, await self._delivery_counts(key, entries))
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
            renewed = await self._bus._renew_script(
                keys=[key], args=[self._group_name, self.consumer, *ids], client=self._conn
            )
            if renewed < len(ids):
                log.warning(
                    "%s: %d held envelopes are no longer pending here: another member took them over (this "
                    "one stalled longer than %d ms; they may be handled twice) or the server restarted",
                    self,
                    len(ids) - renewed,
                    self._bus.claim_idle_ms,
                )

    async def _read(self, keys: dict[str, Any], count: int, block: int | None) -> bool:
        res = await self._conn.xreadgroup(
            self._group_name, self.consumer, {k: ">" for k in keys}, count=count, block=block
        )
        for key, entries in res or ():
            await self._accept(key.decode(), entries)
        return bool(res)

    async def _waiting_match(self) -> Envelope | None:
        for info in await self._bus._r.xinfo_groups(self._bus.stream):
            if info["name"] == self._group_name.encode():
                return await self._bus._first_match(info["last-delivered-id"], self.recipient, self.types)
        return None

    async def _delivery_counts(self, key: str, entries: list) -> dict[bytes, int]:
        """How many times Redis has delivered each of ``entries`` (just taken over by this member)."""
        ids = {entry_id for entry_id, _ in entries}
        pending = await self._conn.xpending_range(
            key,
            self._group_name,
            min=entries[0][0],
            max=entries[-1][0],
            count=len(entries) + len(self._held),
            consumername=self.consumer,
        )
        return {p["message_id"]: p["times_delivered"] for p in pending if p["message_id"] in ids}

    async def _accept(self, key: str, entries: list, deliveries: dict[bytes, int] | None = None) -> None:
        """Parse, filter and de-duplicate a batch of entries now pending on this consumer;
        ``deliveries`` (entries taken over): their delivery counts, for the poison limit."""
        bus = self._bus
        skip: list[bytes] = []
        fresh: list[tuple[bytes, Envelope]] = []
        dead: list[tuple[bytes, dict[bytes, Any]]] = []
        for entry_id, fields in entries:
            env = bus._parse(key, entry_id, fields)
            times = deliveries.get(entry_id, 1) if deliveries else 1
            if isinstance(env, str):
                skip.append(entry_id)
                if fields:
                    dead.append((entry_id, {b"reason": env}))
                    log.error(
                        "%s: stream %s entry %s is not a valid envelope (%s); moved to %s",
                        self,
                        key,
                        entry_id.decode(),
                        env,
                        bus._dead_key,
                    )
            elif times > bus.max_deliveries and matches(self.recipient, self.types, env):
                why = (
                    f"delivered {times} times to group {self._group_name} without being acknowledged "
                    f"(max_deliveries {bus.max_deliveries}); last taken over by {self.consumer}"
                )
                skip.append(entry_id)
                dead.append((entry_id, {b"reason": why, b"deliveries": times, FIELD: fields[FIELD]}))
                log.error("%s: %s %s %s; moved to %s", self, env.type, env.id, why, bus._dead_key)
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
                    if deliveries and deliveries.get(entry_id, 1) > 1:
                        self._deliveries[env.id] = deliveries[entry_id]
                    self.lanes.put(env, key == bus._urgent_key)
                else:
                    skip.append(entry_id)
        pipe = self._conn.pipeline(transaction=bool(dead))  # a dead letter and its XACK: all or nothing
        for entry_id, extra in dead:
            pipe.xadd(bus._dead_key, {b"stream": key, b"entry": entry_id, b"group": self._group_name, **extra})
        if skip:
            pipe.xack(key, self._group_name, *skip)
        if dead or skip:
            await pipe.execute()


class RedisBus(Bus):
    """The bus on Redis Streams (see the module docstring).

    Args:
        url: e.g. ``redis://127.0.0.1:6379/0``.
        stream: base stream name.
        claim_idle_ms: an entry pending this long on one consumer is taken over by another.
        dedup_ttl_s: how long done marks are kept (de-duplication horizon), in seconds.
        batch: the most entries one read or one publish pipeline carries.
        block_ms: how long one blocking read waits before it looks again, in ms.
        maxlen: trim each stream to about this many entries, never below what a group has
            not acknowledged; 0 = never trim.
        max_deliveries: an envelope taken over after this many deliveries to one group goes
            to the dead stream.
        log_path: this bus's JSONL log of what it published (re-sent after a server restart);
            None = no log, and a restart may lose the last second of envelopes.
        log_fsync_ms: fsync the log at most this often, in ms; 0 = after every record.
        resend_window_s: how far back, before a lost connection, the log is checked against
            the restarted server (≥ 5 × what ``appendfsync everysec`` can lose).
        reconnect_timeout_s: how long publishes and acknowledgements wait for the server to
            come back before they fail with :class:`BusError`.
        from_start: subscriptions (and the durable groups they create) read the stream from
            its first entry instead of from "now": for a stream that holds one task from its
            start (a form session's ``form-<task id>``), an agent that joins after others
            have published still gets everything addressed to it, in order.

    Raises:
        ValueError: a bad ``maxlen``, ``max_deliveries`` or window.
    """

    def __init__(
        self,
        url: str,
        *,
        stream: str = "appliance:bus",
        claim_idle_ms: int = 5000,
        dedup_ttl_s: int = 86_400,
        batch: int = 256,
        block_ms: int = 1000,
        maxlen: int = 0,
        max_deliveries: int = 5,
        log_path: str | Path | None = None,
        log_fsync_ms: int = 100,
        resend_window_s: float = 10.0,
        reconnect_timeout_s: float = 60.0,
        from_start: bool = False,
    ) -> None:
        super().__init__()
        if maxlen < 0 or max_deliveries < 1 or resend_window_s <= 0 or reconnect_timeout_s <= 0:
            raise ValueError(
                f"bad RedisBus limits: maxlen={maxlen} (≥ 0), max_deliveries={max_deliveries} (≥ 1), "
                f"resend_window_s={resend_window_s} and reconnect_timeout_s={reconnect_timeout_s} (> 0)"
            )
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
        self.maxlen = maxlen
        self.max_deliveries = max_deliveries
        self.resend_window_s = resend_window_s
        self.reconnect_timeout_s = reconnect_timeout_s
        self.from_start = from_start
        self.log_path = Path(log_path).expanduser() if log_path is not None else None
        self._log = EnvelopeLog(self.log_path, log_fsync_ms) if self.log_path is not None else None
        self._log_size = 0  # bytes in the log file
        self._sent: deque[tuple[float, int]] = deque()  # (wall time ms, log offset) of each append, recent ones
        self._r: aioredis.Redis = None  # type: ignore[assignment]
        self._script: Any = None
        self._renew_script: Any = None
        self._trim_script: Any = None
        # queued publishes: (stream, envelope JSON, envelope id, future of the entry id)
        self._outbox: deque[tuple[str, bytes, str, asyncio.Future[bytes]]] = deque()
        self._outbox_wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._writer_error: BusError | None = None
        self._trimmer: asyncio.Task[None] | None = None
        self._published = False  # since the last trim
        self._healthy = asyncio.Event()  # connected to the server we know (cleared on a lost connection)
        self._run_id: bytes | str | None = None
        self._last_ok_ms = 0.0  # wall time of the last command the server answered
        self.resent = 0  # envelopes re-sent from the log after server restarts
        self._subs: set[_RedisSubscription] = set()
        self._reply_sub: _RedisSubscription | None = None
        self._reply_task: asyncio.Task[None] | None = None
        self._last_id: dict[str, tuple[int, int]] = {k: (0, 0) for k in self._keys}
        self._clock_offset_ms = 0.0
        self._clock_margin_ms = 1
        self._running = False

    async def start(self) -> None:
        """Connect, measure the server clock against ours, open the log and start the writer
        (and the trimmer when ``maxlen`` > 0).

        Raises:
            BusError: the server cannot be reached.
            OSError: the log cannot be opened.
        """
        if self._running:
            return
        self._r = _client(self.url)
        for attempt in range(1, START_TRIES + 1):
            try:
                t0 = time.time()
                sec, usec = await self._r.time()
                t1 = time.time()
                self._run_id = (await self._r.info("server"))["run_id"]
                break
            except RedisTimeoutError as e:  # a loaded server or host: try again; a refusal is final
                if attempt == START_TRIES:
                    await self._r.aclose()
                    raise BusError(f"cannot reach redis at {self.url}: {e} ({attempt} tries)") from None
                log.warning("redis at %s: %s; trying again", self.url, e)
            except (RedisError, OSError) as e:
                await self._r.aclose()
                raise BusError(f"cannot reach redis at {self.url}: {e}") from None
        self._clock_offset_ms = (sec * 1000 + usec / 1000) - (t0 + t1) * 500
        self._clock_margin_ms = math.ceil((t1 - t0) * 500) + 1
        self._last_ok_ms = t1 * 1000
        if self._log is not None:
            self._log.open()
            self._log_size = self.log_path.stat().st_size
        self._script = self._r.register_script(_COMMIT_LUA)
        self._renew_script = self._r.register_script(_RENEW_LUA)
        self._trim_script = self._r.register_script(_TRIM_LUA)
        self._healthy.set()
        loop = asyncio.get_running_loop()
        self._writer = loop.create_task(self._write_loop(), name="bus writer")
        if self.maxlen > 0:
            self._trimmer = loop.create_task(self._trim_loop(), name="bus trimmer")
        self._running = True

    async def stop(self) -> None:
        """Close subscriptions (flushing their acknowledgements), send what is queued, disconnect,
        close the log."""
        if not self._running:
            return
        self._running = False
        for sub in list(self._subs):
            await sub.close()
        for task in (self._reply_task, self._trimmer):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._fail_waiters("bus stopped")
        self._outbox_wake.set()  # the writer sends what is queued, then ends
        if self._writer is not None:
            try:
                await asyncio.wait_for(self._writer, STOP_DRAIN_S)
            except TimeoutError:
                log.error(
                    "bus writer did not drain within %.0f s; %d envelopes not published",
                    STOP_DRAIN_S,
                    len(self._outbox),
                )
            for _, _, _, fut in self._outbox:
                if not fut.done():
                    fut.set_exception(BusClosedError("bus stopped before this envelope was sent"))
            self._outbox.clear()
        await self._r.aclose()
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
        consumer: str | None = None,
        hold: int | None = None,
    ) -> Subscription:
        """See :meth:`Bus.subscribe`; ``consumer`` names this member of ``group`` (default: host:pid:random).

        Members of one group must use the same filter. ``hold``: the most envelopes this member
        holds at once, queued here or handed out and not yet acknowledged (None: ``maxsize``
        queued, however many handed out). ``hold=1`` takes nothing more, not even one to have
        ready, until the one handed out is acknowledged: what it has not taken, other members
        take (a worker pool's slot, :mod:`appliance.forms.pool`), and it takes over a dead
        member's envelope only when it has room.

        Raises:
            ValueError: bad arguments.
            BusClosedError: the bus is not running.
        """
        ts = normalise_filter(recipient, types, maxsize, overflow)
        if hold is not None and (group is None or hold < 1):
            raise ValueError(f"hold={hold}: a limit of 1 or more, for a member of a group")
        if not self._running:
            raise BusClosedError("bus is not running")
        sub: _RedisSubscription
        if group is None:
            sub = _RedisSubscription(self, recipient, ts, maxsize, overflow)
        else:
            consumer = consumer or f"{socket.gethostname()}:{os.getpid()}:{uuid7()[-8:]}"
            sub = _RedisGroupSubscription(self, recipient, ts, group, consumer, maxsize, overflow, hold)
        self._subs.add(sub)
        return sub

    async def publish(self, env: Envelope) -> None:
        urgent = check(env)
        await self._enqueue([(self._urgent_key if urgent else self.stream, env)])[0]

    async def publish_many(self, envs: Sequence[Envelope]) -> None:
        """Validate all of ``envs``, then send them in order in as few pipelines as possible.

        Raises:
            As :meth:`publish`.
        """
        items = [(self._urgent_key if check(e) else self.stream, e) for e in envs]
        await asyncio.gather(*self._enqueue(items))

    async def read_mark(self, name: str) -> str | None:
        try:
            raw = await self._r.get(self._mark_key(name))
        except (RedisError, OSError) as e:
            raise BusError(f"redis at {self.url}: reading mark {name!r}: {e}") from None
        return raw.decode() if raw is not None else None

    async def swap_mark(self, name: str, value: str) -> str | None:
        try:  # SET … GET: one atomic command (Redis ≥ 6.2)
            raw = await self._r.set(self._mark_key(name), value, get=True, px=self.dedup_ttl_ms)
        except (RedisError, OSError) as e:
            raise BusError(f"redis at {self.url}: setting mark {name!r}: {e}") from None
        return raw.decode() if raw is not None else None

    def _mark_key(self, name: str) -> str:
        return f"{self.stream}:mark:{name}"

    async def trim(self) -> int:
        """Trim both streams now (see the module docstring); returns how many entries were removed.

        Raises:
            RedisError, OSError: the server did not answer.
        """
        if self.maxlen <= 0:
            return 0
        removed = 0
        for key in self._keys:
            removed += await self._trim_script(keys=[key], args=[self.maxlen])
        return removed

    # -- internals -------------------------------------------------------------------------

    def _enqueue(self, items: list[tuple[str, Envelope]]) -> list[asyncio.Future[bytes]]:
        """Log ``items`` (one write) and queue them for the writer; their futures resolve to entry ids.

        Raises:
            BusClosedError: the bus is not running.
            BusError: the log could not be written (nothing was queued).
        """
        if not self._running:
            raise BusClosedError("bus is not running")
        if self._writer_error is not None:
            raise self._writer_error
        loop = asyncio.get_running_loop()
        datas = [env.to_json() for _, env in items]
        self._append_log(datas)
        futs = []
        for (key, env), data in zip(items, datas):
            fut = loop.create_future()
            self._outbox.append((key, data, env.id, fut))
            futs.append(fut)
        self._outbox_wake.set()
        return futs

    def _append_log(self, datas: list[bytes]) -> None:
        """Append envelopes to the log (one ``write(2)``) and remember where, for re-sending."""
        if self._log is None or not datas:
            return
        try:
            self._log.append(b"".join(d + b"\n" for d in datas))
        except OSError as e:
            raise BusError(f"cannot write the bus log {self.log_path}: {e}") from e
        now_ms = time.time() * 1000
        self._sent.append((now_ms, self._log_size))
        self._log_size += sum(len(d) + 1 for d in datas)
        if self._healthy.is_set():  # while disconnected, keep everything since the loss
            horizon = now_ms - 2 * self.resend_window_s * 1000
            while self._sent and self._sent[0][0] < horizon:
                self._sent.popleft()

    async def _write_loop(self) -> None:
        """The writer task: :meth:`_write`; if it fails (a bug), queued and later publishes fail loudly."""
        try:
            await self._write()
        except Exception as e:
            log.exception("bus %s: the writer failed", self.stream)
            self._writer_error = BusError(f"the bus writer failed: {e!r}")
            self._fail_outbox(self._writer_error)

    async def _write(self) -> None:
        """Send queued publishes in pipelines; ping when idle; recover from a lost connection."""
        while self._running or self._outbox:
            if not self._healthy.is_set():
                try:
                    await self._recover()
                except BusError as e:
                    self._fail_outbox(e)
                    if not self._running:
                        return
                    continue
            if not self._outbox:
                try:
                    await asyncio.wait_for(self._outbox_wake.wait(), HEARTBEAT_S)
                except TimeoutError:
                    await self._ping()
                    continue
            self._outbox_wake.clear()
            while self._outbox and self._healthy.is_set():
                n = min(self.batch, len(self._outbox))
                batch = [self._outbox.popleft() for _ in range(n)]
                pipe = self._r.pipeline(transaction=False)
                for key, data, _, _ in batch:
                    pipe.xadd(key, {FIELD: data})
                try:
                    ids = await pipe.execute()
                except CONNECTION_ERRORS as e:
                    self._outbox.extendleft(reversed(batch))  # sent again, first, once reconnected
                    self._lost(e)
                    if not self._running:
                        self._fail_outbox(BusError(f"redis XADD to {self.url} failed while stopping: {e}"))
                    break
                except RedisError as e:
                    self._fail([fut for *_, fut in batch], BusError(f"redis XADD to {self.url} failed: {e}"))
                    continue
                self._last_ok_ms = time.time() * 1000
                self._published = True
                for (key, _, _, fut), entry_id in zip(batch, ids):
                    sid = _sid(entry_id)
                    if sid > self._last_id[key]:
                        self._last_id[key] = sid
                    if not fut.done():
                        fut.set_result(entry_id)

    @staticmethod
    def _fail(futs: Iterable[asyncio.Future], err: BaseException) -> None:
        for fut in futs:
            if not fut.done():
                fut.set_exception(err)

    def _fail_outbox(self, err: BaseException) -> None:
        outbox, self._outbox = self._outbox, deque()
        self._fail([fut for *_, fut in outbox], err)

    async def _ping(self) -> None:
        try:
            await self._r.ping()
            self._last_ok_ms = time.time() * 1000
        except CONNECTION_ERRORS as e:
            self._lost(e)

    def _lost(self, err: BaseException) -> None:
        """A command failed for lack of a connection: block sending until the writer recovers."""
        if self._healthy.is_set():
            log.warning("bus %s: lost the connection to redis at %s (%s); reconnecting", self.stream, self.url, err)
            self._healthy.clear()
        self._outbox_wake.set()

    async def _recover(self) -> None:
        """Reconnect; if the server restarted, re-send what it lost from the log. Then unblock.

        Raises:
            BusError: no answer within ``reconnect_timeout_s``, or the bus is stopping.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_timeout_s
        delay, longest = RECONNECT_BACKOFF_S
        while True:
            try:
                run_id = (await self._r.info("server"))["run_id"]
                if run_id != self._run_id:  # a re-send cut short by another failure is redone: nothing twice
                    log.warning(
                        "bus %s: redis at %s restarted; checking the last %.0f s of our log against it",
                        self.stream,
                        self.url,
                        self.resend_window_s,
                    )
                    await self._resend_lost(self._last_ok_ms - self.resend_window_s * 1000)
                    self._run_id = run_id
                break
            except CONNECTION_ERRORS as e:
                if not self._running or loop.time() >= deadline:
                    raise BusError(
                        f"redis at {self.url} did not answer for {self.reconnect_timeout_s:g} s: {e}"
                    ) from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, longest)
        log.info("bus %s: reconnected to redis at %s", self.stream, self.url)
        self._last_ok_ms = time.time() * 1000
        self._healthy.set()

    async def _resend_lost(self, since_ms: float) -> None:
        """Re-send, in log order, the envelopes of our log appended since ``since_ms`` (wall
        time) that are neither in the streams nor still queued."""
        if self._log is None:
            log.error(
                "bus %s: redis restarted and this bus has no log: envelopes it published in the last "
                "second before the restart may be lost",
                self.stream,
            )
            return
        start = next((offset for t, offset in self._sent if t >= since_ms), None)
        if start is None:
            return
        with self.log_path.open("rb") as f:
            f.seek(start)
            lines = f.read(self._log_size - start).splitlines()
        queued = {env_id for _, _, env_id, _ in self._outbox}
        present: dict[str, set[str]] = {}
        for key in self._keys:
            present[key] = await self._ids_since(key, since_ms + self._clock_offset_ms - 1000)
        missing: list[tuple[str, bytes]] = []
        for line in lines:
            try:
                env = Envelope.from_json(line)
            except EnvelopeError as e:  # we wrote every line ourselves: a bug, but never a reason to stop
                log.error("bus %s: skipping an unreadable line of %s: %s", self.stream, self.log_path, e)
                continue
            key = self._urgent_key if env.urgent else self.stream
            if env.id not in present[key] and env.id not in queued:
                present[key].add(env.id)
                missing.append((key, line))
        for i in range(0, len(missing), self.batch):
            pipe = self._r.pipeline(transaction=False)
            for key, data in missing[i : i + self.batch]:
                pipe.xadd(key, {FIELD: data})
            await pipe.execute()
        self.resent += len(missing)
        if missing:
            log.warning("bus %s: re-sent %d envelopes the restarted server had lost", self.stream, len(missing))

    async def _ids_since(self, key: str, server_ms: float) -> set[str]:
        """The envelope ids of ``key``'s entries from server time ``server_ms`` on."""
        ids: set[str] = set()
        start = f"{max(0, int(server_ms))}-0"
        while True:
            entries = await self._r.xrange(key, min=start, count=1000)
            for _, fields in entries:
                with contextlib.suppress(KeyError, ValueError, TypeError):
                    ids.add(json.loads(fields[FIELD])["id"])
            if len(entries) < 1000:
                return ids
            start = "(" + entries[-1][0].decode()

    async def _trim_loop(self) -> None:
        while True:
            await asyncio.sleep(TRIM_INTERVAL_S)
            if not self._published or not self._healthy.is_set():
                continue
            self._published = False
            try:
                removed = await self.trim()
            except (RedisError, OSError) as e:
                log.warning("bus %s: trimming failed (retried in %.0f s): %s", self.stream, TRIM_INTERVAL_S, e)
                continue
            if removed:
                log.debug("bus %s: trimmed %d entries", self.stream, removed)

    def _start_id(self, key: str) -> str:
        """Where a subscription made now starts reading ``key``: entries after this id.

        ``from_start``: the first entry. Else the server's "now" is estimated from our clock
        and the offset measured at start, minus the measurement's uncertainty; envelopes this
        bus published already are excluded exactly.
        """
        if self.from_start:
            return "0-0"
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

    async def _first_match(
        self, after: bytes | str, recipient: str | None, types: frozenset[str] | None, scan: int = 1024
    ) -> Envelope | None:
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

    async def _commit(self, group: str, env_id: str, key: str, entry_id: bytes, publish: Sequence[Envelope]) -> bool:
        """Run the commit script for one envelope; True if this was its first acknowledgement.

        Retried across a lost connection (the done mark makes a repeat harmless); the output
        envelopes of a first acknowledgement are logged, to be re-sent if a restart loses them.

        Raises:
            BusError: the server refused, or did not come back within ``reconnect_timeout_s``.
        """
        outbox = [(self._urgent_key if e.urgent else self.stream, e.to_json()) for e in publish]
        while True:
            try:
                async with asyncio.timeout(self.reconnect_timeout_s):
                    await self._healthy.wait()
            except TimeoutError:
                raise BusError(
                    f"acknowledging {env_id} in group {group} failed: redis at {self.url} did not "
                    f"answer for {self.reconnect_timeout_s:g} s"
                ) from None
            try:
                fresh = bool(
                    await self._script(
                        keys=[self._done_key(group, env_id), key, *(k for k, _ in outbox)],
                        args=[group, entry_id, self.dedup_ttl_ms, *(d for _, d in outbox)],
                    )
                )
                break
            except CONNECTION_ERRORS as e:
                self._lost(e)
            except RedisError as e:
                raise BusError(f"acknowledging {env_id} in group {group} failed: {e}") from e
        if fresh and outbox:
            self._append_log([d for _, d in outbox])
            self._published = True
        return fresh

    async def _commit_many(self, group: str, batch: list[tuple[str, str, bytes]]) -> list[bool]:
        """Acknowledge ``(envelope id, stream, entry id)`` items in one pipeline; first-time flags."""
        pipe = self._r.pipeline(transaction=False)
        for env_id, key, entry_id in batch:
            await self._script(
                keys=[self._done_key(group, env_id), key], args=[group, entry_id, self.dedup_ttl_ms], client=pipe
            )
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
