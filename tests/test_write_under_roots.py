"""The output writer's own rules (`files.write_under_roots`), without a server: a link at the final name
is replaced, not followed; a root or a folder above it swapped for a link after start is refused, for a
read too; a crashed write's leftover is removed (the folder listed once), never a link's or another
user's; another user's file is not replaced; a path outside the roots or not normalised is refused; a
replaced file's modes and group bound the new one's (also met through /synth here); a file another user
made at a free name while the wav was written is not replaced; a write the file system takes only part of
fails whole (no truncated wav, no temp file, no descriptor left). The other rules met through the worker
are tested in `test_path_safety.py`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from npu_worker import files, leftovers
from npu_worker.files import write_under_roots
from npu_worker.protocol import OutputPathNotAllowed
from tests.test_path_safety import outside as outside  # a fixture: a folder beside tmp_path


def test_a_link_at_the_final_name_is_replaced_not_followed(tmp_path, outside):
    victim = outside / "victim.wav"
    victim.write_bytes(b"precious")
    (tmp_path / "x.wav").symlink_to(victim)
    write_under_roots(str(tmp_path / "x.wav"), b"new", (str(tmp_path),))
    assert victim.read_bytes() == b"precious"
    assert not (tmp_path / "x.wav").is_symlink() and (tmp_path / "x.wav").read_bytes() == b"new"


def test_a_root_replaced_by_a_link_after_start_is_not_followed(tmp_path, outside):
    """Whoever owns an output root (or a folder above it) can swap it for a link after admission: the
    write must not follow it (into the state dir's cache, say); nor may a read."""
    root = tmp_path / "shared"
    root.mkdir()
    real_root = str(root)  # resolved at start, as the worker resolves its roots
    write_under_roots(str(root / "a.wav"), b"before", (real_root,))
    root.rename(tmp_path / "old")
    root.symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputPathNotAllowed, match="reached through a link"):
        write_under_roots(str(root / "b.wav"), b"after", (real_root,))
    assert not (outside / "b.wav").exists()
    (outside / "c.wav").write_bytes(b"other")
    with pytest.raises(OSError, match="reached through a link"):
        files.read_beneath(str(root / "c.wav"), (real_root,), 100, own=False)
    parent = tmp_path / "deep"  # a folder above the root swapped, too
    (parent / "root").mkdir(parents=True)
    parent.rename(tmp_path / "deep-old")
    (outside / "root").mkdir()
    parent.symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputPathNotAllowed, match="reached through a link"):
        write_under_roots(str(parent / "root" / "d.wav"), b"after", (str(parent / "root"),))
    assert not (outside / "root" / "d.wav").exists()


def test_a_write_removes_its_names_crash_leftover_without_listing_the_folder_again(tmp_path, monkeypatch):
    """The folder is read once (the first write into it); later writes take their leftovers from that
    list, so a write costs the same beside 10 000 files as in an empty folder."""
    monkeypatch.setattr(leftovers, "LEFTOVERS", leftovers.CrashLeftovers())
    out = tmp_path / "out"
    out.mkdir()
    stale, other = out / ".b.wav.dead01.part", out / ".c.wav.dead02.part"
    for path in (stale, other):
        path.write_bytes(b"half")
    listings = []
    listing = leftovers._leftovers_by_target
    monkeypatch.setattr(leftovers, "_leftovers_by_target", lambda fd: listings.append(fd) or listing(fd))
    write_under_roots(str(out / "a.wav"), b"RIFF-a", [str(tmp_path)])
    assert stale.exists() and len(listings) == 1  # not a.wav's leftover
    write_under_roots(str(out / "b.wav"), b"RIFF-b", [str(tmp_path)])
    assert not stale.exists() and (out / "b.wav").read_bytes() == b"RIFF-b"
    assert other.exists() and len(listings) == 1  # c.wav's stays until c.wav is written
    write_under_roots(str(out / "c.wav"), b"RIFF-c", [str(tmp_path)])
    assert not other.exists() and len(listings) == 1


