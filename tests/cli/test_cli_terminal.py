"""Memory text printed to a real terminal (a pseudo-terminal) shows control sequences as
text; piped, it stays byte for byte."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

FAST = ["--set", "embeddings.provider=hash"]
HOSTILE = "the wombat \x1b]52;c;cm0gLXJmIH4=\x07 hides \x1b[2J here\rFAKE \u202eevil\n"


def on_a_terminal(home: Path, *args: str) -> str:
    """What ``memdir args`` writes to standard output when that is a terminal."""
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--home", str(home), *FAST, *args],
        stdout=follower, stderr=subprocess.PIPE, timeout=120, check=False,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower is closed and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode("utf-8")


@pytest.fixture
def note(home: Path) -> Path:
    memory = home / "workspace" / "memory"
    memory.mkdir(parents=True)
    path = memory / "hostile.md"
    path.write_text("# Hostile\n\n" + HOSTILE, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [["get", "memory/hostile.md"], ["files", "read", "memory/hostile.md"], ["search", "wombat"]],
)
def test_control_sequences_of_a_note_are_shown_not_obeyed(
    home: Path, note: Path, command: list[str]
) -> None:
    shown = on_a_terminal(home, *command)
    assert "wombat" in shown, shown
    assert "\x1b]52" not in shown
    assert "\x1b[2J" not in shown
    assert "\u202e" not in shown
    assert "\\x1b]52;c;cm0gLXJmIH4=\\x07" in shown, shown
    assert re.search(r"\r(?!\n)", shown) is None  # a lone '\r' is shown, or a line break


def test_piped_output_keeps_the_bytes(home: Path, note: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memdir", "--home", str(home), *FAST,
         "files", "read", "memory/hostile.md"],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout == note.read_bytes()
