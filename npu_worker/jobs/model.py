"""Jobs and sections: a request is a job of sections whose history is an append-only event log.

State changes happen on the scheduler's worker thread (under the scheduler's lock); the log that
subscribers read is appended on the event loop (`publish`), so readers never need a lock.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..protocol import Done, Event, Progress, SectionError, SynthParams

QUEUED, RUNNING, DONE, CANCELLED, INTERRUPTED = "queued", "running", "done", "cancelled", "interrupted"


@dataclass(frozen=True)
class LogEntry:
    """One event of a job's log; `seq` counts from 1 in log order (re-attach with `after=seq`)."""

    seq: int
    event: Event

    def to_dict(self) -> dict[str, Any]:
        return {**self.event.to_dict(), "seq": self.seq}


@dataclass(frozen=True)
class AudioChunk:
    """PCM for live listeners (WebSocket previews); never persisted."""

    idx: int
    samples: np.ndarray


@dataclass
class Section:
    idx: int
    text: str
    output_path: str | None
    final: Progress | SectionError | None = None

    @property
    def finished(self) -> bool:
        return self.final is not None


def new_job_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass
class Job:
    id: str
    params: SynthParams
    sections: list[Section]
    preview: bool = False
    persisted: bool = True
    stream_audio: bool = False
    trim_leading_silence: bool = False
    created_at: float = field(default_factory=time.time)
    status: str = QUEUED
    current_idx: int | None = None
    first_audio_at: float | None = None
    last_served: int = 0
    cancel_requested: threading.Event = field(default_factory=threading.Event)
    log: list[LogEntry] = field(default_factory=list)
    next_seq: int = 1
    subscribers: list[Any] = field(default_factory=list)

    # -- derived views -------------------------------------------------------------------------

    @property
    def total(self) -> int:
        return len(self.sections)

    @property
    def ok_count(self) -> int:
        return sum(isinstance(s.final, Progress) for s in self.sections)

    @property
    def fail_count(self) -> int:
        return sum(isinstance(s.final, SectionError) for s in self.sections)

    @property
    def pending(self) -> list[Section]:
        return [s for s in self.sections if not s.finished]

    @property
    def finished(self) -> bool:
        return self.status in (DONE, CANCELLED)

    @property
    def done_event(self) -> Done | None:
        for entry in reversed(self.log):
            if isinstance(entry.event, Done):
                return entry.event
        return None

    def elapsed(self) -> float:
        done = self.done_event
        if done is not None:
            return done.elapsed_total_sec
        return round(time.time() - self.created_at, 3)

    def status_body(self) -> dict[str, Any]:
        """GET /jobs/{id}/status (PROTOCOL §5)."""
        return {
            "job_id": self.id,
            "status": self.status,
            "done": self.ok_count + self.fail_count,
            "total": self.total,
            "ok": self.ok_count,
            "fail": self.fail_count,
            "current_idx": self.current_idx,
            "elapsed_sec": round(self.elapsed(), 3),
        }

    def result_body(self) -> dict[str, Any]:
        """GET /jobs/{id}/result and the `stream:false` body: final event per section, in idx order."""
        ordered = sorted((s for s in self.sections if s.final is not None), key=lambda s: s.idx)
        finals = [s.final.to_dict() for s in ordered if s.final is not None]
        return {
            "job_id": self.id,
            "status": self.status,
            "total": self.total,
            "ok_count": self.ok_count,
            "fail_count": self.fail_count,
            "sections": finals,
            "wav_paths": [
                f["wav_path"] for f in finals if f.get("event") == "progress" and f.get("wav_path")
            ],
            "elapsed_total_sec": round(self.elapsed(), 3),
        }

    # -- event loop side -----------------------------------------------------------------------

    def publish(self, entry: LogEntry) -> None:
        """Append to the in-memory log and hand to subscribers (event loop thread only)."""
        self.log.append(entry)
        for subscriber in list(self.subscribers):
            subscriber.push(entry)

    def publish_audio(self, chunk: AudioChunk) -> None:
        for subscriber in list(self.subscribers):
            subscriber.push_audio(chunk)

    def entries_after(self, after: int) -> list[LogEntry]:
        return [e for e in self.log if e.seq > after]


def apply_event(job: Job, event: Event) -> None:
    """Fold one event into the job's state (used live and when replaying a log after restart)."""
    if isinstance(event, Progress):
        section = job_section(job, event.idx)
        if event.status == "ok" and section is not None:
            section.final = event
        elif section is not None:
            job.current_idx = event.idx
            job.status = RUNNING
    elif isinstance(event, SectionError):
        section = job_section(job, event.idx) if event.idx is not None else None
        if section is not None:
            section.final = event
    elif isinstance(event, Done):
        job.status = CANCELLED if event.cancelled else DONE
        job.current_idx = None


def job_section(job: Job, idx: int) -> Section | None:
    for section in job.sections:
        if section.idx == idx:
            return section
    return None
