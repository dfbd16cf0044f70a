"""`npu-worker prepare` into a folder it cannot write (a read-only --out or parent, a manifest that
cannot be written): one line naming what could not be made, where, and what to do, never the system's
bare "[Errno 13] Permission denied: '...'"."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.engine.zipvoice import prepare, prepared
from tests.zipvoice.test_providers import qnn

PREPARE = [sys.executable, "-m", "npu_worker.cli", "prepare", "--buckets", "63", "--optimization", "fast"]
pytestmark = qnn


def as_a_user_permissions_bind() -> list[str]:
    """A command prefix under which folder modes bind this process: none for a user, for root the
    capabilities that override them dropped (root writes in a 0555 folder otherwise)."""
    if os.geteuid() != 0:
        return []
    drop = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    if shutil.which("setpriv") is None or subprocess.run([*drop, "true"]).returncode != 0:
        pytest.skip("root cannot drop the capabilities that override folder modes here (setpriv)")
    return drop


def prepare_line(model_dir: Path, out: Path) -> tuple[int, str]:
    done = subprocess.run(
        [*as_a_user_permissions_bind(), *PREPARE, "--model-dir", str(model_dir), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr.strip().splitlines()[-1]


def user() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name


def test_an_out_folder_in_a_folder_this_user_may_not_write_in_is_said_so(qnn_model_dir, tmp_path):
    """It was "npu-worker prepare: [Errno 13] Permission denied: '.../out'": no flag, no fix."""
    parent = tmp_path / "read-only"
    parent.mkdir(mode=0o555)
    try:
        code, line = prepare_line(qnn_model_dir, parent / "out")
    finally:
        parent.chmod(0o755)
    assert code == 2
    assert line == (
        f"npu-worker prepare: ModelLoadError: cannot make the --out folder {parent / 'out'}: user {user()} "
        f"may not write in {parent} (Permission denied): give an --out this user may write in, or run "
        "prepare as a user who may"
    )
    assert not (parent / "out").exists()


def test_an_out_folder_this_user_may_not_write_in_is_said_so(qnn_model_dir, tmp_path):
    """It was "--out DIR: cannot open its .prepare.lock: [Errno 13] Permission denied: '...'"."""
    out = tmp_path / "out"
    out.mkdir(mode=0o555)
    try:
        code, line = prepare_line(qnn_model_dir, out)
    finally:
        out.chmod(0o755)
    assert code == 2
    assert line == (
        f"npu-worker prepare: ModelLoadError: cannot make {out / prepared.LOCK}, the lock a prepare holds: "
        f"user {user()} may not write in {out} (Permission denied): give an --out this user may write in, "
        "or run prepare as a user who may"
    )
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("number", "why"),
    [
        (
            errno.EROFS,
            "the filesystem of {out} is read-only: give an --out on a filesystem that can be written",
        ),
        (
            errno.EACCES,
            "user {user} may not write in {staging} (Permission denied): give an --out this user may write "
            "in, or run prepare as a user who may",
        ),
    ],
)
def test_a_manifest_that_cannot_be_written_is_said_with_why_and_that_the_folder_is_unchanged(
    qnn_model_dir, tmp_path, monkeypatch, capsys, number, why
):
    """The last write of a prepare (every bucket compiled) was "cannot write .../manifest.json:
    Read-only file system": neither what to do nor that the earlier prepared folder is still whole."""
    out = tmp_path / "out"
    staging = out / prepared.STAGING

    def refused(path: object, *args: object, **kwargs: object) -> None:
        raise OSError(number, os.strerror(number), str(staging / f".{prepared.MANIFEST}.0123.part"))

    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", str(out)]) == 0
    monkeypatch.setattr(prepare, "write_atomic", refused)
    assert cli.main([*command, "--out", str(out)]) == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == (
        f"npu-worker prepare: ModelLoadError: cannot write the manifest {out / prepared.MANIFEST}: "
        + why.format(out=out, user=user(), staging=staging)
        + f"; the earlier prepare's {out} is left as it was"
    )
    assert prepared.find(out) is not None and not staging.exists()


def test_a_link_in_place_of_the_lock_file_is_said_so_and_never_followed(qnn_model_dir, tmp_path, capsys):
    """It was "--out DIR: cannot open its .prepare.lock: [Errno 40] Too many levels of symbolic links"."""
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.write_bytes(b"someone's file")
    (out / prepared.LOCK).symlink_to(victim)
    command = ["prepare", "--buckets", "63", "--optimization", "fast", "--model-dir", str(qnn_model_dir)]
    assert cli.main([*command, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"npu-worker prepare: ModelLoadError: --out {out}: its {prepared.LOCK} is a symbolic link, not the "
        f"lock file a prepare makes (never followed): remove {out / prepared.LOCK} and run it again"
    )
    assert victim.read_bytes() == b"someone's file"


def test_a_model_file_this_user_may_not_read_is_not_blamed_on_the_out_folder(qnn_model_dir, tmp_path):
    """A file of the model folder that cannot be read is the source's fault: "may not write in" named
    the model folder as a place the prepare writes in."""
    source, out = tmp_path / "model", tmp_path / "out"
    shutil.copytree(qnn_model_dir, source)
    notes = source / "notes.txt"
    notes.write_text("the export's notes")
    notes.chmod(0o020)  # (writable by the group: copied, never hard-linked; readable by no one)
    try:
        code, line = prepare_line(source, out)
    finally:
        notes.chmod(0o644)
    assert code == 2
    assert line == f"npu-worker prepare: ModelLoadError: cannot copy {notes} into {out}: Permission denied"
