"""`npu-worker batch` against a real worker that is killed (-9) or stopped (SIGTERM) mid-batch and started
again on its port: the client re-attaches, and says so. It printed nothing meanwhile (its progress froze
for the whole re-attach), and the words of the worker's `ShuttingDown` line were never shown."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.batch_restart import batch_through_a_restart

pytestmark = pytest.mark.allow_blocking


@pytest.mark.parametrize(
    ("stop", "said"),
    [
        (signal.SIGTERM, (": the stream failed: ShuttingDown: the worker is shutting down; job ",)),
        # a killed worker's socket is closed by the kernel: as the client reads it, an end or a break
        (signal.SIGKILL, (": the stream ended before its done event;", ": the connection broke (")),
    ],
    ids=["sigterm", "kill-9"],
)
def test_batch_says_when_its_stream_is_lost_and_when_it_is_re_attached(
    tmp_path: Path, stop: signal.Signals, said: tuple[str, ...]
) -> None:
    returncode, lines = batch_through_a_restart(tmp_path, [], "s00 ok", stop, "stream lost", 20)
    assert returncode == 0, lines
    lost_lines = [line for line in lines if line.startswith("stream lost after event ")]
    assert len(lost_lines) == 1 and any(words in lost_lines[0] for words in said), lines
    assert "; re-attaching to job " in lost_lines[0], lines
    back = [i for i, line in enumerate(lines) if line.startswith("re-attached to job ")]
    assert len(back) == 1 and lines.index(lost_lines[0]) < back[0], lines
    assert any(line.startswith("s04 ok") for line in lines[back[0] :]), lines
