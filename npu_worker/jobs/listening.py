"""Looking jobs up and listening to them: a live or kept job by id, the listing, a kept job read
back whole, a finished section's wav, and a subscription (its replay, then live events and audio),
dropped as a slow consumer past its bound.

Apart from the scheduler's wiring because these are the views' reads: they change no job but a
slow consumer's, which is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import BinaryIO

from ..paths import PathPolicy
from ..protocol import JobNotFound, SectionError, SlowConsumer, WorkerError
from ..voices import VoiceLibrary
from .ending import JobEnding
from .model import Job, KeptJob
from .removals import Removals
from .shared_copies import SharedCopies
from .store import JobStore
from .stored import open_section_audio, read_replay, read_whole
from .subscription import AudioBudget, Subscription


class JobListening(JobEnding):
    audio_budget: AudioBudget
    copies: SharedCopies
    paths: PathPolicy
    removals: Removals
    store: JobStore
    voices: VoiceLibrary

    async def section_audio(self, job: Job, idx: int) -> BinaryIO:
        """The wav of a finished section: its file, open (the caller sends it in pieces and closes
        it); AudioNotFound if it has none."""
        return await open_section_audio(job, idx, self.paths)

    def live_job(self, job_id: str) -> Job | None:
        """A queued or running job, previews included (they are not in the registry)."""
        return self.admission.live_job(job_id)

    def voice_user(self, ref_wav: str) -> str | None:
        """Who of this worker speaks with this reference wav (a stored voice's: a delete would fail its
        remaining sections), queued, running or to resume: `job <id>` for a kept job (`/jobs` lists it),
        else `a request in progress` (a preview's id would let others cancel it); Loading while the kept
        jobs are still read. Blocking: off the loop."""
        self.check_jobs_readable()
        for job in [*self.admission.live_jobs(), *self.registry.snapshot()]:
            if isinstance(job, Job) and not job.finished and job.params.ref_wav == ref_wav:
                return f"job {job.id}" if job.persisted else "a request in progress"
        return None

    def find_job(self, job_id: str) -> Job | KeptJob | None:
        """A kept job, else a finished one from the journal (blocking I/O: call from a thread). An
        unfinished job on disk that this worker does not hold (a folder put there after start) is
        none of its work: it would never move, and a replay of its events would wait for ever."""
        job = self.registry.get(job_id)
        if job is not None or self.journal is None:
            return job
        stored = self.journal.load(job_id)
        return stored if stored is not None and stored.finished else None

    def job_not_found(self, job_id: str) -> WorkerError:
        """The 404 of an id no job answers to, saying why when the worker removed it lately."""
        why = self.removals.why(job_id)
        return JobNotFound(f"no job {job_id}: {why}" if why else f"no job {job_id}")

    def stored_job(self, job: Job | KeptJob) -> Job:
        """The whole job, read again from its folder for a `KeptJob` (blocking: `stored.py`); removed
        since it was looked up, the 404 says why when the worker removed it."""
        return self._told_why_gone(job, lambda: read_whole(job, self.store, self.registry, self.copies))

    def replayed_job(self, job: Job | KeptJob) -> Job:
        """What a replay of `job`'s events holds (blocking): a finished one's log only, one view for all
        its slow readers, not read again while one holds it (`stored.read_replay`)."""
        return self._told_why_gone(job, lambda: read_replay(job, self.store, self.registry, self.copies))

    def _told_why_gone(self, job: Job | KeptJob, read: Callable[[], Job]) -> Job:
        try:
            return read()
        except WorkerError as exc:
            if exc.name == "JobNotFound" and self.removals.why(job.id) is not None:
                raise self.job_not_found(job.id) from None
            raise

    def recent_jobs(self, limit: int = 100) -> Sequence[Job | KeptJob]:
        """Kept jobs, newest first (a snapshot: safe while jobs come and go)."""
        return self.registry.recent(limit)

    def subscribe(
        self, job: Job, *, after: int = 0, audio: bool = False, max_buffered_seconds: float = 30.0
    ) -> Subscription:
        subscription = self._subscription(job, after, audio, max_buffered_seconds)
        if self.load_error is not None:  # failed since it was looked up: its replay, then the end
            subscription.finish()
        return subscription

    def _subscription(self, job: Job, after: int, audio: bool, max_buffered_seconds: float) -> Subscription:
        """A listener on `job` (a local copy on a Redis queue), dropped as a slow consumer past the bound."""
        info = self.info  # (read once: a property of two parts' state)
        rate = info.sample_rate if info is not None else 24000
        return Subscription(
            job,
            after=after,
            audio=audio,
            sample_rate=rate,
            max_buffered_seconds=max_buffered_seconds,
            on_overflow=self._drop_slow,
            budget=self.audio_budget,
        )

    def _drop_slow(self, job: Job) -> None:
        error = SlowConsumer("the client did not read audio fast enough")
        assert self.journal is not None
        job.listener_dropped = True
        self.journal.append(job, SectionError(job.current_idx, str(error)))
        self.cancel(job.id)
