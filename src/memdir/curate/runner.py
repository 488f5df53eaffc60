"""Running extractions in the background, so a reply never waits for curation.

``ExtractionRunner.schedule_extraction()`` returns a ``Future`` at once; the
extraction runs in a small thread pool. The per-agent lock and cooldown live in
``extract_after_conversation`` itself, so two runners (or two processes) never
curate one agent at the same time. A failure the extraction does not turn into
its result (say, a full disk) is logged and kept in the future.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType

from memdir.curate.extraction import (
    CONVERSATION_TRIGGER,
    DEFAULT_POLICY,
    ExtractionPolicy,
    ExtractionResult,
    ExtractionTrigger,
    extract_after_conversation,
)
from memdir.curate.guard import Clock, local_now
from memdir.curate.heuristics import SaveFact
from memdir.errors import InvalidInputError
from memdir.llm import ChatModel, Message
from memdir.workspace import Workspace

logger = logging.getLogger(__name__)


class ExtractionRunner:
    """A background executor for ``extract_after_conversation``.

    ``model``, ``save_fact``, ``policy`` and ``clock`` apply to every scheduled
    run. Use it as a context manager, or call ``close()`` to wait for the runs
    in flight.
    """

    def __init__(
        self,
        *,
        model: ChatModel | None = None,
        save_fact: SaveFact | None = None,
        policy: ExtractionPolicy = DEFAULT_POLICY,
        clock: Clock = local_now,
        max_workers: int = 2,
        extract: Callable[..., ExtractionResult] = extract_after_conversation,
    ) -> None:
        self.extract = extract  # extract_after_conversation, or one that wraps it
        self.model = model
        self.save_fact = save_fact
        self.policy = policy
        self.clock = clock
        self._executor = ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="memdir-extract"
        )
        self._closed = False

    def __enter__(self) -> ExtractionRunner:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def schedule_extraction(
        self,
        workspace: Workspace,
        messages: Sequence[Message],
        trigger: ExtractionTrigger = CONVERSATION_TRIGGER,
    ) -> Future[ExtractionResult]:
        """Start an extraction in the background and return its future immediately."""
        if self._closed:
            raise InvalidInputError(
                "this ExtractionRunner is closed; create a new runner to schedule extractions"
            )
        snapshot = tuple(messages)  # the caller may keep appending to its list
        future = self._executor.submit(
            self.extract,
            workspace,
            snapshot,
            model=self.model,
            save_fact=self.save_fact,
            trigger=trigger,
            policy=self.policy,
            clock=self.clock,
        )
        future.add_done_callback(_log_failure)
        return future

    def close(self, wait: bool = True) -> None:
        """Stop accepting work; with ``wait`` block until running extractions finish."""
        self._closed = True
        self._executor.shutdown(wait=wait)


def _log_failure(future: Future[ExtractionResult]) -> None:
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        logger.error("background extraction failed: %s", error, exc_info=error)
