"""A hand-off that runs each callback at once on the caller's thread, for journal tests with no loop.

The journal's units (retention, seq jumps, kept jobs) test what is stored and folded, not when the loop
hears of it: this stands in for `LoopHandoff` with every way of handing over done inline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class InlineHandoff:
    """Every hand-off kind the journal uses, each a plain call now."""

    def __call__(self, callback: Callable[[Any], None], argument: Any) -> None:
        callback(argument)

    def at_once(self, callback: Callable[[Any], None], argument: Any) -> None:
        callback(argument)

    def with_next(self, callback: Callable[[Any], None], argument: Any) -> None:
        callback(argument)

    def soon(self, callback: Callable[[Any], None], argument: Any, last: bool = False) -> None:
        callback(argument)
