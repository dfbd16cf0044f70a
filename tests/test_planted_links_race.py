"""The admission walk reads what it checked: a link another local user renames over the worker's own
link between the check and the read is not followed (`planted_links`, on descriptors). Looked at by
name and then read by name, the swapped-in link's target became the path the worker wrote, another
caller's lecture, which it replaced; or the reference it read. Also: a folder writable by a group with
someone else in it is as shared as a world-writable one (only the worker's own link or the owner's)."""

from __future__ import annotations

import grp
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from npu_worker.paths import resolve_ref_wav
from npu_worker.protocol import RefWavNotAllowed
from tests.test_http_bad_input import assert_error_body
from tests.test_planted_links import NOBODY, link_in_nobodys_lecture, plant

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="another user's rename needs root to fork one")


def as_nobody_rename(source: Path, destination: Path) -> None:
    """`mv source destination` by another local user (uid 65534, in a forked child): what anyone may do
    in a world-writable folder that is not sticky. The folder is opened first, as root: that user
    may not pass through pytest's private folders above it, but needs only the folder's own rights."""
    child = os.fork()
    if child == 0:
        try:
            folder = os.open(source.parent, os.O_RDONLY | os.O_DIRECTORY)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.rename(source.name, destination.name, src_dir_fd=folder, dst_dir_fd=folder)
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the other user could not rename"


@pytest.fixture
def swap_at_first_read(monkeypatch) -> Iterator[list[tuple[Path, Path]]]:
    """The hook point: just before the walk first reads a link on the caller's path (by its name, or
    from the descriptor it checked: `readlink("", dir_fd=...)`), another user renames its link over
    the one being read; realpath's own reads of other links pass untouched."""
    swaps: list[tuple[Path, Path]] = []
    real_readlink = os.readlink

    def readlink(path, *args, **kwargs):
        if swaps and (path == "" or str(path) == str(swaps[0][1])):
            as_nobody_rename(*swaps.pop())
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", readlink)
    yield swaps


@pytest.fixture
def open_folder(tmp_path: Path) -> Path:
    """A folder every local user may rename entries in: world-writable, not sticky."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    return folder


async def test_a_link_renamed_over_the_workers_own_while_it_is_read_is_not_followed(
    worker, tmp_path, open_folder, swap_at_first_read
):
    client = await worker()
    mine = tmp_path / "mine.wav"
    victim = tmp_path / "another-callers-lecture.wav"
    victim.write_bytes(b"kept")
    (open_folder / "s00.wav").symlink_to(mine)  # the worker's own link: followed, as the kernel would
    plant(open_folder / ".planted", victim)
    swap_at_first_read.append((open_folder / ".planted", open_folder / "s00.wav"))
    response = await client.post("/synth", json={"text": "하나", "output_path": str(open_folder / "s00.wav")})
    answer = await response.json()
    assert not swap_at_first_read, "the walk read no link"
    assert victim.read_bytes() == b"kept"
    assert answer["status"] == "ok" and answer["wav_path"] == str(mine), answer


def test_a_reference_link_renamed_over_while_it_is_read_reads_the_checked_one(
    tmp_path, open_folder, swap_at_first_read
):
    voice = tmp_path / "voice.wav"
    secret = tmp_path / "secret.wav"
    for path in (voice, secret):
        path.write_bytes(b"RIFF")
    (open_folder / "ref.wav").symlink_to(voice)
    plant(open_folder / ".planted", secret)
    swap_at_first_read.append((open_folder / ".planted", open_folder / "ref.wav"))
    assert resolve_ref_wav(str(open_folder / "ref.wav"), (str(tmp_path),)) == str(voice)
    assert not swap_at_first_read


@pytest.fixture
def group_folder(tmp_path: Path) -> Path:
    """A folder writable by a group that is not its owner's own (`users`, gid 100): any member may add
    a link, as anyone may in a world-writable one."""
    folder = tmp_path / "team"
    folder.mkdir()
    os.chown(folder, -1, grp.getgrnam("users").gr_gid)
    folder.chmod(0o775)
    return folder


async def test_a_link_another_user_put_in_a_group_writable_folder_is_refused(worker, tmp_path, group_folder):
    client = await worker()
    victim = tmp_path / "another-callers-lecture.wav"
    victim.write_bytes(b"kept")
    plant(group_folder / "s00.wav", victim)
    response = await client.post(
        "/synth", json={"text": "하나", "output_path": str(group_folder / "s00.wav")}
    )
    assert response.status == 400
    answer = await response.json()
    assert_error_body(answer, "OutputPathNotAllowed")
    assert f"put in the group-writable folder {group_folder}" in answer["error"], answer
    assert victim.read_bytes() == b"kept"
    with pytest.raises(RefWavNotAllowed, match="group-writable"):
        resolve_ref_wav(str(group_folder / "s00.wav"), (str(tmp_path),))


async def test_a_link_beneath_a_folder_another_user_made_in_a_group_writable_one_is_refused(
    worker, tmp_path, group_folder
):
    """One level down, as in a world-writable folder: a member made `lecture/` (theirs, only they write
    in it) and put a link there, which the link's own folder alone would let through."""
    client = await worker()
    victim = link_in_nobodys_lecture(group_folder, tmp_path)
    body = {"text": "하나", "output_path": str(group_folder / "lecture" / "s00.wav")}
    answer = await (await client.post("/synth", json=body)).json()
    assert_error_body(answer, "OutputPathNotAllowed")
    assert (
        f"{group_folder / 'lecture'}, a folder that user {NOBODY} made in a group-writable folder"
        in answer["error"]
    )
    assert victim.read_bytes() == b"kept"


