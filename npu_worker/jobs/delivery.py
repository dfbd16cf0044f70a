"""One section's audio on its way from the engine: trimmed, onset-watched, handed to listeners, kept.

`Delivery` takes the engine's chunks one by one (on the engine thread); `SectionAudio` is what the
section made, left in those chunks until a file or the cache needs it in one piece.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..audio import LeadingSilenceTrimmer, OnsetWatch, clip_samples, to_pcm16, wav_of_chunks
from .model import AudioChunk, Job, Section

_ONE, _MINUS_ONE = np.float32(1.0), np.float32(-1.0)  # (`to_pcm16`'s bounds)


@dataclass
class SectionAudio:
    """What one section produced, as the chunks it came in: encoded straight from them (never joined
    into a buffer of their own) only by what needs them, on the thread that needs them (a listen-only
    preview never encodes its audio)."""

    raw_chunks: list[np.ndarray]  # everything the engine made (or the cached wav's samples); [] unkept
    kept_chunks: list[np.ndarray] | None  # what survived the leading-silence trim; None: no trim ran
    rate: int
    trimmed: bool
    key: str
    hit: bytes | None  # the cached wav this section was served from
    ok: bool = False  # its file is written and its `ok` logged (set by the thread that ended it)
    heard: int | None = None  # samples listeners got and the file holds, counted as they went (`Delivery`)
    # False: a listen-only section's (`Delivery`'s `keeps`): its chunks went to its listeners only.
    audio_kept: bool = True

    @property
    def cached(self) -> bool:
        return self.hit is not None

    @property
    def duration(self) -> float:
        """Seconds of what listeners got and the file holds."""
        if self.heard is not None:
            return round(self.heard / self.rate, 3)
        chunks = self.raw_chunks if self.kept_chunks is None else self.kept_chunks
        return round(sum(map(len, chunks)) / self.rate, 3)  # (1-D chunks: no generator step a chunk)

    @functools.cached_property
    def raw_wav(self) -> bytes:
        """The untrimmed audio as a wav (what the cache keeps), encoded at most once."""
        return self.hit if self.hit is not None else wav_of_chunks(self._chunks(self.raw_chunks), self.rate)

    def file_wav(self) -> bytes:
        """What the section's file holds: the raw wav (shared with the cache) unless it was trimmed."""
        if self.trimmed and self.kept_chunks is not None:
            return wav_of_chunks(self._chunks(self.kept_chunks), self.rate)
        return self.raw_wav

    def _chunks(self, chunks: list[np.ndarray]) -> list[np.ndarray]:
        """A section that kept nothing has no wav: a reader `keeps` forgot fails loudly here, where it
        wrote (or cached) a wav of no samples while the listener heard the section whole."""
        if not self.audio_kept:
            raise RuntimeError("a listen-only section's audio was not kept (Delivery's keeps)")
        return chunks


class Delivery:
    """One section's chunks on their way out: trimmed (first section of a preview), onset-watched
    (listeners of a streaming job), kept for the file, handed to listeners.

    `keeps`: the chunks are kept for what needs the section in one piece (its file, the cache, the
    cluster's hand-over); a listen-only preview's are not, only counted (`heard`): keeping them was
    two `list.append` calls a chunk on the lane for lists nobody read (benchmarks/SERVER_OVERHEAD.md,
    stop 55)."""

    def __init__(
        self,
        job: Job,
        section: Section,
        rate: int,
        publish: Callable[[Job, AudioChunk], None],
        keeps: bool = True,
    ) -> None:
        self.job, self.section, self.rate, self.publish, self.keeps = job, section, rate, publish, keeps
        self.watch: OnsetWatch | None = None
        if job.stream_audio:
            if job.onset_watch is None:
                job.onset_watch = OnsetWatch(rate)
            self.watch = job.onset_watch
        first = job.trim_leading_silence and section is job.sections[0]
        self.trimmer = LeadingSilenceTrimmer(rate, watch=self.watch) if first else None
        self.raw: list[np.ndarray] = []
        self.kept: list[np.ndarray] = []
        self.heard = 0  # samples handed on so far (past the trimmer, if any)

    @property
    def trimmed(self) -> bool:
        return self.trimmer is not None and self.trimmer.trimmed_samples > 0

    def take(self, chunk: np.ndarray) -> bool:
        """One engine chunk in; False once the job is cancelled (stop the engine). An empty chunk only
        marks a step boundary (a decoder call done). Kept, trimmed or onset-watched and delivered in
        this one call: a `feed` and a `_deliver` of their own were two more Python calls a chunk
        (benchmarks/SERVER_OVERHEAD.md, stop 54); `_deliver` is the trimmer's flush's at the end."""
        if self.job.cancel_requested.requested:
            return False
        if chunk.__class__ is not np.ndarray or chunk.dtype != np.float32 or chunk.ndim != 1:
            chunk = np.asarray(chunk, dtype=np.float32).reshape(-1)  # (espeak's are 1-D float32 already)
        if not chunk.size:
            return True
        if self.keeps:
            self.raw.append(chunk)
        onset = None
        trimmer = self.trimmer
        if trimmer is not None:
            if not self.heard or trimmer.onset_in_output is None:  # (past the onset: as it is, as the
                out = trimmer.feed(chunk)  # trimmer would hand it back, with no call of it a chunk)
                if not out.size:
                    return True
                onset = trimmer.onset_in_output if not self.heard else None
                chunk = out
            if self.keeps:
                self.kept.append(chunk)
        elif self.watch is not None and self.watch.onset is None:
            start = self.watch.fed
            found = self.watch.feed(chunk)
            onset = None if found is None else found - start
        self.heard += chunk.size
        job = self.job
        if job.stream_audio or job.first_audio_at is None:  # (as `_deliver`)
            pcm16: np.ndarray | None = None
            if job.pcm16_listener:  # here, not on the loop; `to_pcm16`'s ufuncs inline for the 1-D
                # float32 chunk it is by now (its call a chunk: benchmarks/SERVER_OVERHEAD.md, stop 58)
                scaled = clip_samples(chunk, _MINUS_ONE, _ONE)  # (one pass: `audio.py`'s `clip_samples`)
                scaled *= 32767.0
                pcm16 = np.rint(scaled, out=scaled).astype(np.int16)
            self.publish(job, AudioChunk(self.section.idx, chunk, onset, pcm16))
        return True

    def finish(self, key: str, hit: bytes | None) -> SectionAudio:
        """The trimmer's held-back tail, if any, goes out; what the section made, as its chunks."""
        if self.trimmer is not None:
            self._deliver(self.trimmer.flush(), None)
        kept = self.kept if self.trimmer is not None else None
        return SectionAudio(
            self.raw, kept, self.rate, self.trimmed, key, hit, heard=self.heard, audio_kept=self.keeps
        )

    def _deliver(self, samples: np.ndarray, onset: int | None) -> None:
        """What `take` does past the trimmer, for the trimmer's held-back tail."""
        if samples.size == 0 and onset is None:
            return
        if self.trimmer is not None and self.keeps:
            self.kept.append(samples)
        self.heard += samples.size
        if self.job.stream_audio or self.job.first_audio_at is None:  # else nobody takes chunks
            pcm16 = to_pcm16(samples) if self.job.pcm16_listener else None  # here, not on the loop
            self.publish(self.job, AudioChunk(self.section.idx, samples, onset, pcm16))


def chunks_of(audio: np.ndarray, sample_rate: int, seconds: float = 0.5) -> Iterator[np.ndarray]:
    step = max(1, int(sample_rate * seconds))
    for start in range(0, audio.size, step):
        yield audio[start : start + step]
