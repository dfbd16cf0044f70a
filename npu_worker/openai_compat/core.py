"""The one place this package touches the job core: submit a text, listen to its audio, look up voices.

Each utterance (a speech request, a batch item, a sentence of the stream socket) is a one-section
preview job of the scheduler, listened to from before it can run (audio is not in the job log). Keeping
the scheduler's surface used here this small (`submit`, `subscribe`, `cancel`, `info`, `voices`,
`engine`, `queue_size`, `draining`) is what lets the job core change inside without this package noticing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.base import EngineInfo, check_voice
from ..errors import SHUTTING_DOWN_REASON, UnparsableText
from ..jobs.model import AudioChunk, Job, LogEntry
from ..jobs.subscription import Subscription
from ..protocol import (
    BadRequest,
    BatchRequest,
    Done,
    EmptyText,
    EngineError,
    InvalidAudio,
    Progress,
    QueueFull,
    RefWavNotAllowed,
    SectionError,
    SectionRequest,
    SynthParams,
    UnknownVoice,
    WorkerError,
)
from ..voices import VoiceLibrary

if TYPE_CHECKING:  # the job core loads when an app is built, not when it is imported
    from ..jobs.scheduler import Scheduler


def _error_classes(base: type[WorkerError]) -> dict[str, type[WorkerError]]:
    found = {base.name: base}
    for sub in base.__subclasses__():
        found.update(_error_classes(sub))
    return found


def error_from_event(text: str) -> WorkerError:
    """A section's `error` string (`"Name: message"`) back to its named error, for an HTTP status."""
    name, _, message = text.partition(": ")
    error_class = _error_classes(WorkerError).get(name)
    if error_class is None or error_class is WorkerError:
        return EngineError(text)
    return error_class(message)


# How long a request (a speech request, a stream socket's message) waits for the engine's load; past it,
# Loading. An SDK's two retries make three such waits.
LOAD_WAIT_SECONDS = 30.0


def engine_info(scheduler: Scheduler) -> EngineInfo:
    """What runs now; the load error (500) or Loading (503) while there is nothing to run."""
    if scheduler.load_error is not None:
        raise scheduler.load_error
    if scheduler.info is None:
        raise scheduler.loading()
    return scheduler.info


# How long a wait for the load goes without a wake-up before it looks again: a cluster's view of its
# engine nodes (their heartbeats, one a second) changes with no signal here; a local load wakes it.
LOAD_RECHECK_SECONDS = 1.0


async def wait_while_loading(
    scheduler: Scheduler, wait_seconds: float, gone: asyncio.Future[Any] | None = None
) -> None:
    """Return once the engine has loaded or failed to load (woken by the scheduler's `load_signal`),
    or `wait_seconds` have passed; QueueFull (shutting down) once the shutdown began;
    ConnectionResetError once `gone` is done (the caller hung up)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_seconds
    while still_loading(scheduler):
        if shutting_down(scheduler):
            raise QueueFull(SHUTTING_DOWN_REASON)
        if gone is not None and gone.done():
            raise ConnectionResetError("the caller hung up")
        left = deadline - loop.time()
        if left <= 0:
            return
        change = asyncio.ensure_future(scheduler.load_signal.next_change().wait())
        try:
            waits = {change} if gone is None else {change, gone}
            await asyncio.wait(
                waits, timeout=min(left, LOAD_RECHECK_SECONDS), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            change.cancel()


def refuse_until_engine_voices_known(scheduler: Scheduler) -> None:
    """Loading while an engine whose own voices an upload may not be named after (espeak's languages)
    loads: it cannot list them yet. An engine with none (ZipVoice) takes an upload meanwhile, as it
    did; a failed load is no refusal here."""
    if speaks_languages_as_voices(scheduler) and still_loading(scheduler):
        raise scheduler.loading()


def still_loading(scheduler: Scheduler) -> bool:
    """Nothing runs yet and nothing failed: the engine loads or the kept jobs are read (waiting helps)."""
    return scheduler.info is None and scheduler.load_error is None


def queue_has_room(scheduler: Scheduler, max_queue: int) -> bool:
    """Whether a section would be admitted now, as far as the queue's count says (a cluster's is a view)."""
    return scheduler.queue_size() < max_queue


def shutting_down(scheduler: Scheduler) -> bool:
    """The drain has begun: nothing new will be admitted, however long a caller waits."""
    return scheduler.draining


def voice_library(scheduler: Scheduler) -> VoiceLibrary:
    return scheduler.voices


def speaks_default_voice(scheduler: Scheduler) -> bool:
    """False where the engine refuses a request that names no voice (ZipVoice without --ref-wav)."""
    try:
        check_voice(scheduler.engine, None)
    except UnknownVoice:
        return False
    return True


def speaks_languages_as_voices(scheduler: Scheduler) -> bool:
    """espeak has one voice per language and no reference audio: its voices are language codes."""
    return hasattr(scheduler.engine, "voice_for")


async def engine_voice(scheduler: Scheduler, name: str) -> str | None:
    """`name` when the engine has a built-in voice of that name (espeak: ko, en-us, ...), else None."""
    engine: Any = scheduler.engine
    if not speaks_languages_as_voices(scheduler):
        return None
    try:
        await asyncio.get_running_loop().run_in_executor(None, engine.voice_for, name)
    except WorkerError:
        return None
    return name


def engine_voice_catalog(scheduler: Scheduler) -> list[dict[str, Any]]:
    """The engine's built-in voices (blocking: espeak lists them on its own thread)."""
    engine: Any = scheduler.engine
    library = getattr(engine, "library", None)
    if not speaks_languages_as_voices(scheduler) or library is None:
        return []
    entries: dict[str, dict[str, Any]] = {}
    for voice in library.voices():
        name = voice.languages[0] if voice.languages else voice.identifier
        entries.setdefault(name, {"name": name, "source": "espeak", "description": voice.name})
    return sorted(entries.values(), key=lambda entry: entry["name"])


