"""The scheduler: one worker thread owns the engine and runs sections one at a time.

Why one thread: engines hold process-global or device state (espeak, an NPU context) and inference
saturates the cores anyway. The event loop never waits on it: events are persisted here, then handed
to the loop with `call_soon_threadsafe`.

Order of work: a job that has not produced audio yet goes first (previews start fast, and a new
batch gets its first section out early); otherwise jobs are served round-robin, one section at a
time, so a preview never waits for a 39-slide batch to finish.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..audio import LeadingSilenceTrimmer, read_wav, wav_bytes
from ..config import Settings
from ..engine.base import Engine, EngineInfo, SynthesisRequest, Voice, check_language
from ..paths import PathPolicy
from ..protocol import (
    BatchRequest,
    Done,
    EngineError,
    Event,
    Limits,
    Loading,
    ModelLoadError,
    Progress,
    QueueFull,
    SectionError,
    Start,
    WorkerError,
    WriteFailed,
    check_text,
)
from ..voices import VoiceLibrary
from .cache import SynthesisCache, cache_key
from .model import AudioChunk, Job, LogEntry, Section, apply_event, new_job_id
from .observer import SchedulerObserver
from .store import JobStore
from .subscription import Subscription

log = logging.getLogger(__name__)

MAX_JOBS_IN_MEMORY = 1000


class Scheduler:
    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.settings = settings
        self.limits = Limits(settings.max_text_chars, settings.max_sections)
        state_dir = settings.resolved_state_dir()
        self.store = JobStore(state_dir)
        self.cache = SynthesisCache(Path(state_dir) / "cache", settings.cache_max_bytes)
        self.paths = PathPolicy.from_settings(settings)
        self.voices = VoiceLibrary.from_settings(settings)
        self.info: EngineInfo | None = None
        self.load_error: WorkerError | None = None
        self.load_seconds: float | None = None
        self.jobs: dict[str, Job] = {}
        self.ttfa_ms: deque[float] = deque(maxlen=200)
        self._active: list[Job] = []
        self._running: Job | None = None
        self._cond = threading.Condition()
        self._emit_lock = threading.Lock()
        self._ticks = itertools.count(1)
        self._stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._submitted_at: dict[str, float] = {}
        self.observer = SchedulerObserver()  # metrics hooks (no-op unless the app installs one)

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Recover persisted jobs, then load the engine and run work on the worker thread."""
        self._loop = asyncio.get_running_loop()
        recovered = await self._loop.run_in_executor(None, self.store.load_all)
        for job in recovered[-MAX_JOBS_IN_MEMORY:]:
            self.jobs[job.id] = job
            if not job.finished:
                log.info("job %s was interrupted: %d sections to resume", job.id, len(job.pending))
                self._active.append(job)
        self._thread = threading.Thread(target=self._work, name="npu-worker-engine", daemon=True)
        self._thread.start()

    @property
    def draining(self) -> bool:
        """True once shutdown began: no new section starts."""
        return self._stopping

    async def drain(self, grace: float) -> None:
        """Start no new section; let the running one finish within `grace` seconds, else cancel it.

        Queued sections of batch jobs stay in their logs and resume after a restart. Logs what it did.
        """
        with self._cond:
            if self._stopping:
                return
            self._stopping = True
            running, idx = self._running, (self._running.current_idx if self._running else None)
            self._cond.notify_all()
        thread, loop = self._thread, asyncio.get_running_loop()
        if running is None or thread is None:
            log.info("shutdown: no section was running")
        else:
            started = time.monotonic()
            await loop.run_in_executor(None, thread.join, grace)
            if thread.is_alive():
                running.cancel_requested.set()
                log.warning(
                    "shutdown: section %s of job %s ran past %.1f s; cancelled", idx, running.id, grace
                )
            else:
                log.info(
                    "shutdown: let section %s of job %s finish (%.2f s)",
                    idx,
                    running.id,
                    time.monotonic() - started,
                )
        waiting = self.queue_size()
        if waiting:
            log.info("shutdown: %d queued sections left; batch jobs resume on restart", waiting)

    async def stop(self, grace: float = 30.0) -> None:
        await self.drain(grace)
        if self._thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._thread.join, 30.0)
        try:
            self.engine.close()
        except Exception:  # noqa: BLE001 - closing must not mask shutdown
            log.exception("engine close failed")

    @property
    def loaded(self) -> bool:
        return self.info is not None

    def queue_size(self) -> int:
        with self._cond:
            return sum(len(job.pending) for job in self._active)

    def jobs_running(self) -> int:
        with self._cond:
            return len(self._active)

    # -- submission ------------------------------------------------------------------------------

    async def submit(
        self,
        request: BatchRequest,
        *,
        preview: bool,
        trim_leading_silence: bool = False,
        on_created: Callable[[Job], None] | None = None,
    ) -> Job:
        """Create a job (validated, persisted unless a preview) and queue its sections.

        `on_created(job)` runs on the loop before the job can run: audio is not in the log, so a
        listener that wants every chunk must attach there (events alone can be replayed later).
        """
        if self.load_error is not None:
            raise self.load_error
        if self.info is None:
            raise Loading("the engine is still loading; retry shortly")
        loop = asyncio.get_running_loop()
        job = Job(
            id=new_job_id(),
            params=request.params,
            sections=[],
            preview=preview,
            persisted=not preview,
            stream_audio=preview and request.audio,
            trim_leading_silence=trim_leading_silence,
        )
        if on_created is not None:
            on_created(job)
        await loop.run_in_executor(None, self._admit, job, request)
        return job

    def _admit(self, job: Job, request: BatchRequest) -> None:
        """Language and path checks (they may block), queue bound, persistence, `start` event, queueing."""
        check_language(self.engine, request.params.lang)
        job.sections = [self._section(job, s.idx, s.text, s.output_path) for s in request.sections]
        # A voice name becomes its stored wav; a path is checked and synthesised as checked.
        job.params = self.voices.resolve_params(request.params, self.paths.roots, (self.paths.state_dir,))
        with self._cond:
            waiting = sum(len(j.pending) for j in self._active)
            if waiting + job.total > self.settings.max_queue:
                raise QueueFull(f"{waiting} sections are waiting (bound {self.settings.max_queue})")
        self._open(job)
        with self._cond:
            self._active.append(job)
            self._cond.notify_all()

    def _section(self, job: Job, idx: int, text: str, output_path: str | None) -> Section:
        if output_path is not None:
            output_path = self.paths.resolve_output_path(output_path)
        elif job.persisted:
            output_path = self.paths.default_output(job.id, idx)
        return Section(idx, text, output_path)

    def _open(self, job: Job) -> None:
        if job.persisted:
            self.store.create(job)
            self.jobs[job.id] = job
            self._forget_old_jobs()
        self._submitted_at[job.id] = time.monotonic()
        info = self.info
        assert info is not None
        self._emit(job, Start(job.total, info.backend, info.device, job.id, info.sample_rate))

    def _forget_old_jobs(self) -> None:
        finished = [j for j in self.jobs.values() if j.finished]
        for job in finished[: max(0, len(self.jobs) - MAX_JOBS_IN_MEMORY)]:
            self.jobs.pop(job.id, None)

    def live_job(self, job_id: str) -> Job | None:
        """A queued or running job, previews included (they are not in `jobs`)."""
        with self._cond:
            return next((j for j in self._active if j.id == job_id), None)

    def find_job(self, job_id: str) -> Job | None:
        """A job in memory, else from the state directory (blocking I/O: call from a thread)."""
        job = self.jobs.get(job_id)
        if job is not None or not job_id.isalnum():
            return job
        try:
            return self.store.load(job_id)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def subscribe(
        self, job: Job, *, after: int = 0, audio: bool = False, max_buffered_seconds: float = 30.0
    ) -> Subscription:
        rate = self.info.sample_rate if self.info else 24000
        return Subscription(
            job,
            after=after,
            audio=audio,
            sample_rate=rate,
            max_buffered_seconds=max_buffered_seconds,
            on_overflow=self._drop_slow,
        )

    # -- cancellation ----------------------------------------------------------------------------

    def cancel(self, job_id: str) -> bool:
        """Stop a job between engine chunks; True if it was still running or queued."""
        with self._cond:
            job = self.jobs.get(job_id) or next((j for j in self._active if j.id == job_id), None)
            if job is None or job.finished or job not in self._active:
                return False
            job.cancel_requested.set()
            if job is self._running:
                return True
            self._active.remove(job)
        self._finish(job)
        return True

    def _drop_slow(self, job: Job) -> None:
        idx = job.current_idx
        self._emit(job, SectionError(idx, "SlowConsumer: the client did not read audio fast enough"))
        self.cancel(job.id)

    # -- the worker thread -----------------------------------------------------------------------

    def _work(self) -> None:
        if not self._load():
            return
        while True:
            with self._cond:
                picked = self._pick()
                while picked is None and not self._stopping:
                    self._cond.wait()
                    picked = self._pick()
                if self._stopping:
                    return
                assert picked is not None
                job, section = picked
                self._running = job
                job.last_served = next(self._ticks)
            self._run_section(job, section)
            with self._cond:
                self._running = None
                finished = job.cancel_requested.is_set() or not job.pending
                if finished and job in self._active:
                    self._active.remove(job)
            if finished:
                self._finish(job)

    def _load(self) -> bool:
        started = time.monotonic()
        try:
            self.engine.load()
            info = self.engine.info
        except WorkerError as exc:
            self.load_error = exc
        except Exception as exc:  # noqa: BLE001 - any load failure is a ModelLoadError for callers
            log.exception("engine load failed")
            self.load_error = ModelLoadError(f"{type(exc).__name__}: {exc}")
        if self.load_error is not None:
            log.error("engine failed to load: %s", self.load_error)
            return False
        self.load_seconds = round(time.monotonic() - started, 3)
        self.info = info
        log.info("engine ready in %.2fs: %s on %s", self.load_seconds, info.backend, info.device)
        return True

    def _pick(self) -> tuple[Job, Section] | None:
        candidates = [j for j in self._active if j.pending and not j.cancel_requested.is_set()]
        if not candidates:
            return None
        job = min(candidates, key=lambda j: (j.first_audio_at is not None, not j.preview, j.last_served))
        return job, job.pending[0]

    def _finish(self, job: Job) -> None:
        cancelled = job.cancel_requested.is_set()
        elapsed = round(time.time() - job.created_at, 3)
        self._emit(job, Done(job.total, job.ok_count, job.fail_count, elapsed, cancelled))
        self._submitted_at.pop(job.id, None)

    def _emit(self, job: Job, event: Event) -> None:
        """Fold, persist (flushed), then publish on the loop: the log never lags what clients saw."""
        with self._emit_lock:
            apply_event(job, event)
            self.observer.event(job, event)
            entry = LogEntry(job.next_seq, event)
            job.next_seq += 1
            if job.persisted:
                try:
                    self.store.append(job.id, entry)
                except OSError:
                    log.exception("could not persist an event of job %s", job.id)
            assert self._loop is not None
            self._loop.call_soon_threadsafe(job.publish, entry)

    # -- one section -----------------------------------------------------------------------------

    def _run_section(self, job: Job, section: Section) -> None:
        started = time.monotonic()
        self._emit(job, Progress(section.idx, "synth"))
        try:
            check_text(section.text, self.limits)
            audio, cached = self._synthesise(job, section)
            if audio is None:  # cancelled mid-section
                return
            info = self.engine.info
            if section.output_path is not None:
                try:
                    # Opened again without following links: the path may have changed since admission.
                    self.paths.write_output(section.output_path, wav_bytes(audio, info.sample_rate))
                except OSError as exc:
                    raise WriteFailed(f"{section.output_path}: {exc.strerror or exc}") from exc
            self._emit(
                job,
                Progress(
                    section.idx,
                    "ok",
                    wav_path=section.output_path,
                    duration_sec=round(audio.size / info.sample_rate, 3),
                    elapsed_sec=round(time.monotonic() - started, 3),
                    cached=True if cached else None,
                ),
            )
        except WorkerError as exc:
            self._emit(job, SectionError(section.idx, str(exc)))
        except Exception as exc:  # noqa: BLE001 - one section's failure never stops the job
            log.exception("section %s of job %s failed", section.idx, job.id)
            self._emit(job, SectionError(section.idx, str(EngineError(f"{type(exc).__name__}: {exc}"))))
        finally:
            self.observer.section_ran(job, time.monotonic() - started)

    def _synthesise(self, job: Job, section: Section) -> tuple[np.ndarray | None, bool]:
        info = self.engine.info
        params = job.params
        if params.ref_wav is not None:  # checked at admission; again now (a swap, or a resumed job)
            self.paths.check_ref_wav(params.ref_wav)
        request = SynthesisRequest(
            text=section.text,
            lang=params.lang,
            speed_factor=params.speed_factor,
            voice=Voice(params.ref_wav, params.ref_text),
            seed=params.seed if params.seed is not None else self.settings.seed,
            early_audio=job.stream_audio,  # files-only work (NDJSON, /synth) gets the best throughput
        )
        key = cache_key(info, request)
        hit = self.cache.get(key)
        cached = hit is not None
        source = (
            _chunks_of(read_wav(hit)[0], info.sample_rate) if hit is not None else self.engine.stream(request)
        )
        first_section = job.trim_leading_silence and section is job.sections[0]
        trimmer = LeadingSilenceTrimmer(info.sample_rate) if first_section else None
        raw: list[np.ndarray] = []
        kept: list[np.ndarray] = []
        try:
            for chunk in source:
                if job.cancel_requested.is_set():
                    return None, cached
                chunk = np.asarray(chunk, dtype=np.float32).reshape(-1)
                raw.append(chunk)
                self._deliver(job, section, trimmer.feed(chunk) if trimmer else chunk, kept)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()
        if job.cancel_requested.is_set():
            return None, cached
        if trimmer is not None:
            self._deliver(job, section, trimmer.flush(), kept)
        if not cached and raw:
            self.cache.put(key, wav_bytes(np.concatenate(raw), info.sample_rate))
        return (np.concatenate(kept) if kept else np.zeros(0, dtype=np.float32)), cached

    def _deliver(self, job: Job, section: Section, samples: np.ndarray, kept: list[np.ndarray]) -> None:
        if samples.size == 0:
            return
        kept.append(samples)
        if job.first_audio_at is None:
            job.first_audio_at = time.monotonic()
            submitted = self._submitted_at.get(job.id)
            if submitted is not None:
                self.ttfa_ms.append((job.first_audio_at - submitted) * 1000.0)
                self.observer.first_audio(job, job.first_audio_at - submitted)
        if job.stream_audio:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(job.publish_audio, AudioChunk(section.idx, samples))


def _chunks_of(audio: np.ndarray, sample_rate: int, seconds: float = 0.5):  # noqa: ANN202
    step = max(1, int(sample_rate * seconds))
    for start in range(0, audio.size, step):
        yield audio[start : start + step]
