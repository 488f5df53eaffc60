"""The cron scheduler (with a fake clock) and the HEARTBEAT.md rules."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from curate_support import FakeClock

from memdir.curate import Scheduler, read_heartbeat
from memdir.errors import ConfigError
from memdir.workspace import Workspace

START = datetime(2026, 11, 22, 1, 0, tzinfo=UTC)


def test_default_cron_runs_at_two_and_reschedules() -> None:
    clock = FakeClock(START)
    scheduler = Scheduler(clock=clock)
    runs: list[datetime] = []
    first = scheduler.add_job("consolidate", lambda: runs.append(clock()))
    assert first == datetime(2026, 11, 22, 2, 0, tzinfo=UTC)
    assert scheduler.run_due(START + timedelta(minutes=59)) == []
    done = scheduler.run_due(START + timedelta(hours=1))
    assert [(r.name, r.due, r.ok) for r in done] == [("consolidate", first, True)]
    assert len(runs) == 1
    assert scheduler.next_runs() == {"consolidate": datetime(2026, 11, 23, 2, 0, tzinfo=UTC)}
    assert scheduler.run_due(START + timedelta(hours=2)) == []  # not twice for one time


def test_missed_runs_run_once() -> None:
    scheduler = Scheduler(clock=FakeClock(START))
    count = []
    scheduler.add_job("hourly", lambda: count.append(1), cron="0 * * * *")
    scheduler.run_due(START + timedelta(hours=5, minutes=30))
    assert count == [1]
    assert scheduler.next_runs()["hourly"] == START + timedelta(hours=6)


def test_a_failing_job_is_logged_and_the_others_keep_going(
    caplog: pytest.LogCaptureFixture,
) -> None:
    scheduler = Scheduler(clock=FakeClock(START))
    ran = []

    def broken() -> None:
        raise RuntimeError("disk on fire")

    scheduler.add_job("broken", broken, cron="*/5 * * * *")
    scheduler.add_job("fine", lambda: ran.append(1), cron="*/5 * * * *")
    runs = scheduler.run_due(START + timedelta(minutes=5))
    assert {r.name: r.error for r in runs} == {
        "broken": "RuntimeError: disk on fire",
        "fine": None,
    }
    assert ran == [1]
    assert "scheduled job 'broken'" in caplog.text
    assert scheduler.run_due(START + timedelta(minutes=10))[0].name == "broken"


def test_invalid_cron_is_a_config_error() -> None:
    scheduler = Scheduler(clock=FakeClock(START))
    with pytest.raises(ConfigError, match="'61 \\* \\* \\* \\*' is not valid"):
        scheduler.add_job("bad", lambda: None, cron="61 * * * *")


def test_thread_runs_due_jobs_and_stops() -> None:
    clock = FakeClock(START)
    scheduler = Scheduler(clock=clock, max_sleep_s=0.05)
    fired = threading.Event()
    scheduler.add_job("tick", fired.set, cron="* * * * *")
    scheduler.start()
    try:
        assert scheduler.running
        assert not fired.wait(0.2)  # not due yet on the fake clock
        clock.now = START + timedelta(minutes=1)
        assert fired.wait(5)
    finally:
        scheduler.stop()
    assert not scheduler.running


def test_read_heartbeat_rules(workspace: Workspace) -> None:
    global_space = Workspace(workspace.home)
    global_space.seed()
    rules = read_heartbeat(workspace)  # the agent falls back to the global file
    assert rules[0] == (
        "Work through the checklist below and nothing else. Don't resume old "
        "conversations or invent tasks."
    )
    assert any("HEARTBEAT_OK" in rule for rule in rules)
    assert not any(rule.startswith("(for example") for rule in rules)
    (workspace.root / "HEARTBEAT.md").write_text(
        "# Rules\n\nIntro prose.\n\n- Check the backups\n  every night\n1. Ping Bob\n"
        "<!-- - hidden -->\n"
    )
    assert read_heartbeat(workspace) == ["Check the backups every night", "Ping Bob"]


def test_read_heartbeat_without_a_file(workspace: Workspace) -> None:
    assert read_heartbeat(workspace) == []
