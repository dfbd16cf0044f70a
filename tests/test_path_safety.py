"""Writes stay under the allowed roots even when the filesystem changes after admission (a directory
swapped for a symlink, before a write or across a `kill -9` + restart), and the state dir is never a
caller's target. The output writer's own rules, without a server, are tested in
`test_write_under_roots.py`."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from npu_worker import files, other_writers
from npu_worker.engine.base import Voice
from npu_worker.engine.zipvoice.prompt import MAX_TRANSCRIPT_BYTES, load_reference, transcript_for
from npu_worker.files import TEMP_NAME_EXTRA
from npu_worker.paths import NAME_MAX
from npu_worker.protocol import MAX_REFERENCE_BYTES, BadRequest, InvalidAudio, RefWavNotAllowed
from tests.test_http_api import read_ndjson
from tests.test_http_bad_input import assert_error_body
from tests.test_restart_recovery import get, post, wait_for
from tests.timing import seconds
from tests.tone_engine import ToneEngine
from tests.worker_process import start_worker_process


def swap_for_link(directory: Path, target: Path) -> None:
    """What a local attacker does: move the checked directory away and put a link in its place."""
    directory.rename(directory.with_name(directory.name + "-moved"))
    directory.symlink_to(target, target_is_directory=True)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path.parent / f"{tmp_path.name}-outside"
    place.mkdir()
    return place


async def run_gated(client, engine: ToneEngine, body: dict, between) -> list[dict]:
    """Submit while the engine is held, run `between()` (the job is admitted, nothing written), go on."""
    engine.gate = threading.Event()
    job = await (await client.post("/synth_batch?async=1", json=body)).json()
    assert "job_id" in job, job
    async with asyncio.timeout(seconds(10)):
        while not engine.calls:  # the first section has passed its checks and is held in the engine
            await asyncio.sleep(0.01)
    between()
    engine.gate.set()
    return await read_ndjson(await client.get(f"/jobs/{job['job_id']}/events"))


async def test_directory_swapped_for_a_link_after_admission_is_refused_at_write(worker, tmp_path, outside):
    engine = ToneEngine()
    client = await worker(engine)
    (tmp_path / "a").mkdir()
    sections = [
        {"idx": i, "text": f"섹션 {i}", "output_path": str(tmp_path / "a" / f"s{i}.wav")} for i in range(3)
    ]
    events = await run_gated(
        client, engine, {"sections": sections}, lambda: swap_for_link(tmp_path / "a", outside)
    )
    errors = [e for e in events if e["event"] == "error"]
    assert len(errors) == 3 and all(e["error"].startswith("OutputPathNotAllowed: ") for e in errors)
    assert list(outside.iterdir()) == []
    assert list((tmp_path / "a-moved").iterdir()) == []


async def test_a_deeper_component_swapped_is_refused_too(worker, tmp_path, outside):
    engine = ToneEngine()
    client = await worker(engine)
    (tmp_path / "a" / "b").mkdir(parents=True)
    body = {
        "sections": [{"idx": 0, "text": "하나", "output_path": str(tmp_path / "a" / "b" / "c" / "x.wav")}]
    }
    events = await run_gated(client, engine, body, lambda: swap_for_link(tmp_path / "a" / "b", outside))
    assert [e["error"].split(":")[0] for e in events if e["event"] == "error"] == ["OutputPathNotAllowed"]
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("queue", ["local", "redis"])
async def test_reference_swapped_for_a_link_after_admission_is_refused(
    worker, tmp_path, outside, request, queue
):
    """Checked again before each section: with `--queue redis` an engine node read on (the engine's read
    refused it later, in its own words)."""
    engine = ToneEngine()
    client = await worker(
        engine, **({"queue": request.getfixturevalue("redis_server").url} if queue == "redis" else {})
    )
    voices = tmp_path / "voices"
    voices.mkdir()
    (voices / "ref.wav").write_bytes(b"RIFF")
    (outside / "ref.wav").write_bytes(b"RIFF")
    # One section is checked and held in the engine when the swap happens (section 0 on a local queue;
    # either with Redis, whose engine node may claim them out of order); the other is checked after it.
    texts = ["하나", "둘"]
    body = {
        "sections": [{"idx": i, "text": text} for i, text in enumerate(texts)],
        "ref_wav": str(voices / "ref.wav"),
    }
    events = await run_gated(client, engine, body, lambda: swap_for_link(voices, outside))
    held = texts.index(engine.calls[0])
    assert queue == "redis" or held == 0
    errors = [(e["idx"], e["error"].split(":")[0]) for e in events if e["event"] == "error"]
    assert errors == [(1 - held, "RefWavNotAllowed")]


@pytest.mark.parametrize("inside", ["cache/x.wav", "jobs/abc/job.json", "outputs/abc/s00.wav", "x.wav"])
async def test_the_state_dir_is_never_a_callers_target(worker, tmp_path, settings, inside):
    client = await worker()  # the root (tmp_path) contains the state dir: it is refused all the same
    target = Path(settings.state_dir) / inside
    response = await client.post("/synth", json={"text": "hi", "output_path": str(target)})
    assert response.status == 400
    assert_error_body(await response.json(), "OutputPathNotAllowed")
    assert not target.exists()
    response = await client.post(
        "/synth", json={"text": "hi", "output_path": str(tmp_path / "o.wav"), "ref_wav": str(target)}
    )
    assert_error_body(await response.json(), "RefWavNotAllowed")


@pytest.mark.allow_blocking
def test_swap_during_a_kill_9_is_refused_when_the_job_resumes(tmp_path, outside):
    state, root = tmp_path / "state", tmp_path / "root"
    (root / "a").mkdir(parents=True)
    processes: list[subprocess.Popen] = []
    try:
        slow = start_worker_process(state, 0, delay=0.05, timeout=seconds(30), output_root=root)
        processes.append(slow)
        base = f"http://127.0.0.1:{slow.port}"
        sections = [
            {"idx": i, "text": "가" * 30, "output_path": str(root / "a" / f"s{i}.wav")} for i in range(6)
        ]
        job = post(base, "/synth_batch?async=1", {"sections": sections})["job_id"]
        wait_for(lambda: get(base, f"/jobs/{job}/status")["done"] >= 1, seconds(30))
        slow.send_signal(signal.SIGKILL)
        slow.wait()
        swap_for_link(root / "a", outside)
        processes.append(start_worker_process(state, 0, delay=0.0, timeout=seconds(30), output_root=root))
        base = f"http://127.0.0.1:{processes[-1].port}"  # a port of its own: the last one may be taken
        wait_for(lambda: get(base, f"/jobs/{job}/status")["status"] == "done", seconds(30))
        result = get(base, f"/jobs/{job}/result")
        assert result["fail_count"] >= 1 and result["ok_count"] + result["fail_count"] == 6
        assert list(outside.iterdir()) == []
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=seconds(10))


def test_reference_recheck_exempts_stored_voices_only(tmp_path, outside):
    from npu_worker.paths import PathPolicy

    state = tmp_path / "state"
    policy = PathPolicy((str(tmp_path),), str(state))
    (state / "voices").mkdir(parents=True)
    (state / "cache").mkdir()
    for place in (state / "voices" / "teacher.wav", state / "cache" / "k.wav", tmp_path / "ref.wav"):
        place.write_bytes(b"RIFF")
    policy.check_ref_wav(str(state / "voices" / "teacher.wav"))  # the worker's own upload
    policy.check_ref_wav(str(tmp_path / "ref.wav"))
    with pytest.raises(RefWavNotAllowed, match="state directory"):
        policy.check_ref_wav(str(state / "cache" / "k.wav"))
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    (outside / "x.wav").write_bytes(b"RIFF")
    with pytest.raises(RefWavNotAllowed):
        policy.check_ref_wav(str(tmp_path / "link" / "x.wav"))


def test_the_engine_reads_a_reference_the_way_it_was_checked_so_a_later_swap_reads_nothing_else(
    tmp_path, outside
):
    """Between `check_ref_wav` and the engine's read a local user swaps the reference (or its folder)
    for a link to a secret wav and transcript: the engine's read (`Voice.read`) refuses the link."""
    from npu_worker.paths import PathPolicy

    policy = PathPolicy((str(tmp_path),), str(tmp_path / "state"))
    voices = tmp_path / "voices"
    voices.mkdir()
    (voices / "ref.wav").write_bytes(b"RIFF" + b"\0" * 100)
    (voices / "ref.txt").write_text("the caller's transcript")
    (outside / "ref.wav").write_bytes(b"RIFF secret")
    (outside / "ref.txt").write_text("a secret transcript")
    voice = Voice(str(voices / "ref.wav"), read=policy.read_reference)
    policy.check_ref_wav(voice.ref_wav)
    assert transcript_for(voice) == "the caller's transcript"

    (voices / "ref.txt").unlink()
    (voices / "ref.txt").symlink_to(outside / "ref.txt")  # the final name swapped
    # the caller's link, refused by name (RefWavNotAllowed, a 400): it was `EngineError: reference ...
    # has no transcript: put it in ref.txt beside the wav`, a 500 on /v1/audio/speech
    with pytest.raises(RefWavNotAllowed, match=r"ref\.txt: ref\.txt is a symbolic link"):
        transcript_for(voice)
    swap_for_link(voices, outside)  # the folder swapped
    with pytest.raises(RefWavNotAllowed, match="ref.wav: voices is a symbolic link"):
        load_reference(voice.ref_wav, 24000, voice.read)
    assert transcript_for(Voice(voice.ref_wav)) == "a secret transcript"  # what a plain read would get