def test_a_leftover_that_is_a_link_is_left_alone(tmp_path, monkeypatch, outside):
    monkeypatch.setattr(leftovers, "LEFTOVERS", leftovers.CrashLeftovers())
    victim = outside / "victim.wav"
    victim.write_bytes(b"keep")
    (tmp_path / ".b.wav.dead01.part").symlink_to(victim)
    write_under_roots(str(tmp_path / "b.wav"), b"RIFF", [str(tmp_path)])
    assert victim.read_bytes() == b"keep" and (tmp_path / ".b.wav.dead01.part").is_symlink()


def test_another_users_file_with_a_leftovers_name_is_left_alone(tmp_path, monkeypatch):
    """Only a crashed write of this user's leaves a temp file: one of another user's is theirs to keep,
    at a write into the folder and at retention's sweep alike."""
    monkeypatch.setattr(leftovers, "LEFTOVERS", leftovers.CrashLeftovers())
    planted = tmp_path / ".b.wav.dead01.part"
    planted.write_bytes(b"theirs")
    real_uid = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real_uid + 1)  # the file is now someone else's to us
    assert leftovers.remove_stale_parts(str(tmp_path / "b.wav")) == 0
    write_under_roots(str(tmp_path / "b.wav"), b"RIFF", [str(tmp_path)])
    assert planted.read_bytes() == b"theirs" and (tmp_path / "b.wav").read_bytes() == b"RIFF"


def test_another_users_file_is_not_replaced(tmp_path, monkeypatch):
    target = tmp_path / "theirs.wav"
    target.write_bytes(b"theirs")
    # Runs as any user: the file is ours, so the worker is made to believe it is someone else.
    monkeypatch.setattr(os, "geteuid", lambda: target.stat().st_uid + 1)
    with pytest.raises(OutputPathNotAllowed, match="another user"):
        write_under_roots(str(target), b"mine", (str(tmp_path),))
    assert target.read_bytes() == b"theirs"


@pytest.mark.parametrize("path", ["relative.wav", "/a/../b.wav", "/elsewhere/x.wav"])
def test_write_refuses_paths_outside_or_unnormalized(tmp_path, path):
    with pytest.raises(OutputPathNotAllowed):
        write_under_roots(path, b"x", (str(tmp_path),))


async def made_again(client, target: Path, umask: int) -> None:
    """`target` made again by a /synth under `umask`: a wav now."""
    previous = os.umask(umask)
    try:
        answer = await client.post("/synth", json={"text": "하나.", "output_path": str(target)})
        assert (await answer.json())["status"] == "ok"
    finally:
        os.umask(previous)
    assert target.read_bytes()[:4] == b"RIFF"


@pytest.mark.parametrize(("mode", "made"), [(0o600, 0o600), (0o640, 0o640), (0o040, 0o640), (0o444, 0o644)])
async def test_a_callers_file_made_again_keeps_at_most_its_modes(worker, tmp_path, mode, made):
    """A caller's wav kept private (0600), made again by a /synth, came back 0644 (the umask's modes):
    readable by every local user. Group and others now get at most what the replaced file gave them;
    the worker, its owner, may always read and write it (it serves the section's audio)."""
    client = await worker()
    target = tmp_path / "private" / "s00.wav"
    target.parent.mkdir()
    target.write_bytes(b"old")
    target.chmod(mode)
    await made_again(client, target, 0o022)
    assert target.stat().st_mode & 0o777 == made


def test_a_new_file_and_one_replacing_a_link_get_the_umasks_modes(tmp_path, outside):
    """No replaced file, or a link in its place (its 0777 is no file's): the umask decides, as before."""
    victim = outside / "victim.wav"
    victim.write_bytes(b"precious")
    victim.chmod(0o600)
    (tmp_path / "linked.wav").symlink_to(victim)
    previous = os.umask(0o027)
    try:
        write_under_roots(str(tmp_path / "new.wav"), b"new", (str(tmp_path),))
        write_under_roots(str(tmp_path / "linked.wav"), b"new", (str(tmp_path),))
    finally:
        os.umask(previous)
    assert (tmp_path / "new.wav").stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "linked.wav").stat().st_mode & 0o777 == 0o640


def _another_group() -> int:
    """A group the worker may give its files other than the one a new file gets (root: any)."""
    if os.geteuid() == 0:
        return 65534
    others = [group for group in os.getgroups() if group != os.getegid()]
    if not others:
        pytest.skip("this user is in no second group to give a file")
    return others[0]


