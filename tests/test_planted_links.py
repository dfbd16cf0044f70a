"""A link another local user planted in a shared (world-writable) output folder is never followed at
admission: it pointed the worker's write at another of the worker's own files under the roots, which
the worker then replaced (walk10: `/synth` wrote its wav into the link's target). Also refused at
admission: a path under a file, which every write failed on after its synthesis."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_worker.planted_links import resolve_unplanted
from tests.test_cli_client import base_of, run_cli, write_lecture
from tests.test_http_bad_input import assert_error_body
from tests.tone_engine import ToneEngine

NOBODY = 65534


@pytest.fixture(params=[0o1777, 0o777], ids=["sticky", "not-sticky"])
def shared(tmp_path: Path, request) -> Path:
    """A folder every local user may add entries to, as /tmp is (or, worse, not sticky)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(request.param)
    return folder


def plant(link: Path, target: Path, owner: int = NOBODY) -> None:
    link.symlink_to(target)
    os.chown(link, owner, owner, follow_symlinks=False)


def link_in_nobodys_lecture(folder: Path, tmp_path: Path) -> Path:
    """Another caller's lecture (returned), and a link to it at `folder/lecture/s00.wav`, in `lecture/`
    that another user (uid 65534) made and only they write in."""
    victim = tmp_path / "another-callers-lecture.wav"
    victim.write_bytes(b"kept")
    (folder / "lecture").mkdir()
    os.chown(folder / "lecture", NOBODY, NOBODY)
    plant(folder / "lecture" / "s00.wav", victim)
    return victim


async def test_a_wav_name_linked_by_another_user_is_refused_and_its_target_kept(worker, tmp_path, shared):
    client = await worker()
    victim = tmp_path / "another-callers-lecture.wav"
    victim.write_bytes(b"kept")
    plant(shared / "s00.wav", victim)
    for route, body in (
        ("/synth", {"text": "하나", "output_path": str(shared / "s00.wav")}),
        ("/synth_batch", {"sections": [{"idx": 0, "text": "하나", "output_path": str(shared / "s00.wav")}]}),
    ):
        response = await client.post(route, json=body)
        assert response.status == 400, route
        answer = await response.json()
        assert_error_body(answer, "OutputPathNotAllowed")
        assert "another user" in answer["error"] and str(shared) in answer["error"]
    assert victim.read_bytes() == b"kept"


async def test_the_cli_sends_a_planted_link_to_the_worker_which_refuses_it(worker, tmp_path, shared, capsys):
    """`npu-worker batch --out-dir /tmp/shared/lecture` (and `synth -o`): the client resolved the path
    itself (`Path.resolve()`, every link followed) and sent the link's target as a plain path, so the
    worker's check never saw the link, and the batch replaced another caller's lecture in its folder."""
    server = await worker()
    theirs = tmp_path / "another-callers-lecture"
    theirs.mkdir()
    (theirs / "s00.wav").write_bytes(b"kept")
    plant(shared / "lecture", theirs)
    lecture = write_lecture(tmp_path / "lecture.json", ["하나"])
    for argv in (
        ["batch", str(lecture), "--out-dir", str(shared / "lecture")],
        ["synth", "하나", "-o", str(shared / "lecture" / "s00.wav")],
    ):
        assert await run_cli([*argv, "--base", base_of(server)]) == 2, argv
        assert "OutputPathNotAllowed" in capsys.readouterr().err, argv
    assert (theirs / "s00.wav").read_bytes() == b"kept"


