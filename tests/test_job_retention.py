"""Retention, restart recovery and crash leftovers, on real job directories in the state dir."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.jobs.journal import LocalJournal
from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.jobs.registry import JobRegistry
from npu_worker.jobs.retention import Retention, remove_crash_leftovers
from npu_worker.jobs.seq_jump import MARK
from npu_worker.jobs.store import JobStore
from npu_worker.protocol import Done, Progress, Start, SynthParams
from tests.inline_handoff import InlineHandoff
from tests.test_metrics import scrape, value
from tests.timing import seconds
from tests.tone_engine import ToneEngine

DAY = 86400.0


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def finished_job(journal: LocalJournal, created_at: float, output_path: str | None = None) -> Job:
    """A persisted job of one section that ran to `done` one second after it was created."""
    job_id = new_job_id()
    path = output_path or journal.default_output(job_id, 0)
    job = Job(job_id, SynthParams(), [Section(0, "가.", path)], created_at=created_at)
    journal.create(job)
    Path(path).parent.mkdir(parents=True, exist_ok=True)  # default outputs live apart from the record
    Path(path).write_bytes(b"RIFF")  # stands in for the wav
    journal.append(job, Start(1, "tone", "cpu", job_id))
    journal.append(job, Progress(0, "ok", wav_path=path))
    journal.append(job, Done(1, 1, 0, 1.0))
    return job


def journal_in(tmp_path: Path) -> LocalJournal:
    store = JobStore(tmp_path / "state")
    store.prepare()
    return LocalJournal(store, InlineHandoff())  # type: ignore[arg-type]


def test_finished_jobs_go_after_the_retention_time_but_a_callers_output_stays(tmp_path):
    journal, registry, clock = journal_in(tmp_path), JobRegistry(), Clock(1_000_000.0)
    retention = Retention(registry, journal, keep_seconds=7 * DAY, max_jobs=0, clock=clock, monotonic=clock)
    own = tmp_path / "mine.wav"
    old = finished_job(journal, clock.now, output_path=str(own))
    default = finished_job(journal, clock.now + 10)
    for job in (old, default):
        registry.add(job)
    clock.now += 7 * DAY  # one second short of the first job's end + 7 days: both stay
    assert retention.sweep() == 0
    clock.now += 5.0
    assert retention.sweep() == 1
    assert registry.get(old.id) is None and registry.get(default.id) is default
    assert not journal.store.job_dir(old.id).exists()
    assert own.read_bytes() == b"RIFF"  # never a caller's output_path
    clock.now += 10.0
    assert retention.sweep() == 1
    assert not journal.store.job_dir(default.id).exists()  # its default output went with it
    journal.close()


def test_past_the_count_bound_the_oldest_finished_jobs_go_first(tmp_path):
    journal, registry, clock = journal_in(tmp_path), JobRegistry(), Clock(1_000_000.0)
    retention = Retention(registry, journal, keep_seconds=0, max_jobs=2, clock=clock)
    jobs = [finished_job(journal, clock.now + i) for i in range(4)]
    running = Job(new_job_id(), SynthParams(), [Section(0, "가.", None)], created_at=clock.now - 5)
    for job in (*jobs, running):
        registry.add(job)
    assert retention.sweep() == 2
    assert {j.id for j in registry.snapshot()} == {jobs[2].id, jobs[3].id, running.id}
    clock.now += 365 * DAY  # no time bound: nothing more goes
    assert retention.sweep() == 0
    journal.close()


def test_a_file_someone_else_put_in_a_job_directory_is_kept(tmp_path):
    journal, registry = journal_in(tmp_path), JobRegistry()
    job = finished_job(journal, 0.0)
    stranger = journal.store.job_dir(job.id) / "notes.txt"
    stranger.write_text("keep me")
    registry.add(job)
    Retention(registry, journal, keep_seconds=1, max_jobs=0, clock=lambda: 10.0).sweep()
    assert stranger.read_text() == "keep me"
    assert not (journal.store.job_dir(job.id) / "events.ndjson").exists()
    journal.close()


def write_job(state: Path, created_at: float, texts: list[str], done: bool = False, **extra: object) -> str:
    """A job directory as a crashed (or finished) worker leaves it."""
    job_id = new_job_id()
    directory = state / "jobs" / job_id
    directory.mkdir(parents=True)
    sections = [
        {"idx": i, "text": t, "output_path": str(directory / f"s{i:02d}.wav")} for i, t in enumerate(texts)
    ]
    body = {"id": job_id, "created_at": created_at, "params": {}, "sections": sections, **extra}
    (directory / "job.json").write_text(json.dumps(body, ensure_ascii=False))
    (state / MARK).touch()  # the worker that left it had written every event it sent (`seq_jump.py`)
    lines = [
        {
            "event": "start",
            "total": len(texts),
            "backend": "tone",
            "device": "cpu",
            "job_id": job_id,
            "seq": 1,
        }
    ]
    if done:
        lines.append(
            {
                "event": "done",
                "total": len(texts),
                "ok_count": 0,
                "fail_count": 0,
                "elapsed_total_sec": 1.0,
                "seq": 2,
            }
        )
    (directory / "events.ndjson").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return job_id


async def wait_done(client, job_id: str) -> dict:
    async with asyncio.timeout(seconds(30)):
        response = await client.get(f"/jobs/{job_id}/events")
        lines = [json.loads(line) async for line in response.content if line.strip()]
    return lines[-1]


async def test_every_unfinished_job_resumes_oldest_created_first_whatever_the_count(worker, settings):
    state, now = Path(settings.state_dir), time.time()
    for i in range(1000):  # more finished jobs than the old in-memory cap, all newer on disk
        write_job(state, now - 100 + i * 0.01, ["끝."], done=True)
    created = [now - 300, now - 200, now - 250]  # oldest created: first; directory times disagree
    unfinished = [write_job(state, at, [f"재개 {i}."]) for i, at in enumerate(created)]
    for i, job_id in enumerate(unfinished):
        os.utime(state / "jobs" / job_id, (now - 10_000 + i, now - 10_000 + i))
    engine = ToneEngine()
    client = await worker(engine)
    for job_id in unfinished:
        assert (await wait_done(client, job_id))["ok_count"] == 1
    assert engine.calls == ["재개 0.", "재개 2.", "재개 1."]


async def test_a_torn_last_log_line_is_cut_and_the_job_resumes(worker, settings):
    state = Path(settings.state_dir)
    job_id = write_job(state, time.time(), ["하나.", "둘."])
    log_path = state / "jobs" / job_id / "events.ndjson"
    with open(log_path, "a") as out:
        out.write('{"event": "progress", "idx": 0, "status": "o')  # the crash cut this line
    client = await worker()
    done = await wait_done(client, job_id)
    assert done["ok_count"] == 2
    lines = log_path.read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, len(lines) + 1))


async def test_temp_files_a_crash_left_are_removed_at_start_up(worker, settings, tmp_path):
    state = Path(settings.state_dir)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    job_id = write_job(state, time.time(), ["하나."])
    body_path = state / "jobs" / job_id / "job.json"
    body = json.loads(body_path.read_text())
    body["sections"][0]["output_path"] = str(out_dir / "lecture.wav")
    body_path.write_text(json.dumps(body))
    leftovers = [out_dir / ".lecture.wav.x1y2.part", state / "jobs" / job_id / ".s00.wav.abc.part"]
    (state / "cache").mkdir(parents=True)
    leftovers.append(state / "cache" / ".0123.wav.zz.part")
    unrelated = out_dir / ".other.wav.q.part"  # not a target of any job: not ours to delete
    for path in (*leftovers, unrelated):
        path.write_bytes(b"half")
    client = await worker(cache_max_bytes=1_000_000)
    assert (await wait_done(client, job_id))["ok_count"] == 1
    assert [p for p in leftovers if p.exists()] == []
    assert unrelated.exists() and (out_dir / "lecture.wav").stat().st_size > 44


async def test_the_next_write_removes_a_crashed_writes_temp_file(worker, tmp_path):
    client = await worker()
    stale = tmp_path / ".again.wav.k9k9.part"
    stale.write_bytes(b"half")
    response = await client.post("/synth", json={"text": "다시.", "output_path": str(tmp_path / "again.wav")})
    assert (await response.json())["status"] == "ok"
    assert not stale.exists()


async def test_max_jobs_kept_removes_the_oldest_finished_job_through_the_api(worker, tmp_path):
    client = await worker(max_jobs_kept=2)
    own = tmp_path / "own.wav"
    ids = []
    for i in range(3):
        section = {"text": f"작업 {i}.", **({"output_path": str(own)} if i == 0 else {})}
        ids.append(
            (await (await client.post("/synth_batch?async=1", json={"sections": [section]})).json())["job_id"]
        )
        await wait_done(client, ids[-1])
    async with asyncio.timeout(seconds(5)):  # retention sweeps right after the `done` it waited for
        while (gone := await client.get(f"/jobs/{ids[0]}/status")).status != 404:
            await asyncio.sleep(0.01)
    error = (await gone.json())["error"]
    assert error.startswith(f"JobNotFound: no job {ids[0]}: ") and "--max-jobs-kept" in error, error
    assert value(await scrape(client), "npu_worker_jobs_removed_total", reason="retention") == 1
    assert (await client.get(f"/jobs/{ids[2]}/status")).status == 200
    listed = [j["job_id"] for j in (await (await client.get("/jobs")).json())["jobs"]]
    assert listed == [ids[2], ids[1]]
    assert own.exists()


def test_jobs_that_end_after_the_first_sweep_are_counted_as_they_end(tmp_path):
    """The retention keeps finished jobs in end order and looks at the front only: each job joins it as
    it ends (the scheduler passes it), not by a sort of every kept job at every end."""
    journal, registry, clock = journal_in(tmp_path), JobRegistry(), Clock(1_000_000.0)
    retention = Retention(registry, journal, keep_seconds=DAY, max_jobs=2, clock=clock, monotonic=clock)
    assert retention.sweep() == 0  # nothing kept yet
    jobs = []
    for i in range(4):
        job = finished_job(journal, clock.now + i)
        registry.add(job)
        jobs.append(job)
        assert retention.sweep(job) == (1 if i >= 2 else 0)
    assert {j.id for j in registry.snapshot()} == {jobs[2].id, jobs[3].id}
    clock.now += DAY + 10  # both past the time bound now
    assert retention.sweep() == 2 and registry.snapshot() == []
    journal.close()


class SteppedClock:
    """The real wall clock, stepped by hand (as NTP steps it)."""

    def __init__(self) -> None:
        self.step = 0.0

    def __call__(self) -> float:
        return time.time() + self.step


async def test_a_wall_clock_stepped_forward_does_not_remove_a_job_that_just_ended(worker, settings):
    """NTP sets a board's clock at boot, often weeks forward: every job that had ended then looked weeks
    old at the next job's end, and retention removed its log and default outputs seconds after it ended
    (`result` 404). Ages run on the monotonic clock; the wall clock only places jobs read at start-up."""
    client = await worker()
    scheduler = client.app[SCHEDULER_KEY]
    wall = SteppedClock()
    scheduler.clock = scheduler.retention.clock = wall
    first = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "첫째."}]})).json()
    await wait_done(client, first["job_id"])
    wall.step = 30 * DAY
    second = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "둘째."}]})).json()
    await wait_done(client, second["job_id"])  # its end sweeps
    assert (await client.get(f"/jobs/{first['job_id']}/result")).status == 200
    assert (Path(settings.state_dir) / "outputs" / first["job_id"] / "s00.wav").is_file()


def test_crash_leftovers_beside_many_sections_are_found_listing_each_folder_once(tmp_path, monkeypatch):
    """Start-up listed a section's folder once per section of every unfinished job: ten half-written
    1 000-section jobs took 3.6 s of a start that serves nothing. Now each folder is listed once."""
    out = tmp_path / "out"
    out.mkdir()
    jobs = []
    for j in range(2):
        sections = [Section(i, "가.", str(out / f"j{j}s{i:03d}.wav")) for i in range(300)]
        jobs.append(Job(new_job_id(), SynthParams(), sections))
        for section in sections[:150]:
            Path(section.output_path).write_bytes(b"RIFF")
    leftovers = [out / ".j0s200.wav.k3j_9x0a.part", out / ".j1s007.wav.zz00zz00.part"]
    for path in leftovers:
        path.write_bytes(b"half")
    strangers = [out / ".other.wav.k3j_9x0a.part", out / "j0s200.wav.part"]
    for path in strangers:
        path.write_bytes(b"not ours to remove")
    listed: list[str] = []
    scandir = os.scandir

    def counting(path):  # noqa: ANN001, ANN202 - os.scandir, counted
        listed.append(str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    assert remove_crash_leftovers(jobs, []) == 2
    assert listed == [str(out)]
    assert not any(path.exists() for path in leftovers) and all(path.exists() for path in strangers)
