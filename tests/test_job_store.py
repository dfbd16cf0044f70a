"""The job store reads back what a crash, a later run or a hand edit left in the state directory: an
unreadable log line never hides the lines after it, and a damaged or copied `job.json` is skipped."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

import pytest

from npu_worker.jobs.model import Job, LogEntry, Section
from npu_worker.jobs.store import JOB_FILE, LOG_FILE, JobStore
from npu_worker.protocol import Done, Progress, Start, SynthParams


def stored_job(root: Path, job_id: str = "a1") -> tuple[JobStore, Job]:
    store = JobStore(root)
    store.prepare()
    job = Job(id=job_id, params=SynthParams(), sections=[Section(0, "hi", None)], created_at=1.0)
    store.job_dir(job_id).mkdir()
    store.create(job)
    return store, job


def test_a_finished_job_behind_an_unreadable_line_stays_finished(tmp_path, caplog):
    """A line no reader understands (damage, or a kind written by a newer version) is skipped; the job's
    `done` after it still counts, so the job is not run again at every start."""
    store, job = stored_job(tmp_path)
    store.append(job.id, LogEntry(1, Start(1, "espeak-ng", "cpu", job.id)))
    store.append(job.id, LogEntry(2, Progress(0, "synth")))
    with open(store.job_dir(job.id) / LOG_FILE, "ab") as out:
        out.write(b"garbage\n" + json.dumps({"event": "weird", "seq": 3}).encode() + b"\n")
    store.append(job.id, LogEntry(4, Progress(0, "ok", wav_path="/tmp/x.wav", duration_sec=1.0)))
    store.append(job.id, LogEntry(5, Done(1, 1, 0, 0.5)))
    caplog.set_level(logging.WARNING)
    loaded = store.load(job.id)
    assert loaded.finished and loaded.status == "done"
    assert [entry.seq for entry in loaded.log] == [1, 2, 4, 5]
    assert loaded.next_seq == 6
    assert caplog.text.count("unreadable log line") == 1  # one warning per log, whatever the count
    assert "ignoring 2 unreadable log line(s) in" in caplog.text


def test_a_job_file_with_a_wrong_type_is_skipped_not_run(tmp_path, caplog):
    store, job = stored_job(tmp_path)
    path = store.job_dir(job.id) / JOB_FILE
    body = json.loads(path.read_text())
    body["sections"][0]["idx"] = "x"
    path.write_text(json.dumps(body))
    caplog.set_level(logging.WARNING)
    assert store.load_all() == []
    assert "skipping unreadable job a1" in caplog.text and "$.sections[0].idx" in caplog.text


def test_a_job_file_copied_into_another_folder_is_not_a_second_job(tmp_path, caplog):
    store, job = stored_job(tmp_path)
    copy = store.job_dir("b2")
    copy.mkdir()
    (copy / JOB_FILE).write_bytes((store.job_dir(job.id) / JOB_FILE).read_bytes())
    caplog.set_level(logging.WARNING)
    assert [loaded.id for loaded in store.load_all()] == ["a1"]
    assert "skipping unreadable job b2: its job.json names job 'a1'" in caplog.text


def test_a_cancel_recorded_after_its_job_was_removed_makes_no_folder(tmp_path):
    """Retention may remove a job between the DELETE and the marker's write: no lone folder holding
    only the marker, skipped at every start, comes back."""
    store = JobStore(tmp_path / "state")
    store.prepare()
    store.mark_cancelled("0123456789abcdef")
    assert not store.job_dir("0123456789abcdef").exists()


def test_links_planted_in_a_job_folder_are_skipped_and_never_written_through(tmp_path, caplog):
    """A job whose folder, `job.json` or `events.ndjson` is a symlink is skipped with a warning: start-up
    once cut the torn tail of the file an `events.ndjson` link pointed at, and resumed the job into it."""
    store, job = stored_job(tmp_path / "state")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"kept\nno newline at its end")
    (store.job_dir(job.id) / LOG_FILE).symlink_to(victim)
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / JOB_FILE).write_bytes((store.job_dir(job.id) / JOB_FILE).read_bytes().replace(b"a1", b"b2"))
    store.job_dir("b2").symlink_to(other)
    stored_job(tmp_path / "state", "c3")
    moved = tmp_path / "c3.json"
    (store.job_dir("c3") / JOB_FILE).rename(moved)
    (store.job_dir("c3") / JOB_FILE).symlink_to(moved)
    caplog.set_level(logging.WARNING)
    assert store.load_all() == []
    assert victim.read_bytes() == b"kept\nno newline at its end"
    assert "skipping unreadable job a1: [Errno 40] events.ndjson is a symlink" in caplog.text
    assert "skipping unreadable job b2: [Errno 40] b2 is a symlink" in caplog.text
    assert "skipping unreadable job c3: [Errno 40] job.json is a symlink" in caplog.text
    with pytest.raises(OSError):  # a link planted while it runs is not appended through either
        store.append(job.id, LogEntry(1, Start(1, "espeak-ng", "cpu", job.id)))
    assert victim.read_bytes() == b"kept\nno newline at its end"


def test_a_fifo_planted_as_a_log_is_skipped_not_waited_on(tmp_path, caplog):
    """Reading a FIFO blocks until someone writes to it: start-up waited for ever, the socket deaf."""
    store, job = stored_job(tmp_path)
    os.mkfifo(store.job_dir(job.id) / LOG_FILE)
    caplog.set_level(logging.WARNING)
    found: list[list[Job]] = []
    reader = threading.Thread(target=lambda: found.append(store.load_all()), daemon=True)
    reader.start()
    reader.join(10)
    assert found == [[]], "load_all waited on the FIFO"
    assert "skipping unreadable job a1: [Errno 22] events.ndjson is not a plain file or folder" in caplog.text


def test_a_job_folder_without_its_job_json_is_skipped_with_a_warning(tmp_path, caplog):
    store, job = stored_job(tmp_path)
    half = store.job_dir("0123456789abcdef")
    half.mkdir()
    (half / ".job.json.k3j_9x0a.part").write_bytes(b'{"id": "0123')  # the crash came before the rename
    caplog.set_level(logging.WARNING)
    assert [loaded.id for loaded in store.load_all()] == [job.id]
    assert "skipping 0123456789abcdef in the jobs folder: it holds no job.json" in caplog.text
