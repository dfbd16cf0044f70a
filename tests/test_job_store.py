"""The job store reads back what a crash, a later run or a hand edit left in the state directory: an
unreadable log line never hides the lines after it, and a damaged or copied `job.json` is skipped."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

import pytest

from npu_worker.jobs.journal import LocalJournal
from npu_worker.jobs.model import Job, LogEntry, Section, new_job_id
from npu_worker.jobs.store import JOB_FILE, LOG_FILE, JobStore
from npu_worker.protocol import Done, Progress, Start, SynthParams
from tests.disk_full import disk_full_past
from tests.inline_handoff import InlineHandoff


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


SECTIONS = 80  # 162 lines, more than a write buffer holds
ALL_SEQS = list(range(1, 2 * SECTIONS + 3))


def journal_of(root: Path) -> tuple[JobStore, LocalJournal, Job]:
    store = JobStore(root)
    store.prepare()
    journal = LocalJournal(store, InlineHandoff())  # type: ignore[arg-type]
    job = Job(new_job_id(), SynthParams(), [Section(i, "가", None) for i in range(SECTIONS)])
    journal.create(job)
    journal.append(job, Start(SECTIONS, "tone", "cpu", job.id))
    return store, journal, job


def run_job(journal: LocalJournal, job: Job) -> None:
    for idx in range(SECTIONS):
        journal.append(job, Progress(idx, "synth"))
        journal.append(job, Progress(idx, "ok", wav_path=f"/tmp/s{idx}.wav", duration_sec=1.0))
    journal.append(job, Done(SECTIONS, SECTIONS, 0, 0.5))


def test_lines_a_full_disk_refused_are_written_in_order_once_there_is_room(tmp_path):
    """A full state disk refuses a job's lines (one of them cut short) and its `done`: once there is room
    (here: the next event of another job), they are written, whole and in order, so a restart neither
    redoes the job's sections nor gives their seq numbers to other lines."""
    store, journal, job = journal_of(tmp_path)
    _, _, other = journal_of(tmp_path)
    with disk_full_past((store.job_dir(job.id) / LOG_FILE).stat().st_size + 30):
        run_job(journal, job)
    assert job.status == "done"  # what live clients saw
    journal.append(other, Progress(0, "synth"))
    reloaded = store.load(job.id)
    assert [entry.seq for entry in reloaded.log] == ALL_SEQS and reloaded.status == "done"


def test_lines_still_refused_are_written_at_shutdown(tmp_path):
    store, journal, job = journal_of(tmp_path)
    with disk_full_past((store.job_dir(job.id) / LOG_FILE).stat().st_size + 30):
        run_job(journal, job)
    journal.close()
    reloaded = store.load(job.id)
    assert [entry.seq for entry in reloaded.log] == ALL_SEQS and reloaded.status == "done"


def test_a_batch_refused_by_a_full_disk_leaves_no_folder(tmp_path):
    store = JobStore(tmp_path)
    store.prepare()
    job = Job(new_job_id(), SynthParams(), [Section(0, "가", None)])
    with disk_full_past(1), pytest.raises(OSError):
        store.create(job)
    assert list(store.root.iterdir()) == []


def test_a_job_folder_whose_record_a_crash_cut_is_removed_at_start(tmp_path):
    """`kill -9` while job.json was written leaves its folder and temp file: gone at the next start,
    unless someone put something else there."""
    store, job = stored_job(tmp_path)
    cut = store.job_dir("c3")
    cut.mkdir()
    (cut / ".job.json.x1y2.part").write_bytes(b'{"id": "c')
    kept = store.job_dir("d4")
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    assert [loaded.id for loaded in store.load_all()] == [job.id]
    assert not cut.exists() and (kept / "notes.txt").is_file()


def test_what_a_kill_9_left_of_a_retention_removal_is_removed_at_start(tmp_path):
    """Retention removes job.json first (the job is never resumed), then the log and the default
    outputs: a `kill -9` in between left those for good."""
    store, job = stored_job(tmp_path)
    store.append(job.id, LogEntry(1, Start(1, "espeak-ng", "cpu", job.id)))
    outputs = Path(store.default_output(job.id, 0)).parent
    outputs.mkdir(parents=True)
    (outputs / "s00.wav").write_bytes(b"RIFF")
    (outputs / ".s01.wav.0a1b2c3d4e5f.part").write_bytes(b"RI")
    (store.job_dir(job.id) / JOB_FILE).unlink()
    assert store.load_all() == []
    assert not store.job_dir(job.id).exists() and not outputs.exists()


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


