"""appliance.heap: glibc's large blocks unmapped when freed, free pages handed back."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

from appliance import heap

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]


def _rss_b() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


#: run in a fresh interpreter: in a long test process a free chunk of the heap may already be large enough
#: for the block, and glibc then takes it from there whatever the threshold (CI: hblkhd did not move)
_MAPPING = """
import ctypes, sys
from appliance import heap
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
class M(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                              "fsmblks", "uordblks", "fordblks", "keepcost")]
libc.mallinfo2.restype = M
heap.configure()
libc.free(libc.malloc(4 * heap.MMAP_THRESHOLD_B))  # raised glibc's dynamic threshold above 2x
mapped = libc.mallinfo2().hblkhd
block = libc.malloc(2 * heap.MMAP_THRESHOLD_B)
grew = libc.mallinfo2().hblkhd - mapped
libc.free(block)
print(grew >= 2 * heap.MMAP_THRESHOLD_B, libc.mallinfo2().hblkhd == mapped)
"""


def test_after_configure_a_large_block_has_its_own_mapping_even_after_a_larger_one_was_freed():
    out = subprocess.run(
        [sys.executable, "-c", _MAPPING],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout.split()
    assert out == ["True", "True"]  # mapped on its own, and unmapped when freed


def test_trim_hands_back_free_pages_a_live_block_above_them_pins():
    chunk, count = 4096, 50_000  # ~200 MB in small blocks, from the heap
    blocks = [libc.malloc(chunk) for _ in range(count)]
    for b in blocks:
        ctypes.memset(b, 1, chunk)  # resident
    pin = libc.malloc(chunk)  # above them: free() alone cannot shrink the heap from its top
    try:
        for b in blocks:
            libc.free(b)
        kept = _rss_b()
        heap.trim()
        assert kept - _rss_b() >= chunk * count // 2
    finally:
        libc.free(pin)
