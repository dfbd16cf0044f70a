"""The scheduler: the job core's one entry point for the views (submit, subscribe, cancel, look up).

It wires the parts and owns none of their logic: `admission` (bounds, order, cancel), `journal`
(every state change, persisted and published), `runner` (the engine thread), `registry` (jobs by id),
`retention` (what finished jobs leave behind), `job_bytes` (their bytes in the state dir, bounded),
`stats` (counters), `resume` (the kept jobs at start-up), `shutdown` (the drain), `stored` (a kept job
read back whole, a section's wav opened), `request_checks` (what a request names, checked and
resolved). Its own methods are the lifecycle and submission; it
inherits what it can take now (`readiness`), a job's end (`ending`) and the views' reads (`listening`).
It is built and started inside the app's `cleanup_ctx`, on the event loop.

Fast path: a preview (WebSocket) or `/synth` touches no disk when it can avoid it: no journal file,
no cache write for listen-only audio, and no executor hop at submit unless a path must be checked.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..engine.base import Engine, EngineInfo
from ..engine.spoken_languages import spoken_languages
from ..paths import PathPolicy
from ..protocol import (
    BatchRequest,
    Progress,
    Start,
    SynthParams,
    WorkerError,
)
from ..voices import VoiceLibrary
from . import shutdown
from .admission import Admission
from .admitters import Admitters
from .cache import SynthesisCache
from .job_bytes import JobBytes
from .journal import Journal, LocalJournal
from .listening import JobListening
from .loop_handoff import LoopHandoff, call_soon_unless_closed
from .model import Job, new_job_id
from .observer import SchedulerObserver
from .readiness import LoadSignal
from .recovery import Recovery
from .registry import JobRegistry
from .removals import Removals
from .request_checks import RequestChecks
from .resume import resume_kept_jobs
from .retention import Retention
from .runner import Runner
from .shared_copies import SharedCopies
from .stats import Stats
from .store import JobStore
from .subscription import UNREAD_AUDIO_BUDGET_SAMPLES, AudioBudget

log = logging.getLogger(__name__)

ADMITTERS = 4  # threads for admissions not awaited on the loop (`submit`'s `quiet_admission`)


def end_listeners(job: Job) -> None:
    """On the loop: a job refused at a quiet admission ends its listeners, which find `job.refusal`."""
    for subscriber in list(job.subscribers):
        subscriber.finish()


class Scheduler(JobListening):
    def __init__(
        self, engine: Engine | None, settings: Settings, *, clock: Callable[[], float] = time.time
    ) -> None:
        """Cheap and off the loop (`build_app`); the engine (None: the configured backend), the journal
        and the engine thread are built by `start`, in the app's `cleanup_ctx`."""
        self.engine: Any = engine
        self.settings = settings
        self.clock = clock
        self.limits = settings.limits
        self.paths = PathPolicy.from_settings(settings)  # allowed roots; the state dir is never one
        self.roots = self.paths.roots
        state_dir = Path(self.paths.state_dir)
        self.store = JobStore(state_dir)
        self.cache = SynthesisCache(state_dir / "cache", settings.cache_max_bytes)
        self.job_bytes = JobBytes((str(self.store.root), self.paths.outputs_root), settings.jobs_max_bytes)
        self.registry = JobRegistry()
        self.copies = SharedCopies()  # finished jobs read whole, one copy for their readers at once
        self.removals = Removals()  # finished jobs removed, by reason (`/metrics`, a 404's why)
        self.admission = Admission(settings.max_queue)
        self.stats = Stats()
        self.voices = VoiceLibrary.from_settings(settings)
        self.observer = SchedulerObserver()  # metrics hooks (no-op unless the app installs one)
        self.checks = RequestChecks(self.voices, self.paths)  # languages, voices, output files
        self.audio_budget = AudioBudget(UNREAD_AUDIO_BUDGET_SAMPLES)  # shared by every listener
        self.recovery = Recovery()  # the kept jobs are read after the socket serves
        self.load_signal = LoadSignal()  # what waits for the load wakes when it ends (readiness.py)
        self._recovery_task: asyncio.Task[None] | None = None
        # Quiet admissions' threads (`submit`): the loop's executor's future woke the loop at each's end.
        self._admitter = Admitters(ADMITTERS, "npu-worker-admit")
        self.journal: Journal | None = None
        self.retention: Retention | None = None
        self.runner: Runner | None = None
        # Checks of settings that depend on the loaded engine (its sample rate); a ValueError fails the load.
        self.load_checks: list[Callable[[EngineInfo], object]] = []

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the engine's load and the reading of the kept jobs (every unfinished one resumes, oldest
        first): both go on after this returns and the socket serves (recovery.py)."""
        loop = asyncio.get_running_loop()
        self.load_signal.bind(loop)
        if self.engine is None:
            from ..engine_options import build_engine

            self.engine = await loop.run_in_executor(None, build_engine, self.settings)
        journal = self.journal = LocalJournal(
            self.store, LoopHandoff(loop), observer=self.observer, job_bytes=self.job_bytes, cache=self.cache
        )
        self.retention = Retention(
            self.registry,
            journal,
            keep_seconds=self.settings.job_retention,
            max_jobs=self.settings.max_jobs_kept,
            clock=self.clock,
            job_bytes=self.job_bytes,
            removals=self.removals,
        )
        self.runner = Runner(
            self.engine,
            self.admission,
            journal,
            self.cache,
            self.stats,
            limits=self.limits,
            default_seed=self.settings.seed,
            paths=self.paths,
            end_job=self.end_job,
            observer=self.observer,
            preview_lanes=self.settings.preview_lanes,
            job_bytes=self.job_bytes,
        )
        self.runner.load_checks = self.load_checks
        self.runner.on_load_failed = lambda: call_soon_unless_closed(loop, self._end_unrunnable_streams)
        self.runner.on_load_ended = self.load_signal.changed
        # A state dir that cannot be used still fails the start; reading the jobs in it does not block it.
        await loop.run_in_executor(None, self._prepare_state_dir)
        self.recovery.running = True
        self.runner.start()  # the engine loads while the jobs are read (recovery.py)
        self._recovery_task = asyncio.create_task(resume_kept_jobs(self))

    def _prepare_state_dir(self) -> None:
        self.store.prepare()
        self.cache.prepare()

    async def drain(self, grace: float) -> None:
        """Start no new section; let the running one finish within `grace` seconds, else cancel it
        (`shutdown.py`). Queued sections of batch jobs stay in their logs and resume after a restart."""
        self.load_signal.changed()  # (on the loop after `drain` has stopped the admission)
        await shutdown.drain(self, grace)

    async def stop(self, grace: float = 30.0) -> None:
        await self.drain(grace)
        loop = asyncio.get_running_loop()
        if self._recovery_task is not None:  # its thread stops at the next job it reads
            await asyncio.gather(self._recovery_task, return_exceptions=True)
        if self.runner is not None:
            await loop.run_in_executor(None, self.runner.join, 30.0)
        if self.engine is not None:
            try:
                await loop.run_in_executor(None, self.engine.close)
            except Exception:  # noqa: BLE001 - closing must not mask shutdown
                log.exception("engine close failed")
        if isinstance(self.journal, LocalJournal):
            self.journal.close()
        self._admitter.shutdown()

    # -- submission ------------------------------------------------------------------------------

    async def submit(
        self,
        request: BatchRequest,
        *,
        preview: bool,
        trim_leading_silence: bool = False,
        on_created: Callable[[Job], None] | None = None,
        quiet_admission: bool = False,
    ) -> Job:
        """Create a job (validated, persisted unless a preview) and queue its sections.

        `on_created(job)` runs on the loop before the job can run: audio is not in the log, so a
        listener that wants every chunk must attach there (events alone can be replayed later).
        Raises Loading/ModelLoadError, QueueFull, OutputPathNotAllowed, RefWavNotAllowed.

        `quiet_admission` (a `/synth`, which reads only its job's `done`): an admission that must run off
        the loop is not awaited; it wakes the loop only to refuse (`job.refusal`, its listeners ended),
        and its success rides with the job's events: its future's completion had woken the loop once a
        call for nothing the handler needed before the `done` (benchmarks/SERVER_OVERHEAD.md, stop 59).
        """
        self.check_accepting()
        job = Job(
            id=new_job_id(),
            params=request.params,
            sections=[],
            preview=preview,
            persisted=not preview,
            stream_audio=preview and request.audio,
            trim_leading_silence=trim_leading_silence,
            created_at=self.clock(),
            created_mono=time.monotonic(),
        )
        if on_created is not None:
            on_created(job)
            if preview and len(job.subscribers) == 1:  # its one listener, for good: nobody looks a preview up
                job.audio_to = job.subscribers[0].push_audio
        blocking = job.persisted or request.params.ref_wav is not None  # files, a voice lookup
        blocking = blocking or request.params.lang not in self.checks.langs  # the engine may block
        if blocking or any(s.output_path is not None for s in request.sections):
            loop = asyncio.get_running_loop()
            if quiet_admission:
                self._admitter.submit(self._admit_or_refuse, loop, job, request)
            else:
                await loop.run_in_executor(None, self._admit, job, request)
        else:
            self._admit(job, request)
        return job

    def jobs_running(self) -> int:
        """Live jobs and the `/synth` admissions still under way off the loop (`Admitters.pending`): a
        request with work left whatever thread holds it (`/health` said 0 while one waited there)."""
        return self.admission.jobs_running() + self._admitter.pending()

    def spoken_languages(self) -> list[str] | None:
        """What /health lists as `languages`: the engine's (a cluster node answers for its peers'
        engines: `ClusterEngines.spoken_languages`)."""
        return spoken_languages(self.engine)

    def checked_params(self, params: SynthParams) -> SynthParams:
        """Blocking: what the request names, checked and resolved (`request_checks.py`)."""
        return self.checks.params(self.engine, params)

    async def check_params(self, params: SynthParams) -> None:
        """What `submit` would refuse in these parameters, before any text comes (a stream's
        configuration)."""
        await asyncio.to_thread(self.checked_params, params)

    def _admit_or_refuse(self, loop: asyncio.AbstractEventLoop, job: Job, request: BatchRequest) -> None:
        """`_admit` on the admitter's thread; a refusal kept on the job and its listeners ended on the loop."""
        try:
            self._admit(job, request)
        except BaseException as refusal:  # noqa: BLE001 - its caller raises it (`Job.refusal`)
            job.refusal = refusal
            call_soon_unless_closed(loop, end_listeners, job)

    def _admit(self, job: Job, request: BatchRequest) -> None:
        """Language and path checks, the queue bound (reserved atomically), persistence, `start`, queueing;
        a voice it names is not deleted meanwhile (`voice_user` finds it once queued). A job that names
        none skips that guard: its context manager was six Python calls a job, on the loop for a preview
        (benchmarks/SERVER_OVERHEAD.md, stop 60)."""
        if request.params.ref_wav is None:
            self._admit_checked(job, request)
            return
        with self.voices.admitting(request.params.ref_wav):
            self._admit_checked(job, request)

    def _admit_checked(self, job: Job, request: BatchRequest) -> None:
        job.params = self.checked_params(request.params)
        job.sections = self.checks.sections(job, request, self.journal)
        try:
            self.admission.reserve(job, job.total)
        except WorkerError:
            self.stats.count("jobs_refused")
            raise
        assert self.journal is not None and self.info is not None
        try:
            if job.persisted:
                self.journal.create(job)
                self.registry.add(job)
            info = self.info
            self.journal.append(job, Start(job.total, info.backend, info.device, job.id, info.sample_rate))
        except BaseException:
            self.admission.release(job)
            self.registry.remove(job.id)
            raise
        self.stats.count("jobs_submitted")
        self.admission.enqueue(job, self._tell_synth if job.stream_audio and job.sections else None)
        if job.preview and self.admission.stopping:
            # Admitted off the loop, it was counted before the drain began and queued after the drain
            # may have ended the waiting previews: no section of it will run, so it ends now too.
            shutdown.end_waiting_previews(self)

    def _tell_synth(self, job: Job) -> None:
        """A streaming preview an idle engine thread takes at once: its first section's `synth` appended
        now, in the step that queues it (`Admission.enqueue`: no job goes before it), so it goes out with
        its `start` in one write; the runner appends no other for that section."""
        assert self.journal is not None
        job.synth_at_admission = True
        self.journal.append(job, Progress(job.sections[0].idx, "synth"))
