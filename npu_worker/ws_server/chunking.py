"""Re-cutting a request's audio into WebSocket frames whose sizes grow, and spotting its audible onset.

Pure numpy, no I/O. The engine yields chunks of whatever size suits it (espeak callbacks, ZipVoice
segments); the listener wants the first frame small, so sound starts early, and later frames larger, so
per-frame overhead stays low once its playback buffer has filled. The schedule runs over the whole
request, not per section: the player's buffer is what grows, and it does not empty between sections.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..audio import ONSET_CONSECUTIVE, ONSET_HOP_MS, ONSET_WINDOW_MS, audible_onset


def schedule_sizes(schedule_ms: Sequence[float], sample_rate: int) -> tuple[int, ...]:
    """Frame sizes in samples for a schedule in milliseconds; the last size repeats."""
    if not schedule_ms:
        raise ValueError("the chunk schedule needs at least one size")
    sizes = tuple(int(round(sample_rate * ms / 1000.0)) for ms in schedule_ms)
    if min(sizes) < 1:
        raise ValueError(f"chunk sizes must be at least one sample, got {tuple(schedule_ms)} ms")
    return sizes


class GrowingChunker:
    """Cuts a stream into frames of sizes `sizes[0], sizes[1], ...`, the last size repeating.

    `feed` returns the frames that are complete; `flush` ends a section and returns what is left as one
    shorter frame (or nothing). Samples are never dropped, doubled or reordered: the concatenation of the
    frames is the concatenation of what was fed, which is what makes the stream gapless.
    """

    def __init__(self, sizes: Sequence[int]) -> None:
        if not sizes or min(sizes) < 1:
            raise ValueError("chunk sizes must be positive")
        self.sizes = tuple(sizes)
        self.frames_made = 0
        self._pending: list[np.ndarray] = []
        self._pending_samples = 0

    @property
    def target(self) -> int:
        """Size of the next full frame."""
        return self.sizes[min(self.frames_made, len(self.sizes) - 1)]

    @property
    def pending_samples(self) -> int:
        return self._pending_samples

    def feed(self, samples: np.ndarray) -> list[np.ndarray]:
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        if samples.size:
            self._pending.append(samples)
            self._pending_samples += samples.size
        frames: list[np.ndarray] = []
        if self._pending_samples < self.target:
            return frames
        buffer = np.concatenate(self._pending)
        start = 0
        while buffer.size - start >= self.target:
            end = start + self.target
            frames.append(buffer[start:end])
            self.frames_made += 1
            start = end
        rest = buffer[start:]
        self._pending = [rest] if rest.size else []
        self._pending_samples = rest.size
        return frames

    def flush(self) -> np.ndarray | None:
        """The section's remaining samples as one frame, or None; the schedule keeps its place."""
        if not self._pending_samples:
            return None
        frame = np.concatenate(self._pending)
        self._pending = []
        self._pending_samples = 0
        self.frames_made += 1
        return frame


class OnsetWatch:
    """Finds the audible onset (the rule of `audio.audible_onset`) of a stream fed frame by frame.

    The rule needs some audio after the onset before it can say "audible", so the onset is usually
    known one frame or so after the frame that carries it; `feed` then returns its position counted
    from the start of the stream, once. Only a tail of the stream is kept, aligned to the onset hop, so
    a long silent stream costs constant memory and constant work per frame.
    """

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self.hop = max(1, int(round(sample_rate * ONSET_HOP_MS / 1000.0)))
        window = max(1, int(round(sample_rate * ONSET_WINDOW_MS / 1000.0)))
        # Enough for every window that could still begin a run of loud windows (any run length the
        # rule may need up to `ONSET_CONSECUTIVE` non-overlapping windows).
        self._keep = (ONSET_CONSECUTIVE + 1) * window + self.hop
        self._tail = np.zeros(0, dtype=np.float32)
        self.dropped = 0
        self.onset: int | None = None

    def feed(self, samples: np.ndarray) -> int | None:
        """The onset's position in the stream, returned by the one feed after which it is known."""
        if self.onset is not None:
            return None
        buffer = np.concatenate([self._tail, np.asarray(samples, dtype=np.float32).reshape(-1)])
        onset = audible_onset(buffer, self.sample_rate)
        if onset is not None:
            self.onset = self.dropped + onset
            self._tail = np.zeros(0, dtype=np.float32)
            return self.onset
        # Windows start at multiples of the hop from the buffer start: drop whole hops only.
        drop = max(0, ((buffer.size - self._keep) // self.hop) * self.hop)
        self._tail = buffer[drop:]
        self.dropped += drop
        return None
