"""The engine thread: loads the engine (`engine_load.py`), then runs one section at a time as admission hands them out.

Why one thread: engines hold process-global or device state (espeak, an NPU context) and inference
saturates the cores anyway. For each section the audio is trimmed once (first section of a preview),
its onset found once (handed to listeners with the chunk that reveals it), encoded once (the same wav
bytes go to the output file and the cache) and written once, through `PathPolicy.write_output` (no link followed).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np

from ..audio_decode import read_wav
from ..engine.base import Engine, Interrupted, SynthesisRequest, Voice
from ..paths import PathPolicy
from ..protocol import (
    EngineError,
    Limits,
    Progress,
    SectionError,
    WorkerError,
    WriteFailed,
    check_text,
)
from .admission import Admission
from .audio_handover import AudioHandover
from .cache import SynthesisCache
from .delivery import Delivery, SectionAudio, chunks_of
from .engine_load import EngineLoad
from .finisher import Finisher
from .job_bytes import JobBytes
from .journal import Journal
from .model import Job, Section
from .observer import SchedulerObserver
from .preview_lanes import PreviewLanes
from .runner_ahead import SendsAhead
from .stats import Stats

log = logging.getLogger(__name__)


class Runner(EngineLoad, AudioHandover, SendsAhead):
    # Serve waiting previews at the step boundaries of a batch section, when the engine says it can
    # pause a section (`preemptible`): its stream is a generator that keeps its own state, so the
    # paused section resumes where it was and makes the same samples. The cluster runner does not.
    preempts = True

    def keeps_all_audio(self, job: Job) -> bool:
        """Every section's chunks kept to its end, a file or not (the cluster runner hands a batch's
        over as a wav); here only those a file or the cache takes (`Delivery`'s `keeps`)."""
        return False

    def __init__(
        self,
        engine: Engine,
        admission: Admission,
        journal: Journal,
        cache: SynthesisCache,
        stats: Stats,
        *,
        limits: Limits,
        default_seed: int,
        paths: PathPolicy,
        end_job: Callable[[Job], None],
        observer: SchedulerObserver | None = None,
        preview_lanes: int = 1,
        job_bytes: JobBytes | None = None,
    ) -> None:
        self.engine = engine
        self.job_bytes = job_bytes  # --jobs-max-bytes over default outputs (none: unbounded)
        self.admission = admission
        self.journal = journal
        self.cache = cache
        self.stats = stats
        self.limits = limits
        self.default_seed = default_seed
        self.paths = paths
        self.end_job = end_job
        self.observer = observer if observer is not None else SchedulerObserver()
        super().__init__()  # (the load's state: `EngineLoad`)
        self.paused_seconds = 0.0  # engine time lent to previews inside paused sections, in all
        self._thread: threading.Thread | None = None
        self._engine_ident = -1  # the engine thread's id: its hand-overs are held (`Finisher.hold`)
        self.finisher = Finisher()  # ends file-only jobs' sections beside the engine thread
        # Sections made and handed to the finisher, not yet in the cache, by key: a batch that says the
        # same text twice in a row made it twice (the second looked before the first was put).
        self._unkept: dict[str, SectionAudio] = {}
        self._unkept_lock = threading.Lock()  # an add; `_keep`'s look and delete as one step
        # previews beside the engine thread
        self.lanes = PreviewLanes(preview_lanes, self._serve_previews, lambda: self.admission.stopping)

    def start(self) -> None:
        stop_ahead = getattr(self.engine, "stop_ahead", None)
        if callable(stop_ahead):  # a preview queued behind a batch's section goes before the one sent ahead
            self.admission.on_preview_queued = stop_ahead
        self.finisher.start()
        self._thread = threading.Thread(target=self._work, name="npu-worker-engine", daemon=True)
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Until the engine thread, the preview lanes and then the finisher (what it still had to end) are done."""
        deadline = time.monotonic() + timeout
        if self._thread is not None:  # first: the lanes it opened after a join began went unwaited
            self._thread.join(max(0.0, deadline - time.monotonic()))
        for thread in self.lanes.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self.finisher.join(max(0.0, deadline - time.monotonic()))

    @property
    def alive(self) -> bool:
        threads = (self._thread, *self.lanes.threads)
        return any(t is not None and t.is_alive() for t in threads) or self.finisher.alive

    def _work(self) -> None:
        self._engine_ident = threading.get_ident()
        try:
            loaded = self._load()
            if self.on_load_ended is not None:
                self.on_load_ended()
            if loaded:
                self._serve(lambda: self.admission.next_section(self._before_waiting), self.engine)
        finally:
            self.finisher.release()
            self.finisher.close()

    def _before_waiting(self) -> None:
        """The engine thread has no work: what it held goes to the finisher (a batch's last section ends
        at once), then a section sent ahead that no pick took (a cancelled batch's) is stopped."""
        self.finisher.release()
        drop_ahead = getattr(self.engine, "drop_ahead", None)
        if drop_ahead is not None:
            drop_ahead()

    def _serve(self, next_section: Callable[[], tuple[Job, Section] | None], engine: Engine) -> None:
        """One lane: the sections `next_section` hands out, on `engine`, until it says stop."""
        while (picked := next_section()) is not None:
            job, section = picked
            try:
                self._section_ended(job, self.run_section(job, section, engine))
            finally:  # (a held preview's last chunks, `ok` and `done`: one wake-up, `hold_wake_ups`)
                self.journal.handoff.release()

    def _serve_previews(self, engine: Engine) -> None:
        """A preview lane's work (`preview_lanes.py`), on its own engine instance (a cancel stops
        its call in flight too, where it can: espeak's child)."""
        interrupt = getattr(engine, "interrupt", None)
        stop = interrupt if callable(interrupt) else None
        try:
            self._serve(lambda: self.admission.next_preview(stop), engine)
        finally:
            engine.close()

    def run_section(self, job: Job, section: Section, engine: Engine | None = None) -> SectionAudio | None:
        """Synthesise one section; what follows (encode, write, `ok`) and its events go through
        `_then(job)`: for a file-only job they run on the finisher thread, in order, while this
        thread goes on to the next section. Returns the audio to put in the cache once the section
        has ended (`_section_ended`), if any."""
        then = self._then(job)
        started, paused_before = time.monotonic(), self.paused_seconds

        def own_seconds() -> float:
            """The section's own time: what previews took while it was paused is theirs."""
            return time.monotonic() - started - (self.paused_seconds - paused_before)

        if not (job.synth_at_admission and section is job.sections[0]):  # (else told with its `start`)
            then(self.journal.append, job, Progress(section.idx, "synth"))
        try:
            self._check_section(job, section)
            audio = self._synthesise(job, section, engine or self.engine)
            if audio is None:  # cancelled mid-section
                return None
            seconds = own_seconds()
            if section.output_path is not None:  # (what a lane holds goes before its wav's write)
                self.journal.handoff.release()
            kept = None
            if not audio.cached and self._caches(job, section):
                with self._unkept_lock:
                    self._unkept[audio.key] = kept = audio  # until `_keep` has put it in the cache
            then(self._finish, job, section, audio, seconds)
            return kept
        except Exception as exc:  # noqa: BLE001 - one section's failure never stops the job
            if job.cancel_requested.requested:  # (the cancel may be its cause: a child killed at its STOP)
                job.failed_after_cancel = True
            then(self._fail, job, section, exc)
            return None
        finally:
            self.observer.section_ran(job, own_seconds())

    def _check_section(self, job: Job, section: Section) -> None:
        """The section's text and reference wav, just before the engine gets it: the wav was checked at
        admission (on a cluster, where the job was accepted); again now (a swap, a resumed job, this
        node's roots)."""
        if not self._text_checked_ahead(section):  # (checked as it went ahead: the same text and limits)
            check_text(section.text, self.limits)
        if job.params.ref_wav is not None:
            self.paths.check_ref_wav(job.params.ref_wav)

    def _then(self, job: Job) -> Callable[..., object]:
        """Where a section's end runs: on the finisher thread while the engine has other work to go on
        with; right here when it has none (no thread hop for a lone `/synth`) and the finisher has
        nothing left to do (so the job's events stay in order), and always here for a job whose
        audio someone listens to live (its events follow its chunks at once). The engine thread's are
        held until its next request is sent (`Finisher.hold`: the finisher woken then, not in the gap)."""
        finisher = self.finisher
        if job.stream_audio or (finisher.idle and not self.admission.has_work()):
            return _now
        return finisher.hold if threading.get_ident() == self._engine_ident else finisher.submit

    def _finish(self, job: Job, section: Section, audio: SectionAudio, seconds: float) -> None:
        """Write the section's file (encoded once, shared with the cache), then log `ok`."""
        started, cached = time.monotonic(), audio.cached  # (a property: read once)
        try:
            if section.output_path is not None:
                self.journal.handoff.flush_held()  # (what a lane holds goes before the disk work)
                try:
                    wav, path = audio.file_wav(), section.output_path
                    with self._counted(job, path, len(wav)):
                        # Opened again without following links: the path may have changed since admission.
                        self.cache.making_room(path, lambda: self.paths.write_output(path, wav), len(wav))
                except OSError as exc:
                    raise WriteFailed(f"{section.output_path}: {exc.strerror or exc}") from exc
            done = Progress(
                section.idx,
                "ok",
                wav_path=section.output_path,
                duration_sec=audio.duration,
                elapsed_sec=round(seconds + time.monotonic() - started, 3),
                cached=True if cached else None,
            )
            self.journal.append(job, done)
            self.stats.section_ok(cached)
            audio.ok = True
        except Exception as exc:  # noqa: BLE001 - reported as the section's error
            self._fail(job, section, exc)

    def _keep(self, audio: SectionAudio) -> None:
        """Put a section that ended `ok` in the cache: after its job's `done`, when that is its last
        section, since a `/synth` answers at `done` (an fsync of the entry and its write came before
        that answer; benchmarks/SERVER_OVERHEAD.md, 2026-12-05 late night). Meanwhile `_unkept` serves the
        same text said again (forgotten under its lock: a lane's entry for it, added after the look, went)."""
        try:
            if audio.ok:
                self.journal.handoff.flush_held()  # (a held `ok` and `done` go before the cache's fsync)
                self.cache.put(audio.key, audio.raw_wav)
        except Exception:  # noqa: BLE001 - the cache is an aid: the section is `ok`, the lane goes on
            log.exception("the synthesis cache could not keep a section")
        finally:
            with self._unkept_lock:
                if self._unkept.get(audio.key) is audio:
                    del self._unkept[audio.key]

    def _counted(self, job: Job, path: str, size: int) -> contextlib.AbstractContextManager[None]:
        """The write counted against --jobs-max-bytes (WriteFailed when it cannot make room)."""
        if self.job_bytes is None:
            return contextlib.nullcontext()
        return self.job_bytes.writing(job.id, path, size)

    def _fail(self, job: Job, section: Section, exc: Exception) -> None:
        if not isinstance(exc, WorkerError):
            log.error("section %s of job %s failed", section.idx, job.id, exc_info=exc)
            exc = EngineError(f"{type(exc).__name__}: {exc}")
        self.journal.append(job, SectionError(section.idx, str(exc)))
        self.stats.section_failed()

    def _section_ended(self, job: Job, made: SectionAudio | None = None) -> None:
        """The engine is done with a section of `job`: a cancel no longer reaches it; the job ends
        (`done`) after the section's own end, in the same order; then what it `made` is cached."""
        self.admission.section_made(job)
        then = self._then(job)
        then(self._close_section, job)
        if made is not None:
            then(self._keep, made)

    def _close_section(self, job: Job) -> None:
        if self.admission.section_done(job):
            self.end_job(job)

    def _caches(self, job: Job, section: Section) -> bool:
        """Audio worth keeping: it went to a file (batches, /synth); a listen-only preview is not kept."""
        return self.cache.enabled and job.cache_write and (job.persisted or section.output_path is not None)

    def _request(self, job: Job, section: Section) -> SynthesisRequest:
        params = job.params
        return SynthesisRequest(
            text=section.text,
            lang=params.lang,
            speed_factor=params.speed_factor,
            voice=Voice(params.ref_wav, params.ref_text, read=self.paths.read_reference),
            seed=params.seed if params.seed is not None else self.default_seed,
            early_audio=job.stream_audio,  # files-only work (NDJSON, /synth) gets the best throughput
        )

    def _synthesise(self, job: Job, section: Section, engine: Engine) -> SectionAudio | None:
        assert self.info is not None
        rate = self.info.sample_rate  # (read once: `_rate` was two calls a section)
        request, key = self._request_and_key(job, section, engine)  # (made once for one sent ahead)
        # Among the made ones first: `_keep` forgets one only once it is in the cache (looked for after a
        # miss in the cache, it could be put there and forgotten in between, and was made again).
        made = self._unkept.get(key)
        hit = made.raw_wav if made is not None else self.cache.get(key, rate)
        source: Iterator[np.ndarray] | None = None
        if hit is not None:
            source = chunks_of(read_wav(hit)[0], rate)
        keeps = (
            self.keeps_all_audio(job)
            or section.output_path is not None
            or (job.persisted and self._caches(job, section))
        )
        delivery = Delivery(job, section, rate, self.publish_audio, keeps)
        pausable = self.preempts and hit is None and getattr(engine, "preemptible", False)
        push = getattr(engine, "stream_into", None) if hit is None and not pausable else None
        finisher = self.finisher  # what the engine thread holds goes as its request goes (a lane's never)
        held = finisher.holding and threading.get_ident() == self._engine_ident
        if held and self._sent_ahead is not None:  # another's went ahead: its drop comes before this request
            self._sent_ahead = None
            finisher.release()  # (what was held, a batch's `ok`, waited for that drop)
            held = False
        if push is not None:  # the engine runs on this thread and calls back per chunk (espeak)
            waits = self.hold_wake_ups(job, engine)  # (flushed at each wait; released at its end)
            sent = self._when_sent(job, engine, held, (section, key))
            if sent is not None and getattr(engine, "tells_sent", False):
                push(request, delivery.take, sent, **waits)  # (while the child makes it)
            else:
                if held:
                    finisher.release()
                push(request, delivery.take, **waits)
        else:
            if held:
                finisher.release()
            self._pull(job, delivery, source or engine.stream(request), pausable)
        if job.cancel_requested.requested:
            return None
        return delivery.finish(key, hit)

    def _pull(self, job: Job, delivery: Delivery, source: Iterator[np.ndarray], pausable: bool) -> None:
        """Iterate an engine's stream (or a cached wav's chunks); at each chunk, a cancel stops it and
        a pausable engine's section lends the engine to waiting previews. A call the cancel stopped
        (`Interrupted`) ends the section as the cancel it was. A cancel that came before the stream
        was made found no call to stop (`interrupt` marks only a made stream's): none is started."""
        try:
            if job.cancel_requested.requested:
                return
            for chunk in source:
                if not delivery.take(chunk):
                    return
                if pausable:
                    self._serve_waiting_previews(job)
                    if job.cancel_requested.requested:  # cancelled while it was paused: no further step
                        return
        except Interrupted:
            if not job.cancel_requested.requested:
                raise
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def _serve_waiting_previews(self, job: Job) -> None:
        """Run the sections of previews that arrived while `job`'s section runs, now. Lent time is the
        outer preview's wall time: one it lent to in turn (`lending.py`) is inside it, counted once.
        Its end goes now (held, a `/synth`'s answer waited for the rest of the paused section)."""
        admission = self.admission
        while (picked := admission.preempting_section(job)) is not None:
            started, lent_before = time.monotonic(), self.paused_seconds
            preview, section = picked
            try:
                self._section_ended(preview, self.run_section(preview, section))
            finally:
                self.journal.handoff.release()
            self.finisher.release()
            self.paused_seconds = lent_before + time.monotonic() - started


def _now(work: Callable[..., object], *args: object) -> None:
    work(*args)
