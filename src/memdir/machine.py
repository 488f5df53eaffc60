"""What this process may use of the machine: its CPUs, its shared worker threads, its heap.

A leaf module (it imports nothing of ours), so any layer may call it: the local
embedder sizes onnxruntime by ``usable_cpus``, search embeds queries in a
``worker_pool`` while the full-text pass runs, and the vector store splits long
scans over one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

logger = logging.getLogger(__name__)
_M_ARENA_MAX = -8  # mallopt parameter number in glibc's malloc.h

_POOLS: dict[str, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def usable_cpus() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def worker_pool(name: str, workers: int) -> ThreadPoolExecutor:
    """The process-wide pool called ``name`` (its threads' name prefix), made on first use.

    ``workers`` counts only on that first call: one name, one pool.
    """
    with _POOLS_LOCK:
        pool = _POOLS.get(name)
        if pool is None:
            pool = _POOLS[name] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        return pool


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas for a long-lived, many-threaded process (a server).

    glibc gives threads their own heap arenas (up to 8 per CPU); a server whose
    request threads each allocate and free a little keeps freed memory scattered
    over many arenas, so its RSS only grows (``benchmarks/footprint.py``: +75 MB in
    90 s of mixed use, flat with 2 arenas, same latency). Call it before threads
    start. Returns whether it applied (glibc only; elsewhere it does nothing).
    """
    libc = None if os.environ.get("MALLOC_ARENA_MAX") else _libc()
    if libc is None:
        return False
    try:
        applied = bool(libc.mallopt(_M_ARENA_MAX, arenas))
    except AttributeError:
        return False
    logger.debug("malloc arenas limited to %d: %s", arenas, applied)
    return applied


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None or "libc.so" not in name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def release_free_memory() -> bool:
    """Hand the heap memory this process has freed back to the OS (glibc's ``malloc_trim``).

    After a large transient allocation (loading an index's terms builds and sorts
    arrays several times the size of what is kept) glibc keeps the freed pages: a
    search process at 1.13M units held 893 MB after its first keyword search, 353 MB
    after a trim. Cheap next to such a load; call it after one, not per request.
    Returns whether it ran (glibc only; elsewhere it does nothing).
    """
    libc = _libc()
    if libc is None:
        return False
    try:
        libc.malloc_trim(0)
    except AttributeError:
        return False
    return True
