"""The background checks' answers (tests/static_background.py): a job that dies without its answer."""

from __future__ import annotations

import os
import signal

import pytest

from tests import static_background
from tests.timing import seconds


@pytest.mark.allow_blocking
def test_a_job_killed_before_its_answer_is_said_at_once_with_its_exit_status(tmp_path, monkeypatch):
    """The OOM killer's SIGKILL of a job: the test reading its answer waited its whole timeout (600 s)
    and then said only that no answer came."""
    monkeypatch.setattr(static_background, "_started", [])  # (this session's own jobs are not these)
    monkeypatch.setattr(static_background, "_held", [])
    monkeypatch.setenv(static_background.FOLDER_VARIABLE, str(tmp_path))
    static_background.start(tmp_path, [static_background.MYPY[0]])
    try:
        os.killpg(static_background._started[0].pid, signal.SIGKILL)
        with pytest.raises(AssertionError) as said:
            static_background.answer(static_background.MYPY[0], seconds(30))  # (it was the whole 30 s)
    finally:
        static_background.stop()
    assert "ended with exit status -9, no answer" in str(said.value), str(said.value)
