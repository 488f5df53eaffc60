"""``memdir hook claude-code`` and ``memdir hook codex``: a host's session becomes memory.

A host runs these after a turn or at the end of a session. They never fail the host:
whatever goes wrong is one line on stderr and in ``$MEMDIR_HOME/logs/hooks.log``, and
the exit code is 0 (Claude Code would block the end of a turn on exit code 2 and report
any other as a hook error; Codex ignores it). Nothing is printed on stdout, which Claude
Code reads as the hook's decision.
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from memdir.errors import InvalidInputError, MemdirError, NotFoundError
from memdir.interfaces.cli._app import AppState, make_app, state

app = make_app(
    "Turn a coding agent's finished session into memory (Claude Code and Codex CLI hooks)."
)

log = logging.getLogger(__name__)

MAX_PAYLOAD_BYTES = 1024 * 1024
LOG_MAX_BYTES = 1024 * 1024
CODEX_IDLE_S = 30 * 60
STDIN_QUIET_S = 5.0
_END_EVENTS = {"SessionEnd"}

RootOption = Annotated[
    Path | None,
    typer.Option(
        help="Read transcripts only under this folder (default: the host's own folder).",
    ),
]
EndOption = Annotated[
    bool | None,
    typer.Option(
        "--end/--no-end",
        help="Write the session-end note too (default: when the host says the session ended).",
    ),
]
DetachOption = Annotated[
    bool,
    typer.Option(
        "--detach",
        help="Return at once and curate in a background process (for hooks the host cuts short).",
    ),
]


@app.command("claude-code")
def claude_code(
    ctx: typer.Context,
    transcripts_root: RootOption = None,
    end: EndOption = None,
    detach: DetachOption = False,
) -> None:
    """Claude Code's Stop/SessionEnd hook: reads the hook's JSON on stdin (session_id,
    transcript_path, hook_event_name) and curates the transcript."""
    payload = _read_stdin()
    if detach:
        _detach(
            ctx, "claude-code", payload, _forwarded("--transcripts-root", transcripts_root, end)
        )
        return
    _guarded(ctx, lambda: _claude_code(ctx, payload, transcripts_root, end))


@app.command("codex")
def codex(
    ctx: typer.Context,
    notification: Annotated[
        str | None,
        typer.Argument(help="The JSON Codex's notify program is given (agent-turn-complete)."),
    ] = None,
    rollout: Annotated[
        Path | None, typer.Option(help="A session rollout file to curate instead.")
    ] = None,
    sessions_root: RootOption = None,
    end: EndOption = None,
    detach: DetachOption = False,
) -> None:
    """Codex CLI's notify program (the JSON as the last argument), its Stop hook (JSON on
    stdin) or one rollout file (--rollout): curates the session's rollout."""
    payload = b"" if notification is not None or rollout is not None else _read_stdin()
    if detach:
        extra = _forwarded("--sessions-root", sessions_root, end, rollout)
        _detach(ctx, "codex", payload, [*extra, *([notification] if notification else [])])
        return
    _guarded(ctx, lambda: _codex(ctx, notification, payload, rollout, sessions_root, end))


@app.command("log")
def hook_log(
    ctx: typer.Context,
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, help="How many lines.")] = 20,
) -> None:
    """Print the last lines of the hook log: what each hand-over did, or why it failed."""
    path = _log_path(ctx)
    if not path.is_file():
        typer.echo(f"no hook has run for this home yet ({path} does not exist)")
        return
    for line in path.read_text("utf-8", errors="replace").splitlines()[-lines:]:
        typer.echo(line)


def _log_path(ctx: typer.Context) -> Path:
    from memdir.config import resolve_home

    return resolve_home(state(ctx).home) / "logs" / "hooks.log"


# -- the hosts --------------------------------------------------------------------------------