async def test_the_state_dir_is_created_private(worker, settings):
    await worker()
    assert Path(settings.state_dir).stat().st_mode & 0o077 == 0


async def test_the_default_voice_named_by_a_caller_is_the_operators_file_wherever_it_lies(
    worker, tmp_path, outside
):
    reference = outside / "operator.wav"
    reference.write_bytes(b"RIFF")
    client = await worker(ref_wav=str(reference))
    body = {"sections": [{"idx": 0, "text": "하나"}], "ref_wav": "default", "stream": False}
    result = await (await client.post("/synth_batch", json=body)).json()
    assert result["ok_count"] == 1, result


@pytest.mark.parametrize("field", ["output_path", "ref_wav"])
async def test_a_path_longer_than_the_system_can_open_is_refused_up_front(worker, tmp_path, field):
    """The worker writes component by component and could create it, but the caller could not open it.
    Nor one that only resolving makes short (`..` after `..`): it is refused as given, before resolving,
    whose time grows faster than the path (seconds for one of a body's 1000 sections)."""
    client = await worker()
    deep = str(tmp_path / "/".join("d" * 2100) / "s.wav")
    long_name = str(tmp_path / ("n" * 300 + ".wav"))
    dotted = str(tmp_path) + "/d/.." * 1000 + "/ok.wav"
    name = "OutputPathNotAllowed" if field == "output_path" else "RefWavNotAllowed"
    for path in (deep, long_name, dotted):
        body = {"text": "안녕.", "output_path": str(tmp_path / "ok.wav"), field: path}
        response = await client.post("/synth", json=body)
        assert response.status == 400
        answer = await response.json()
        assert_error_body(answer, name)
        assert "the system's limit" in answer["error"]
    assert not (tmp_path / "d").exists()


