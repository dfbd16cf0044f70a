"""The locks on the worker's folders (`folder_lock.py`) against another local user. They were a `flock` on
the folder itself, opened read-only: a user who could list an operator's 0755 state dir took it and
`serve` refused to start ("in use by another npu-worker serve"); the voices folder's group took it and
every voice upload and delete waited for ever. The lock is now a 0600 file of the worker's inside the
folder, removed at the holder's end; what it kept apart is still kept apart, and a holder's `kill -9`
leaves a file that blocks no one.
Each holder is a real process, holding as user nobody where it plays another user."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from npu_worker import cli
from npu_worker.voice_folder import changing_folder
from tests.timing import seconds

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="playing another local user needs root")

# Holds an exclusive flock on the folder argv[1] itself as user nobody (opened before dropping root:
# the test's tmp_path is not reachable by nobody, a 0755 state dir in /srv or a home is), then waits.
HOLD_THE_FOLDER_AS_NOBODY = f"""
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.setgid({NOBODY}); os.setuid({NOBODY})
fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", flush=True)
sys.stdin.readline()
"""

# Holds the folder argv[1] as a worker does (another serve, a live specialisation), then waits.
HOLD_AS_A_WORKER = """
import sys
from npu_worker.folder_lock import locked_directory
with locked_directory(sys.argv[1], wait=False):
    print("held", flush=True)
    sys.stdin.readline()
"""
HOLD_AS_A_SPECIALISATION = HOLD_AS_A_WORKER.replace("locked_directory", "locked_private_folder")
# Holds the folder argv[1] as a worker of an earlier version did: a flock on the folder itself, as this user.
HOLD_AS_AN_EARLIER_WORKER = """
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", flush=True)
sys.stdin.readline()
"""

# Takes the flock on the folder argv[1] itself, hands it to a child (which keeps it) and lets go of its
# own descriptor: /proc/locks names this process, of this user, which no longer has the folder open (as a
# pid of the worker's user reused after another user's process that took the flock ended).
HAND_THE_FLOCK_TO_A_CHILD = """
import fcntl, os, subprocess, sys
descriptor = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
child = subprocess.Popen(
    [sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE, pass_fds=[descriptor]
)
os.close(descriptor)
print("held", flush=True)
sys.stdin.readline()
child.kill()
"""


@contextlib.contextmanager
def holder(script: str, folder: Path):
    """A live process holding `folder` as `script` does; killed (SIGKILL) at the end."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        yield process
    finally:
        process.kill()
        process.wait(seconds(30))


def waiting_on(lock_file: Path) -> None:
    """Return once someone waits for the `flock` on `lock_file` (a `->` line of /proc/locks names its
    inode): the waiter has opened that very file. There is no event for it: polled, with a deadline."""
    info = lock_file.stat()
    inode = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    deadline = time.monotonic() + seconds(30)
    while not any(
        " -> FLOCK " in line and inode in line.split()
        for line in Path("/proc/locks").read_text(encoding="ascii").splitlines()
    ):
        assert time.monotonic() < deadline, f"no one came to wait on {lock_file}"
        time.sleep(0.01)


@as_root
def test_another_user_holding_a_flock_on_a_0755_state_dir_does_not_refuse_serve(tmp_path, capsys, caplog):
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o755)  # an operator's: accepted, as no one else can write in it
    with holder(HOLD_THE_FOLDER_AS_NOBODY, state_dir), contextlib.ExitStack() as held:
        refusal = cli.hold_state_dir(state_dir, held)
    assert (refusal, capsys.readouterr().err) == (None, "")
    assert caplog.records == []  # told apart: another user's, nothing to warn of


def test_a_second_serve_is_refused_and_a_killed_ones_lock_blocks_no_start(tmp_path, capsys):
    from npu_worker.folder_lock import LOCK_NAME

    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    with holder(HOLD_AS_A_WORKER, state_dir) as other, contextlib.ExitStack() as held:
        assert cli.hold_state_dir(state_dir, held) == 1
        err = capsys.readouterr().err
        assert f"the state directory {state_dir} is in use by another npu-worker serve" in err
        os.kill(other.pid, signal.SIGKILL)
        other.wait(seconds(30))
        assert (state_dir / LOCK_NAME).is_file()  # left behind by the kill
        assert cli.hold_state_dir(state_dir, held) is None
    assert capsys.readouterr().err == ""


