"""appliance.heap: glibc's large blocks unmapped when freed, free pages handed back."""

from __future__ import annotations

import ctypes
import os

from appliance import heap

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


libc.mallinfo2.restype = _MallInfo2


def _rss_b() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_after_configure_a_large_block_has_its_own_mapping_even_after_a_larger_one_was_freed():
    heap.configure()
    libc.free(libc.malloc(4 * heap.MMAP_THRESHOLD_B))  # raised glibc's dynamic threshold above 2×
    mapped = libc.mallinfo2().hblkhd
    block = libc.malloc(2 * heap.MMAP_THRESHOLD_B)
    try:
        assert libc.mallinfo2().hblkhd - mapped >= 2 * heap.MMAP_THRESHOLD_B
    finally:
        libc.free(block)
    assert libc.mallinfo2().hblkhd == mapped  # unmapped when freed


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
