"""The C heap of the long-lived voice server: glibc's malloc told to give memory back.

``appliance serve`` runs session after session in one process, and nothing of a session
stays alive once it is torn down (Python objects by type, tasks, threads and fds are back
where they were), yet its RSS grew: glibc kept what the sessions freed. Once a large block
is freed, glibc raises its *dynamic* mmap threshold (up to 32 MiB), so later large blocks
(ONNX Runtime's and CTranslate2's buffers, the per-session Silero VAD and Smart Turn
sessions) are carved from the heaps instead of mapped on their own; a heap returns pages
to the kernel only from its top, so the free pages below a live block stay resident and
the heaps spread, session after session. Measured on the server of ``appliance bench soak
--sessions 10 --bad-offers 40`` (``mallinfo2`` and VmRSS 4 s after each session):

- as glibc comes: RSS 615 → 766 MB (+24 %); in use flat (155 → 163 MB), free but kept
  183 → 302 MB, mapped blocks 79 → 271 MB (Piper's ONNX Runtime arena, 64 then 128 MB);
- :func:`configure` at start and :func:`trim` after each session's tear-down: the heaps
  no longer spread (RSS 388 → 393 MB, +1.5 %, in a run where Piper's arena did not grow);
  with Piper's arena off too (:mod:`appliance.voice.piper_synth`), 50 sessions and 200 bad offers:
  RSS 411 → 420 MB (+2.2 %; with its arena, +14 %);
- not enough alone (Piper's arena off in these): :func:`trim` +18 %, the 1 MiB threshold
  +11 %, a 4 MiB one with :func:`trim` +19 % after 7 sessions, ``MALLOC_ARENA_MAX=2`` +26 %.

The price: blocks of 1–32 MiB are mapped and faulted in anew each time, and a heap's top
goes back after each free beyond 128 KiB, so a Whisper tiny.en transcription of 4 s takes
~55 % longer (~100 → ~160 ms on 2 cores; a 64 MiB trim threshold brought it to ~+25 % but
the soak of 50 sessions grew +20 %); Piper's, without its arena, see :mod:`appliance.voice.piper_synth`.

Linux with glibc only (the appliance's Debian 12): both raise ``OSError`` elsewhere.
"""

from __future__ import annotations

import ctypes
import logging
import time

log = logging.getLogger(__name__)

#: Blocks from this size up get their own mapping, unmapped when freed (4 MiB: the heaps
#: still spread, see above).
MMAP_THRESHOLD_B = 1 << 20
_M_MMAP_THRESHOLD = -3  # glibc <malloc.h>

_libc: ctypes.CDLL | None = None


def _glibc() -> ctypes.CDLL:
    """The process's C library. Raises: OSError: it is not glibc (no ``libc.so.6``)."""
    global _libc
    if _libc is None:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        _libc = libc
    return _libc


def configure() -> None:
    """Fix glibc's mmap threshold for this process at :data:`MMAP_THRESHOLD_B` (no longer
    dynamic; its trim threshold stays at its fixed 128 KiB): large blocks are mapped on their
    own and go back to the kernel when freed.

    Raises:
        OSError: the C library is not glibc, or it refused the setting.
    """
    if _glibc().mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_B) != 1:
        raise OSError(f"mallopt(M_MMAP_THRESHOLD, {MMAP_THRESHOLD_B}) failed")


def trim() -> None:
    """Give the free pages of every malloc heap back to the kernel (glibc ``malloc_trim(0)``);
    3–26 ms on the soak's server after a session (logged at debug level).

    Raises:
        OSError: the C library is not glibc.
    """
    t0 = time.perf_counter()
    released = _glibc().malloc_trim(0)
    log.debug(
        "malloc_trim(0): %s in %.1f ms",
        "memory released" if released else "nothing to release",
        (time.perf_counter() - t0) * 1000,
    )
