"""The sync client's deadlines: one thread for the process, a heap that a line-at-a-time peer cannot fill."""

from __future__ import annotations

import threading

from npu_worker.deadline_thread import COMPACT_AFTER, Watchdog


def test_an_action_runs_at_its_deadline_and_a_cancelled_one_never():
    watchdog = Watchdog()
    ran: list[str] = []
    done = threading.Event()
    watchdog.arm(0.2, lambda: ran.append("late"))
    watchdog.arm(0.05, lambda: ran.append("soon"))
    watchdog.arm(0.1, lambda: ran.append("cancelled")).cancel()
    watchdog.arm(0.3, done.set)
    assert done.wait(5)
    assert ran == ["soon", "late"]


def test_cancelled_deadlines_do_not_pile_up_for_the_read_timeouts_length():
    """Each stream line arms a deadline of the read timeout (120 s) and cancels it when the line is in:
    a peer sending lines as fast as it can kept every one of them until its 120 s had passed."""
    watchdog = Watchdog()
    for _ in range(20 * COMPACT_AFTER):
        watchdog.arm(120.0, lambda: None).cancel()
    assert len(watchdog) <= 2 * COMPACT_AFTER + 2


def test_a_failing_action_leaves_the_thread_serving_the_next_deadline():
    watchdog = Watchdog()
    failing, done = threading.Event(), threading.Event()

    def fail() -> None:
        failing.set()
        raise RuntimeError("boom")

    watchdog.arm(0.01, fail)
    assert failing.wait(5)  # the failure came first (0.1 s of sleep could pass before it, under load)
    watchdog.arm(0.01, done.set)
    assert done.wait(5)


def test_one_thread_serves_every_deadline():
    watchdog = Watchdog()
    before = threading.active_count()
    armed = [watchdog.arm(60.0, lambda: None) for _ in range(200)]
    assert threading.active_count() <= before + 1
    for each in armed:
        each.cancel()
