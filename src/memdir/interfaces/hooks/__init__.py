"""Capture without an explicit save: a coding agent's finished session becomes memory.

Claude Code and Codex CLI keep each session as a JSONL transcript and run a program of
the user's choice when a turn or the session ends. ``memdir hook claude-code`` and
``memdir hook codex`` are that program: ``transcripts`` reads the host's file (confined
to the host's own folder, bounded in size) into user and assistant messages, and
``capture`` hands them to memdir's curation (a transcript under ``sessions/``,
extraction, the session-end note) once, however often the same session is handed over.
"""

from memdir.interfaces.hooks.capture import CaptureResult, capture_session
from memdir.interfaces.hooks.transcripts import (
    HostMessage,
    HostTranscript,
    claude_code_root,
    codex_sessions_root,
    find_codex_rollout,
    read_claude_code,
    read_codex,
)

__all__ = [
    "CaptureResult",
    "HostMessage",
    "HostTranscript",
    "capture_session",
    "claude_code_root",
    "codex_sessions_root",
    "find_codex_rollout",
    "read_claude_code",
    "read_codex",
]
