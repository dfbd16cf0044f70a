"""`npu-worker make-test-model DIR`'s lock against two builds at once. It was a `flock` on DIR itself:
DIR is 0755, so any local user could open it read-only, hold the lock, and refuse every build ("another
make-test-model is writing DIR"). It is now `DIR/.make-test-model.lock`, a 0600 file in a folder only its
user can write, removed at the build's end. A filesystem that takes no `flock` (ENOLCK, EOPNOTSUPP:
some NFS mounts) builds with a warning, as it did before the lock, where the folder lock refused it."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import tempfile

import pytest

from npu_worker.testing import make_test_model
from tests.timing import seconds

pytest.importorskip("onnx")

NOBODY = 65534

# Holds an exclusive flock on the folder argv[1] as user nobody (opened before dropping root: the
# test's tmp_path is not reachable by nobody, a 0755 model folder in a home or /srv is), then waits.
HOLD_THE_FOLDER = f"""
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.setgid({NOBODY}); os.setuid({NOBODY})
fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", flush=True)
sys.stdin.readline()
"""

# `make-test-model argv[1]` run as user nobody (root's process drops to it first).
BUILD_AS_NOBODY = f"""
import os, sys
from npu_worker.testing import make_test_model
os.setgid({NOBODY}); os.setuid({NOBODY})
sys.exit(make_test_model.main([sys.argv[1]]))
"""


def build_as_nobody(out: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BUILD_AS_NOBODY, out], capture_output=True, text=True, timeout=seconds(60)
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another local user needs root")
def test_another_user_holding_a_flock_on_the_folder_refuses_no_build(tmp_path, capsys):
    out = tmp_path / "model"
    out.mkdir(mode=0o755)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_FOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        code = make_test_model.main([str(out), "--precision", "fp32"])
    finally:
        holder.kill()
        holder.wait(seconds(30))
    err = capsys.readouterr().err
    assert (code, err) == (0, ""), err
    assert (out / "fm_decoder.onnx").is_file()
    assert not (out / make_test_model.LOCK).exists(), "the lock file was left in the model folder"


def test_a_filesystem_without_flock_builds_with_a_warning(tmp_path, capsys, monkeypatch):
    """The errno is made up at the boundary only: `flock` on the lock file answers ENOLCK, as an NFS
    mount without a lock manager does; the code up to it and after it is the command's own."""
    out = tmp_path / "model"
    real_flock = fcntl.flock

    def no_locks_here(descriptor: int, operation: int) -> None:
        if os.readlink(f"/proc/self/fd/{descriptor}").startswith(str(out)):
            raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))
        real_flock(descriptor, operation)

    monkeypatch.setattr(fcntl, "flock", no_locks_here)
    assert make_test_model.main([str(out), "--precision", "fp32"]) == 0
    err = capsys.readouterr().err
    assert err == (
        f"npu-worker make-test-model: warning: {out}'s filesystem takes no lock (No locks available): two"
        " builds at once are not kept apart\n"
    ), err
    assert (out / "fm_decoder.onnx").is_file() and not (out / make_test_model.LOCK).exists()


@pytest.mark.parametrize("planted", ["world-writable", "another user's"])
def test_a_folder_others_can_write_in_is_refused_before_any_lock_file_is_made(tmp_path, capsys, planted):
    """A local user can plant a link at the lock's name in such a folder (here one to a file of ours):
    refused before the lock file is opened, nothing made there, the link's target untouched."""
    if planted == "another user's" and os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    out = tmp_path / "model"
    out.mkdir()
    ours = tmp_path / "ours.txt"
    ours.write_text("ours\n")
    (out / make_test_model.LOCK).symlink_to(ours)
    if planted == "world-writable":
        out.chmod(0o777)
    else:
        os.chown(out, 12345, 12345)
    assert make_test_model.main([str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"npu-worker make-test-model: {out}: ") and err.endswith(
        "; use a folder only this user can change\n"
    ), err
    assert sorted(path.name for path in out.iterdir()) == [make_test_model.LOCK]
    assert ours.read_text() == "ours\n" and oct(ours.stat().st_mode & 0o777) == "0o644"


def test_a_link_at_the_locks_name_in_our_own_folder_is_never_followed(tmp_path, capsys):
    out = tmp_path / "model"
    out.mkdir()
    ours = tmp_path / "ours.txt"
    ours.write_text("ours\n")
    (out / make_test_model.LOCK).symlink_to(ours)
    assert make_test_model.main([str(out)]) == 2
    assert capsys.readouterr().err == (
        f"npu-worker make-test-model: {out / make_test_model.LOCK} is a symbolic link, not the lock file a"
        " build makes (never followed): remove it\n"
    )
    assert ours.read_text() == "ours\n" and (out / make_test_model.LOCK).is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another local user needs root")
def test_a_folder_this_user_cannot_write_in_is_named_with_the_fix(capsys):
    """Into a folder of another user's it said `[Errno 13] Permission denied: '.make-test-model.lock'`:
    the lock file, which the caller never named, and not the folder nor what to do."""
    with tempfile.TemporaryDirectory() as base:  # reachable by nobody (the test's tmp_path is not)
        os.chmod(base, 0o755)
        out = os.path.join(base, "model")
        os.mkdir(out, 0o755)  # root's: nobody may read it, not write in it
        done = build_as_nobody(out)
        assert (done.returncode, done.stderr) == (
            2,
            f"npu-worker make-test-model: {out} is not writable by this user (Permission denied): give a"
            " folder this user can write in\n",
        )
        assert os.listdir(out) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another local user needs root")
def test_a_lock_file_another_user_left_in_our_folder_is_named_not_the_folder(capsys):
    """A `sudo make-test-model` killed mid-build leaves root's 0600 lock file in the user's own folder: the
    next build said the folder `is not writable by this user`, which it is (the user can remove the file)."""
    with tempfile.TemporaryDirectory() as base:
        os.chmod(base, 0o755)
        out = os.path.join(base, "model")
        os.mkdir(out, 0o755)
        os.chown(out, NOBODY, NOBODY)  # nobody's own folder, root's file left in it
        lock = os.path.join(out, make_test_model.LOCK)
        os.close(os.open(lock, os.O_CREAT | os.O_WRONLY, 0o600))
        done = build_as_nobody(out)
        assert (done.returncode, done.stderr) == (
            2,
            f"npu-worker make-test-model: {lock} is a file this user cannot open (Permission denied; another"
            " user's build left it): remove it\n",
        )
        assert os.listdir(out) == [make_test_model.LOCK]