class SpeechRun:
    """One utterance in flight: iterate its audio; a failed section raises its named error."""

    def __init__(self, scheduler: Scheduler, job: Job, subscription: Subscription) -> None:
        self.scheduler = scheduler
        self.job = job
        self.subscription = subscription
        self.samples = 0
        # The request fields that gave the reference voice's audio and its transcript: the engine's
        # refusals of a reference (InvalidAudio, BadRequest) name them (the section's error has no param).
        self.reference_fields = ("voice", "voice")
        self.text_field = "input"  # what a refusal of the text itself (EmptyText, UnparsableText) names

    async def audio(
        self, before_waiting: Callable[[], Awaitable[None]] | None = None
    ) -> AsyncIterator[np.ndarray]:
        """The samples as they come; `before_waiting` is awaited whenever the next item is not here yet
        (a pump writes what it holds then, as one burst)."""
        failure: WorkerError | None = None
        ended = False
        subscription = self.subscription
        try:
            while True:
                if before_waiting is not None and not subscription.holds():
                    await before_waiting()
                try:
                    item = await anext(subscription)
                except StopAsyncIteration:
                    break
                if isinstance(item, AudioChunk):
                    self.samples += item.samples.size
                    yield item.samples
                elif isinstance(item, LogEntry) and isinstance(item.event, SectionError):
                    failure = failure or error_from_event(item.event.error)
                elif isinstance(item, LogEntry) and isinstance(item.event, Done):
                    ended = True
        finally:
            self.subscription.close()
        if not ended and failure is None:  # its events stopped without a `done`, as `/synth` is told
            if self.scheduler.draining:
                raise QueueFull(SHUTTING_DOWN_REASON)
            raise self.scheduler.stream_lost(self.job)
        final = self.job.sections[0].final if self.job.sections else None
        if isinstance(failure, InvalidAudio | BadRequest):
            failure.param = self.reference_fields[isinstance(failure, BadRequest)]
        elif isinstance(failure, RefWavNotAllowed):  # its transcript, read as the section runs
            failure.param = self.reference_fields[0]
        elif isinstance(failure, EmptyText | UnparsableText):
            failure.param = self.text_field
        if failure is not None:
            failure.counted = True  # its section's event was (npu_worker_errors_total)
            raise failure
        if not isinstance(final, Progress):
            raise EngineError("the request was cancelled before its audio was complete")

    def cancel(self) -> None:
        self.scheduler.cancel(self.job.id)
        self.subscription.close()

    async def cancel_then_stop_at(self, closed: Awaitable[None]) -> None:
        """Cancel the job now, and stop listening once `closed` is done (the caller's connection is):
        until then its audio goes on to its `done`, so a cancel that came too late (every section ok)
        stops nothing and what was made can still be read whole, by a caller that only sent a FIN."""
        self.scheduler.cancel(self.job.id)
        await closed
        self.subscription.close()


async def start_speech(
    scheduler: Scheduler,
    text: str,
    params: SynthParams,
    *,
    trim_leading_silence: bool = True,
    max_buffered_seconds: float = 30.0,
    continues: bool = False,
    answers_at_done: bool = False,
) -> SpeechRun:
    """Queue `text` as a one-section preview job, listening from before it can run.

    `max_buffered_seconds` bounds the audio made but not yet taken by the caller before the job is
    dropped as a slow consumer: a live listener (the stream socket) keeps /ws's 30 s; a download of
    one whole text allows that text's worth, since a fast engine can run minutes ahead of any writer.
    `continues`: a later sentence of an utterance already heard (`Job.continues`: a new preview goes first).
    `answers_at_done`: nothing but the audio and the `done` is awaited (`SpeechRun.audio` reads an
    `error` only at the end): the job's `start`, `synth` and `ok` reach the loop with what follows
    them (`Job.answers_at_done`), not each on a wake-up of its own.

    A caller cancelled meanwhile (it hung up, its socket closed) does not leave a job running for
    nobody: admission finishes off the loop's task, and the run it gives is cancelled."""
    starting = asyncio.ensure_future(
        _start_speech(
            scheduler, text, params, trim_leading_silence, max_buffered_seconds, continues, answers_at_done
        )
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(_cancel_started)
        raise


def _cancel_started(starting: asyncio.Future[SpeechRun]) -> None:
    if not starting.cancelled() and starting.exception() is None:
        starting.result().cancel()


async def _start_speech(
    scheduler: Scheduler,
    text: str,
    params: SynthParams,
    trim_leading_silence: bool,
    max_buffered_seconds: float,
    continues: bool,
    answers_at_done: bool,
) -> SpeechRun:
    listeners: list[Subscription] = []

    def listen(job: Job) -> None:
        job.continues = continues
        job.answers_at_done = answers_at_done
        listeners.append(
            scheduler.subscribe(job, after=0, audio=True, max_buffered_seconds=max_buffered_seconds)
        )

    request = BatchRequest((SectionRequest(0, text, None),), params, audio=True)
    try:
        job = await scheduler.submit(
            request, preview=True, trim_leading_silence=trim_leading_silence, on_created=listen
        )
    except BaseException:
        for subscription in listeners:
            subscription.close()
        raise
    return SpeechRun(scheduler, job, listeners[0])
