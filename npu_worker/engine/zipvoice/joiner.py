"""Streaming join of segments: cross-fade at the joins, edge silence cut, samples out as they are final.

The concatenated output of `StreamJoiner` equals the offline result
`trim_edge_silence(crossfade_join(segments))`, but samples leave as soon as nothing later can change
them: only the last fade length of audio and any quiet run after the last loud 10 ms chunk are held.
"""

from __future__ import annotations

import numpy as np

from npu_worker.engine.zipvoice.features import SILENCE_CHUNK_S, SILENCE_DB

_EMPTY = np.zeros(0, dtype=np.float32)


class _Crossfader:
    """Incremental `audio.crossfade_join` (equal-power); holds back the last `fade` samples."""

    def __init__(self, fade: int) -> None:
        self.fade = fade
        self.held = _EMPTY  # last ≤ fade samples of the result, not emitted yet
        self.head = _EMPTY  # start of the current part, waiting to be mixed with `held`
        self.mixing = False

    def start_part(self) -> None:
        self.mixing = self.held.size > 0
        self.head = _EMPTY

    def feed(self, samples: np.ndarray) -> np.ndarray:
        samples = np.asarray(samples, dtype=np.float32)
        if self.mixing:
            self.head = np.concatenate([self.head, samples])
            if self.head.size < self.held.size:
                return _EMPTY
            samples, self.head = self._mix(self.head), _EMPTY
            self.mixing = False
        return self._hold_back(samples)

    def end_part(self) -> np.ndarray:
        if self.mixing and self.head.size:  # part shorter than the fade: mix what there is
            k = self.head.size
            ramp = np.linspace(0.0, np.pi / 2, k, dtype=np.float32)
            mixed = self.held[-k:] * np.cos(ramp) + self.head * np.sin(ramp)
            self.held = np.concatenate([self.held[:-k], mixed])
        self.mixing, self.head = False, _EMPTY
        return _EMPTY

    def finish(self) -> np.ndarray:
        out, self.held = self.held, _EMPTY
        return out

    def _mix(self, head: np.ndarray) -> np.ndarray:
        k = self.held.size
        ramp = np.linspace(0.0, np.pi / 2, k, dtype=np.float32)
        mixed = self.held * np.cos(ramp) + head[:k] * np.sin(ramp)
        self.held = _EMPTY
        return np.concatenate([mixed, head[k:]])

    def _hold_back(self, samples: np.ndarray) -> np.ndarray:
        joined = np.concatenate([self.held, samples])
        cut = max(0, joined.size - self.fade)
        self.held = joined[cut:]
        return joined[:cut]


class _EdgeTrimmer:
    """Streaming `trim_edge_silence`: drops quiet 10 ms chunks before the first and after the last loud one."""

    def __init__(self, sample_rate: int, threshold_db: float) -> None:
        self.chunk = max(1, int(round(sample_rate * SILENCE_CHUNK_S)))
        self.threshold = 10.0 ** (threshold_db / 20.0)
        self.buffer = _EMPTY
        self.buffer_start = 0  # stream position of buffer[0]
        self.scanned = 0  # stream position up to which whole chunks were measured
        self.started = False

    def feed(self, samples: np.ndarray) -> np.ndarray:
        self.buffer = np.concatenate([self.buffer, samples])
        end = self.buffer_start + self.buffer.size
        last_loud_end = None
        while self.scanned + self.chunk <= end:
            lo = self.scanned - self.buffer_start
            chunk = self.buffer[lo : lo + self.chunk].astype(np.float64)
            if np.sqrt(np.mean(chunk * chunk)) > self.threshold:
                if not self.started:
                    self.started = True
                    self._drop_to(self.scanned)
                last_loud_end = self.scanned + self.chunk
            self.scanned += self.chunk
        if not self.started:
            self._drop_to(self.scanned)
            return _EMPTY
        if last_loud_end is None:
            return _EMPTY
        return self._drop_to(last_loud_end)

    def _drop_to(self, position: int) -> np.ndarray:
        taken = self.buffer[: position - self.buffer_start]
        self.buffer = self.buffer[position - self.buffer_start :]
        self.buffer_start = position
        return taken


class StreamJoiner:
    """Feed segment pieces between `start_segment()` calls; every call returns samples ready to go out."""

    def __init__(
        self, sample_rate: int, fade_ms: float = 100.0, threshold_db: float = SILENCE_DB, trim: bool = True
    ) -> None:
        self._fader = _Crossfader(int(sample_rate * fade_ms / 1000.0))
        self._trimmer = _EdgeTrimmer(sample_rate, threshold_db) if trim else None

    def start_segment(self) -> np.ndarray:
        self._fader.end_part()
        self._fader.start_part()
        return _EMPTY

    def feed(self, samples: np.ndarray) -> np.ndarray:
        return self._trim(self._fader.feed(samples))

    def finish(self) -> np.ndarray:
        """The rest at the end of the request (the trailing quiet run is dropped)."""
        self._fader.end_part()
        return self._trim(self._fader.finish())

    def _trim(self, samples: np.ndarray) -> np.ndarray:
        if self._trimmer is None:
            return samples
        return self._trimmer.feed(samples)
