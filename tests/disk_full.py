"""A full disk without a small filesystem to mount: past a size, this process's writes fail."""

from __future__ import annotations

import contextlib
import resource
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def disk_full_past(limit: int) -> Iterator[None]:
    """Writes past `limit` bytes of a file fail (EFBIG, as ENOSPC would on a full disk), then room again."""
    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)
        signal.signal(signal.SIGXFSZ, handler)
