"""The deadlines that kill an espeak child that stopped answering (`engine/espeak_deadlines.py`, an instance
of `deadline_thread.Watchdog`): one
that passes calls its callback, one cleared in time never does, and a nearer one armed while the
thread sleeps until a far one is not held to the far one."""

from __future__ import annotations

import os
import signal
import threading
import time

from npu_worker.deadline_thread import Watchdog as Deadlines
from tests.timing import seconds


def test_a_passed_deadline_calls_back_and_a_cleared_one_never_does():
    deadlines = Deadlines()
    cleared, passed = threading.Event(), threading.Event()
    deadlines.arm(0.05, cleared.set).cancel()
    deadlines.arm(0.1, passed.set)  # later than the cleared one: once it has run, that one's time is past
    assert passed.wait(seconds(5))
    assert not cleared.is_set()


def test_a_nearer_deadline_is_not_held_to_the_far_one_the_thread_sleeps_until():
    deadlines = Deadlines()
    far, near = threading.Event(), threading.Event()
    far_token = deadlines.arm(3600, far.set)
    deadlines.arm(0.05, near.set)
    try:
        assert near.wait(seconds(5)), "the near deadline waited for the far one"
        assert not far.is_set()
    finally:
        far_token.cancel()


def test_a_callback_that_raises_leaves_later_deadlines_served():
    """The thread serves every deadline of the process: one callback's error ended it, and a stopped
    child was waited on for ever again."""
    deadlines = Deadlines()
    failed, later = threading.Event(), threading.Event()

    def fail() -> None:
        failed.set()
        raise OSError("a kill that failed")

    deadlines.arm(0.01, fail)
    assert failed.wait(seconds(5))
    deadlines.arm(0.01, later.set)
    assert later.wait(seconds(5)), "a callback's error ended the deadlines' thread"


def test_a_forked_child_has_its_deadlines_served():
    """The thread is not forked with the process: a child that found one started waited for ever."""
    deadlines = Deadlines()
    deadlines.arm(3600, lambda: None).cancel()  # the parent's thread is started
    pid = os.fork()
    if pid == 0:  # the child: no pytest here, only its exit status
        fired = threading.Event()
        deadlines.arm(0.01, fired.set)
        os._exit(0 if fired.wait(seconds(5)) else 1)
    deadline = time.monotonic() + seconds(10)
    while (ended := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # (a child that hangs, on a lock held at the fork, must not hang the test)
    if ended[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert ended[0] == pid and os.waitstatus_to_exitcode(ended[1]) == 0, "its deadline never ran"
