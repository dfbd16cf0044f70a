"""A restart never numbers an event with a seq a caller already read: lines a full disk refused were
published all the same, and a worker stopped before there was room again would have reused their seqs."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path

import pytest

from npu_worker.jobs.journal import LocalJournal
from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.jobs.seq_jump import MARK, SEQ_JUMP
from npu_worker.jobs.store import LOG_FILE, JobStore
from npu_worker.protocol import Done, Progress, Start, SynthParams
from tests.disk_full import disk_full_past
from tests.inline_handoff import InlineHandoff
from tests.timing import seconds
from tests.worker_process import start_worker_process


def started(state: Path) -> tuple[JobStore, LocalJournal, list[Job]]:
    """What a start does: the kept jobs read, then the journal begins its run (a kill -9 is no close)."""
    store = JobStore(state)
    store.prepare()
    journal = LocalJournal(store, InlineHandoff())  # type: ignore[arg-type]
    unfinished = [job for job in store.load_all() if isinstance(job, Job) and not job.finished]
    journal.begin_run(unfinished)
    return store, journal, unfinished


def a_job(store: JobStore, journal: LocalJournal, sections: int = 4) -> Job:
    job = Job(new_job_id(), SynthParams(), [Section(i, "가", None) for i in range(sections)])
    journal.create(job)
    journal.append(job, Start(sections, "tone", "cpu", job.id))
    return job


def refused_lines(store: JobStore, journal: LocalJournal, job: Job, idx: int) -> int:
    """Two events of section `idx` the disk refuses (a live client saw them); the last seq sent."""
    with disk_full_past((store.job_dir(job.id) / LOG_FILE).stat().st_size + 10):
        journal.append(job, Progress(idx, "synth"))
        return journal.append(job, Progress(idx, "ok", duration_sec=1.0)).seq


def test_a_restart_after_lines_the_disk_refused_numbers_past_every_seq_sent(tmp_path, caplog):
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    sent = refused_lines(store, journal, job, 0)
    assert [entry.seq for entry in store.load(job.id).log] == [1] and sent == 3
    assert not (tmp_path / MARK).exists()  # removed at the refusal: an unlink needs no room
    store, journal, (resumed,) = started(tmp_path)  # the worker was killed before there was room
    assert resumed.next_seq > sent + SEQ_JUMP - 1
    entry = journal.append(resumed, Progress(0, "synth"))
    assert entry.seq == resumed.next_seq - 1 and entry.seq > sent
    assert "jumps past them" in caplog.text
    assert (tmp_path / MARK).exists()  # the log shows the jump now: a kill -9 from here jumps no more
    store, journal, (again,) = started(tmp_path)
    assert again.next_seq == entry.seq + 1


def test_a_kill_9_with_every_line_written_numbers_on_without_a_jump(tmp_path):
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    last = journal.append(job, Progress(0, "synth")).seq
    assert (tmp_path / MARK).exists()
    store, journal, (resumed,) = started(tmp_path)
    assert resumed.next_seq == last + 1


def test_lines_written_once_there_is_room_put_the_mark_back(tmp_path):
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    sent = refused_lines(store, journal, job, 0)
    assert not (tmp_path / MARK).exists()
    journal.append(job, Progress(1, "synth"))  # room again: the held lines go first
    assert (tmp_path / MARK).exists()
    store, journal, (resumed,) = started(tmp_path)
    assert resumed.next_seq == sent + 2


def test_a_restart_that_dies_before_logging_past_its_jump_jumps_further_the_next_time(tmp_path):
    """The second run's first line was refused too (the disk still full): the third run must not jump
    to the same place, where that line's seq was read (the jump is at least the clock's count)."""
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    refused_lines(store, journal, job, 0)
    store, journal, (resumed,) = started(tmp_path)
    seen = refused_lines(store, journal, resumed, 0)
    store, journal, (third,) = started(tmp_path)
    assert third.next_seq > seen


def test_a_finished_log_is_never_jumped(tmp_path):
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal, sections=1)
    refused_lines(store, journal, job, 0)
    journal.append(job, Done(1, 1, 0, 0.1))  # room again: every line written, `done` last
    store, journal, unfinished = started(tmp_path)
    assert unfinished == [] and [entry.seq for entry in store.load(job.id).log] == [1, 2, 3, 4]


@pytest.mark.allow_blocking
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_a_worker_killed_on_a_full_disk_restarts_past_every_seq_it_sent(tmp_path, stop):
    """A real worker whose files cannot grow past 1 kB: its job's log keeps its first lines, the rest
    were sent all the same; killed (or stopped: its close cannot write them either), then started with
    room, it numbers on past everything it sent."""
    state = tmp_path / "state"
    sections = [{"idx": i, "text": f"섹션 {i}."} for i in range(4)]
    worker = start_worker_process(state, 0, delay=0.0, extra=["--file-size-limit", "1000"])
    base = f"http://127.0.0.1:{worker.port}"
    try:
        request = urllib.request.Request(
            f"{base}/synth_batch",
            json.dumps({"sections": sections}).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=seconds(30)) as stream:
            seen = [json.loads(line) for line in stream.read().splitlines()]
    finally:
        worker.send_signal(stop)
        worker.wait(timeout=seconds(60))
    job = seen[0]["job_id"]
    sent = max(line["seq"] for line in seen if "seq" in line)
    log = (state / "jobs" / job / LOG_FILE).read_text().splitlines()
    written = [json.loads(line)["seq"] for line in log if line.endswith("}")]  # the last may be cut
    assert seen[-1]["event"] == "done" and max(written) < sent  # the disk kept some lines back
    worker = start_worker_process(state, 0, delay=0.0)
    base = f"http://127.0.0.1:{worker.port}"
    try:
        with urllib.request.urlopen(
            f"{base}/jobs/{job}/events?after={max(written)}", timeout=seconds(30)
        ) as stream:
            after = [json.loads(line) for line in stream.read().splitlines()]
    finally:
        worker.kill()
        worker.wait()
    assert after and after[-1]["event"] == "done"  # every event after the lines kept is past `sent`
    assert all(line["seq"] > sent for line in after)


def test_a_line_the_disk_refuses_after_close_still_makes_the_next_start_jump(tmp_path):
    """An event appended once the journal closed (a section the shutdown's join did not wait out, a
    DELETE during the stop) and refused by the full disk was sent all the same: the mark must go."""
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    journal.close()
    assert (tmp_path / MARK).exists()  # every line written at the close
    sent = refused_lines(store, journal, job, 0)
    assert not (tmp_path / MARK).exists()
    store, journal, (resumed,) = started(tmp_path)
    assert resumed.next_seq > sent


def test_a_removal_that_fails_leaves_the_mark_away_while_the_lines_it_dropped_are_still_missed(tmp_path):
    """A finished job whose last lines the full disk refused, then removed (retention, a DELETE) while its
    files cannot go (an immutable folder; a kill -9 right after the mark came back did the same): its
    log still lacks seqs a caller read, so the next start must jump. The mark came back first."""
    import shutil
    import subprocess

    if shutil.which("chattr") is None:
        pytest.skip("no chattr to make a folder whose files cannot be removed")
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal, sections=1)
    with disk_full_past((store.job_dir(job.id) / LOG_FILE).stat().st_size + 10):
        journal.append(job, Progress(0, "ok", duration_sec=1.0))
        sent = journal.append(job, Done(1, 1, 0, 0.1)).seq
    folder = store.job_dir(job.id)
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE, or the filesystem has no flag)")
    try:
        with pytest.raises(OSError):
            journal.remove(job)
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert not (tmp_path / MARK).exists()
    store, journal, (resumed,) = started(tmp_path)
    assert resumed.next_seq > sent


def test_lines_written_at_close_once_there_is_room_leave_no_jump_for_the_next_start(tmp_path):
    """A stop after the disk had room again: its close writes the held lines, so every seq sent is in
    the logs and the next start numbers on. The mark stayed away and that start jumped for nothing."""
    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    sent = refused_lines(store, journal, job, 0)
    journal.close()
    assert (tmp_path / MARK).exists()
    store, journal, (resumed,) = started(tmp_path)
    assert resumed.next_seq == sent + 1


def test_a_fifo_planted_at_the_mark_is_never_waited_on(tmp_path):
    """The mark is put back with an open for writing: a FIFO planted there while it was away blocked that
    open until some reader came, and with it the journal's lock, so every job's next event."""
    import threading

    store, journal, _ = started(tmp_path)
    job = a_job(store, journal)
    refused_lines(store, journal, job, 0)
    os.mkfifo(tmp_path / MARK)
    appending = threading.Thread(target=journal.append, args=(job, Progress(1, "synth")), daemon=True)
    appending.start()
    appending.join(seconds(10))
    hung = appending.is_alive()
    if hung:  # let it go: a reader opens the FIFO, the writer's open returns
        os.close(os.open(tmp_path / MARK, os.O_RDONLY | os.O_NONBLOCK))
        appending.join()
    assert not hung
    assert store.load(job.id).log[-1].event == Progress(1, "synth")
    store, journal, (resumed,) = started(tmp_path)  # no mark, a FIFO: this start jumps (and removes it)
    assert resumed.next_seq > SEQ_JUMP