def _claude_code(ctx: typer.Context, raw: bytes, root: Path | None, end: bool | None) -> str:
    from memdir.interfaces.hooks import capture_session, claude_code_root, read_claude_code
    from memdir.interfaces.hooks.transcripts import confined_transcript

    payload = _json_object(raw, "the hook's input on stdin")
    session_id = _string(payload, "session_id")
    path = confined_transcript(
        _string(payload, "transcript_path"), root or claude_code_root(), "--transcripts-root"
    )
    ends = end if end is not None else payload.get("hook_event_name") in _END_EVENTS
    transcript = read_claude_code(path)
    with _open_memory(ctx, ends) as memory:
        result = capture_session(memory, "claude-code", session_id, transcript.messages, end=ends)
    return _summary(result, transcript.truncated)


def _codex(
    ctx: typer.Context,
    notification: str | None,
    raw: bytes,
    rollout: Path | None,
    root: Path | None,
    end: bool | None,
) -> str:
    from memdir.interfaces.hooks import (
        capture_session,
        codex_sessions_root,
        find_codex_rollout,
        read_codex,
    )
    from memdir.interfaces.hooks.capture import note_idle_sessions
    from memdir.interfaces.hooks.transcripts import HostMessage, confined_transcript

    base = root or codex_sessions_root()
    path: Path | None
    messages: tuple[HostMessage, ...]
    truncated = False
    if rollout is not None:
        path = confined_transcript(rollout.absolute(), base, "--sessions-root")
        session_id = _rollout_thread_id(path)
    elif notification is not None:
        payload = _json_object(notification.encode(), "the notify argument")
        if payload.get("type") != "agent-turn-complete":
            return f"ignored: a {payload.get('type')!r} notification"
        session_id = _string(payload, "thread-id")
        path = find_codex_rollout(base, session_id)
    else:
        payload = _json_object(raw, "the hook's input on stdin")
        session_id = _string(payload, "session_id")
        if payload.get("transcript_path"):
            given = _string(payload, "transcript_path")
            path = confined_transcript(given, base, "--sessions-root")
        else:  # Codex's hooks may leave it null: the session's rollout, found by its id
            path = find_codex_rollout(base, session_id)
            if path is None:
                raise NotFoundError(f"no rollout of Codex session {session_id!r} under {base}")
    if path is not None:
        transcript = read_codex(path)
        messages, truncated = transcript.messages, transcript.truncated
    else:
        messages = ()
    if notification is not None:  # the notified turn, if the rollout does not hold it yet
        messages = _with_notified(messages, _json_object(notification.encode(), "notify"))
    ends = bool(end)
    with _open_memory(ctx, ends) as memory:
        result = capture_session(memory, "codex", session_id, messages, end=ends)
        idle = note_idle_sessions(memory, "codex", CODEX_IDLE_S, keep=result.session_id)
    summary = _summary(result, truncated)
    return summary + (f"; idle sessions noted: {', '.join(idle)}" if idle else "")


def _rollout_thread_id(path: Path) -> str:
    """The thread id at the end of ``rollout-<time>-<thread id>.jsonl`` (a UUID)."""
    stem = path.stem
    if len(stem) > 36 and stem[-37] == "-":
        return stem[-36:]
    return stem.removeprefix("rollout-")


def _with_notified(messages: tuple[Any, ...], payload: dict[str, Any]) -> tuple[Any, ...]:
    """``messages`` (the rollout's) and after them the notified turn's messages, unless
    the rollout holds the turn already (its user messages): Codex may notify before it
    wrote the turn there."""
    from memdir.interfaces.hooks.transcripts import NOTIFIED, HostMessage

    turn = _string(payload, "turn-id")
    said = payload.get("input-messages") or []
    found = [
        HostMessage(f"{NOTIFIED}{turn}-u{index}", "user", text.strip())
        for index, text in enumerate(said if isinstance(said, list) else [])
        if isinstance(text, str) and text.strip()
    ]
    reply = payload.get("last-assistant-message")
    if isinstance(reply, str) and reply.strip():
        found.append(HostMessage(f"{NOTIFIED}{turn}-a", "assistant", reply.strip()))
    known = {(m.role, m.text) for m in messages}
    asked = [m for m in found if m.role == "user"] or found
    if any((m.role, m.text) in known for m in asked):  # the rollout holds the turn
        return messages
    return (*messages, *found)