@as_root
def test_the_voices_folder_group_holding_a_flock_on_it_blocks_no_change(tmp_path):
    voices = tmp_path / "voices"
    voices.mkdir(mode=0o750)
    os.chown(voices, 0, NOBODY)  # its group may list it
    entered = threading.Event()

    def change() -> None:
        with changing_folder(voices):
            entered.set()

    with holder(HOLD_THE_FOLDER_AS_NOBODY, voices):
        thread = threading.Thread(target=change, daemon=True)
        thread.start()
        changed = entered.wait(seconds(10))
    thread.join(seconds(30))  # (before the fix: let go by the holder's kill)
    assert changed, "a voice change waited for another user's lock on the voices folder"


@pytest.mark.parametrize("ending", ["killed", "ended"])
def test_two_workers_on_one_voices_folder_still_take_turns(tmp_path, ending):
    """The second waits for the first; after a `kill -9` (its lock file left) and after an end that
    removed the file the second was waiting on (it then holds the one at the name, so a third waits)."""
    from npu_worker.folder_lock import LOCK_NAME, locked_directory

    voices = tmp_path / "voices"
    voices.mkdir(mode=0o750)
    entered, release = threading.Event(), threading.Event()

    def change() -> None:
        with changing_folder(voices):
            entered.set()
            release.wait(seconds(30))

    with holder(HOLD_AS_A_WORKER, voices) as other:
        thread = threading.Thread(target=change, daemon=True)
        thread.start()
        waiting_on(voices / LOCK_NAME)  # (so `ended` removes the very file it waits on)
        assert not entered.is_set(), "a change ran while another worker held the folder"
        if ending == "killed":
            os.kill(other.pid, signal.SIGKILL)  # its lock let go by the kernel, its file left
        else:
            other.communicate("\n", timeout=seconds(30))  # its end removes the file
        assert entered.wait(seconds(30))
        with pytest.raises(BlockingIOError), locked_directory(voices, wait=False):
            pass
        release.set()
    thread.join(seconds(30))
    assert not (voices / LOCK_NAME).exists()  # the folder left as it was found


def test_a_live_scratch_folder_is_kept_and_a_killed_ones_removed(tmp_path):
    from npu_worker.engine.specialize import SCRATCH_PREFIX, remove_dead_scratch

    scratch = tmp_path / f"{SCRATCH_PREFIX}abc"
    scratch.mkdir(mode=0o700)
    (scratch / "fm_decoder.onnx").write_bytes(b"graph")
    with holder(HOLD_AS_A_SPECIALISATION, scratch) as specialising:
        assert remove_dead_scratch(tmp_path) == 0 and scratch.is_dir()
        os.kill(specialising.pid, signal.SIGKILL)
        specialising.wait(seconds(30))
        assert remove_dead_scratch(tmp_path) == 1
    assert not scratch.exists()


def test_the_lock_file_is_only_the_workers_own(tmp_path):
    """Made 0600; one left readable by others is made so; a link at its name is never followed; a
    file of another user's there is refused, never held (they could hold it too)."""
    from npu_worker.folder_lock import LOCK_NAME, locked_directory

    lock_file = tmp_path / LOCK_NAME
    with locked_directory(tmp_path):
        assert lock_file.stat().st_mode & 0o777 == 0o600
    lock_file.write_bytes(b"")
    lock_file.chmod(0o644)
    with locked_directory(tmp_path):
        assert lock_file.stat().st_mode & 0o777 == 0o600
    target = tmp_path / "target"
    lock_file.symlink_to(target)
    with pytest.raises(OSError) as linked, locked_directory(tmp_path):
        pass
    assert linked.value.errno == errno.ELOOP and not target.exists() and lock_file.is_symlink()
    if os.geteuid() == 0:
        lock_file.unlink()
        lock_file.write_bytes(b"")
        os.chown(lock_file, NOBODY, NOBODY)
        with (
            pytest.raises(PermissionError, match="not a plain file of this user"),
            locked_directory(tmp_path),
        ):
            pass


def test_a_lock_file_with_other_names_is_refused_never_held_nor_changed(tmp_path):
    """A hard link at the lock's name, made by a local user who can write the folder to a file of the
    worker's they can open (and `flock` first), was taken as the lock file: the worker waited for as long
    as they held it, or made that file elsewhere 0600. Refused, the file left as it was."""
    import fcntl

    from npu_worker.folder_lock import LOCK_NAME, locked_directory

    folder = tmp_path / "folder"
    folder.mkdir()
    elsewhere = tmp_path / "a-wav-of-the-workers.wav"
    elsewhere.write_bytes(b"RIFF")
    elsewhere.chmod(0o644)
    held = os.open(elsewhere, os.O_RDONLY)  # as its planter holds it
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        os.link(elsewhere, folder / LOCK_NAME)
        with pytest.raises(PermissionError, match="is a hard link"), locked_directory(folder, wait=False):
            pass
    finally:
        os.close(held)
    assert elsewhere.stat().st_mode & 0o777 == 0o644 and elsewhere.read_bytes() == b"RIFF"
    (folder / LOCK_NAME).unlink()
    with locked_directory(folder, wait=False):  # once removed, the worker's own is made again
        assert (folder / LOCK_NAME).stat().st_nlink == 1


