"""Signals held off while a command tidies up after being stopped, acted on once it is done."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """A stopping signal (Ctrl-C, SIGTERM, SIGHUP) that comes meanwhile is remembered and sent again
    once the block ends, to the handler it would have met: a second Ctrl-C, or a SIGTERM after a
    Ctrl-C, that came while `prepare` removed its staging cut that removal short and left a copy of
    every model file in DST until the next prepare. One ignored stays ignored; off the main thread
    (where no handler may be set) nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda number, frame: came.append(number))
        for signum in STOPPING
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)
        for number in dict.fromkeys(came):  # each once, in the order they came
            signal.raise_signal(number)
