"""The simulated playback timeline that audible TTFA is read from.

The onset itself is `npu_worker.audio.audible_onset`: the same rule the server trims with, so client and
server agree on what "audible" means (and a click shorter than a window never counts).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from npu_worker.audio import OnsetWatch

ONSET_SLICE_S = 0.25  # how much of a whole file `onset_of` reads at a time


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


def onset_of(samples: np.ndarray, sample_rate: int) -> int | None:
    """`audible_onset` of a whole file, read slice by slice up to the onset only: its cost is the
    leading silence's, not the file's (a minute of audio took ~90 ms on the benchmark's event loop,
    delaying every other request's timestamps)."""
    watch = OnsetWatch(sample_rate)
    step = max(1, int(sample_rate * ONSET_SLICE_S))
    for start in range(0, samples.size, step):
        onset = watch.feed(samples[start : start + step])
        if onset is not None:
            return onset
    return None