def test_a_job_folder_without_its_job_json_is_removed_with_a_warning(tmp_path, caplog):
    store, job = stored_job(tmp_path)
    half = store.job_dir("0123456789abcdef")
    half.mkdir()
    (half / ".job.json.k3j_9x0a.part").write_bytes(b'{"id": "0123')  # the crash came before the rename
    caplog.set_level(logging.WARNING)
    assert [loaded.id for loaded in store.load_all()] == [job.id]
    assert (
        "removing what a crash left of job 0123456789abcdef in the jobs folder (no job.json)" in caplog.text
    )
    assert not half.exists()


def test_json_nested_past_the_parser_in_a_kept_file_skips_that_job_or_line_not_the_start(tmp_path, caplog):
    """A `job.json` or a log line nested past the parser's depth raised RecursionError, which failed the
    whole start-up reading (every request a 503 until the folder was fixed by hand)."""
    store, job = stored_job(tmp_path)
    deep = b'{"x": ' + b"[" * 200_000 + b"\n"
    with open(store.job_dir(job.id) / LOG_FILE, "ab") as log_file:
        log_file.write(deep)
    other = store.job_dir("b2")
    other.mkdir()
    (other / JOB_FILE).write_bytes(deep)
    caplog.set_level(logging.WARNING)
    assert [loaded.id for loaded in store.load_all()] == [job.id]
    assert "ignoring 1 unreadable log line(s)" in caplog.text
    assert "skipping unreadable job b2" in caplog.text


def test_a_job_file_listing_one_idx_twice_is_skipped_not_run_for_ever(tmp_path, caplog):
    """A hand edit that gives two sections one idx: loaded, the first was never settled by its `ok`
    (the idx found the second), so the job stayed `running` at every start and its stream never ended."""
    store = JobStore(tmp_path)
    store.prepare()
    sections = [Section(0, "hi", None), Section(1, "there", None)]
    job = Job(id="a1", params=SynthParams(), sections=sections, created_at=1.0)
    store.job_dir(job.id).mkdir()
    store.create(job)
    path = store.job_dir(job.id) / JOB_FILE
    body = json.loads(path.read_text())
    body["sections"][1]["idx"] = 0
    path.write_text(json.dumps(body))
    caplog.set_level(logging.WARNING)
    assert store.load_all() == []
    assert "skipping unreadable job a1: its job.json lists section 0 twice" in caplog.text


def test_removing_a_job_never_deletes_through_a_folder_replaced_by_a_link(tmp_path):
    """Retention and --jobs-max-bytes remove a job's files by name: a job or outputs folder that a
    local user replaced by a link to a folder elsewhere had the files there of those names deleted
    (`job.json`, `events.ndjson`, `s00.wav`: on a Redis queue every finished job's default outputs)."""
    store, job = stored_job(tmp_path / "state")
    victim = tmp_path / "victim"
    victim.mkdir()
    names = [JOB_FILE, LOG_FILE, "cancelled", "s00.wav", ".s00.wav.x1.part", ".job.json.x2.part"]
    for name in names:
        (victim / name).write_bytes(b"not the worker's")
    for name in os.listdir(store.job_dir(job.id)):
        os.unlink(store.job_dir(job.id) / name)
    store.job_dir(job.id).rmdir()
    store.job_dir(job.id).symlink_to(victim)
    outputs = Path(store.default_output(job.id, 0)).parent
    outputs.parent.mkdir(exist_ok=True)
    outputs.symlink_to(victim)
    store.remove(job.id, [store.default_output(job.id, 0)])
    assert sorted(p.name for p in victim.iterdir()) == sorted(names)
    real, _ = stored_job(tmp_path / "other", "b2")  # a plain folder still goes whole
    real.remove("b2", [])
    assert not real.job_dir("b2").exists()


REMOVAL_CUT_SHORT = """
import sys
from pathlib import Path
from tests.test_job_store import stored_job
from npu_worker.jobs.store import JOB_FILE, LOG_FILE
store, job = stored_job(Path(sys.argv[1]))
(store.job_dir(job.id) / LOG_FILE).mkdir()  # an unlink refuses it: the removal stops there
try:
    store.remove(job.id, [])
except OSError:
    pass
print((store.job_dir(job.id) / JOB_FILE).exists())
"""


@pytest.mark.parametrize("hash_seed", ["0", "3"])  # seeds whose set of names put the log before job.json
def test_a_removal_cut_short_at_any_file_leaves_no_job_json_to_resume(tmp_path, hash_seed):
    """job.json goes first, whatever order a set of names has in this process: a removal (retention, a
    DELETE) killed after the log went and before job.json left a job that the next start ran again
    from its first section, numbering its events from seq 1 again and rewriting its outputs."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    run = subprocess.run(
        [sys.executable, "-c", REMOVAL_CUT_SHORT, str(tmp_path)], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