# -- plumbing ---------------------------------------------------------------------------------


def _open_memory(ctx: typer.Context, ends: bool) -> Any:
    """The memory to curate into; at a session's end without the extraction cooldown, so
    the last turns are read even when a turn's hook extracted a minute ago."""
    app_state = state(ctx)
    if not ends:
        return app_state.open_memory()
    return AppState(
        app_state.home,
        app_state.agent,
        [*app_state.overrides, "curate.extraction_cooldown_s=0"],
    ).open_memory()


def _summary(result: Any, truncated: bool) -> str:
    parts = [
        f"{result.session_id}: {result.appended} messages added, {result.skipped} known",
        f"extraction {result.extraction}",
    ]
    if result.note:
        parts.append(f"note {result.note}")
    if truncated:
        parts.append("transcript read from its end only (too long)")
    return "; ".join(parts)


def _read_stdin(quiet_s: float = STDIN_QUIET_S) -> bytes:
    """The host's JSON on stdin: up to end of file, or as soon as what came parses as JSON
    (a host that keeps stdin open is not waited for), or ``quiet_s`` without a byte."""
    if sys.stdin is None or sys.stdin.isatty():
        return b""
    data = b""
    try:
        fd = sys.stdin.fileno()
        while len(data) <= MAX_PAYLOAD_BYTES:
            ready, _, _ = select.select([fd], [], [], quiet_s)
            if not ready:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
            try:
                json.loads(data)
            except ValueError:
                continue
            break
    except (OSError, ValueError):  # no usable stdin: what came so far is judged as input
        pass
    return data


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise InvalidInputError(f"{what} is over {MAX_PAYLOAD_BYTES} bytes")
    if not raw.strip():
        raise InvalidInputError(f"{what} is empty; the host hands the hook a JSON object")
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise InvalidInputError(f"{what} is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InvalidInputError(f"{what} is not a JSON object")
    return value


def _string(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"the hook's input has no {key!r} string")
    return value


def _forwarded(
    root_option: str, root: Path | None, end: bool | None, rollout: Path | None = None
) -> list[str]:
    """The options of this run, for the background process that does its work."""
    args: list[str] = []
    if root is not None:
        args += [root_option, str(root.absolute())]
    if end is not None:
        args.append("--end" if end else "--no-end")
    if rollout is not None:
        args += ["--rollout", str(rollout.absolute())]
    return args


def _guarded(ctx: typer.Context, run: Any) -> None:
    """Run a hook; report what it did, or why it failed, without failing the host."""
    try:
        outcome = run()
    except MemdirError as exc:
        outcome = f"error: {exc}"
    except Exception as exc:  # a hook must never fail its host
        log.debug("hook failed", exc_info=True)
        outcome = f"error: {type(exc).__name__}: {exc}"
    sys.stderr.write(f"memdir hook: {outcome}\n")
    _log(ctx, outcome)


def _log(ctx: typer.Context, line: str) -> None:
    """Append ``line`` to ``$MEMDIR_HOME/logs/hooks.log`` (kept under a megabyte)."""
    try:
        path = _log_path(ctx)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_suffix(".log.1"))
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {ctx.command_path}: {line}\n")
    except OSError as exc:
        sys.stderr.write(f"memdir hook: cannot write the hook log ({exc})\n")


def _detach(ctx: typer.Context, host: str, payload: bytes, args: list[str]) -> None:
    """Run the same hook in a process of its own, handed the same input, and return."""
    app_state = state(ctx)
    command = [sys.executable, "-m", "memdir"]
    if app_state.home is not None:
        command += ["--home", str(app_state.home)]
    if app_state.agent is not None:
        command += ["--agent", app_state.agent]
    command += [f"--set={override}" for override in app_state.overrides]
    command += ["hook", host, *args]
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert child.stdin is not None
        child.stdin.write(payload)
        child.stdin.close()
    except OSError as exc:
        _log(ctx, f"error: cannot start the background hook ({exc})")
