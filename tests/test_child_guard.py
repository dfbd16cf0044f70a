"""The per-module child guard (tests/child_guard.py) names a child a module left running, and not one
that ended, one being reaped within its grace, nor a zombie. Real processes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import child_guard
from tests.child_guard import child_processes, children_left, module_guard


def test_a_child_left_running_is_named_with_its_command_line_and_the_module(monkeypatch):
    monkeypatch.setattr(child_guard, "LEAKS_FAIL", True)
    before = child_processes()
    guard = module_guard("tests.test_leaky")
    next(guard)  # its snapshot, before the child
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        assert f"pid {child.pid} (" in children_left(before)
        assert "time.sleep(600)" in children_left(before)
        try:
            next(guard)
            raise RuntimeError("the guard said nothing")
        except AssertionError as said:
            assert str(said).startswith("tests.test_leaky left these child processes running: pid ")
    finally:
        child.kill()
        child.wait()
    assert children_left(before) == ""


def test_a_zombie_and_a_child_that_ends_within_the_grace_are_not_leaks():
    before = child_processes()
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    closing = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"])
    try:
        assert children_left(before) == ""  # the zombie at once; the other once it ended
    finally:
        zombie.wait()
        closing.wait()


def test_where_leaks_only_warn_the_module_is_named_in_a_warning(monkeypatch):
    monkeypatch.setattr(child_guard, "LEAKS_FAIL", False)
    guard = module_guard("tests.test_leaky")
    next(guard)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with pytest.warns(child_guard.ChildLeft, match=r"^tests\.test_leaky left these child processes"):
            next(guard, None)
    finally:
        child.kill()
        child.wait()