async def test_the_workers_own_link_in_a_group_writable_folder_is_followed(worker, tmp_path, group_folder):
    client = await worker()
    target = tmp_path / "target.wav"
    (group_folder / "s00.wav").symlink_to(target)
    answer = await (
        await client.post("/synth", json={"text": "하나", "output_path": str(group_folder / "s00.wav")})
    ).json()
    assert answer["status"] == "ok" and answer["wav_path"] == str(target), answer


def test_a_folder_moved_while_the_walk_goes_back_out_of_it_is_refused(tmp_path, open_folder, monkeypatch):
    """`lecture/../s00.wav`: the walk goes back through `lecture`'s own descriptor; another user moved
    `lecture` elsewhere meanwhile, so its parent is no longer the folder the walk
    checked, whose name the resolved path would still say. Refused, not resolved by name (nor a 500)."""
    (open_folder / "lecture").mkdir(mode=0o777)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real_open = os.open

    def open_moving(path, *args, **kwargs):
        if path == "..":
            os.rename(open_folder / "lecture", elsewhere / "lecture")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_moving)
    with pytest.raises(RefWavNotAllowed, match="lecture, a folder moved elsewhere while the path was"):
        resolve_ref_wav(str(open_folder / "lecture" / ".." / "voice.wav"), (str(tmp_path),))


def as_nobody(call: Callable[[], str]) -> str:
    """What `call` returns (or the refusal it raises, in words) run by another local user (uid 65534,
    in a forked child): a worker not run as root."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(reader)
            os.setgroups([])  # none of root's groups
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                said = call()
            except Exception as exc:
                said = str(exc)  # a WorkerError says its name
            os.write(writer, said.encode())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as said:
        answer = said.read().decode()
    os.waitpid(child, 0)
    return answer


def test_a_folder_the_worker_may_not_search_is_not_said_to_have_moved():
    """`locked/../voice.wav`, with a worker not run as root that may not search `locked` (another user's,
    0700): the walk cannot open `..` from it (nor can the system open that path), and the refusal said
    "a folder moved elsewhere while the path was resolved" of a folder no one had moved."""
    base = Path(tempfile.mkdtemp(prefix="npu-worker-test-", dir="/tmp"))  # one that user may pass through
    try:
        base.chmod(0o755)
        (base / "locked").mkdir(mode=0o700)
        (base / "voice.wav").write_bytes(b"RIFF")
        said = as_nobody(lambda: resolve_ref_wav(str(base / "locked" / ".." / "voice.wav"), (str(base),)))
    finally:
        shutil.rmtree(base)
    assert said.startswith("RefWavNotAllowed: ref_wav goes through"), said
    assert f"{base}/locked/.., which cannot be opened (Permission denied)" in said, said
    assert "moved" not in said, said
