"""Finished jobs are kept as their status only; their sections and log are read again from their folder
when a caller asks (`KeptJob`, `Scheduler.stored_job`)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import threading
import time
import tracemalloc
from pathlib import Path

from npu_worker import wire
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.http_compat.bodies import JobList, JobResult, JobStatus
from npu_worker.jobs.journal import LocalJournal
from npu_worker.jobs.model import Job, KeptJob, LogEntry, Section
from npu_worker.jobs.store import JobStore
from npu_worker.protocol import Done, Progress, Start, SynthParams
from tests.disk_full import disk_full_past
from tests.inline_handoff import InlineHandoff
from tests.test_job_retention import write_job
from tests.timing import seconds
from tests.tone_engine import ToneEngine

LECTURE = Path(__file__).resolve().parents[1] / "npu_worker" / "bench" / "lecture_ko_39.json"  # shipped copy
SECTIONS = [
    {"idx": 0, "text": "첫 번째 문장입니다."},
    {"idx": 1, "text": "   "},  # EmptyText: the job's log holds an `error` too
    {"idx": 2, "text": "세 번째 문장입니다."},
]


async def read_all(client, path: str) -> tuple[int, bytes]:
    async with asyncio.timeout(seconds(30)):
        response = await client.get(path)
        return response.status, await response.read()


async def finished_job(client) -> str:
    response = await client.post("/synth_batch?async=1", json={"sections": SECTIONS})
    job_id = (await response.json())["job_id"]
    status, _ = await read_all(client, f"/jobs/{job_id}/events")  # until `done`
    assert status == 200
    await kept_as_status(client, job_id)
    return job_id


async def kept_as_status(client, job_id: str) -> None:
    """Until the registry holds the job as a `KeptJob` (swapped in by the thread that logged `done`)."""
    async with asyncio.timeout(seconds(10)):
        while not isinstance(client.app[SCHEDULER_KEY].registry.get(job_id), KeptJob):
            await asyncio.sleep(0.01)


async def test_a_finished_jobs_readers_get_the_bytes_its_live_log_gave_also_after_a_restart(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()  # the job waits, so the test holds its live object
    client = await worker(engine)
    response = await client.post("/synth_batch?async=1", json={"sections": SECTIONS})
    job_id = (await response.json())["job_id"]
    live = client.app[SCHEDULER_KEY].registry.get(job_id)
    assert isinstance(live, Job)
    engine.gate.set()
    await read_all(client, f"/jobs/{job_id}/events")
    async with asyncio.timeout(seconds(10)):
        while live.done_event is None:  # published on the loop after it was persisted
            await asyncio.sleep(0.01)
    # What the in-memory job answered before: its log's lines, its result and status bodies, its wav.
    golden = {
        f"/jobs/{job_id}/events": b"".join(entry.line + b"\n" for entry in live.log),
        f"/jobs/{job_id}/events?after=3": b"".join(e.line + b"\n" for e in live.entries_after(3)),
        f"/jobs/{job_id}/result": wire.encode(JobResult.of(live)),
        f"/jobs/{job_id}/status": wire.encode(JobStatus.of(live)),
        "/jobs": wire.encode(JobList([JobStatus.of(live)])),
        f"/jobs/{job_id}/sections/0/audio": Path(live.sections[0].output_path or "").read_bytes(),
    }
    kinds = [(e.to_dict()["event"], e.to_dict().get("status")) for e in live.log]
    synth, ok = ("progress", "synth"), ("progress", "ok")
    assert kinds == [("start", None), synth, ok, synth, ("error", "fail"), synth, ok, ("done", None)]
    await kept_as_status(client, job_id)
    restarted = await worker(ToneEngine())  # a new worker on the same state dir: read at start-up
    assert isinstance(restarted.app[SCHEDULER_KEY].registry.get(job_id), KeptJob)
    for reader in (client, restarted):
        for path, expected in golden.items():
            status, body = await read_all(reader, path)
            assert (status, body) == (200, expected), path


def write_finished_jobs(store: JobStore, count: int) -> None:
    texts = [s["text"] for s in json.loads(LECTURE.read_text())["sections"]]
    for n in range(count):
        job = Job(id=f"{n:016x}", params=SynthParams(lang="ko"), sections=[], created_at=time.time() + n)
        job.sections = [Section(i, text, store.default_output(job.id, i)) for i, text in enumerate(texts)]
        store.create(job)
        events: list = [Start(len(texts), "tone", "cpu", job.id, 24000)]
        for s in job.sections:
            events += [Progress(s.idx, "synth"), Progress(s.idx, "ok", s.output_path, 4.32, 0.021)]
        events.append(Done(len(texts), len(texts), 0, 12.5, False))
        lines = b"".join(LogEntry(seq, event).line + b"\n" for seq, event in enumerate(events, 1))
        (store.job_dir(job.id) / "events.ndjson").write_bytes(lines)


def test_kept_finished_jobs_hold_a_few_hundred_bytes_each_not_their_log(tmp_path):
    """20 000 finished 39-section lecture jobs held about 1 GB when their logs stayed in memory."""
    store = JobStore(tmp_path / "state")
    store.prepare()
    write_finished_jobs(store, 50)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = store.load_all()
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == 50 and all(isinstance(job, KeptJob) for job in kept)
    assert held / 50 < 1500, f"{held / 50:.0f} bytes held per finished job"


async def test_a_finished_jobs_folder_removed_or_damaged_on_disk_is_a_clear_error_not_a_hang(
    worker, settings
):
    client = await worker()
    gone, garbled, cut, fifo, linked = [await finished_job(client) for _ in range(5)]
    jobs = Path(settings.state_dir) / "jobs"
    shutil.rmtree(jobs / gone)
    (jobs / garbled / "job.json").write_text("{")
    log = jobs / cut / "events.ndjson"
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))  # its `done` lost
    (jobs / fifo / "events.ndjson").unlink()
    os.mkfifo(jobs / fifo / "events.ndjson")
    os.rename(jobs / linked, jobs / f"{linked}-moved")
    os.symlink(jobs / f"{linked}-moved", jobs / linked)
    readers = ("result", "events", "sections/0/audio")
    for reader in readers:
        status, body = await read_all(client, f"/jobs/{gone}/{reader}")
        assert status == 404 and json.loads(body)["error"].startswith("JobNotFound: "), reader
    status, _ = await read_all(client, f"/jobs/{gone}/status")
    assert status == 404  # forgotten: its status no longer says done
    status, body = await read_all(client, "/jobs")
    assert gone not in {job["job_id"] for job in json.loads(body)["jobs"]}
    for job_id in (garbled, cut, fifo, linked):
        for reader in readers:
            status, body = await read_all(client, f"/jobs/{job_id}/{reader}")
            error = json.loads(body)["error"]
            assert status == 503 and error.startswith(f"StateUnavailable: job {job_id}"), (reader, error)
        status, body = await read_all(client, f"/jobs/{job_id}/status")
        assert status == 200 and json.loads(body)["status"] == "done"  # kept in memory


async def test_retention_removes_a_kept_jobs_folder_and_default_outputs(worker, settings):
    """A kept job no longer names its sections' files: its default outputs are found in its folder."""
    client = await worker(max_jobs_kept=1)
    first = await finished_job(client)
    state = Path(settings.state_dir)
    assert sorted(p.name for p in (state / "outputs" / first).iterdir()) == ["s00.wav", "s02.wav"]
    await finished_job(client)
    async with asyncio.timeout(seconds(5)):  # forgotten first, then its files removed
        while (state / "outputs" / first).exists() or (state / "jobs" / first).exists():
            await asyncio.sleep(0.01)
    assert (await client.get(f"/jobs/{first}/status")).status == 404


