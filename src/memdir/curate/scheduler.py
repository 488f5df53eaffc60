"""Scheduled curation: cron jobs in a daemon thread, and the HEARTBEAT.md rules.

``Scheduler`` runs named jobs on cron expressions (``croniter``; consolidation
defaults to ``0 2 * * *``) inside a long-lived process such as ``memdir serve``.
``start()`` launches one daemon thread that sleeps until the next job is due;
``stop()`` ends it. A job that raises is logged and the scheduler keeps going;
its next run is scheduled as usual. A run that was missed (the process slept
through several cron times) runs once, not once per missed time.
``run_due(now)`` runs whatever is due at ``now``: the thread calls it, and tests
call it directly with a fake clock.

``read_heartbeat()`` gives a scheduled run the rules of HEARTBEAT.md: its
bullet items (continuation lines joined), without headings, prose paragraphs,
comments or ``(for example: ...)`` placeholders.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from croniter import croniter

from memdir.curate.guard import Clock, local_now
from memdir.errors import ConfigError, InvalidInputError, NotFoundError
from memdir.workspace import Workspace

logger = logging.getLogger(__name__)

DEFAULT_CRON = "0 2 * * *"
HEARTBEAT_FILE = "HEARTBEAT.md"

Job = Callable[[], object]


@dataclass
class ScheduledJob:
    """A job, its cron expression and when it runs next."""

    name: str
    cron: str
    action: Job
    next_run: datetime


@dataclass(frozen=True)
class JobRun:
    """One run of a job: when it was due and the error it raised, if any."""

    name: str
    due: datetime
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def next_cron_time(cron: str, after: datetime) -> datetime:
    """The first time strictly after ``after`` that matches ``cron``."""
    value = croniter(cron, after).get_next(datetime)
    if not isinstance(value, datetime):  # pragma: no cover - croniter returns what we ask
        raise ConfigError(f"cron expression {cron!r} gave no next time")
    return value


def check_cron(cron: str) -> str:
    """``cron`` if it is a valid 5-field cron expression, else ``ConfigError``."""
    if not isinstance(cron, str) or len(cron.split()) != 5 or not croniter.is_valid(cron):
        raise ConfigError(
            f"cron expression {cron!r} is not valid; use five fields such as "
            f"{DEFAULT_CRON!r} (minute hour day-of-month month day-of-week)"
        )
    return cron


class Scheduler:
    """Runs jobs on cron expressions; see the module docstring."""

    def __init__(self, *, clock: Clock = local_now, max_sleep_s: float = 60.0) -> None:
        self.clock = clock
        self.max_sleep_s = max_sleep_s
        self._jobs: dict[str, ScheduledJob] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"Scheduler(jobs={sorted(self._jobs)}, running={self.running})"

    def add_job(self, name: str, action: Job, cron: str = DEFAULT_CRON) -> datetime:
        """Register ``action`` under ``name`` (replacing one of that name); return its next run."""
        if not name:
            raise InvalidInputError("a scheduled job needs a non-empty name")
        next_run = next_cron_time(check_cron(cron), self.clock())
        with self._lock:
            self._jobs[name] = ScheduledJob(name, cron, action, next_run)
        self._wake.set()
        logger.info("scheduled job %r (%s), next run %s", name, cron, next_run.isoformat())
        return next_run

    def remove_job(self, name: str) -> None:
        with self._lock:
            if self._jobs.pop(name, None) is None:
                raise NotFoundError(f"no scheduled job named {name!r}; jobs: {sorted(self._jobs)}")

    def next_runs(self) -> dict[str, datetime]:
        """Each job's next run time, by name."""
        with self._lock:
            return {name: job.next_run for name, job in self._jobs.items()}

    def run_due(self, now: datetime | None = None) -> list[JobRun]:
        """Run every job due at ``now`` (default: the clock), in due order; return the runs."""
        moment = now or self.clock()
        with self._lock:
            due = sorted(
                (job for job in self._jobs.values() if job.next_run <= moment),
                key=lambda job: job.next_run,
            )
            runs = [(job, job.next_run) for job in due]
            for job in due:  # reschedule first: a slow job never runs twice for one time
                job.next_run = next_cron_time(job.cron, moment)
        return [self._run(job, job_due) for job, job_due in runs]

    def _run(self, job: ScheduledJob, due: datetime) -> JobRun:
        try:  # the documented boundary: a failing job must not stop the scheduler
            job.action()
        except Exception as exc:
            logger.exception("scheduled job %r (due %s) failed", job.name, due.isoformat())
            return JobRun(job.name, due, f"{type(exc).__name__}: {exc}")
        logger.info("scheduled job %r (due %s) done", job.name, due.isoformat())
        return JobRun(job.name, due)

    # -- the thread ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Run due jobs in a daemon thread until ``stop()``."""
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="memdir-scheduler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop the thread (a job in progress finishes first) and wait up to ``timeout``."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _sleep_for(self) -> float:
        runs = self.next_runs()
        if not runs:
            return self.max_sleep_s
        until = (min(runs.values()) - self.clock()).total_seconds()
        return max(0.0, min(self.max_sleep_s, until))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._sleep_for())
            self._wake.clear()
            if not self._stop.is_set():
                self.run_due()


_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PLACEHOLDER = re.compile(r"^\((?:for example|e\.g\.)", re.IGNORECASE)


def parse_rules(text: str) -> list[str]:
    """The bullet items of ``text``, each with its continuation lines joined."""
    rules: list[list[str]] = []
    for line in _COMMENT.sub("", text).splitlines():
        bullet = _BULLET.match(line)
        if bullet:
            rules.append([bullet.group(2).strip()])
        elif rules and line.strip() and line[:1].isspace():
            rules[-1].append(line.strip())
        elif rules and rules[-1] and not line.strip():
            rules.append([])  # a blank line ends the item
    joined = (" ".join(parts).strip() for parts in rules)
    return [rule for rule in joined if rule and not _PLACEHOLDER.match(rule)]


def read_heartbeat(workspace: Workspace) -> list[str]:
    """The rules of the workspace's HEARTBEAT.md (or the global one); [] when there is none."""
    try:
        text = workspace.read_file(HEARTBEAT_FILE)
    except NotFoundError:
        return []
    return parse_rules(text)
