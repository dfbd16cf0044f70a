"""`npu-worker batch --poll` against a real worker killed (-9) mid-batch and started again on its port:
the client says the worker is lost while it retries its polls, then that it was answered again. It
printed nothing for the whole retry, until it gave up, where streaming said "stream lost"."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.batch_restart import batch_through_a_restart

pytestmark = pytest.mark.allow_blocking


def test_batch_poll_says_when_the_worker_is_lost_and_when_it_answers_again(tmp_path: Path) -> None:
    returncode, lines = batch_through_a_restart(
        tmp_path, ["--poll"], "1 done", signal.SIGKILL, "worker lost: ", 10
    )
    assert returncode == 0, lines
    lost_lines = [line for line in lines if line.startswith("worker lost: ")]
    assert len(lost_lines) == 1 and "cannot reach the worker: Connection refused" in lost_lines[0], lines
    assert "; polling job " in lost_lines[0] and lost_lines[0].endswith(" again\n"), lines
    back = [i for i, line in enumerate(lines) if line.startswith("answered about job ")]
    assert len(back) == 1 and lines.index(lost_lines[0]) < back[0], lines
