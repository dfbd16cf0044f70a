"""The byte bound of what jobs keep in the state dir (`--jobs-max-bytes`: records, logs, default
outputs), on a real worker with the espeak-ng engine, real files in the state dir and the HTTP API: the
oldest finished jobs go first, running jobs never, a section or a batch with no room is refused alone,
and the count survives a restart."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.config import Settings
from npu_worker.config_sources import add_settings_arguments, load_settings
from npu_worker.jobs.job_bytes import JobBytes
from npu_worker.jobs.model import KeptJob
from npu_worker.protocol import WorkerError
from tests.test_metrics import scrape, value
from tests.timing import seconds
from tests.tone_engine import ToneEngine

SHORT = "전압을 측정합니다."  # one espeak-ng section: a few tens of KB of wav


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """espeak-ng on the engine thread (`--no-espeak-process`): these tests count the bytes jobs keep, not
    where espeak runs, and the child each worker started (its own interpreter, numpy, the Korean reader)
    was ≈ 0.7 s of CPU a worker, 20 workers here. The child's own tests are tests/test_espeak_*.py."""
    return settings.replace(espeak_process=False)


def held(folder: Path) -> int:
    """What a folder holds on disk, walked whole (the test's own count, not the worker's)."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def kept(state: Path, job_id: str = "") -> int:
    """What jobs keep in a state dir (one job's, given its id): records, logs, default outputs."""
    return held(state / "jobs" / job_id) + held(state / "outputs" / job_id)


async def run_batch(client, texts: list[str]) -> tuple[str, list[dict]]:
    """A batch without output_path, run to its `done`: its id and its events."""
    body = {"lang": "ko", "sections": [{"idx": i, "text": t} for i, t in enumerate(texts)]}
    response = await client.post("/synth_batch?async=1", json=body)
    assert response.status == 200, await response.text()
    job_id = (await response.json())["job_id"]
    async with asyncio.timeout(seconds(30)):
        events = await client.get(f"/jobs/{job_id}/events")
        lines = [json.loads(line) async for line in events.content if line.strip()]
    assert lines[-1]["event"] == "done"
    return job_id, lines


async def section_bytes(client, settings) -> int:
    """The size of one SHORT section's wav, measured on this worker (espeak-ng's own output varies)."""
    job_id, _ = await run_batch(client, [SHORT])
    return kept(Path(settings.state_dir), job_id)


async def test_the_oldest_finished_jobs_go_first_and_their_ids_answer_404(worker, settings):
    state = Path(settings.state_dir)
    probe = await worker(None, jobs_max_bytes=0)
    size = await section_bytes(probe, settings)
    await probe.close()
    budget = 3 * size + size // 2  # room for three such jobs, not four
    client = await worker(None, jobs_max_bytes=budget)
    jobs = [(await run_batch(client, [SHORT]))[0] for _ in range(5)]
    assert kept(state) <= budget
    samples = await scrape(client)
    assert value(samples, "npu_worker_job_bytes") == kept(state)
    assert value(samples, "npu_worker_jobs_removed_total", reason="room") == 3  # and the probe's job
    assert value(samples, "npu_worker_jobs_removed_total", reason="retention") == 0
    for gone in jobs[:2]:  # and the probe's job before them
        for path in (f"/jobs/{gone}/status", f"/jobs/{gone}/result", f"/jobs/{gone}/sections/0/audio"):
            response = await client.get(path)
            assert response.status == 404, path
            body = await response.json()
            assert body["status"] == "fail" and body["error"].startswith(f"JobNotFound: no job {gone}: ")
            assert "removed to make room under --jobs-max-bytes" in body["error"], body
        assert not (state / "outputs" / gone).exists()
    for job_id in jobs[2:]:
        response = await client.get(f"/jobs/{job_id}/sections/0/audio")
        assert response.status == 200
        assert (await response.read())[:4] == b"RIFF"


async def test_a_section_running_jobs_leave_no_room_for_fails_and_nothing_else_goes(worker, settings):
    state = Path(settings.state_dir)
    probe = await worker(None, jobs_max_bytes=0)
    finished, _ = await run_batch(probe, [SHORT])
    size = kept(state, finished)
    await probe.close()
    client = await worker(None, jobs_max_bytes=3 * size + size // 2)
    # Seven sections: room for three; the finished job goes for the third, then there is none.
    running, events = await run_batch(client, [SHORT] * 7)
    finals = {e["idx"]: e for e in events if e["event"] == "error" or e.get("status") == "ok"}
    assert [finals[i]["event"] for i in range(7)] == ["progress"] * 3 + ["error"] * 4
    for idx in range(3, 7):
        assert finals[idx]["error"].startswith("WriteFailed:") and "--jobs-max-bytes" in finals[idx]["error"]
    assert events[-1]["ok_count"] == 3 and events[-1]["fail_count"] == 4
    assert (await client.get(f"/jobs/{finished}/status")).status == 404  # the oldest finished one went
    for idx in range(3):  # what the running job made stays
        assert (await client.get(f"/jobs/{running}/sections/{idx}/audio")).status == 200
    assert kept(state) <= 3 * size + size // 2


async def test_a_section_larger_than_what_eviction_frees_removes_nothing(worker, settings):
    probe = await worker(None, jobs_max_bytes=0)
    size = await section_bytes(probe, settings)
    await probe.close()
    client = await worker(None, jobs_max_bytes=2 * size + size // 2)
    older = [(await run_batch(client, [SHORT]))[0] for _ in range(2)]
    _, events = await run_batch(client, [SHORT * 8])  # far more than the whole budget
    final = next(e for e in events if e["event"] == "error")
    assert final["error"].startswith("WriteFailed:")
    for job_id in older:  # removing them would not have made room: both stay
        assert (await client.get(f"/jobs/{job_id}/sections/0/audio")).status == 200


async def test_the_count_survives_a_restart_and_a_lowered_bound_applies_at_start(worker, settings):
    state = Path(settings.state_dir)
    first = await worker(None, jobs_max_bytes=0)  # no byte bound
    jobs = [(await run_batch(first, [SHORT]))[0] for _ in range(4)]
    size = max(kept(state, job_id) for job_id in jobs)
    await first.close()
    budget = 2 * size + size // 2
    client = await worker(None, jobs_max_bytes=budget)  # counted at start: two jobs too many
    for gone in jobs[:2]:
        assert (await client.get(f"/jobs/{gone}/status")).status == 404
    assert kept(state) <= budget
    newest, _ = await run_batch(client, [SHORT])  # counted with what was there: the third job goes
    assert (await client.get(f"/jobs/{jobs[2]}/status")).status == 404
    assert (await client.get(f"/jobs/{jobs[3]}/status")).status == 200
    assert (await client.get(f"/jobs/{newest}/sections/0/audio")).status == 200
    assert kept(state) <= budget


def test_every_folder_is_listed_a_failed_write_is_not_counted_and_a_rewrite_replaces(tmp_path):
    root = tmp_path / "outputs"
    (root / "stray").mkdir(parents=True)
    (root / "stray" / "s00.wav").write_bytes(b"x" * 100)
    budget = JobBytes((str(root),), 250)
    assert budget.recount() == 100
    assert budget.job_ids() == ["stray"]
    path = str(root / "job" / "s00.wav")
    try:
        with budget.writing("job", path, 120):
            raise OSError("disk full")
    except OSError:
        pass
    assert budget.total == 100  # the write failed: nothing counted
    with budget.writing("job", path, 120):
        pass
    with budget.writing("job", path, 140):  # the same file again (a resumed section): replaced, not added
        pass
    assert budget.total == 240 and budget.held_by("job") == 140
    with budget.writing("job", os.path.join(tmp_path, "callers.wav"), 10_000):  # a caller's path: not counted
        pass
    assert budget.total == 240


def test_the_oldest_jobs_that_free_the_need_are_chosen_skipping_empty_ones(tmp_path):
    """The choice both retentions' `make_room` share: in the order given, jobs holding nothing skipped,
    as few as free `need`; none at all when every one of them together would not."""
    root = tmp_path / "outputs"
    for job_id, size in (("a", 100), ("c", 50), ("d", 70)):
        (root / job_id).mkdir(parents=True)
        (root / job_id / "s00.wav").write_bytes(b"x" * size)
    budget = JobBytes((str(root),), 1000)
    budget.recount()
    order = ["a", "b", "c", "d"]  # "b" holds nothing here
    assert budget.oldest_freeing(order, 100) == ["a"]
    assert budget.oldest_freeing(order, 101) == ["a", "c"]
    assert budget.oldest_freeing(iter(order), 220) == ["a", "c", "d"]
    assert budget.oldest_freeing(order, 221) == []
    assert budget.oldest_freeing(["d", "c"], 60) == ["d"]


async def probe_size(worker, tmp_path: Path) -> int:
    """One SHORT section's wav size, on a worker of its own (its own state dir)."""
    probe = await worker(None, state_dir=str(tmp_path / "probe"), jobs_max_bytes=0)
    job_id, _ = await run_batch(probe, [SHORT])
    await probe.close()
    return kept(tmp_path / "probe", job_id)


async def check_oldest_go(client, outputs: Path, budget: int) -> None:
    """Five one-section jobs where three fit (a Redis node's jobs keep their records in Redis)."""
    jobs = []
    for _ in range(5):
        jobs.append((await run_batch(client, [SHORT]))[0])
        assert held(outputs) <= budget
    for gone in jobs[:2]:
        response = await client.get(f"/jobs/{gone}/status")
        error = (await response.json())["error"]
        assert response.status == 404 and error.startswith(
            f"JobNotFound: no job {gone}: removed to make room"
        )
        assert not (outputs / gone).exists()
    for job_id in jobs[2:]:
        assert (await client.get(f"/jobs/{job_id}/sections/0/audio")).status == 200


async def test_on_a_redis_queue_a_both_node_bounds_the_files_it_writes(worker, redis_server, tmp_path):
    size = await probe_size(worker, tmp_path)
    budget = 3 * size + size // 2
    client = await worker(None, queue=redis_server.url, claim_timeout=1.0, jobs_max_bytes=budget)
    await check_oldest_go(client, tmp_path / "state" / "outputs", budget)


async def test_on_a_redis_queue_the_accepting_nodes_writer_bounds_its_files(worker, redis_server, tmp_path):
    size = await probe_size(worker, tmp_path)
    budget = 3 * size + size // 2
    queue = {"queue": redis_server.url, "claim_timeout": 1.0}
    await worker(None, role="engine", state_dir=str(tmp_path / "engine"), **queue)
    api = await worker(None, role="api", jobs_max_bytes=budget, **queue)  # writes what the engine made
    await check_oldest_go(api, tmp_path / "state" / "outputs", budget)
    assert not (tmp_path / "engine" / "outputs").exists() or held(tmp_path / "engine" / "outputs") == 0


FAILING = "boom " + "가" * 1990  # ToneEngine fails it at once: the job keeps its record and log only


async def run_failing(client, sections: int = 20) -> str:
    body = {"sections": [{"idx": i, "text": FAILING} for i in range(sections)]}
    response = await client.post("/synth_batch?async=1", json=body)
    assert response.status == 200, await response.text()
    job_id = (await response.json())["job_id"]
    async with asyncio.timeout(seconds(30)):
        events = await client.get(f"/jobs/{job_id}/events")
        assert [json.loads(line) async for line in events.content if line.strip()][-1]["event"] == "done"
    return job_id


async def test_finished_jobs_records_count_too_and_the_oldest_go_first(worker, tmp_path):
    """A batch's record holds its texts (up to the body's 8 MiB) and stays with the job whatever its
    sections made: 1 000 kept jobs of 5 MB records were 5 GB that no bound on outputs saw."""
    probe = await worker(ToneEngine(fail_on="boom"), state_dir=str(tmp_path / "probe"), jobs_max_bytes=0)
    size = kept(tmp_path / "probe", await run_failing(probe))
    await probe.close()
    budget = 3 * size + size // 2
    state = tmp_path / "state"
    client = await worker(ToneEngine(fail_on="boom"), jobs_max_bytes=budget)
    jobs = []
    for _ in range(5):
        jobs.append(await run_failing(client))
        assert kept(state) <= budget
    assert [(await client.get(f"/jobs/{job_id}/status")).status for job_id in jobs] == [404] * 2 + [200] * 3


async def test_a_batch_whose_record_finds_no_room_is_refused_503_and_nothing_goes(worker, tmp_path):
    probe = await worker(ToneEngine(fail_on="boom"), state_dir=str(tmp_path / "probe"), jobs_max_bytes=0)
    size = kept(tmp_path / "probe", await run_failing(probe, sections=2))
    await probe.close()
    client = await worker(ToneEngine(fail_on="boom"), jobs_max_bytes=2 * size + size // 2)
    finished = [await run_failing(client, sections=2) for _ in range(2)]
    body = {"sections": [{"idx": i, "text": FAILING} for i in range(10)]}  # a record past the whole bound
    response = await client.post("/synth_batch?async=1", json=body)
    assert response.status == 503
    error = (await response.json())["error"]
    assert error.startswith("StateUnavailable:") and "is larger than --jobs-max-bytes" in error
    listed = [job["job_id"] for job in (await (await client.get("/jobs")).json())["jobs"]]
    assert sorted(listed) == sorted(finished)  # nothing queued, nothing removed
    assert sorted(p.name for p in (tmp_path / "state" / "jobs").iterdir()) == sorted(finished)


def test_serve_refuses_a_bound_that_the_largest_batch_could_never_fit():
    """Else every batch of the largest allowed body was a 503 StateUnavailable, retried for ever."""
    parser = argparse.ArgumentParser()
    add_settings_arguments(parser)
    args = parser.parse_args(["--jobs-max-bytes", "1048576", "--max-body-bytes", "2097152"])
    with pytest.raises(SystemExit, match=r"--jobs-max-bytes 1048576 is less than .* \(2097152 bytes"):
        load_settings(args, environ={})
    with pytest.raises(SystemExit, match=r"NPU_WORKER_JOBS_MAX_BYTES 4194304 is less"):
        load_settings(parser.parse_args([]), environ={"NPU_WORKER_JOBS_MAX_BYTES": "4194304"})
    assert load_settings(parser.parse_args(["--jobs-max-bytes", "0"]), environ={}).jobs_max_bytes == 0


async def test_a_download_under_way_when_its_job_is_removed_is_sent_whole(worker, tmp_path):
    """Removing a job unlinks its files; a section's wav already being sent (`GET .../audio`, an open
    file sent as the client takes it) still comes whole, not cut at the removal (a file truncated
    there left the download waiting for ever for the bytes its Content-Length promised)."""
    long_text = " ".join([SHORT] * 180)  # 1 979 characters: a 15 MB wav, more than socket buffers hold
    before = await worker(None, jobs_max_bytes=0)
    first, _ = await run_batch(before, [long_text])
    await before.close()
    size = kept(tmp_path / "state", first)
    client = await worker(None, jobs_max_bytes=size + size // 2)  # room for one such job
    response = await client.get(f"/jobs/{first}/sections/0/audio")
    assert response.status == 200
    length = int(response.headers["Content-Length"])
    head = await response.content.readexactly(44)
    second, _ = await run_batch(client, [long_text])  # made room by removing the first job
    assert (await client.get(f"/jobs/{first}/status")).status == 404
    assert not (tmp_path / "state" / "outputs" / first).exists()
    async with asyncio.timeout(seconds(30)):
        rest = await response.read()
    assert head[:4] == b"RIFF" and 44 + len(rest) == length
    assert (await client.get(f"/jobs/{second}/sections/0/audio")).status == 200


async def test_on_a_redis_queue_a_job_whose_record_vanished_still_gives_its_files_back(
    worker, redis_server, tmp_path
):
    """A finished job's record gone from Redis (expired, evicted by `maxmemory`, deleted by hand): its
    default outputs here were counted, so they must go when it is removed to make room, else the bound
    filled with bytes no removal could free and every later section failed (WriteFailed)."""
    from redis.asyncio import Redis

    from npu_worker.jobs.cluster.keys import job_key

    size = await probe_size(worker, tmp_path)
    budget = 2 * size + size // 2  # room for two such jobs
    client = await worker(None, queue=redis_server.url, claim_timeout=1.0, jobs_max_bytes=budget)
    outputs = tmp_path / "state" / "outputs"
    vanished, _ = await run_batch(client, [SHORT])
    redis = Redis.from_url(redis_server.url)
    try:
        assert await redis.delete(job_key(vanished)) == 1
    finally:
        await redis.aclose()
    for _ in range(3):  # the second makes room: the vanished job's files are the oldest
        _, events = await run_batch(client, [SHORT])
        assert events[-1]["ok_count"] == 1, events
        assert held(outputs) <= budget
    assert not (outputs / vanished).exists()
    samples = await scrape(client)
    assert value(samples, "npu_worker_job_bytes") == held(outputs)
    assert value(samples, "npu_worker_jobs_removed_total", reason="room") == 2


def test_a_job_folder_replaced_by_a_link_is_not_counted_through_it(tmp_path):
    """A folder that is a link is no job's (start-up's count skips it): counted through it after a
    removal, the files elsewhere held bytes of the bound that no removal could ever free."""
    root, elsewhere = tmp_path / "outputs", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (elsewhere / "s00.wav").write_bytes(b"x" * 1000)
    (root / "job").symlink_to(elsewhere)
    budget = JobBytes((str(root),), 5000)
    assert budget.recount() == 0
    budget.recount_job("job")  # as after retention removed the job
    assert budget.total == 0 and budget.held_by("job") == 0


async def test_files_of_no_kept_job_take_no_room_from_the_jobs_and_are_named_at_start(
    worker, settings, caplog
):
    """A folder of no job the worker keeps (a damaged job skipped at start, a copy, a Redis node's
    outputs left when the worker went back to a local queue) is never removed by it: counted, it held
    its bytes of the bound for good, and once it filled it every section failed (WriteFailed)."""
    state = Path(settings.state_dir)
    stray = state / "outputs" / "0123456789abcdef"
    stray.mkdir(parents=True)
    (stray / "s00.wav").write_bytes(b"x" * 600_000)  # more than the whole bound
    client = await worker(None, jobs_max_bytes=500_000)
    _, events = await run_batch(client, [SHORT])
    assert events[-1]["ok_count"] == 1, events
    assert value(await scrape(client), "npu_worker_job_bytes") == kept(state) - 600_000
    assert "600000 bytes in" in caplog.text and "not counted against --jobs-max-bytes" in caplog.text
    assert (stray / "s00.wav").exists()


async def test_a_redis_node_on_a_local_workers_state_dir_takes_no_room_from_its_old_jobs(
    worker, settings, redis_server, caplog
):
    """Scaling out with the same state dir: the local queue's jobs (records, logs, default outputs) are
    no job of the Redis queue and no node removes them. Counted, a state dir kept near the bound by the
    local worker (as it is once in use) left the node no room: every default output failed."""
    state = Path(settings.state_dir)
    local = await worker(None, jobs_max_bytes=0)
    for _ in range(2):
        await run_batch(local, [SHORT] * 2)
    before = kept(state)
    await local.close()
    node = await worker(None, queue=redis_server.url, claim_timeout=1.0, jobs_max_bytes=before + 1000)
    _, events = await run_batch(node, [SHORT])
    assert events[-1]["ok_count"] == 1, events
    assert value(await scrape(node), "npu_worker_job_bytes") == kept(state) - before
    assert f"{before} bytes in" in caplog.text and "not counted against --jobs-max-bytes" in caplog.text


async def test_a_job_removed_while_its_log_is_read_says_why_it_went(worker, settings):
    """`result`, `events` and `audio` look a finished job up, then read its folder: removed in between
    to make room, it said only that its folder was removed from the state directory."""
    probe = await worker(None, jobs_max_bytes=0)
    size = await section_bytes(probe, settings)
    await probe.close()
    client = await worker(None, jobs_max_bytes=2 * size + size // 2)
    scheduler = client.app[SCHEDULER_KEY]
    first, _ = await run_batch(client, [SHORT])
    async with asyncio.timeout(seconds(10)):  # kept as its status once it has ended (after its `done`)
        while not isinstance(looked_up := scheduler.registry.get(first), KeptJob):
            await asyncio.sleep(0.01)
    for _ in range(2):  # the second makes room: the first job goes
        await run_batch(client, [SHORT])
    assert scheduler.registry.get(first) is None
    with pytest.raises(
        WorkerError, match=rf"^JobNotFound: no job {first}: removed to make room under --jobs-max-bytes"
    ):
        await asyncio.to_thread(scheduler.stored_job, looked_up)


def test_a_callers_path_through_a_link_into_the_job_folders_is_not_a_jobs_file(tmp_path):
    """A caller's output folder swapped for a link into `<state>/outputs` after admission: the write is
    refused (no link is followed), and its bytes were never the jobs' to count or to make room for."""
    outputs = tmp_path / "state" / "outputs"
    (outputs / "j1").mkdir(parents=True)
    (tmp_path / "mine").symlink_to(outputs, target_is_directory=True)
    counted = JobBytes((str(outputs),), max_bytes=10)
    with counted.writing("j1", str(tmp_path / "mine" / "j1" / "s01.wav"), 100):
        pass  # WriteFailed: 100 bytes past a 10-byte bound, for a file the jobs never hold
    with pytest.raises(WorkerError):
        with counted.writing("j1", str(outputs / "j1" / "s01.wav"), 100):
            pass