SWAPS = {
    "a symlink to a secret": lambda wav, secret: (wav.unlink(), wav.symlink_to(secret)),
    "a hard link to a secret": lambda wav, secret: (wav.unlink(), os.link(secret, wav)),
    "a FIFO": lambda wav, secret: (wav.unlink(), os.mkfifo(wav)),
    "its folder swapped for a link": lambda wav, secret: swap_for_link(wav.parent, secret.parent),
}


@pytest.mark.parametrize("swap", sorted(SWAPS))
async def test_a_sections_wav_swapped_after_it_was_written_is_not_served(worker, tmp_path, outside, swap):
    """`GET .../audio` reads the file the worker wrote, the way it wrote it: a local user who can write
    in the caller's folder cannot turn it into a way to read another file (or to hang a reader)."""
    client = await worker()
    (tmp_path / "out").mkdir()
    secret = outside / "s00.wav"  # the same name, so a swapped folder finds it
    secret.write_bytes(b"the worker's secret")
    wav = tmp_path / "out" / "s00.wav"
    body = {"sections": [{"idx": 0, "text": "하나", "output_path": str(wav)}], "stream": False}
    assert (await (await client.post("/synth_batch", json=body)).json())["ok_count"] == 1
    job_id = (await (await client.get("/jobs")).json())["jobs"][0]["job_id"]
    served = await client.get(f"/jobs/{job_id}/sections/0/audio")
    assert served.status == 200 and await served.read() == wav.read_bytes()

    SWAPS[swap](wav, secret)
    async with asyncio.timeout(seconds(10)):
        refused = await client.get(f"/jobs/{job_id}/sections/0/audio")
    text = await refused.text()
    assert refused.status == 404 and "secret" not in text
    assert_error_body(await refused.json(), "AudioNotFound")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
