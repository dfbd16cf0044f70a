"""The session-end guard's eyes (tests/leftovers.py, conftest's `no_child_left`): a child this process
started is named while it runs, waited for a while if asked, and not named once it has exited."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from tests.leftovers import child_processes, children_left

pytestmark = [
    pytest.mark.allow_blocking,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc"),
]


def test_a_running_child_is_named_and_one_that_exited_is_not():
    before = child_processes()
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        left = children_left(before)
        assert f"pid {child.pid} (" in left and "sys.stdin.read()" in left, left
        assert child.stdin is not None
        ending = threading.Timer(0.2, child.stdin.close)  # it ends while the guard waits for it
        ending.start()
        assert children_left(before, wait=60.0) == ""  # exited, not yet waited for: not running
        ending.join()
    finally:
        child.kill()
        child.wait()
    assert children_left(before) == ""
