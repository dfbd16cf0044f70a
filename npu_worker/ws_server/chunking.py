"""Re-cutting a request's audio into WebSocket frames whose sizes grow.

Pure numpy, no I/O. The engine yields chunks of whatever size suits it (espeak callbacks, ZipVoice
segments); the listener wants the first frame small, so sound starts early, and later frames larger, so
per-frame overhead stays low once its playback buffer has filled. The schedule runs over the whole
request, not per section: the player's buffer is what grows, and it does not empty between sections.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .schedule import schedule_sizes

__all__ = ["GrowingChunker", "schedule_sizes"]

# `np.concatenate`'s C function without its `__array_function__` dispatch, whose Python dispatcher ran
# once a call, ≈ 8 a `/ws` preview on the loop (benchmarks/SERVER_OVERHEAD.md, stop 59): the frames cut
# here are plain arrays, which no other array type's `__array_function__` would claim.
_concatenate = getattr(np.concatenate, "_implementation", np.concatenate)


class GrowingChunker:
    """Cuts a stream into frames of sizes `sizes[0], sizes[1], ...`, the last size repeating.

    `feed` returns the frames that are complete; `flush` ends a section and returns what is left as one
    shorter frame (or nothing). Samples are never dropped, doubled or reordered: the concatenation of the
    frames is the concatenation of what was fed, which is what makes the stream gapless.
    """

    def __init__(self, sizes: Sequence[int], dtype: npt.DTypeLike = np.float32) -> None:
        """`dtype`: what the frames hold (`/ws` cuts PCM already converted, once per chunk)."""
        if not sizes or min(sizes) < 1:
            raise ValueError("chunk sizes must be positive")
        self.sizes = tuple(sizes)
        self.dtype = np.dtype(dtype)
        self.frames_made = 0
        self._pending: list[np.ndarray] = []
        self._pending_samples = 0
        self._last = len(self.sizes) - 1

    @property
    def target(self) -> int:
        """Size of the next full frame."""
        return self.sizes[min(self.frames_made, self._last)]

    @property
    def pending_samples(self) -> int:
        return self._pending_samples

    def feed(self, samples: np.ndarray) -> list[np.ndarray]:
        """The frames now complete. A 1-D array of the frames' dtype (`/ws`'s PCM, converted once a
        chunk) is taken as it is, and the sizes are read inline: about three Python calls a chunk and
        one a frame fewer on the event loop (benchmarks/SERVER_OVERHEAD.md, stop 54)."""
        if samples.dtype != self.dtype or samples.ndim != 1:
            samples = np.asarray(samples, dtype=self.dtype).reshape(-1)
        if samples.size:
            self._pending.append(samples)
            self._pending_samples += samples.size
        frames: list[np.ndarray] = []
        sizes, last, made = self.sizes, self._last, self.frames_made
        target = sizes[made if made < last else last]
        if self._pending_samples < target:
            return frames
        # (one piece waiting, the usual case with large engine chunks: cut it, no copy)
        buffer = self._pending[0] if len(self._pending) == 1 else _concatenate(self._pending)
        start = 0
        while buffer.size - start >= target:
            end = start + target
            frames.append(buffer[start:end])
            made += 1
            start, target = end, sizes[made if made < last else last]
        self.frames_made = made
        rest = buffer[start:]
        self._pending = [rest] if rest.size else []
        self._pending_samples = rest.size
        return frames

    def flush(self) -> np.ndarray | None:
        """The section's remaining samples as one frame, or None; the schedule keeps its place."""
        if not self._pending_samples:
            return None
        frame = _concatenate(self._pending)
        self._pending = []
        self._pending_samples = 0
        self.frames_made += 1
        return frame
