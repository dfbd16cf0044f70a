"""A batch section's default output written without pathlib's folder calls, the folder made and checked as
before (issue 25, stop 62: benchmarks/SERVER_OVERHEAD.md counts it with `call_counts.py --batches`)."""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

import pytest

from npu_worker.paths import OUTPUTS_DIR, PathPolicy
from npu_worker.state_dir import private_folder


def test_a_default_output_is_written_without_pathlib_and_with_the_outputs_folder_worked_out_once(tmp_path):
    """The finisher writes each section's default output through `write_output`: its outputs folder made
    private by pathlib's `mkdir`, `is_dir` and `stat` (≈ 14 Python calls), and `outputs_root` joined five
    times, a section."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    policy = PathPolicy(roots=(str(tmp_path / "out"),), state_dir=str(state))
    job_folder = os.path.join(policy.outputs_root, "0123456789abcdef")
    policy.write_output(os.path.join(job_folder, "s00.wav"), b"RIFF first")
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.endswith(("pathlib.py", "posixpath>")):
            calls.append(f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}")
        elif event == "call" and frame.f_code.co_name == "outputs_root":
            calls.append("outputs_root")

    sys.setprofile(profile)
    try:
        for idx in range(1, 4):
            policy.write_output(os.path.join(job_folder, f"s{idx:02d}.wav"), b"RIFF %d" % idx)
    finally:
        sys.setprofile(None)
    assert [c for c in calls if c.startswith("pathlib") or c == "outputs_root"] == []
    for idx in range(4):
        assert os.path.getsize(os.path.join(job_folder, f"s{idx:02d}.wav")) > 4
    assert stat.S_IMODE(os.stat(policy.outputs_root).st_mode) & 0o022 == 0
    assert policy.outputs_root == os.path.join(str(state), OUTPUTS_DIR)


def test_a_private_folder_is_made_with_its_parents_taken_when_there_and_refused_when_a_file(tmp_path):
    """As pathlib's `mkdir(mode=0o750, parents=True, exist_ok=True)` did: parents made, an existing folder
    (or a link to one) taken and its group's and others' write taken away, a file there refused."""
    deep = tmp_path / "a" / "b" / "c"
    private_folder(deep)
    assert deep.is_dir() and stat.S_IMODE(deep.stat().st_mode) & 0o022 == 0
    os.chmod(deep, 0o777)
    private_folder(str(deep))
    assert stat.S_IMODE(deep.stat().st_mode) == 0o755
    (tmp_path / "link").symlink_to(deep)
    private_folder(tmp_path / "link")
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(FileExistsError):
        private_folder(tmp_path / "file")
    with pytest.raises(NotADirectoryError):
        private_folder(tmp_path / "file" / "below")
