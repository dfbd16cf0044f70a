"""The worker's own log: the file its standard output or error is, when the operator sent them to one.

`npu-worker serve > /tmp/worker.log` under the default root, the temp dir, put the log where callers
may write: a batch whose `output_path` named it (or `/proc/self/fd/1`) replaced it with a wav, and
the worker logged on into the replaced file's unlinked inode, its log lost for the operator."""

from __future__ import annotations

import os
import stat

STREAMS = (1, 2)  # standard output and error: where `serve` logs, and a redirect sends them


def is_own_log(path: str) -> bool:
    """`path` is the regular file the worker's standard output or error writes to (by identity: a
    link, a bind mount, another spelling); a pipe or a terminal (systemd's journal) is no file."""
    try:
        target = os.stat(path)
    except OSError:
        return False
    for stream in STREAMS:
        try:
            info = os.fstat(stream)
        except OSError:  # closed
            continue
        if stat.S_ISREG(info.st_mode) and os.path.samestat(info, target):
            return True
    return False