async def test_a_sections_wav_replaced_by_another_users_file_is_not_served(worker, tmp_path):
    client = await worker()
    wav = tmp_path / "s00.wav"
    body = {"sections": [{"idx": 0, "text": "하나", "output_path": str(wav)}], "stream": False}
    assert (await (await client.post("/synth_batch", json=body)).json())["ok_count"] == 1
    job_id = (await (await client.get("/jobs")).json())["jobs"][0]["job_id"]
    wav.unlink()
    wav.write_bytes(b"RIFF planted")
    os.chown(wav, 65534, 65534)
    refused = await client.get(f"/jobs/{job_id}/sections/0/audio")
    assert refused.status == 404 and "planted" not in await refused.text()


async def test_a_reference_larger_than_any_voice_prompt_is_refused_unread(worker, tmp_path):
    client = await worker()
    huge = tmp_path / "huge.wav"
    with open(huge, "wb") as out:  # sparse: no disk used
        out.truncate(MAX_REFERENCE_BYTES + 1)
    body = {"text": "하나", "output_path": str(tmp_path / "a.wav"), "ref_wav": str(huge)}
    response = await client.post("/synth", json=body)
    assert response.status == 400
    answer = await response.json()
    assert_error_body(answer, "RefWavNotAllowed")
    assert f"{MAX_REFERENCE_BYTES + 1} bytes" in answer["error"]


def test_reading_a_reference_never_waits_on_a_fifo_nor_reads_a_huge_file(tmp_path):
    fifo = tmp_path / "ref.wav"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        files.read_regular(fifo, 1024)  # returns at once: no writer is waited for
    huge = tmp_path / "huge.wav"
    with open(huge, "wb") as out:
        out.truncate(MAX_REFERENCE_BYTES + 1)
    with pytest.raises(InvalidAudio, match="a reference voice is a few seconds of speech"):
        load_reference(str(huge), 24000)
    sidecar = tmp_path / "voice.txt"
    sidecar.write_bytes(b"x" * (MAX_TRANSCRIPT_BYTES + 1))
    (tmp_path / "voice.wav").write_bytes(b"RIFF")
    with pytest.raises(
        BadRequest, match="transcript .*voice.txt is .* bytes, more than the 65536"
    ) as refused:
        transcript_for(Voice(ref_wav=str(tmp_path / "voice.wav")))
    # the caller's file (its ref_wav named it), as an empty or non-UTF-8 one: an EngineError was a 500 on /v1/
    assert refused.value.param == "ref_text"


