"""The worker's own log: the file its standard output or error is, when the operator sent them to one.

`npu-worker serve > /tmp/worker.log` under the default root, the temp dir, put the log where callers
may write: a batch whose `output_path` named it (or `/proc/self/fd/1`) replaced it with a wav, and
the worker logged on into the replaced file's unlinked inode, its log lost for the operator."""

from __future__ import annotations

import os
import stat

STREAMS = (1, 2)  # standard output and error: where `serve` logs, and a redirect sends them


def is_own_log(path: str) -> bool:
    """The entry at `path` (a link there is not followed: the write replaces the link, not what it
    names) is the regular file the worker's standard output or error writes to, by identity (a hard
    link, a bind mount, another spelling). A pipe or a socket (systemd's journal, docker) is no file:
    then `path` is not looked at (a stat a write, on the engine thread: `test_path_checks_cost`)."""
    logs = []
    for stream in STREAMS:
        try:
            info = os.fstat(stream)
        except OSError:  # closed
            continue
        if stat.S_ISREG(info.st_mode):
            logs.append(info)
    if not logs:
        return False
    try:
        target = os.lstat(path)
    except OSError:
        return False
    return any(os.path.samestat(log, target) for log in logs)
