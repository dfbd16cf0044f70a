"""The deadlines that kill an espeak child that stopped answering (`engine/espeak_deadlines.py`): one
that passes calls its callback, one cleared in time never does, and a nearer one armed while the
thread sleeps until a far one is not held to the far one."""

from __future__ import annotations

import threading

from npu_worker.engine.espeak_deadlines import Deadlines
from tests.timing import seconds


def test_a_passed_deadline_calls_back_and_a_cleared_one_never_does():
    deadlines = Deadlines()
    cleared, passed = threading.Event(), threading.Event()
    deadlines.clear(deadlines.arm(0.05, cleared.set))
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
        deadlines.clear(far_token)