def test_a_worker_of_an_earlier_version_and_this_one_keep_each_other_off_one_state_dir(tmp_path, capsys):
    """A rolling upgrade: a worker of an earlier version held the state dir by a `flock` on the folder
    itself, this one by its lock file, and neither saw the other's: both ran on one state dir, resuming
    the same interrupted jobs into one log. (Another user's `flock` on the folder refuses nothing: above.)"""
    import fcntl

    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    with holder(HOLD_AS_AN_EARLIER_WORKER, state_dir), contextlib.ExitStack() as held:
        assert cli.hold_state_dir(state_dir, held) == 1
    assert f"the state directory {state_dir} is in use by another npu-worker serve" in capsys.readouterr().err
    earlier = os.open(state_dir, os.O_RDONLY | os.O_DIRECTORY)  # its open, as the earlier worker's start
    try:
        with contextlib.ExitStack() as held:
            assert cli.hold_state_dir(state_dir, held) is None
            with pytest.raises(BlockingIOError):  # the earlier worker's start is refused
                fcntl.flock(earlier, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(earlier, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and takes it once this one has ended
    finally:
        os.close(earlier)


def test_a_flock_holder_named_by_a_pid_of_this_user_without_the_folder_open_refuses_nothing(tmp_path, caplog):
    """/proc/locks names the process that took a `flock`, which may have handed it on and ended: its pid,
    reused by any process of the worker's user, had `serve` refused as if an earlier worker held the state
    dir (another user who can list an operator's 0755 state dir could so plant pids of ours). Only a
    process of this user that has the folder open is taken for an earlier worker. The holder (here a
    child of ours, unseen in /proc/locks) cannot be told, so the start fails open: it used to say nothing,
    now its log says so (as for a pid of another namespace, or btrfs naming another device)."""
    import fcntl

    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o700)
    with holder(HAND_THE_FLOCK_TO_A_CHILD, state_dir):
        probe = os.open(state_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with pytest.raises(BlockingIOError):  # the child holds it still
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
        with caplog.at_level("WARNING", logger="npu_worker"), contextlib.ExitStack() as held:
            assert cli.hold_state_dir(state_dir, held) is None
    assert [(r.levelname, r.getMessage().split(" (")[0]) for r in caplog.records] == [
        (
            "WARNING",
            f"{state_dir}: someone holds a flock on the folder itself, as a worker of an earlier version did, "
            "and who cannot be told",
        )
    ]
    assert caplog.records[0].getMessage().endswith("make sure no other npu-worker serve uses this state dir")


def test_a_lock_file_its_holder_removes_as_it_is_opened_is_taken_not_a_hard_link(tmp_path, monkeypatch):
    """Its holder removes the lock file at its end: one that opened it just before saw no name left on it
    (`st_nlink` 0) and refused it as a hard link, so a voice upload beside another (each change holds the
    voices folder's lock) was a 503 'its .npu-worker.lock is a hard link ... remove it' (119 in 12 000 for
    4 threads changing at once, 2026-12-07). Now it takes the file made again at the name."""
    from npu_worker import folder_lock

    holding, end, ended = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        with folder_lock.locked_directory(tmp_path):
            holding.set()
            end.wait()
        ended.set()

    first = threading.Thread(target=hold)
    first.start()
    try:
        assert holding.wait(seconds(30))
        real_fstat = os.fstat

        def fstat_as_the_holder_ends(descriptor: int) -> os.stat_result:
            if not end.is_set():  # (the opened file's first look: its holder ends just then)
                end.set()
                assert ended.wait(seconds(30))
            return real_fstat(descriptor)

        monkeypatch.setattr(os, "fstat", fstat_as_the_holder_ends)
        with folder_lock.locked_directory(tmp_path, wait=False):
            monkeypatch.undo()
            assert (tmp_path / folder_lock.LOCK_NAME).stat().st_nlink == 1
    finally:
        end.set()
        first.join(seconds(30))
