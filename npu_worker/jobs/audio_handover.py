"""A streaming job's audio from the engine lane to its listeners on the event loop: its first chunks at
once, the later ones within a few ms of each other, sharing one wake-up of the loop (split out of
`runner.py`, whose `Runner` hands them over; the cluster runner's own `hand_over_audio` sends them to
Redis instead).
"""

from __future__ import annotations

from collections.abc import Callable

from .journal import Journal
from .model import AudioChunk, Job
from .observer import SchedulerObserver
from .stats import Stats, record_first_audio

FIRST_AUDIO_YIELD_SECONDS = 0.005  # at most this long the engine waits for the loop to take a first chunk
# A streaming job's first audio wakes the loop at once; once this much has been handed over (more than
# the first frames of any schedule: 40 + 80 + 160 ms by default), a chunk may wait LATER_AUDIO_SECONDS
# for the loop to take it with the next ones (benchmarks/SERVER_OVERHEAD.md, 2026-12-05 night).
URGENT_AUDIO_SECONDS = 0.5
LATER_AUDIO_SECONDS = 0.003


class AudioHandover:
    """The engine lane's half of a streaming job's audio: `publish_audio` is `Delivery`'s publish."""

    journal: Journal
    stats: Stats
    observer: SchedulerObserver
    urgent_samples: float  # URGENT_AUDIO_SECONDS at the loaded engine's rate (set by `Runner`)
    # False: every chunk goes through `hand_over_audio` (the cluster runner's, to Redis); a subclass
    # that defines its own `hand_over_audio` gets False unless it says otherwise (`__init_subclass__`).
    hands_over_to_loop = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A runner that hands its audio over elsewhere has every chunk go there: the later chunks'
        short cut to the loop (`publish_audio`) would skip its `hand_over_audio`, and its listeners
        would miss all but the first URGENT_AUDIO_SECONDS, with no error."""
        super().__init_subclass__(**kwargs)
        if "hand_over_audio" in cls.__dict__ and "hands_over_to_loop" not in cls.__dict__:
            cls.hands_over_to_loop = False

    def publish_audio(self, job: Job, chunk: AudioChunk) -> None:
        first = job.first_audio_at is None and chunk.samples.size > 0
        if first:
            record_first_audio(job, self.stats, self.observer)
        if job.stream_audio:
            urgent = job.handed_over_samples < self.urgent_samples
            job.handed_over_samples += int(chunk.samples.size)
            if urgent or not self.hands_over_to_loop:
                self.hand_over_audio(job, chunk, urgent)
            else:  # most of a preview's chunks: `hand_over_audio`'s `later`, without its call
                self.journal.handoff.later(job.audio_to or job.publish_audio, chunk, LATER_AUDIO_SECONDS)
            if first:  # a listener waits for exactly this: let the loop have the GIL and a core now
                self.journal.handoff.yield_to_loop(FIRST_AUDIO_YIELD_SECONDS)

    def hold_wake_ups(self, job: Job, engine: object) -> dict[str, Callable[[], None]]:
        """A listened job's wake-ups of the loop held (`LoopHandoff.hold`) on an engine that tells its
        waits (espeak's child: `tells_waits`), from one read of its pipe to the next and past the last
        to the section's end (the lane's `release`; before a wav's write, `run_section`'s: its last chunks
        and every other thread's hand-over waited for the write): the frames the child wrote together,
        then the `ok` and `done`, reach the loop in one drain (benchmarks/SERVER_OVERHEAD.md, 2026-12-07,
        stop 62); flushed before a section's disk work too (`Runner._finish`, `_keep`: its wav, the
        cache's copy). The keywords for its `stream_into`; none for a runner that hands audio elsewhere."""
        if not (job.stream_audio and self.hands_over_to_loop and getattr(engine, "tells_waits", False)):
            return {}
        self.journal.handoff.hold()
        return {"waiting": self.journal.handoff.flush_held}

    def hand_over_audio(self, job: Job, chunk: AudioChunk, urgent: bool = True) -> None:
        """To the job's listeners on the loop (one handoff call; the cluster runner sends it to Redis):
        at once while the listener waits for its first frames, else within LATER_AUDIO_SECONDS, with
        the chunks and events that come meanwhile (one wake-up of the loop, one burst on a socket); the
        last urgent chunk's drain opens that window, so the chunks past it wake the loop only to drain it."""
        # (a preview's: its listener's; read once: its listener's end sets it None on the loop meanwhile)
        to = job.audio_to or job.publish_audio
        if urgent and job.handed_over_samples >= self.urgent_samples:  # the last
            self.journal.handoff.then_later(to, chunk, LATER_AUDIO_SECONDS)
        elif urgent:
            self.journal.handoff(to, chunk)
        else:
            self.journal.handoff.later(to, chunk, LATER_AUDIO_SECONDS)
