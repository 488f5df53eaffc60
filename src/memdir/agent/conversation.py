"""The chat agent: one conversation with a model that uses memory as tools.

``ChatAgent.send(text)`` answers one user message: the system prompt is rebuilt
from the workspace, the context window is prepared (flush, then compact, as it
fills), the model is called with the memory tools, its tool calls run through
``memdir.tools.call_tool`` and their results go back to it, at most
``max_tool_rounds`` times. Every message is appended to the session transcript
(JSONL) as it happens, and every compaction is recorded there.

Two models may be involved: ``model`` holds the conversation; the side work
(flush, summaries, correction checks, session notes, extraction) uses the model
the ``Memory`` was opened with, so ``Memory.open(chat_model=None)`` keeps it on
the documented heuristics. The agent never prints: it returns ``Turn`` values
and reports ``AgentEvent`` values to an optional observer.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TYPE_CHECKING, Any

from memdir.agent.flush import make_flush
from memdir.agent.ritual import BootstrapRitual
from memdir.agent.toolbox import ToolRun, chat_tool_specs, run_tool_call
from memdir.agent.turns import AgentEvent, AgentStatus, EventKind, Turn
from memdir.agent.windows import recall_window, remember_window
from memdir.context import (
    Compaction,
    ContextEvent,
    ContextPolicy,
    ContextWindow,
    new_session_id,
    record_compaction,
)
from memdir.curate import (
    ExtractionPolicy,
    ExtractionResult,
    ExtractionRunner,
    ExtractionTrigger,
    SessionNote,
    detect_correction,
    record_correction,
    transcript_messages,
)
from memdir.errors import ContextLengthError
from memdir.llm import ChatModel, Completion, Message, Usage
from memdir.memory import composition
from memdir.prompt import check_session_kind

if TYPE_CHECKING:
    from memdir.memory import Memory

logger = logging.getLogger(__name__)

Observer = Callable[[AgentEvent], None]
DEFAULT_TOOL_ROUNDS = 8


class ChatAgent:
    """A conversation between a person, a chat model and a ``Memory``.

    Resumes ``session_id`` when its transcript exists (compactions replayed),
    else starts it; a fresh id is made when none is given. Close it (or use it
    as a context manager) to wait for the background extractions.
    """

    def __init__(
        self,
        memory: Memory,
        model: ChatModel,
        *,
        session_id: str | None = None,
        policy: ContextPolicy | None = None,
        extraction_policy: ExtractionPolicy | None = None,
        max_tool_rounds: int = DEFAULT_TOOL_ROUNDS,
        auto_extract: bool | None = None,
        session_kind: str | None = None,
    ) -> None:
        self.memory = memory
        self.model = model
        self.session_kind = check_session_kind(session_kind or memory.settings.prompt.session_kind)
        self.auto_extract = (
            memory.settings.curate.auto_extract if auto_extract is None else auto_extract
        )
        self.max_tool_rounds = max(1, max_tool_rounds)
        policy = policy or composition.context_policy(memory.settings)
        if policy.max_input_tokens is None:  # the window of the model that holds the talk
            policy = dataclasses.replace(policy, max_input_tokens=model.context_window)
        self.configured_window = policy.max_input_tokens or model.context_window
        self.learned_window = recall_window(memory.home, model, self.configured_window)
        if self.learned_window is not None:  # a context-length error taught it earlier
            policy = dataclasses.replace(policy, max_input_tokens=self.learned_window)
        self.policy = policy
        self.tools = chat_tool_specs()
        self.ritual = BootstrapRitual(memory)
        self.last_usage: Usage | None = None
        self._runner = ExtractionRunner(
            model=memory.chat_model,
            save_fact=self._save_fact,
            policy=extraction_policy or composition.extraction_policy(memory.settings),
            **_review_extract(memory.settings.curate.review),
        )
        self._pending: list[Future[ExtractionResult]] = []
        self._scheduled: tuple[str, int, str | None] | None = None
        self._runner_closed = False
        self._open(session_id or new_session_id())

    def __enter__(self) -> ChatAgent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the session ------------------------------------------------------------------
    def _open(self, session_id: str) -> None:
        self.session = self.memory.session(session_id)
        self.window = ContextWindow(
            model=self.memory.chat_model, flush=make_flush(self.memory), policy=self.policy
        )
        self.messages: list[Message] = []
        self._ids: list[str | None] = []
        if self.session.exists:
            for stored in self.session.load().current():
                self.messages.append(stored.message)
                self._ids.append(stored.id)
            logger.info("resumed session %s (%d messages)", session_id, len(self.messages))

    @property
    def session_id(self) -> str:
        return self.session.session_id

    def _append(self, message: Message) -> None:
        stored = self.session.append(message)
        self.messages.append(message)
        self._ids.append(stored.id)

    def _save_fact(self, text: str, category: str | None, importance: int | None) -> object:
        return self.memory.save(text, category=category, importance=importance)

    # -- one turn ---------------------------------------------------------------------
    def send(self, text: str, observer: Observer | None = None) -> Turn:
        """Answer one user message (see the module docstring)."""
        events: list[AgentEvent] = []

        def emit(event: AgentEvent) -> None:
            events.append(event)
            if observer is not None:
                observer(event)

        self._check_correction(text, emit)
        self._append(Message("user", text))
        runs: list[ToolRun] = []
        reply = ""
        for round_number in range(1, self.max_tool_rounds + 1):
            completion = self._complete(emit)
            self._append(completion.to_message())
            reply = completion.text
            if not completion.tool_calls:
                break
            runs.extend(self._run_tools(completion, text, emit))
            if round_number == self.max_tool_rounds:
                emit(AgentEvent("rounds_exhausted", f"stopped after {round_number} tool rounds"))
        if self.ritual.finish_if_done():
            emit(AgentEvent("ritual", "first-run ritual complete: BOOTSTRAP.md deleted"))
        return Turn(reply, tuple(runs), tuple(events), self.last_usage)

    def _check_correction(self, text: str, emit: Observer) -> None:
        last_reply = next((m.content for m in reversed(self.messages) if m.role == "assistant"), "")
        if not last_reply:
            return
        correction = detect_correction(text)  # cheap patterns first, the model only confirms
        if correction is not None and self.memory.chat_model is not None:
            correction = detect_correction(text, self.memory.chat_model)
        if correction is None:
            return
        record_correction(
            self.memory.workspace, correction, f"chat session {self.session_id}", wrong=last_reply
        )
        emit(AgentEvent("correction", f"correction noted in learnings: {correction}"))

    def _run_tools(self, completion: Completion, context: str, emit: Observer) -> list[ToolRun]:
        runs = []
        for call in completion.tool_calls:
            run = run_tool_call(self.memory, call, context)
            self._append(Message("tool", run.result, tool_call_id=call.id, name=call.name))
            kind: EventKind = "tool_call" if run.ok else "tool_error"
            emit(AgentEvent(kind, f"{call.name}({_brief(call.arguments)}) -> {_first_line(run)}"))
            runs.append(run)
        return runs

    def system_message(self) -> Message:
        """The system prompt, rebuilt from the workspace for this session's kind."""
        return Message("system", self.memory.system_prompt(session_kind=self.session_kind))

    def _complete(self, emit: Observer) -> Completion:
        system = self.system_message()
        prepared, context_events = self.window.prepare([system, *self.messages])
        for event in context_events:
            self._adopt(event, emit)
        try:
            completion = self.model.complete(prepared, tools=self.tools)
        except ContextLengthError as exc:
            learned = self._learn_window(str(exc), prepared)
            compaction = self.window.recover([system, *self.messages])
            self._apply(compaction)
            emit(
                AgentEvent(
                    "emergency", f"context too long ({exc}); {learned}{compaction.describe()}"
                )
            )
            try:
                completion = self.model.complete([system, *self.messages], tools=self.tools)
            except ContextLengthError as again:
                raise ContextLengthError(
                    f"the conversation is still too long for {self.model.model!r} after "
                    f"emergency compaction ({again}); start a fresh session with /new"
                ) from again
        self.last_usage = completion.usage or self.last_usage
        return completion

    # -- the context window -----------------------------------------------------------
    def _learn_window(self, error: str, refused: list[Message]) -> str:
        """Take the window the error reveals (kept for later chats); say what changed."""
        learned = self.window.learn(error, refused)
        if learned is None:
            return ""
        self.learned_window = learned
        self.policy = self.window.policy  # a /new session keeps it too
        try:
            remember_window(self.memory.home, self.model, self.configured_window, learned)
        except OSError as exc:  # a read-only home: the chat still goes on with it
            logger.warning("could not keep the learned window: %s", exc)
        return (
            f"the model accepts about {learned:,} tokens, not {self.configured_window:,}: "
            "the window is that from now on; "
        )

    def _adopt(self, event: ContextEvent, emit: Observer) -> None:
        if event.compaction is not None:
            self._apply(event.compaction)
        kind: EventKind = event.kind  # the context event kinds are agent event kinds too
        emit(AgentEvent(kind, event.text))

    def _apply(self, compaction: Compaction) -> None:
        """Take over a compaction of ``[system, *messages]`` and record it in the transcript."""
        ids = record_compaction(self.session, compaction, [None, *self._ids])
        self.messages = list(compaction.messages[1:])
        self._ids = ids[1:]

    def compact_now(self) -> Compaction:
        """Flush-then-compact whatever the level (``/compact``)."""
        compaction = self.window.compact([self.system_message(), *self.messages])
        self._apply(compaction)
        return compaction

    def status(self) -> AgentStatus:
        """Who, which session and model, and how full the window is (``/status``)."""
        measured = self.window.check([self.system_message(), *self.messages])
        return AgentStatus(
            agent=self.memory.agent_id or "global",
            session_id=self.session_id,
            session_kind=self.session_kind,
            model=f"{self.model.provider}/{self.model.model}",
            tokens=measured.tokens,
            window=measured.budget,
            level=measured.level.label,
            messages=len(self.messages),
            last_input_tokens=None if self.last_usage is None else self.last_usage.input_tokens,
            ritual_active=self.ritual.active,
            configured_window=self.configured_window,
        )

    # -- ending -----------------------------------------------------------------------
    def new_session(self) -> SessionNote | None:
        """``/new``: write the session-end note, extract in the background, start afresh."""
        note = None
        if self.session.exists and self.messages:
            note = self.memory.end_session(self.session_id)
        self.schedule_extraction()
        self._open(new_session_id())
        return note

    def schedule_extraction(self) -> None:
        """Curate memory from this conversation in the background.

        The extraction reads the session transcript, which keeps every message, not
        the compacted view the model holds. A no-op when ``auto_extract`` is off
        (``curate.auto_extract``), when the conversation is empty or when it was
        scheduled already as it is.
        """
        mark = (self.session_id, len(self._ids), self._ids[-1] if self._ids else None)
        if not self.auto_extract or not self.messages or mark == self._scheduled:
            return
        self._scheduled = mark
        trigger = ExtractionTrigger(session_id=self.session_id)
        said = transcript_messages(self.session.load()) if self.session.exists else self.messages
        self._pending.append(self._runner.schedule_extraction(self.memory.workspace, said, trigger))

    def close(self, timeout: float = 60.0) -> list[ExtractionResult]:
        """Extract this conversation, wait up to ``timeout`` seconds for every extraction
        and return those that finished.

        One still running after that is left to finish on its own (it is bounded by
        the model's timeout) and logged.
        """
        if not self._runner_closed:
            self.schedule_extraction()
        self._runner_closed = True
        done, running = wait(self._pending, timeout=timeout)
        if running:
            logger.warning("%d extraction(s) still running after %.0fs", len(running), timeout)
        self._runner.close(wait=not running)
        self._pending = []
        return [f.result() for f in done if not f.cancelled() and f.exception() is None]


def _brief(arguments: dict[str, object], limit: int = 60) -> str:
    shown = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _first_line(run: ToolRun, limit: int = 80) -> str:
    line = run.result.strip().splitlines()[0] if run.result.strip() else "(empty)"
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _review_extract(review: bool) -> dict[str, Any]:
    """The runner's extraction: under ``curate.review`` its rewrites and appends become
    proposals; an agent's rewrite of USER.md is one whatever the setting."""
    from memdir.memory.curation_review import extract_for_review, extract_with_owner

    return {"extract": extract_for_review if review else extract_with_owner}
