"""The listener's side of a job's PCM stream: sections in order, one attempt at a time, no sample twice.

Pure (numpy slicing only): `follower.py` feeds it what XREAD returned and publishes what it gives back.

Why this is needed: a streaming job's sections run one after another (each is queued when the previous
one is made), but a section can run more than once: its engine node died or was cut off and another
took it over (XAUTOCLAIM), or a node restarted and took back its own item. Each run is a new attempt
(its id is in every entry). The rule: the attempt that appeared last in the stream is the section's
current one (a new attempt only starts once the old one lost its claim); earlier attempts' entries are
ignored from then on. The listener has already passed on `delivered` samples of the section; the new
attempt's first `delivered` samples are dropped, so the stream continues where it stopped instead of
starting the section again. With an engine that makes the same audio for the same request and seed
(the seed is part of the job), the listener hears one coherent section, and the `ok` of the attempt
that made it counts exactly the samples passed on. (Should the old attempt's node come back and finish
first, its `ok` closes the section: the listener has heard the new attempt up to then.)

The job's log arrives beside the stream and must keep the local order (a section's audio, then its
`ok`): `ready` holds an event about a section until the audio before it is complete. A section is
complete when its current attempt's end marker is read, or when a later section's audio begins.
"""

from __future__ import annotations

from ...protocol import Progress
from ..model import AudioChunk, Job, LogEntry
from .pcm_stream import PcmEntry


class PcmFollow:
    def __init__(self, job: Job) -> None:
        self.positions = {section.idx: pos for pos, section in enumerate(job.sections)}
        self.cursor = "0-0"  # the last entry read
        self.open_pos = 0  # sections before this position have all their audio passed on
        self.lost = False  # entries were trimmed before they were read (the listener fell far behind)
        self.closed_at: str | None = None  # the entry that completed a section (the read part can go)
        self._reset()

    def _reset(self) -> None:
        self.attempt: str | None = None
        self._attempts: set[str] = set()
        self._expect = 0  # the current attempt's next entry number
        self._seen = 0  # samples of the current attempt read
        self._delivered = 0  # samples of the open section passed on (over all its attempts)

    def feed(self, entries: list[PcmEntry]) -> list[AudioChunk]:
        """The chunks to pass on, in order, for entries read after `cursor`."""
        out: list[AudioChunk] = []
        for entry in entries:
            self.cursor = entry.entry_id
            if entry.samples is None:
                self.closed_at = entry.entry_id  # read through an attempt's end: the read part can go
            pos = self.positions.get(entry.idx)
            if pos is None or pos < self.open_pos:
                continue  # a finished section: a late or superseded attempt
            if pos > self.open_pos:  # a later section began: the ones before it are made
                self._close(pos, entry.entry_id)
            if entry.attempt != self.attempt:
                if entry.attempt in self._attempts:
                    continue  # an attempt that was taken over
                self._attempts.add(entry.attempt)
                self.attempt, self._expect, self._seen = entry.attempt, 0, 0
            if entry.number < self._expect:
                continue  # repeated by a retried send
            if entry.number > self._expect:
                self.lost = True
                return out
            self._expect += 1
            if entry.samples is None:
                self._close(pos + 1, entry.entry_id)
                continue
            chunk = self._new_part(entry)
            if chunk is not None:
                out.append(chunk)
        return out

    def feed_local(self, entry: PcmEntry) -> list[AudioChunk]:
        """An entry this node's engine just made, passed on ahead of its copy in the stream (`cursor`
        stays, so that copy is read and dropped as a repeat). Taken only where it simply continues what
        was passed on: the open section's current attempt at its next number, or the first attempt of
        the open section; anything else waits for the stream, whose order decides."""
        if self.positions.get(entry.idx) != self.open_pos or self.lost:
            return []
        if entry.attempt != self.attempt and (self.attempt is not None or self._attempts):
            return []
        if entry.number != (self._expect if entry.attempt == self.attempt else 0):
            return []
        cursor, closed_at = self.cursor, self.closed_at
        out = self.feed([entry])
        self.cursor, self.closed_at = cursor, closed_at
        return out

    def _new_part(self, entry: PcmEntry) -> AudioChunk | None:
        assert entry.samples is not None
        start = self._seen
        self._seen += int(entry.samples.size)
        if self._seen <= self._delivered and not (entry.samples.size == 0 and entry.onset is not None):
            return None
        cut = max(0, self._delivered - start)
        self._delivered = max(self._delivered, self._seen)
        onset = entry.onset - cut if entry.onset is not None else None
        return AudioChunk(entry.idx, entry.samples[cut:], onset)

    def _close(self, pos: int, entry_id: str) -> None:
        self.open_pos = pos
        self.closed_at = entry_id
        self._reset()

    def ready(self, entry: LogEntry) -> bool:
        """True when `entry` may be published: its section's audio (for a final event) or the audio of
        the sections before it (for `synth`) has all been passed on."""
        event = entry.event
        idx = getattr(event, "idx", None)
        pos = self.positions.get(idx) if idx is not None else None
        if pos is None:
            return True
        if isinstance(event, Progress) and event.status == "synth":
            return self.open_pos >= pos
        return self.open_pos > pos
