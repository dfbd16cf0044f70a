"""The job core's parts on their own: registry, cache index, audio reading, one onset and one encode."""

from __future__ import annotations

import io
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import soundfile

from npu_worker import audio, audio_decode
from npu_worker.jobs.cache import SynthesisCache
from npu_worker.jobs.model import Job, Section, new_job_id
from npu_worker.jobs.registry import JobRegistry
from npu_worker.protocol import SlowConsumer, SynthParams, WorkerError
from tests.inline_handoff import InlineHandoff
from tests.test_ws_support import batch, connect, run_request
from tests.tone_engine import ToneEngine

RATE = 24000
ROOT = Path(__file__).resolve().parents[1]


def test_the_registry_lists_snapshots_while_threads_add_and_remove():
    registry = JobRegistry()
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            while not stop.is_set():
                job = Job(new_job_id(), SynthParams(), [Section(0, "가", None)])
                registry.add(job)
                registry.remove(job.id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=churn) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(2000):
            listed = registry.recent(100)
            assert all(isinstance(job, Job) for job in listed)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert errors == [] and len(registry) == 0


def test_the_cache_index_is_rebuilt_from_disk_in_recency_order(tmp_path):
    entry = audio.wav_bytes(np.zeros(428, dtype=np.float32), RATE)  # 900 bytes, a whole wav
    first = SynthesisCache(tmp_path, max_bytes=3000)
    first.prepare()
    for key in ("a", "b", "c"):
        first.put(key, entry)
    first.get("a", RATE)  # a is now the most recent; b the least
    reopened = SynthesisCache(tmp_path, max_bytes=3000)
    assert reopened.get("c", RATE) == entry
    reopened.put("d", entry)  # over the bound: the least recent on disk (b) goes
    assert reopened.get("b", RATE) is None
    assert all(reopened.get(key, RATE) == entry for key in ("a", "c", "d"))