@pytest.mark.parametrize(("mode", "umask", "made"), [(0o640, 0o022, 0o640), (0o660, 0o027, 0o640)])
async def test_a_callers_file_made_again_keeps_its_group(worker, tmp_path, mode, umask, made):
    """A caller's 0640 wav of a small group, made again by a /synth, came back 0640 of the worker's
    group: readable by a group the caller never chose. It keeps its group (the umask still bounds the
    group's bits), created without group bits until it has it."""
    group = _another_group()
    client = await worker()
    target = tmp_path / "team" / "s00.wav"
    target.parent.mkdir()
    target.write_bytes(b"old")
    os.chown(target, -1, group)
    target.chmod(mode)
    await made_again(client, target, umask)
    assert (target.stat().st_gid, target.stat().st_mode & 0o777) == (group, made)


def test_another_users_file_made_while_the_wav_is_written_is_not_replaced(tmp_path, monkeypatch):
    """Nothing at the name when it was checked, then another user made a file there (a shared sticky
    folder, /tmp's kind) before the rename: a worker run as root replaced it, the very file the check
    refuses. The wav now takes the name only where nothing is there, and what appeared is checked."""
    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    theirs = shared / "s00.wav"
    temp_name = files.temp_name

    def made_meanwhile(name: str) -> str:  # the temp name is chosen after the check: their file now
        theirs.write_bytes(b"theirs")
        os.chown(theirs, 65534, 65534)
        return temp_name(name)

    monkeypatch.setattr(files, "temp_name", made_meanwhile)
    with pytest.raises(OutputPathNotAllowed, match="belongs to another user"):
        write_under_roots(str(theirs), b"new", (str(tmp_path),))
    assert theirs.read_bytes() == b"theirs" and theirs.stat().st_uid == 65534
    assert os.listdir(shared) == ["s00.wav"]  # no temp file left behind


def test_a_group_the_worker_may_not_give_leaves_the_file_no_group_rights():
    """A worker not root, not in the replaced file's group (its caller's file, chgrp'ed by root): it may
    not give the new file that group, and 0640 in its own group was readable by a group the caller never
    chose; the new file has no group rights. The worker is uid 65534 in a forked child, writing in a
    folder of /tmp (it may not pass through pytest's private folders)."""
    if os.geteuid() != 0:
        pytest.skip("a worker of another user, in a group it is not in, needs root to fork")
    folder = tempfile.mkdtemp(prefix="npu-worker-test-")
    try:
        os.chown(folder, 65534, 65534)
        target = os.path.join(folder, "s00.wav")
        with open(target, "wb") as old:
            old.write(b"old")
        os.chown(target, 65534, 0)  # root's group: not one of 65534's
        os.chmod(target, 0o640)
        child = os.fork()
        if child == 0:
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                os.umask(0o022)
                write_under_roots(target, b"new", (folder,))
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the worker of uid 65534 could not write"
        info = os.stat(target)
        assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (65534, 65534, 0o600)
    finally:
        shutil.rmtree(folder)


PARTIAL_WRITE = """
import errno, os, resource, signal, sys
from npu_worker.files import write_under_roots
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (its default ends the process; ignored, the write fails)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
root = sys.argv[1]
before = sorted(os.listdir("/proc/self/fd"))
try:
    write_under_roots(os.path.join(root, "a.wav"), b"x" * 20000, (root,))
    print("written")
except OSError as exc:
    print("failed", errno.errorcode.get(exc.errno))
print("descriptors as before" if sorted(os.listdir("/proc/self/fd")) == before else "a descriptor left open")
print(sorted(os.listdir(root)))
"""


def test_a_write_the_file_system_takes_only_part_of_fails_and_leaves_no_file(tmp_path):
    """The wav is written by its descriptor (`os.write`, which may take fewer bytes than asked): written
    on until all is taken, so a file system that takes only part (here the process's file size limit:
    the first write takes 4 096 bytes, the next fails, EFBIG) fails the write, and neither a truncated
    wav nor its temp file is left, nor its descriptor open. In a child: the limit is the process's."""
    code_root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": code_root}
    ran = subprocess.run(
        [sys.executable, "-c", PARTIAL_WRITE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["failed EFBIG", "descriptors as before", "[]"], ran.stdout