def test_a_small_file_read_under_a_large_bound_takes_its_size_not_the_bounds(tmp_path):
    """Each reference read (64 MiB bound) took a 64 MiB buffer, whatever the file's size."""
    import tracemalloc

    small = tmp_path / "small.wav"
    small.write_bytes(b"RIFF" * 1000)
    tracemalloc.start()
    try:
        assert files.read_regular(small, MAX_REFERENCE_BYTES) == b"RIFF" * 1000
        assert files.read_own(small, MAX_REFERENCE_BYTES) == b"RIFF" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak / 1e6:.1f} MB held to read 4 kB"
    with pytest.raises(files.TooLarge):
        files.read_regular(small, 3999)


def test_the_state_dirs_missing_parents_are_made_private_whatever_the_umask(tmp_path):
    """With Debian's user umask 002, `~/.local` and `~/.local/share` came out 0775 when the worker made
    them for its default state dir, and the next check refused them: every start failed."""
    from npu_worker.state_dir import make_private_dir

    state = tmp_path / "home" / ".local" / "share" / "npu-worker"
    previous = os.umask(0o002)
    try:
        make_private_dir(state)
    finally:
        os.umask(previous)
    for folder in (tmp_path / "home", tmp_path / "home" / ".local", state.parent, state):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_a_group_with_someone_else_in_it_counts_as_others_but_roots_group_does_not(tmp_path):
    folder = tmp_path / "group-writable"
    folder.mkdir(mode=0o770)
    folder.chmod(0o770)
    if os.geteuid() == 0:
        assert other_writers.writable_by_others(folder.stat()) is False  # root:root
        os.chown(folder, 0, 65534)  # nogroup: not the owner's own group
    else:
        pytest.skip("giving a folder to another group needs root")
    assert other_writers.writable_by_others(folder.stat()) is True
    assert "others can write in" in (other_writers.shared_with_others(folder) or "")


def test_a_root_below_a_folder_others_may_only_pass_through_is_written_and_read(tmp_path):
    """The walk from `/` opened every folder above a root for reading: below a 0711 folder (a home, a
    shared /srv) every write and read of the worker failed with a permission error."""
    if os.geteuid() != 0:
        pytest.skip("acting as another user needs root")
    passing = Path(tempfile.mkdtemp(prefix="npu-worker-pass-"))  # in the temp dir: pytest's is 0700
    root = passing / "out"
    root.mkdir()
    os.chown(root, 65534, 65534)
    passing.chmod(0o711)
    script = (
        "import os, sys\n"
        "from npu_worker import files\n"  # imported as root, then run as nobody
        "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
        f"files.write_under_roots({str(root / 'a.wav')!r}, b'RIFF', [{str(root)!r}])\n"
        f"print(files.read_beneath({str(root / 'a.wav')!r}, [{str(root)!r}], 100, own=True))\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(passing)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "b'RIFF'"


async def test_an_output_name_with_no_room_for_its_temp_file_is_refused_before_any_synthesis(
    worker, tmp_path
):
    """A wav is written through `.<name>.<token>.part`, 19 bytes longer than its name: a name of 237 to
    255 bytes passed admission, then each of its sections was synthesised and failed, "File name too
    long". It is refused at admission now, like a name over NAME_MAX."""
    engine = ToneEngine()
    client = await worker(engine)
    longest = "a" * (NAME_MAX - TEMP_NAME_EXTRA - 4) + ".wav"
    for route, body in (
        ("/synth", {"text": "가.", "output_path": str(tmp_path / f"b{longest}")}),
        (
            "/synth_batch?async=1",
            {"sections": [{"text": "가.", "output_path": str(tmp_path / f"c{longest}")}]},
        ),
    ):
        answer = await client.post(route, json=body)
        refused = await answer.json()
        assert answer.status == 400, refused
        assert_error_body(refused, "OutputPathNotAllowed")
        assert f"at most {NAME_MAX - TEMP_NAME_EXTRA}" in refused["error"]
    assert engine.calls == []
    written = await client.post("/synth", json={"text": "가.", "output_path": str(tmp_path / longest)})
    assert (await written.json())["status"] == "ok" and (tmp_path / longest).is_file()