async def test_the_workers_own_link_hard_linked_into_the_shared_folder_is_refused(worker, tmp_path, shared):
    """Where fs.protected_hardlinks is off (as in many containers) another user may hard-link the
    worker's own link, an operator's `current -> another-callers-lecture`, into the shared folder
    (done here as root, as the kernel then lets anyone): its owner is the worker, so the walk followed
    it as the worker's own, and /synth replaced the other caller's lecture. The link where the operator
    put it, in a folder no one else writes in, is still followed."""
    client = await worker()
    theirs = tmp_path / "another-callers-lecture"
    theirs.mkdir()
    (theirs / "s00.wav").write_bytes(b"kept")
    (tmp_path / "current").symlink_to(theirs)
    os.link(tmp_path / "current", shared / "lecture", follow_symlinks=False)
    body = {"text": "하나", "output_path": str(shared / "lecture" / "s00.wav")}
    response = await client.post("/synth", json=body)
    assert response.status == 400
    answer = await response.json()
    assert_error_body(answer, "OutputPathNotAllowed")
    assert f"{shared / 'lecture'}, a link with 2 names (hard links)" in answer["error"], answer
    assert (theirs / "s00.wav").read_bytes() == b"kept"
    body = {"text": "하나", "output_path": str(tmp_path / "current" / "s01.wav")}
    answer = await (await client.post("/synth", json=body)).json()
    assert answer["status"] == "ok" and answer["wav_path"] == str(theirs / "s01.wav"), answer


async def test_a_folder_linked_by_another_user_is_refused(worker, tmp_path, shared):
    client = await worker()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plant(shared / "lecture", elsewhere)
    response = await client.post(
        "/synth", json={"text": "하나", "output_path": str(shared / "lecture" / "a.wav")}
    )
    assert response.status == 400
    assert_error_body(await response.json(), "OutputPathNotAllowed")
    assert list(elsewhere.iterdir()) == []


async def test_a_link_in_a_folder_another_user_made_in_the_shared_folder_is_refused(worker, tmp_path, shared):
    """One level down: another user made `lecture/` in the shared folder (it was not there yet) and put
    a link in it; the link is in a folder only that user writes, so the kernel's rule let it through,
    and `/synth` replaced the link's target, another caller's lecture (2026-12-06, `serve --port 0`)."""
    client = await worker()
    victim = link_in_nobodys_lecture(shared, tmp_path)
    (shared / "lecture" / "deeper").mkdir()
    plant(shared / "lecture" / "deeper" / "s01.wav", victim)
    for given in ("lecture/s00.wav", "lecture/deeper/s01.wav", "lecture/deeper/../s00.wav"):
        response = await client.post("/synth", json={"text": "하나", "output_path": str(shared / given)})
        assert response.status == 400, given
        answer = await response.json()
        assert_error_body(answer, "OutputPathNotAllowed")
        assert f"{shared / 'lecture'}, a folder that user" in answer["error"], answer
    assert victim.read_bytes() == b"kept"


def test_a_path_back_out_of_a_folder_another_user_made_is_followed(tmp_path, shared):
    """`..` out of such a folder leaves it: a link beyond is judged by its own folder alone."""
    (shared / "lecture").mkdir()
    os.chown(shared / "lecture", NOBODY, NOBODY)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "link").symlink_to(tmp_path / "real")
    given = str(shared / "lecture" / ".." / ".." / "mine" / "link" / "a.wav")
    assert resolve_unplanted(given) == str(tmp_path / "real" / "a.wav")


async def test_a_reference_linked_by_another_user_is_refused(worker, tmp_path, shared):
    client = await worker()
    voice = tmp_path / "voice.wav"
    voice.write_bytes(b"RIFF")
    plant(shared / "ref.wav", voice)
    body = {"text": "하나", "output_path": str(tmp_path / "a.wav"), "ref_wav": str(shared / "ref.wav")}
    response = await client.post("/synth", json=body)
    assert response.status == 400
    assert_error_body(await response.json(), "RefWavNotAllowed")


async def test_the_workers_own_link_or_the_folder_owners_is_followed_as_the_kernel_allows(
    worker, tmp_path, shared
):
    client = await worker()
    for name, owner in (("mine.wav", os.geteuid()), ("owners.wav", os.lstat(shared).st_uid)):
        target = tmp_path / f"target-{name}"
        plant(shared / name, target, owner)
        response = await client.post("/synth", json={"text": "하나", "output_path": str(shared / name)})
        answer = await response.json()
        assert answer["status"] == "ok", answer
        assert answer["wav_path"] == str(target) and target.read_bytes()[:4] == b"RIFF"


