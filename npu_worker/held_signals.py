"""Signals sent to a handler meanwhile (`signals_handled_by`: the command line's), or held off while a
command tidies up after being stopped and acted on once it is done (`signals_held`)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_handled_by(handler: Callable[[int, Any], None], signums: Sequence[int]) -> Iterator[None]:
    """`signums` go to `handler` meanwhile (in the main thread only: only it may set a handler); the
    handlers before are put back after. `serve`'s start (`cli._start_terminated`, until `run`'s loop
    takes the signals) and the client commands each raise their own exception."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in signums}
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """A stopping signal (Ctrl-C, SIGTERM, SIGHUP) that comes meanwhile is remembered and sent again
    once the block ends, to the handler it would have met: a second Ctrl-C, or a SIGTERM after a
    Ctrl-C, that came while `prepare` removed its staging cut that removal short and left a copy of
    every model file in DST until the next prepare. One ignored stays ignored; off the main thread
    (where no handler may be set) nothing is held."""
    came: list[int] = []
    stopping = [signum for signum in STOPPING if signal.getsignal(signum) is not signal.SIG_IGN]
    try:
        with signals_handled_by(lambda number, frame: came.append(number), stopping):
            yield
    finally:  # (the handlers before are back)
        for number in dict.fromkeys(came):  # each once, in the order they came
            signal.raise_signal(number)