async def test_a_kept_job_that_retention_removes_while_it_is_read_is_not_found(worker, settings):
    """Retention forgets the job, then removes its files: a reader between the two found the log gone
    under a job.json still there and answered 503 for a job that is simply gone."""
    client = await worker()
    job_id = await finished_job(client)
    scheduler = client.app[SCHEDULER_KEY]
    kept = scheduler.registry.remove(job_id)  # as retention does first
    assert isinstance(kept, KeptJob)
    (Path(settings.state_dir) / "jobs" / job_id / "events.ndjson").unlink()  # its removal under way
    try:
        await asyncio.to_thread(scheduler.stored_job, kept)
    except Exception as exc:  # noqa: BLE001 - the error's name is the assertion
        assert type(exc).__name__ == "JobNotFound", exc
    else:
        raise AssertionError("a removed job was read")


async def test_an_unfinished_job_folder_put_there_after_start_is_not_found_not_a_replay_for_ever(
    worker, settings
):
    """A job read from its folder but held by no one: `interrupted` for ever, its events waiting for a
    `done` that nothing would ever log (heartbeats only)."""
    client = await worker()
    job_id = write_job(Path(settings.state_dir), time.time(), ["재개."])
    async with asyncio.timeout(seconds(10)):
        for reader in ("status", "events", "result"):
            status, body = await read_all(client, f"/jobs/{job_id}/{reader}")
            assert status == 404 and json.loads(body)["error"].startswith("JobNotFound: "), reader


def test_a_finished_job_whose_lines_a_full_disk_holds_back_is_not_one_to_read_from_its_folder(tmp_path):
    """Its folder's log still lacks `done`: read from there it would look interrupted. The scheduler
    keeps such a job whole (`persisted_all`) until retention."""
    store = JobStore(tmp_path / "state")
    store.prepare()
    journal = LocalJournal(store, InlineHandoff())  # type: ignore[arg-type]
    job = Job("a1", SynthParams(), [Section(0, "가.", None)])
    journal.create(job)
    journal.append(job, Start(1, "tone", "cpu", job.id))
    with disk_full_past((store.job_dir(job.id) / "events.ndjson").stat().st_size + 10):
        journal.append(job, Progress(0, "ok", duration_sec=1.0))
        journal.append(job, Done(1, 1, 0, 0.5))
    assert job.finished and not journal.persisted_all(job)
    assert not store.load(job.id).finished
    journal.close()  # room again: written at the shutdown
    assert journal.persisted_all(job) and store.load(job.id).finished