async def test_a_link_in_a_folder_only_its_owner_writes_is_followed(worker, tmp_path):
    client = await worker()
    target = tmp_path / "target.wav"
    plant(tmp_path / "link.wav", target)  # another user's link, but no one else could have put it here
    answer = await (
        await client.post("/synth", json={"text": "하나", "output_path": str(tmp_path / "link.wav")})
    ).json()
    assert answer["status"] == "ok" and answer["wav_path"] == str(target)


def test_the_walk_resolves_as_realpath_does(tmp_path):
    """Where no other user's link is on the way, the path the worker writes is realpath's, whatever the
    shape: relative and absolute links, chains, `..` after a link, parts not made yet (a loop: below)."""
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "real" / "deep" / "file.wav").write_bytes(b"")
    (tmp_path / "rel").symlink_to("real/deep")
    (tmp_path / "abs").symlink_to(tmp_path / "real")
    (tmp_path / "chain").symlink_to("abs/deep")
    (tmp_path / "up").symlink_to("real/deep/..")
    (tmp_path / "loop_a").symlink_to("loop_b")
    (tmp_path / "loop_b").symlink_to("loop_a")
    (tmp_path / "real" / "deep" / "back").symlink_to("../../rel")
    for given in (
        "rel/file.wav",
        "abs/deep/file.wav",
        "chain/file.wav",
        "chain/../deep/file.wav",
        "up/deep/new.wav",
        "rel/not/made/yet.wav",
        "rel/file.wav/under_a_file",
        "missing/../rel/x.wav",
        "./abs/./deep//file.wav",
        "real/deep/back/back/file.wav",
    ):
        path = str(tmp_path / given)
        assert resolve_unplanted(path) == os.path.realpath(path), given


async def test_a_path_under_a_file_is_refused_before_any_synthesis(worker, tmp_path):
    """`npu-worker batch --out-dir notes.txt` (a file): the batch was accepted, every section was
    synthesised and then failed its write (`WriteFailed: ... Not a directory`), one by one."""
    engine = ToneEngine()
    client = await worker(engine)
    (tmp_path / "notes.txt").write_text("mine")
    for output in (tmp_path / "notes.txt" / "s00.wav", tmp_path / "notes.txt" / "more" / "s00.wav"):
        body = {"sections": [{"idx": 0, "text": "하나", "output_path": str(output)}]}
        response = await client.post("/synth_batch", json=body)
        assert response.status == 400
        answer = await response.json()
        assert_error_body(answer, "OutputPathNotAllowed")
        assert f"{tmp_path / 'notes.txt'} is a file, not a folder" in answer["error"]
    assert engine.calls == [] and (tmp_path / "notes.txt").read_text() == "mine"


async def test_a_path_through_more_links_than_the_system_follows_is_refused_before_any_synthesis(
    worker, tmp_path
):
    """A loop, or more than 40 links on the way (the kernel's limit, ELOOP): the walk gave up and
    returned the path with its links still in it, which the write (no link followed) then failed on,
    after the synthesis (`WriteFailed`); realpath had resolved 41 links, and left a loop as written."""
    engine = ToneEngine()
    client = await worker(engine)
    (tmp_path / "here").symlink_to(".")
    (tmp_path / "loop_a").symlink_to("loop_b")
    (tmp_path / "loop_b").symlink_to("loop_a")
    for given in ("here/" * 41 + "a.wav", "loop_a/a.wav"):
        response = await client.post("/synth", json={"text": "하나", "output_path": str(tmp_path / given)})
        assert response.status == 400, given
        answer = await response.json()
        assert_error_body(answer, "OutputPathNotAllowed")
        assert "more than 40 links" in answer["error"], answer
    assert engine.calls == []


def test_forty_links_are_followed_as_the_system_follows_them(tmp_path):
    (tmp_path / "here").symlink_to(".")
    assert resolve_unplanted(str(tmp_path / ("here/" * 40 + "a.wav"))) == str(tmp_path / "a.wav")
