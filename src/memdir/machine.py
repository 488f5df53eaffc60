"""What this process may use of the machine: its CPUs and its shared worker threads.

A leaf module (it imports nothing of ours), so any layer may call it: the local
embedder sizes onnxruntime by ``usable_cpus``, search embeds queries in a
``worker_pool`` while the full-text pass runs, and the vector store splits long
scans over one.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

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
