"""A caller's path through /proc (`/proc/self/fd/2`, `/proc/self/cwd/...`) is refused at admission.

Those links name the worker's own open files, not paths: the walk read their text and wrote there.
walk33, ZipVoice on the CPU: `output_path` `/proc/self/fd/1` replaced the worker's own log (its
stdout, a file under the roots) with a wav, and `/proc/self/fd/2`, once that log was gone, answered
`ok` with a `wav_path` of `/tmp/walk33_server.log (deleted)`, a new file named after the text of the
link. The kernel follows such a link to the open file whatever its text says, so the text is no path
to check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_worker.planted_links import ProcessMounts, UnfollowedLink, resolve_unplanted
from tests.test_http_bad_input import assert_error_body


@pytest.fixture
def open_file(tmp_path: Path):
    """A file under the roots that this process (the worker's, in these tests) holds open, as a worker
    holds its log: the descriptor and the file."""
    held = tmp_path / "worker.log"
    fd = os.open(held, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"the worker's log\n")
    try:
        yield fd, held
    finally:
        os.close(fd)


async def test_an_open_file_named_through_proc_is_refused_and_kept(worker, open_file, tmp_path):
    client = await worker()
    fd, held = open_file
    for route, body in (
        ("/synth", {"text": "하나", "output_path": f"/proc/self/fd/{fd}"}),
        (
            "/synth_batch",
            {"sections": [{"idx": 0, "text": "하나", "output_path": f"/proc/{os.getpid()}/fd/{fd}"}]},
        ),
        ("/synth", {"text": "하나", "output_path": f"/proc/self/root{tmp_path}/x.wav"}),
    ):
        response = await client.post(route, json=body)
        assert response.status == 400, (route, await response.text())
        answer = await response.json()
        assert_error_body(answer, "OutputPathNotAllowed")
        assert "/proc" in answer["error"], answer["error"]
    assert held.read_bytes() == b"the worker's log\n"


async def test_a_deleted_open_file_named_through_proc_writes_nothing(worker, open_file):
    client = await worker()
    fd, held = open_file
    held.unlink()  # the link's text is now "<path> (deleted)", a name the walk took as written
    response = await client.post("/synth", json={"text": "하나", "output_path": f"/proc/self/fd/{fd}"})
    assert response.status == 400, await response.text()
    assert_error_body(await response.json(), "OutputPathNotAllowed")
    assert not Path(f"{held} (deleted)").exists()


async def test_a_reference_named_through_proc_is_refused(worker, tmp_path):
    client = await worker()
    voice = tmp_path / "voice.wav"
    voice.write_bytes(b"RIFF")
    with voice.open("rb") as held:
        body = {
            "text": "하나",
            "output_path": str(tmp_path / "s.wav"),
            "ref_wav": f"/proc/self/fd/{held.fileno()}",
        }
        response = await client.post("/synth", json=body)
    assert response.status == 400, await response.text()
    answer = await response.json()
    assert_error_body(answer, "RefWavNotAllowed")
    assert "/proc" in answer["error"]


def test_the_walk_names_the_process_link(open_file):
    fd, _ = open_file
    link = f"/proc/{os.getpid()}/fd/{fd}"
    with pytest.raises(UnfollowedLink, match=f"goes through {link}, a link of the process filesystem"):
        resolve_unplanted(link)
    with pytest.raises(UnfollowedLink, match="goes through /proc/self, a link of the process filesystem"):
        resolve_unplanted("/proc/self/root/tmp")


def test_a_path_under_proc_that_holds_no_link_is_resolved_as_before():
    assert resolve_unplanted("/proc/version") == "/proc/version"


MOUNT_TABLE_OPENS: list[str] = []  # filled while a test below listens (an audit hook cannot be removed)


def _count_mount_table_opens(event: str, args: tuple) -> None:
    if MOUNT_TABLE_OPENS and event == "open" and args and str(args[0]) == "/proc/self/mountinfo":
        MOUNT_TABLE_OPENS.append(str(args[0]))


sys.addaudithook(_count_mount_table_opens)


def chain_of_links(folder: Path, count: int) -> Path:
    """`count` links of this process's own, each to the next, the last to a folder."""
    (folder / "real").mkdir()
    target = "real"
    for i in range(count):
        (folder / f"l{i}").symlink_to(target)
        target = f"l{i}"
    return folder / target


def test_the_walk_reads_the_mount_table_once_while_it_is_unchanged(tmp_path):
    """Each link a walk met read /proc/self/mountinfo again: a path of 39 links (anyone's: `/bin/../bin/..`
    where /bin is a link) read it 39 times, and a batch carries 1000 paths."""
    path = f"{chain_of_links(tmp_path, 39)}/s00.wav"
    resolve_unplanted(path)  # (the first walk of this process may read it)
    MOUNT_TABLE_OPENS.append("listening")
    try:
        for _ in range(20):
            assert resolve_unplanted(path) == str(tmp_path / "real" / "s00.wav")
        assert MOUNT_TABLE_OPENS == ["listening"]
    finally:
        MOUNT_TABLE_OPENS.clear()


@pytest.fixture
def new_proc(tmp_path: Path):
    """A proc filesystem mounted after the worker's first walks (a new device number)."""
    mounted = tmp_path / "proc"
    mounted.mkdir()
    if subprocess.run(["mount", "-t", "proc", "proc", str(mounted)], capture_output=True).returncode:
        pytest.skip("mounting a proc filesystem needs root")
    try:
        yield mounted
    finally:
        subprocess.run(["umount", "-l", str(mounted)], check=True)


def test_a_proc_mounted_after_the_first_walk_is_refused_too(tmp_path, new_proc):
    resolve_unplanted(f"{chain_of_links(tmp_path, 1)}/s00.wav")  # the table read before the mount
    with pytest.raises(UnfollowedLink, match="a link of the process filesystem"):
        resolve_unplanted(f"{new_proc}/self/cwd/s00.wav")


def test_a_mount_table_that_cannot_be_read_leaves_no_descriptor_open(tmp_path):
    """Each link met while the table could not be read (here a folder: EISDIR) left its descriptor
    open, a caller's 39 links a path, 1000 paths a batch: the worker out of descriptors."""
    mounts = ProcessMounts(table=str(tmp_path))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        assert mounts.devices() == frozenset()
    assert len(os.listdir("/proc/self/fd")) < before + 25  # (another thread of the process may open some)
