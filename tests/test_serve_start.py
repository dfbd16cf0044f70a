"""`npu-worker serve` that cannot start says why in one line and exits 1, instead of a traceback: an
address already taken, a state directory that cannot be one."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from npu_worker import files
from tests.timing import seconds

REPO = Path(__file__).resolve().parents[1]


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "npu_worker.cli", "serve", *args]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds(60))


def test_a_port_already_taken_is_one_line_and_exit_1(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve("--port", str(port), "--state-dir", str(tmp_path / "state"))
    assert done.returncode == 1, done.stderr
    assert f"npu-worker serve: cannot listen on 127.0.0.1:{port}: " in done.stderr
    assert "address already in use" in done.stderr.lower() and "Traceback" not in done.stderr
    assert "engine ready" not in done.stderr  # said before the engine loads and jobs resume


def test_a_state_directory_that_is_a_file_or_cannot_be_made_is_one_line_and_exit_1(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    for state, reason in ((a_file, "Not a directory"), (a_file / "state", "Not a directory")):
        done = serve("--port", "0", "--state-dir", str(state))
        assert done.returncode == 1, done.stderr
        assert f"npu-worker serve: cannot use the state directory {state}: {reason}" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_state_directory_others_can_write_in_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = serve("--port", "0", "--state-dir", str(shared))
    assert done.returncode == 1, done.stderr
    assert f"cannot use the state directory {shared}: others can write in it (mode 777)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_state_directory_of_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o700)
    os.chown(planted, 65534, 65534)
    done = serve("--port", "0", "--state-dir", str(planted))
    assert done.returncode == 1, done.stderr
    assert "belongs to another user (uid 65534)" in done.stderr and "Traceback" not in done.stderr


def test_a_state_directory_another_user_could_replace_is_refused(tmp_path):
    """Whoever owns a folder above the state dir (or a link on the way), or may write in one that is not
    sticky, could swap the state dir while the worker runs: its cache and job logs would be theirs."""
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    theirs = tmp_path / "theirs"
    (theirs / "state").mkdir(parents=True, mode=0o700)
    os.chown(theirs, 65534, 65534)
    open_to_all = tmp_path / "open"
    (open_to_all / "state").mkdir(parents=True, mode=0o700)
    open_to_all.chmod(0o777)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    (sticky / "target").mkdir(mode=0o700)
    (sticky / "link").symlink_to(sticky / "target")
    os.lchown(sticky / "link", 65534, 65534)
    refusals = {
        theirs / "state": f"{theirs} belongs to another user (uid 65534)",
        open_to_all / "state": f"others can write in {open_to_all} (mode 777, not sticky)",
        sticky / "link": f"{sticky / 'link'} belongs to another user (uid 65534)",
    }
    for state, reason in refusals.items():
        done = serve("--port", "0", "--state-dir", str(state))
        assert done.returncode == 1, done.stderr
        assert f"cannot use the state directory {state}: {reason}" in done.stderr, done.stderr
    mine = sticky / "mine"  # a folder of its own in a sticky one (the temp dir) is fine
    mine.mkdir(mode=0o700)
    assert files.replaceable_by_others(mine) is None


def test_a_state_directory_another_worker_serves_from_is_refused(tmp_path):
    """Two workers on one state dir would both resume the same interrupted jobs into one log."""
    state = tmp_path / "state"
    first = subprocess.Popen(
        [sys.executable, "-m", "npu_worker.cli", "serve", "--port", "0", "--state-dir", str(state)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stderr is not None
        for line in first.stderr:  # the first one holds the directory once it says where it listens
            if "listening on" in line:
                break
        done = serve("--port", "0", "--state-dir", str(state))
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip() == (
            f"npu-worker serve: the state directory {state} is in use by another npu-worker serve "
            "(each worker, and each node of a cluster, needs its own --state-dir)"
        )
    finally:
        first.terminate()
        first.wait(timeout=seconds(30))
    assert first.returncode == 0


def test_a_state_directory_the_worker_cannot_write_in_is_refused(tmp_path):
    """One that is read-only was accepted: /ready said ready while every batch got 503 StateUnavailable."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    if subprocess.run(["chattr", "+i", str(state)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i (an immutable folder, unwritable even for root) is not available here")
    try:
        done = serve("--port", "0", "--state-dir", str(state))
    finally:
        subprocess.run(["chattr", "-i", str(state)], check=True)
    assert done.returncode == 1, done.stderr
    assert f"cannot use the state directory {state}: the worker cannot write in it" in done.stderr
