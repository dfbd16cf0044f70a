"""What the scheduler reports while it works, for whoever counts it (the Prometheus metrics).

The scheduler calls these from its worker thread (and `event` also from admission threads); the base
class ignores everything, so the scheduler works the same with no observer attached. Implementations
must be quick and thread-safe and must not raise.
"""

from __future__ import annotations

from ..protocol import Event
from .model import Job


class SchedulerObserver:
    """No-op hooks; `app` installs a metrics subclass as `scheduler.observer`."""

    def event(self, job: Job, event: Event) -> None:
        """`event` was appended to `job`'s log (start, progress, error, done)."""

    def first_audio(self, job: Job, seconds: float) -> None:
        """`job` produced its first audio `seconds` after it was submitted (TTFA)."""

    def section_ran(self, job: Job, seconds: float) -> None:
        """The engine spent `seconds` on one section of `job` (busy time; cached sections too)."""
