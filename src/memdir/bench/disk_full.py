"""Writes on a full disk: does a failed write leave every file as it was, and say why?

The home lives on a small tmpfs mounted in a private mount namespace
(``unshare --map-root-user --mount``: no privileges needed where user
namespaces are enabled), so the disk really fills up. The child process:

1. seeds a home (a note, a fact, an index), starts a REST server on it;
2. fills the disk until 12 KB are left and appends 50 KB to the daily note
   through the Python API and through REST (a write that fails half-way);
3. fills the disk completely and tries every write path through REST
   (PUT, PATCH, POST /facts, a tool call, search with sync);
4. reports the bytes the failed appends left in the note (target 0), and the
   status and title of each REST answer (target: 507 "Disk full", never 500).

Without user namespaces, ``RLIMIT_FSIZE`` (the file size limit, EFBIG) stands
in for the full disk for step 2 and step 3 is skipped; the report says which.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memdir.bench.rest_server import start_rest_server
from memdir.embeddings.base import HashEmbedder
from memdir.errors import DiskFullError
from memdir.memory import Memory

TMPFS_BYTES = 8 * 1024 * 1024
LEFT_FREE = 12 * 1024
BIG_ENTRY = "- " + "filler text " * 4_300  # ~50 KB in one line


@dataclass
class DiskFullReport:
    """What failed writes on a full disk left behind, and what the caller was told."""

    method: str  # "tmpfs" (a real full disk) or "rlimit" (the file size limit)
    appends_tried: int = 0
    appends_refused: int = 0  # raised DiskFullError / answered 507
    bytes_left_by_failed_appends: int = 0
    rest_answers: dict[str, list[Any]] = field(default_factory=dict)  # [status, title, detail]
    problems: list[str] = field(default_factory=list)

    @property
    def wrong(self) -> int:
        bad_answers = sum(1 for answer in self.rest_answers.values() if answer[0] != 507)
        return self.bytes_left_by_failed_appends + bad_answers + len(self.problems)


def _fill(folder: Path, leave: int) -> None:
    """Write a filler file until only ``leave`` bytes are free on ``folder``'s disk."""
    free = shutil.disk_usage(folder).free
    with (folder / "filler.bin").open("ab") as handle:
        chunk = b"\0" * 4096
        while free > leave:
            try:
                handle.write(chunk[: max(1, min(4096, free - leave))])
                handle.flush()
            except OSError:
                break
            free = shutil.disk_usage(folder).free


def _seed(home: Path) -> None:
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        memory.init()
        memory.write_file("memory/projects.md", "# Projects\n\n- the search rewrite\n")
        memory.save("The team meets on Tuesdays")
        memory.sync()


def _append_fails_whole(memory: Memory, report: DiskFullReport) -> None:
    note = memory.workspace.root / "memory" / "2026-01-02.md"
    memory.append_daily("a first short entry")
    if note.exists() is False:
        note = next((memory.workspace.root / "memory").glob("*.md"))
    before = note.read_bytes()
    report.appends_tried += 1
    try:
        memory.append_daily(BIG_ENTRY)
    except DiskFullError:
        report.appends_refused += 1
    except OSError as exc:
        report.problems.append(f"append raised {type(exc).__name__}: {exc}")
    after = note.read_bytes()
    report.bytes_left_by_failed_appends += abs(len(after) - len(before))
    if after != before and len(after) == len(before):
        report.problems.append("the note changed although its size did not")


def _rest_phase(home: Path, report: DiskFullReport) -> None:
    """Start a server on ``home``, fill the disk, try every write path through REST."""
    server = start_rest_server(home)
    try:
        with server.client() as http:
            note = next((home / "workspace" / "memory").glob("????-??-??.md"))
            before = note.read_bytes()
            _fill(home.parent, LEFT_FREE)
            answer = http.post(
                "/api/v1/tools/memory_write_file",
                json={"path": "memory/big.md", "content": BIG_ENTRY * 2},
            )
            report.rest_answers["write 100 KB, 12 KB free"] = [answer.status_code, answer.json()]
            _fill(home.parent, 0)
            calls = {
                "PUT file": ("PUT", "/api/v1/files/memory/new.md", {"content": "# New\n\ntext\n"}),
                "PATCH file": (
                    "PATCH",
                    "/api/v1/files/memory/projects.md",
                    {"old_text": "the search rewrite", "new_text": "the search rewrite " * 400},
                ),
                "POST fact": ("POST", "/api/v1/facts", {"content": "Lunch is at noon " * 30}),
                "tool append": (
                    "POST",
                    "/api/v1/tools/memory_save",
                    {"content": "The office plant is a ficus " + "x" * 900},
                ),
            }
            for name, (method, url, body) in calls.items():
                answer = http.request(method, url, json=body)
                report.rest_answers[name] = [answer.status_code, answer.json()]
            search = http.get("/api/v1/search", params={"query": "search rewrite"})
            if search.status_code != 200:  # answering from the index as it is is fine too
                report.rest_answers["search"] = [search.status_code, search.json()]
            report.appends_tried += 2
            report.appends_refused += sum(
                1 for k in ("POST fact", "tool append") if report.rest_answers[k][0] == 507
            )
            report.bytes_left_by_failed_appends += abs(len(note.read_bytes()) - len(before))
    finally:
        server.stop()
    for name, (status, body) in list(report.rest_answers.items()):
        shown = [body.get(k, "") for k in ("title", "detail")] if isinstance(body, dict) else []
        report.rest_answers[name] = [status, *shown]


def child(folder: Path, out: Path, method: str) -> None:
    """Runs inside the namespace (or under the file size limit); writes the report to ``out``."""
    report = DiskFullReport(method)
    if method == "tmpfs":
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(folder)], check=True
        )
    home = folder / "home"
    _seed(home)
    with Memory.open(home, embedder=HashEmbedder()) as memory:
        if method == "tmpfs":
            _fill(folder, LEFT_FREE)
        else:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
            note = next((memory.workspace.root / "memory").glob("????-??-??.md"))
            limit = note.stat().st_size + 200 + LEFT_FREE
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        _append_fails_whole(memory, report)
    if method == "tmpfs":
        (folder / "filler.bin").unlink()
        _rest_phase(home, report)
    out.write_text(json.dumps(asdict(report)), encoding="utf-8")


def run_disk_full(workdir: Path) -> DiskFullReport:
    """Run the child in a private mount namespace if possible, else under RLIMIT_FSIZE."""
    folder = workdir / "disk"
    folder.mkdir(parents=True, exist_ok=True)
    out = workdir / "disk-full.json"
    command = [sys.executable, "-m", "memdir.bench.disk_full", str(folder), str(out)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDIR_")}
    unshare = shutil.which("unshare")
    done = None
    if unshare is not None:
        done = subprocess.run(
            [unshare, "--map-root-user", "--mount", *command, "tmpfs"],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    if done is None or (done.returncode != 0 and "mount" in done.stderr.lower()):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        done = subprocess.run(
            [*command, "rlimit"], env=env, capture_output=True, text=True, timeout=300,
            check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"the disk-full run failed ({done.returncode}): {done.stderr[-3000:]}")
    data = json.loads(out.read_text(encoding="utf-8"))
    return DiskFullReport(**data)


if __name__ == "__main__":
    child(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
