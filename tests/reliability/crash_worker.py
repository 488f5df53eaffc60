"""A fork server for the crash tests: ``python crash_worker.py MODE HOME KILLS SEED``.

The parent imports memdir once, then KILLS times forks a child that runs MODE's
operation in a loop on HOME and SIGKILLs it after a random delay, so the kill
lands at a random point inside an operation. A child appends ``<child> <i>``
to ``HOME/done-MODE.log`` after each operation returns; the tests check that
everything logged there is on disk, whole. The parent prints ``killed N``.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memdir.context import ContextPolicy, FlushResult, compact, record_compaction
from memdir.curate.guard import replace_guarded
from memdir.embeddings.base import HashEmbedder
from memdir.llm import Message
from memdir.memory import Memory
from memdir.workspace.atomic import write_atomic

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MODES = ("append", "save", "sync", "rewrite", "compact", "extract")


def word(rng: random.Random) -> str:
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(5, 9)))


def append_text(child: int, i: int) -> str:
    """The deterministic text of append ``i`` of ``child`` (the tests rebuild it)."""
    return f"append c{child} i{i} " + "x" * ((child * 7919 + i * 104729) % 3000) + " end"


def memory_version(n: int) -> str:
    """Version ``n`` of MEMORY.md in the rewrite test: entries 0..n, each padded."""
    lines = ["# Memory", ""]
    lines += [f"- entry {k:05d} " + "y" * 400 for k in range(n + 1)]
    return "\n".join(lines) + "\n"


def big_version(n: int) -> str:
    return f"# big v{n}\n\n" + ("filler line of the big file\n" * 20_000) + f"end v{n}\n"


def open_memory(home: Path) -> Memory:
    overrides = {"curate": {"extraction_cooldown_s": 0}}
    return Memory.open(home, embedder=HashEmbedder(), chat_model=None, overrides=overrides)


def op_append(memory: Memory, child: int, i: int, rng: random.Random) -> None:
    memory.append_daily(append_text(child, i))


def op_save(memory: Memory, child: int, i: int, rng: random.Random) -> None:
    words = " ".join(word(rng) for _ in range(5))
    memory.save(f"Reliability fact c{child} i{i}: the user keeps {words}.")


def op_sync(memory: Memory, child: int, i: int, rng: random.Random) -> None:
    topic = rng.randrange(6)
    if rng.random() < 0.2 and topic in {1, 2}:
        path = memory.workspace.root / f"memory/topic-{topic}.md"
        path.unlink(missing_ok=True)
    else:
        body = "\n\n".join(
            f"## topic alpha {word(rng)}\n\nproject notes {word(rng)}" for _ in range(8)
        )
        memory.write_file(f"memory/topic-{topic}.md", f"# Topic {topic}\n\n{body}\n")
    memory.sync()


def op_rewrite(memory: Memory, child: int, i: int, rng: random.Random) -> None:
    root = memory.workspace.root
    current = (root / "MEMORY.md").read_text(encoding="utf-8")
    n = sum(1 for line in current.splitlines() if line.startswith("- entry "))
    update = replace_guarded(root, "MEMORY.md", memory_version(n))
    assert update.written, update
    big = root / "memory" / "big.md"
    big.parent.mkdir(exist_ok=True)
    write_atomic(big, big_version(n))


def op_compact(memory: Memory, child: int, i: int, rng: random.Random) -> None:
    session = memory.session(f"s{child}")
    stored = [
        session.append(Message("user", f"I prefer {word(rng)} tea with {word(rng)}."))
        if k % 2 == 0
        else session.append(Message("assistant", f"Noted {word(rng)}."))
        for k in range(6)
    ]

    def flush(messages: object) -> FlushResult:
        saved = 0
        for message in messages:  # type: ignore[attr-defined]
            if message.role == "user":
                memory.save(message.content.replace("I prefer", "The user prefers"))
                saved += 1
        return FlushResult(facts_saved=saved)

    messages = [s.message for s in stored]
    done = compact(
        messages, model=None, flush=flush, policy=ContextPolicy(preserve_recent_messages=2)
    )
    record_compaction(session, done, [s.id for s in stored])


def op_extract(memory: Memory, child: int, i: int, rng: random.Random) -> None:
    session = memory.session(f"x{child}-{i}")
    for _ in range(3):
        session.append(Message("user", f"Remember that the {word(rng)} server runs {word(rng)}."))
        session.append(Message("assistant", "I will remember that."))
    memory.extract(session.session_id)


OPS: dict[str, Callable[[Memory, int, int, random.Random], None]] = {
    "append": op_append,
    "save": op_save,
    "sync": op_sync,
    "rewrite": op_rewrite,
    "compact": op_compact,
    "extract": op_extract,
}


def run_child(mode: str, home: Path, child: int) -> None:
    rng = random.Random(child)
    log = os.open(home / f"done-{mode}.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    memory = open_memory(home)
    for i in range(1_000_000):
        OPS[mode](memory, child, i, rng)
        os.write(log, f"{child} {i}\n".encode())


def main() -> int:
    mode, home, kills, seed = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    with open_memory(home) as memory:
        memory.init()
        if mode == "rewrite":
            (memory.workspace.root / "MEMORY.md").write_text(memory_version(0), encoding="utf-8")
    rng = random.Random(seed)
    for child in range(kills):
        pid = os.fork()
        if pid == 0:  # the child never returns: it is killed
            try:
                run_child(mode, home, child)
            finally:
                os._exit(3)
        time.sleep(rng.uniform(0.02, 0.35))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
            print(f"child {child} ended on its own with status {status}", file=sys.stderr)
            return 1
    print(f"killed {kills}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