def test_24_bit_and_float_wavs_are_read():
    tone = (0.5 * np.sin(np.arange(RATE // 10) / 5.0)).astype(np.float32)
    for subtype in ("PCM_24", "FLOAT", "PCM_32", "PCM_U8"):
        buffer = io.BytesIO()
        soundfile.write(buffer, np.stack([tone, tone], axis=1), RATE, subtype=subtype, format="WAV")
        samples, rate = audio_decode.read_wav(buffer.getvalue())
        assert rate == RATE and samples.dtype == np.float32
        np.testing.assert_allclose(samples, tone, atol=1e-2)


def test_slow_consumer_is_an_error_of_the_protocol():
    error = SlowConsumer("too slow")
    assert isinstance(error, WorkerError) and str(error).startswith("SlowConsumer: ")


async def test_the_onset_is_found_once_on_the_engine_thread(worker, monkeypatch):
    threads: list[str] = []
    real = audio.audible_onset

    def watched(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(audio, "audible_onset", watched)
    from npu_worker.ws_server import chunking  # where a second onset search used to live

    monkeypatch.setattr(chunking, "audible_onset", watched, raising=False)
    client = await worker(ToneEngine(leading_silence=0.3, chunk_seconds=0.01))
    ws = await connect(client)
    transcript = await run_request(ws, batch("소리.", "또 소리."))
    await ws.close()
    assert transcript.events("first_audio")
    assert threads and set(threads) == {"npu-worker-engine"}


async def test_each_sections_wav_is_encoded_once(worker, monkeypatch, tmp_path):
    from npu_worker.jobs import delivery

    encodes: list[int] = []
    real = delivery.wav_of_chunks

    def counted(chunks, rate):  # noqa: ANN001, ANN202
        encodes.append(sum(chunk.size for chunk in chunks))
        return real(chunks, rate)

    monkeypatch.setattr(delivery, "wav_of_chunks", counted)
    client = await worker(cache_max_bytes=10_000_000)
    body = {"text": "한 번만.", "output_path": str(tmp_path / "once.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    assert len(encodes) == 1  # the same bytes went to the file and to the cache
    ws = await connect(client)
    await run_request(ws, batch("듣기만."))
    await ws.close()
    assert len(encodes) == 1  # a listen-only preview encodes nothing


def test_importing_the_app_does_not_load_the_job_core():
    code = (
        "import sys, npu_worker.app; "
        "print(sorted(m for m in ('npu_worker.jobs.runner', 'npu_worker.jobs.scheduler') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_journal_keeps_few_log_files_open_and_loses_no_line(tmp_path):
    from npu_worker.jobs.journal import LocalJournal
    from npu_worker.jobs.store import JobStore
    from npu_worker.protocol import Done, Progress, Start

    store = JobStore(tmp_path)
    store.prepare()
    journal = LocalJournal(store, InlineHandoff(), max_open=2)  # type: ignore[arg-type]
    jobs = [Job(new_job_id(), SynthParams(), [Section(0, "가", None)]) for _ in range(5)]
    for job in jobs:
        journal.create(job)
        journal.append(job, Start(1, "tone", "cpu", job.id))
    assert len(journal._open) == 2
    for job in jobs:
        journal.append(job, Progress(0, "synth"))
        journal.append(job, Done(1, 0, 0, 0.1))
    journal.close()
    for job in jobs:
        reloaded = store.load(job.id)
        assert [entry.seq for entry in reloaded.log] == [1, 2, 3] and reloaded.status == "done"


def test_a_job_shows_no_state_that_its_log_does_not_hold_yet(tmp_path):
    """A status a client reads (e.g. `done`) is already in the log: a crash right after loses nothing seen."""
    from npu_worker.jobs.journal import LocalJournal
    from npu_worker.jobs.store import JobStore
    from npu_worker.protocol import Done, Progress, Start

    class Watching(LocalJournal):
        seen: list[tuple[str, str]] = []

        def persist(self, job, entry):  # type: ignore[no-untyped-def]
            self.seen.append((entry.event.to_dict()["event"], job.status))
            super().persist(job, entry)

    store = JobStore(tmp_path)
    store.prepare()
    journal = Watching(store, InlineHandoff())  # type: ignore[arg-type]
    job = Job(new_job_id(), SynthParams(), [Section(0, "가", None)])
    journal.create(job)
    journal.append(job, Start(1, "tone", "cpu", job.id))
    journal.append(job, Progress(0, "synth"))
    journal.append(job, Progress(0, "ok", duration_sec=0.1))
    journal.append(job, Done(1, 1, 0, 0.1))
    journal.close()
    assert Watching.seen[-1][0] == "done" and Watching.seen[-1][1] != "done"
    assert job.status == "done"


async def test_a_listen_only_preview_never_joins_its_audio(worker, monkeypatch, tmp_path):
    from npu_worker.jobs import delivery

    joined: list[int] = []
    real = delivery.wav_of_chunks

    def counted(chunks, rate):  # noqa: ANN001, ANN202
        joined.append(len(chunks))
        return real(chunks, rate)

    monkeypatch.setattr(delivery, "wav_of_chunks", counted)
    client = await worker(ToneEngine(chunk_seconds=0.05))
    ws = await connect(client)
    transcript = await run_request(ws, batch("듣기만 하는 문장.", "또 하나."))
    await ws.close()
    assert transcript.events("done") and joined == []  # `duration_sec` is counted from the chunks
    body = {"text": "파일로.", "output_path": str(tmp_path / "joined.wav")}
    assert (await (await client.post("/synth", json=body)).json())["status"] == "ok"
    assert (
        len(joined) == 1 and joined[0] > 1
    )  # a file needs the audio in one piece: joined once, by the encoder


async def test_listeners_that_never_read_share_one_budget_and_a_small_one_is_never_dropped():
    """Each listener's own bound is generous (a download may hold ten minutes), so 512 that never read
    once held 29 GB: past the shared budget the one holding more than the floor is dropped."""
    from npu_worker.jobs.model import AudioChunk
    from npu_worker.jobs.subscription import FLOOR_SECONDS, AudioBudget, Subscription

    budget = AudioBudget(max_samples=100)
    dropped: list[str] = []

    def listener(job_id: str) -> Subscription:
        job = Job(job_id, SynthParams(), [Section(0, "x", None)])
        return Subscription(
            job, audio=True, sample_rate=1, max_buffered_seconds=1000, budget=budget,
            on_overflow=lambda j: dropped.append(j.id),
        )  # fmt: skip

    hoarder, small = listener("hoarder"), listener("small")
    for _ in range(5):
        hoarder.push_audio(AudioChunk(0, np.zeros(20, dtype=np.float32)))
    assert budget.samples == 100 and not dropped
    small.push_audio(AudioChunk(0, np.zeros(int(FLOOR_SECONDS), dtype=np.float32)))  # at the floor: kept
    hoarder.push_audio(AudioChunk(0, np.zeros(20, dtype=np.float32)))  # over the budget and the floor
    assert dropped == ["hoarder"] and budget.samples == 100 + int(FLOOR_SECONDS)
    await small.__anext__()  # what is read leaves the budget
    hoarder.close()  # and what a closed listener held
    assert budget.samples == 0


def test_the_section_index_and_counts_follow_the_folded_events_and_a_new_section_list():
    from npu_worker.jobs.model import apply_event
    from npu_worker.protocol import Progress, SectionError

    job = Job("j", SynthParams(), [Section(i, "t", None) for i in range(3)])
    apply_event(job, Progress(0, "ok", wav_path="/a.wav"))
    apply_event(job, SectionError(1, "EngineError: x"))
    assert (job.ok_count, job.fail_count) == (1, 1) and job.section(1).final.error == "EngineError: x"
    apply_event(job, Progress(1, "ok", wav_path="/b.wav"))  # a section's final replaced: counted once
    assert (job.ok_count, job.fail_count) == (2, 0)
    job.sections = [Section(7, "new", None)]  # admission sets the list again: looked up anew
    assert job.section(0) is None and job.section(7) is job.sections[0]
    assert (job.ok_count, job.fail_count) == (0, 0)


def test_serve_loads_no_other_commands_modules():
    """`serve` builds its own options alone: the benchmark's, the client's and `prepare`'s modules
    (the benchmark's above all) were imported by every start before /health could answer."""
    code = (
        "import sys; from npu_worker.cli import build_parser; "
        "args = build_parser(['serve', '--port', '0']).parse_args(['serve', '--port', '0']); "
        "print(args.command, sorted(m for m in sys.modules if m.startswith("
        "('npu_worker.bench', 'npu_worker.cli_client', 'npu_worker.cli_batch', 'npu_worker.cli_stops', 'npu_worker.cli_prepare', 'npu_worker.client'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "serve []"


def test_every_other_command_is_still_there():
    from npu_worker.cli import build_parser

    for argv in ([], ["synth"], ["bench"], ["prepare"], ["--help"], ["-h", "serve"]):
        commands = build_parser(argv)._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert set(commands) == {"serve", "synth", "batch", "bench", "make-test-model", "prepare"}


def test_a_status_between_a_sections_ok_and_the_next_synth_names_the_next_section():
    """The finisher logs a section's `ok` (and its cache write) before the next section's `synth`, while
    the engine already makes that one: the status named the section already done (`done: 1, current_idx: 0`)."""
    from npu_worker.http_compat.bodies import JobStatus
    from npu_worker.jobs.model import apply_event
    from npu_worker.protocol import Progress, SectionError

    job = Job("j", SynthParams(), [Section(i, "t", None) for i in (4, 7, 9)])
    assert JobStatus.of(job).current_idx is None  # queued: nothing is current
    apply_event(job, Progress(4, "synth"))
    assert JobStatus.of(job).current_idx == 4
    apply_event(job, Progress(4, "ok", wav_path="/a.wav"))
    status = JobStatus.of(job)
    assert (status.done, status.current_idx) == (1, 7)
    apply_event(job, Progress(7, "synth"))
    apply_event(job, SectionError(7, "EngineError: x"))
    assert JobStatus.of(job).current_idx == 9
    apply_event(job, Progress(9, "synth"))
    apply_event(job, Progress(9, "ok", wav_path="/c.wav"))
    status = JobStatus.of(job)
    assert (status.done, status.current_idx) == (3, None)  # every section ended, `done` not yet logged
