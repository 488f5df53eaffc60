"""What a process may use of the machine: the heap it hands back."""

from __future__ import annotations

import ctypes.util
import platform

import pytest

from memdir.machine import release_free_memory


@pytest.mark.skipif(
    platform.system() != "Linux" or "libc.so" not in (ctypes.util.find_library("c") or ""),
    reason="malloc_trim is glibc's",
)
def test_freed_heap_is_handed_back_on_glibc() -> None:
    blocks = [bytearray(64 * 1024) for _ in range(2000)]  # 128 MB in the heap's arenas
    del blocks
    assert release_free_memory()
