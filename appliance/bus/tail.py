"""``appliance bus tail``: pretty-print a bus log file or a live Redis stream, for operators.

One line per envelope::

    01:23:45.123Z  phone → computer  info_collected  task=t1  {"field":"email","value":"a@b.c","confirmed":true}
    01:23:45.301Z  computer → phone  field_filled ↩3f9a12bc  task=t1  {...}

Urgent types are shown in bold red on a terminal; acknowledgements and group records of a
log are shown dimmed. Lines that are not valid envelopes are shown with ``!!`` and the
reason, and tailing goes on.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from appliance.bus.base import IdWindow
from appliance.bus.envelope import Envelope
from appliance.bus.log import Acked, GroupCreated, LogRecord, parse_record
from appliance.bus.redis_streams import stream_keys
from appliance.protocol.registry import EnvelopeError

_BOLD_RED, _DIM, _RESET = "\x1b[1;31m", "\x1b[2m", "\x1b[0m"


def _clock(ms: int) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def format_record(rec: LogRecord, color: bool = False) -> str:
    """One human line for an envelope, a group-created or an ack record."""
    if isinstance(rec, Acked):
        line = f"{'':14} ✓ {rec.group} acknowledged {rec.id[-12:]}"
        return f"{_DIM}{line}{_RESET}" if color else line
    if isinstance(rec, GroupCreated):
        types = ",".join(sorted(rec.types)) if rec.types is not None else "all types"
        line = f"{'':14} + group {rec.group} (recipient={rec.recipient or 'any'}, {types})"
        return f"{_DIM}{line}{_RESET}" if color else line
    kind = rec.type
    if color and rec.urgent:
        kind = f"{_BOLD_RED}{kind}{_RESET}"
    parts = [_clock(rec.ts), f" {rec.sender} → {rec.recipient}", f"  {kind}"]
    if rec.reply_to:
        parts.append(f" ↩{rec.reply_to[-12:]}")
    if rec.task_id:
        parts.append(f"  task={rec.task_id}")
    payload = json.dumps(
        rec.payload.model_dump(mode="json", exclude_none=True), separators=(",", ":"), ensure_ascii=False
    )
    if payload != "{}":
        parts.append(f"  {payload}")
    return "".join(parts)


def tail_file(
    path: str | Path,
    out: TextIO,
    *,
    follow: bool = False,
    last: int | None = None,
    color: bool = False,
    poll_s: float = 0.2,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Print the records of a log file; with ``follow``, keep printing what is appended until ``stop()``.

    ``last`` limits the initial output to the last N records.

    Raises:
        OSError: the file cannot be opened.
    """
    path = Path(path).expanduser()
    with path.open("rb") as f:
        lines: list[str] = []
        buf = b""
        lineno = 0
        while True:
            chunk = f.readline()
            if chunk.endswith(b"\n"):
                lineno += 1
                text = _line(buf + chunk, lineno, color)
                buf = b""
                if text is not None:
                    lines.append(text)
                continue
            buf += chunk  # a partial line: the writer is mid-write, or the end of file
            if lines or last is not None:
                for text in lines[-last:] if last is not None else lines:
                    print(text, file=out)
                lines, last = [], None
                out.flush()
            if not follow or stop():
                return
            time.sleep(poll_s)


def _line(raw: bytes, lineno: int, color: bool) -> str | None:
    if not raw.strip():
        return None
    try:
        return format_record(parse_record(raw), color)
    except (EnvelopeError, ValueError, KeyError, TypeError) as e:
        return f"!! line {lineno}: {e}"


def tail_redis(
    url: str,
    stream: str,
    out: TextIO,
    *,
    follow: bool = False,
    last: int | None = None,
    color: bool = False,
    block_ms: int = 1000,
    stop: Callable[[], bool] = lambda: False,
) -> None:
    """Print the envelopes of a bus's Redis streams (``stream`` and ``stream:urgent``) in order
    (entry time, then envelope id); with ``follow``, keep printing new ones until ``stop()``.

    Raises:
        redis.exceptions.RedisError: the server cannot be reached.
    """
    import redis

    r = redis.Redis.from_url(url)
    keys = stream_keys(stream)
    try:
        if last is not None:
            entries = [(eid, f) for k in keys for eid, f in reversed(r.xrevrange(k, count=last))]
        else:
            entries = [e for k in keys for e in r.xrange(k)]
        entries.sort(key=_order)
        if last is not None:
            entries = entries[-last:]
        pos = {k: (r.xinfo_stream(k)["last-generated-id"] if r.exists(k) else b"0-0") for k in keys}
        if not entries:
            print(f"(stream {stream} is empty or does not exist{' yet' if follow else ''})", file=sys.stderr)
        seen = IdWindow(100_000)  # a publisher re-sending after a lost connection may add an envelope twice
        for eid, fields in entries:
            _print_once(eid, fields, color, seen, out)
        out.flush()
        while follow and not stop():
            for key, got in r.xread(pos, block=block_ms) or ():
                for eid, fields in got:
                    pos[key.decode()] = eid
                    _print_once(eid, fields, color, seen, out)
            out.flush()
    finally:
        r.close()


def _print_once(entry_id: bytes, fields: dict[bytes, bytes], color: bool, seen: IdWindow, out: TextIO) -> None:
    """Print an entry's envelope unless one with its id was printed already."""
    env_id = _envelope_id(fields)
    if env_id and env_id in seen:
        return
    if env_id:
        seen.add(env_id)
    print(_entry(entry_id, fields, color), file=out)


def _envelope_id(fields: dict[bytes, bytes]) -> str:
    raw = fields.get(b"e", b"")
    i = raw.find(b'"id":"')
    return raw[i + 6 : i + 42].decode(errors="replace") if i >= 0 else ""


def _order(entry: tuple[bytes, dict[bytes, bytes]]) -> tuple[int, bytes, int]:
    """Merge order across the two streams: entry ms, then envelope id (UUIDv7, creation order)."""
    ms, _, seq = entry[0].partition(b"-")
    raw = entry[1].get(b"e", b"")
    i = raw.find(b'"id":"')
    return int(ms), raw[i + 6 : i + 42] if i >= 0 else b"", int(seq)


def _entry(entry_id: bytes, fields: dict[bytes, bytes], color: bool) -> str:
    try:
        return format_record(Envelope.from_json(fields[b"e"]), color)
    except KeyError:
        return f"!! entry {entry_id.decode()}: no envelope field"
    except EnvelopeError as e:
        return f"!! entry {entry_id.decode()}: {e}"
