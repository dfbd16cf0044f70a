"""Signals sent to a handler meanwhile (`signals_handled_by`: the command line's), or held off while a
command tidies up after being stopped and acted on once it is done (`signals_held`); SIGTERM and SIGHUP
before `serve` listens or while `prepare` runs (`start_stops_heard`), and what each stop is said as
(`how_stopped`)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
HEARD_AT_START = (signal.SIGTERM, signal.SIGHUP)


class StartTerminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (`signum`) before `run` takes it, or while `prepare` runs: the start unwinds as
    for a Ctrl-C (the state dir, the child, prepare's staging)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _start_terminated(signum: int, frame: Any) -> None:
    # one is enough (coreutils `timeout` sends two; a closed terminal SIGHUP, then perhaps SIGTERM): a
    # second would cut the unwinding of the first
    for ignored in HEARD_AT_START:
        signal.signal(ignored, signal.SIG_IGN)
    raise StartTerminated(signum)


def hup_unless_ignored() -> tuple[signal.Signals, ...]:
    """SIGHUP, unless whoever started us ignored it (`nohup`: that asked for it to stay ignored)."""
    return () if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else (signal.SIGHUP,)


@contextlib.contextmanager
def start_stops_heard() -> Iterator[Callable[[], list[int]]]:
    """SIGTERM and SIGHUP raise `StartTerminated` meanwhile (`serve`'s start, the command line being
    read, `prepare`); a SIGHUP ignored by whoever started it stays ignored. Yields `hand_over`: the
    command line calls it before it runs `serve` or `prepare`, whose own `start_stops_heard` then
    raises the first that came in between (there was a moment on the default action: the process
    ended at once with no word, -15 or -1)."""
    signums = (signal.SIGTERM, *hup_unless_ignored())
    with signals_handled_by(_start_terminated, signums):
        if _came_meanwhile:
            _start_terminated(_came_meanwhile.pop(0), None)
        yield lambda: _hand_over(signums)


_came_meanwhile: list[int] = []  # SIGTERM and SIGHUP remembered once handed over


def _remembered(signum: int, frame: Any) -> None:
    _came_meanwhile.append(signum)


def _hand_over(signums: Sequence[int]) -> list[int]:
    """Remember `signums` from now (until the block that took them ends) instead of raising them;
    the list of those remembered and not yet raised: once the command's own handling has ended,
    those that came after it."""
    _came_meanwhile.clear()
    if threading.current_thread() is threading.main_thread():
        for signum in signums:
            signal.signal(signum, _remembered)
    return _came_meanwhile


def stops_ignored_after(loop: asyncio.AbstractEventLoop, signums: Sequence[int]) -> None:
    """Once `server.run` has drained: `signums` taken off `loop` and ignored (main thread only). The
    loop's close put their defaults back: a SIGTERM or SIGHUP as `serve` let go of its state dir and
    children ended it at once (-15, -1) after a finished drain, a Ctrl-C was a traceback (-2) that cut
    that short. Blocked meanwhile, so none meets a default in between (one pending when ignored is dropped)."""
    if threading.current_thread() is not threading.main_thread():
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, signums)
    try:
        for signum in signums:
            loop.remove_signal_handler(signum)
            signal.signal(signum, signal.SIG_IGN)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def stops_dropped() -> None:
    """Once a command has returned: Ctrl-C, SIGTERM and SIGHUP blocked (main thread only), so its
    exit status stands; one pending then is dropped at the process's exit. One in the instant after
    the command ended turned its status into 143 or 129 with no line, or, once the command line's
    handlers were put back, met the default action (-15, -1). Those remembered meanwhile
    (`_hand_over`) are forgotten. `stops_let_through` ends it for a caller that goes on."""
    if threading.current_thread() is threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    _came_meanwhile.clear()


def stops_ignored_to_the_end() -> None:
    """After `stops_dropped`, in a process that ends with the command (the console script): the stops
    ignored as well, process-wide, once the command line's handlers are back: another thread, which
    does not block them, would meet their default action (-15, -1) while the interpreter ends."""
    if threading.current_thread() is threading.main_thread():
        for signum in STOPPING:
            signal.signal(signum, signal.SIG_IGN)


def stops_let_through() -> None:
    """After `stops_dropped`, in a program that goes on (a test calling the command line's `main`):
    those pending are dropped, and the stops unblocked."""
    if threading.current_thread() is not threading.main_thread():
        return
    while signal.sigtimedwait(STOPPING, 0) is not None:
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)


def how_stopped(stopped: KeyboardInterrupt) -> tuple[str, int]:
    """The word for what stopped a command and its exit status (128 + the signal's number)."""
    if isinstance(stopped, StartTerminated):
        if stopped.signum == signal.SIGHUP:
            return "hung up", 128 + signal.SIGHUP
        return "terminated", 128 + signal.SIGTERM
    return "interrupted", 128 + signal.SIGINT


@contextlib.contextmanager
def signals_handled_by(handler: Callable[[int, Any], None], signums: Sequence[int]) -> Iterator[None]:
    """`signums` go to `handler` meanwhile (in the main thread only: only it may set a handler); the
    handlers before are put back after. `serve`'s start (`start_stops_heard`, until `run`'s loop
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
