"""A batch section's default output named at admission without pathlib's joins, the same names (issue 25,
stop 62: benchmarks/SERVER_OVERHEAD.md counts it with `call_counts.py --batches`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from npu_worker.jobs.model import new_job_id
from npu_worker.jobs.store import JobStore
from npu_worker.paths import OUTPUTS_DIR


def test_a_batchs_default_outputs_are_named_without_pathlib(tmp_path):
    """A 39-section batch with no `output_path` names 39 files at its admission: pathlib's `parent` and
    three joins were ≈ 25 Python calls a section on the admitting thread."""
    store = JobStore(tmp_path / "state")
    job_id = new_job_id()
    pathlib_calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith("pathlib.py"):
            pathlib_calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        names = [store.default_output(job_id, idx) for idx in range(39)]
    finally:
        sys.setprofile(None)
    assert pathlib_calls == []
    assert names == [str(tmp_path / "state" / OUTPUTS_DIR / job_id / f"s{idx:02d}.wav") for idx in range(39)]


def test_a_default_output_is_spelt_as_pathlib_spells_it_for_any_id(tmp_path):
    """The names a kept job's removal compares with its sections' stored paths: the same text as before
    for a hex id, an id from an older version, and one no job has (pathlib drops `.` and an empty part)."""
    for state in (tmp_path / "state", Path("relative/state")):
        store = JobStore(state)
        for job_id in (new_job_id(), "0123456789abcdef", "legacyJob7", "", ".", "a.b", "dir/name", "잡"):
            for idx in (0, 7, 123):
                expected = str(state / OUTPUTS_DIR / job_id / f"s{idx:02d}.wav")
                assert store.default_output(job_id, idx) == expected
