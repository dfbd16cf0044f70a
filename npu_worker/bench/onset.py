"""Audible onset that a click cannot fake, and the simulated playback timeline TTFA is read from.

`audio.audible_onset` implements the project's rule: RMS of 20 ms windows with a 10 ms hop, DC removed
per window, at or above -45 dBFS for two consecutive windows. With half-overlapping windows every
sample lies in two consecutive windows, so by that rule alone a single loud sample (a click) is an
onset. What the benchmark adds: the two windows must also be loud in their own, non-shared hops (the
first hop of the first window and the last hop of the last), so the sound lasts longer than one hop.
For sustained sound the answer equals the plain rule's; a click shorter than a hop never counts.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from npu_worker.audio import ONSET_CONSECUTIVE, ONSET_HOP_MS, ONSET_THRESHOLD_DB, window_levels_db


def hop_samples(sample_rate: int) -> int:
    return max(1, int(round(sample_rate * ONSET_HOP_MS / 1000.0)))


def sustained_onset(
    samples: np.ndarray,
    sample_rate: int,
    threshold_db: float = ONSET_THRESHOLD_DB,
    consecutive: int = ONSET_CONSECUTIVE,
) -> int | None:
    """Sample index where sustained audible sound starts (a multiple of the hop), or None."""
    windows = window_levels_db(samples, sample_rate) >= threshold_db
    hops = window_levels_db(samples, sample_rate, ONSET_HOP_MS, ONSET_HOP_MS) >= threshold_db
    if windows.size < consecutive:
        return None
    run = np.convolve(windows.astype(np.int32), np.ones(consecutive, dtype=np.int32), mode="valid")
    # window k spans hops k and k+1, so `consecutive` windows from k span hops k .. k+consecutive
    starts = np.flatnonzero(run == consecutive)
    starts = starts[starts + consecutive < hops.size]
    sustained = starts[hops[starts] & hops[starts + consecutive]]
    if sustained.size == 0:
        return None
    return int(sustained[0]) * hop_samples(sample_rate)


@dataclass
class PlaybackTimeline:
    """When each received sample would be played by a player that starts on the first chunk.

    Chunks play back to back; a chunk that arrives after the audio before it has finished playing
    is an underrun (the listener hears a gap of `arrival - cursor`), and it plays on arrival.
    """

    sample_rate: int
    started_at: float | None = None
    cursor: float = 0.0
    samples: int = 0
    underruns: int = 0
    underrun_seconds: float = 0.0
    _offsets: list[int] = field(default_factory=list)
    _play_at: list[float] = field(default_factory=list)

    def add(self, arrival: float, n_samples: int) -> None:
        if n_samples <= 0:
            return
        if self.started_at is None:
            self.started_at = play_at = arrival
        elif arrival > self.cursor:
            self.underruns += 1
            self.underrun_seconds += arrival - self.cursor
            play_at = arrival
        else:
            play_at = self.cursor
        self._offsets.append(self.samples)
        self._play_at.append(play_at)
        self.samples += n_samples
        self.cursor = play_at + n_samples / self.sample_rate

    def play_time(self, sample_index: int) -> float:
        """The moment sample `sample_index` (0-based over all chunks) reaches the listener."""
        if not self._offsets or not 0 <= sample_index < self.samples:
            raise IndexError(f"sample {sample_index} was not received ({self.samples} samples)")
        chunk = bisect.bisect_right(self._offsets, sample_index) - 1
        return self._play_at[chunk] + (sample_index - self._offsets[chunk]) / self.sample_rate
