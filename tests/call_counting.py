"""Counting what a piece of work calls (the lane's and the child's call-count tests): counted, not
timed, so a test holds the work to its calls on any machine."""

from __future__ import annotations

import sys
from typing import Any


def c_calls_of(work: Any) -> list[str]:
    """The builtins (C functions and methods) `work()` calls, in order, by name."""
    called: list[str] = []

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            called.append(getattr(arg, "__name__", repr(arg)))

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return called
