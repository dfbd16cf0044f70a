"""How the engine reads a caller's reference wav and its transcript as a section runs: a file the
caller named that the worker may not read that way is the caller's mistake, `RefWavNotAllowed`."""

from __future__ import annotations

import errno
from collections.abc import Sequence

from .files import LinkRefused, read_beneath
from .protocol import RefWavNotAllowed

# What the caller put at the name: a link, a FIFO, socket or folder, a file the worker's user may not
# read, a name too long. A full file table or an I/O error stays the worker's own (an EngineError).
CALLERS_MISTAKES = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EINVAL,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.ENXIO,
        errno.ENODEV,
        errno.ENAMETOOLONG,
    }
)


class CallersFileGone(FileNotFoundError):
    """A caller's file missing at the engine's read (`read_callers_file`): removed after admission
    checked it, their mistake; still a FileNotFoundError (a missing transcript is no transcript). A
    stored voice missing is not one: the operator's files, or an upload no DELETE may remove in use."""


def read_callers_file(path: str, roots: Sequence[str], limit: int) -> bytes:
    """The bytes of the caller's file at `path` beneath `roots` (`files.read_beneath`: no link
    followed, one name, never waiting on a FIFO). A symlinked, FIFO or unreadable transcript was an
    OSError the engine said as `EngineError: reference ... has no transcript: put it in ref.txt beside
    the wav` (a 500 on /v1/audio/speech), of a transcript that was there; a hard-linked one was already
    this 400, as the same wav is at admission. A missing file stays FileNotFoundError (no transcript)."""
    try:
        return read_beneath(path, roots, limit, own=False, one_name=True)
    except OSError as exc:  # (a missing file, ENOENT, is neither: it passes as it is)
        if isinstance(exc, LinkRefused) or exc.errno in CALLERS_MISTAKES:
            raise RefWavNotAllowed(f"{path}: {exc.strerror or exc}") from None
        if isinstance(exc, FileNotFoundError):
            raise CallersFileGone(exc.errno, exc.strerror, path) from None
        raise
