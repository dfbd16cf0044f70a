"""What an espeak child's end means to the caller whose section it was making: the text's fault (a
crash while it read the text: `UnparsableText`, a 4xx), the worker's (`EngineError`), or none at all
(`ChildGone`: it had ended before the request reached it, so another child makes it)."""

from __future__ import annotations

import signal

from ..errors import UnparsableText
from ..protocol import EngineError, WorkerError
from .espeak_child import Failure

# A child that dies of one of these while it reads a request's text crashed on that text (espeak-ng 1.52
# aborts on "s'" * 100): the text's fault, a 4xx. One killed from outside (SIGKILL: the OOM killer, a
# person) or that ends otherwise is the worker's, an EngineError.
CRASH_SIGNALS = frozenset((signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL))
_NAMED: dict[str, type[WorkerError]] = {kind.name: kind for kind in WorkerError.__subclasses__()}


class ChildGone(Exception):
    """The child had ended before a request reached it (its stdin has no reader: the request's write
    failed with EPIPE), so another child can make it: a child acts on a request only once it has read
    the whole frame (one longer than the pipe it may have read in part), so its text never ran there."""


def child_failure(why: str, status: int | None, overdue: str | None, reading: bool) -> WorkerError:
    """The error of a child whose pipe broke (`why`), with its exit `status`; `overdue`: what it did not
    answer in time, had a deadline killed it; `reading`: it was reading a request's text."""
    if overdue is not None:
        return EngineError(
            f"espeak-ng's process did not answer {overdue} (it was stopped or hung), so it was "
            "killed; another starts for the next request"
        )
    if reading and status is not None and -status in CRASH_SIGNALS:
        crash = signal.Signals(-status).name
        return UnparsableText(
            f"espeak-ng's process failed on this text (it crashed: {crash}, a bug of espeak-ng's "
            "parser that this text triggers); change the text, the worker speaks on"
        )
    return EngineError(f"espeak-ng's process failed ({why}; exit status {status})")


def child_error(failure: Failure) -> WorkerError:
    """The child's error as the worker's own (same name, same message), or an EngineError naming it."""
    known = _NAMED.get(failure.type)
    return known(failure.message) if known is not None else EngineError(f"{failure.type}: {failure.message}")
