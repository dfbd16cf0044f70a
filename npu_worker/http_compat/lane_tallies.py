"""The counts the engine lanes make a section and a job (sections and jobs by outcome, time to first
audio and engine time as histograms) and the loop an answer (requests by method, route and status), kept
as plain numbers by the thread that counts and summed when `/metrics` is scraped.

prometheus_client's `Counter` and `Histogram` take a lock and call ≈ 6 Python functions a count (18
calls of the library a `/ws` preview on the lane: benchmarks/SERVER_OVERHEAD.md, stop 58). Here each
thread adds to its own numbers, so each number has one writer (no lock, no lost count), and the
collectors read every thread's at scrape time: the same families, series (in the order they were first
counted), labels and buckets as the library's objects exposed (a histogram's sum is added up thread by
thread, so with several threads observing, its last digits may differ from one running sum's). The
threads that count are the worker's long-lived ones (engine lanes, the loop); a thread that ends leaves
its numbers, as counters never go down.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from itertools import accumulate

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import INF, floatToGoString

Labels = tuple[str, ...]


class _Observations:
    """One thread's observations of one histogram: how many fell in each bucket (not cumulative), their sum."""

    __slots__ = ("bounds", "buckets", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.buckets = [0] * len(bounds)
        self.sum = 0.0


class ThreadCounts:
    """What one thread counted; only that thread writes it."""

    __slots__ = ("_tallies", "labelled", "observed")

    def __init__(self, tallies: LaneTallies) -> None:
        self._tallies = tallies
        self.labelled: dict[str, dict[Labels, int]] = {name: {} for name in tallies.counters}
        self.observed = {name: _Observations(bounds) for name, bounds in tallies.histograms.items()}

    def count(self, name: str, labels: Labels) -> None:
        """One more of counter `name`'s series `labels` (made by its first count, as `labels(...)` did)."""
        counts = self.labelled[name]
        try:
            counts[labels] += 1
        except KeyError:
            self._tallies.first_count(counts, name, labels)

    def observe(self, name: str, amount: float) -> None:
        """`amount` into histogram `name`: the first bucket whose bound is ≥ it, as `Histogram.observe`."""
        observations = self.observed[name]
        observations.buckets[bisect_left(observations.bounds, amount)] += 1
        observations.sum += amount


class _ThreadLocal(threading.local):
    """A thread's `ThreadCounts`, made and listed at its first count."""

    counts: ThreadCounts

    def __init__(self, tallies: LaneTallies) -> None:
        self.counts = tallies.new_thread()


class LaneTallies:
    """Counters with labels and histograms without, counted by any thread, read by the scrape."""

    def __init__(self, counters: dict[str, Sequence[str]], histograms: dict[str, Sequence[float]]) -> None:
        self.counters = {name: tuple(labelnames) for name, labelnames in counters.items()}
        self.histograms = {name: (*(float(b) for b in bounds), INF) for name, bounds in histograms.items()}
        self._lock = threading.Lock()
        self._threads: list[ThreadCounts] = []
        self._series: dict[str, list[Labels]] = {name: [] for name in counters}  # in order first counted
        self.here = _ThreadLocal(self)  # `here.counts`: the calling thread's

    def new_thread(self) -> ThreadCounts:
        counts = ThreadCounts(self)
        with self._lock:
            self._threads.append(counts)
        return counts

    def first_count(self, counts: dict[Labels, int], name: str, labels: Labels) -> None:
        """A thread's first count of a series: listed for the scrape, if no thread had counted it."""
        with self._lock:
            if labels not in self._series[name]:
                self._series[name].append(labels)
            counts[labels] = 1

    def series(self, name: str) -> list[tuple[Labels, int]]:
        """Counter `name`'s series and their totals over every thread, in the order first counted."""
        with self._lock:
            threads, order = list(self._threads), list(self._series[name])
        return [(labels, sum(t.labelled[name].get(labels, 0) for t in threads)) for labels in order]

    def histogram(self, name: str) -> tuple[list[int], float]:
        """Histogram `name`'s buckets (cumulative) and sum over every thread."""
        with self._lock:
            threads = list(self._threads)
        buckets = [0] * len(self.histograms[name])
        total = 0.0
        for thread in threads:
            observations = thread.observed[name]
            for index, count in enumerate(observations.buckets):
                buckets[index] += count
            total += observations.sum
        return list(accumulate(buckets)), total


class TalliedCounter(Collector):
    """A counter family of `LaneTallies`, exposed as a prometheus_client `Counter` with labels is."""

    def __init__(self, tallies: LaneTallies, name: str, documentation: str) -> None:
        self.tallies, self.name, self.documentation = tallies, name, documentation

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.tallies.counters[self.name])
        for labels, total in self.tallies.series(self.name):
            family.add_metric(labels, total)
        yield family


class TalliedHistogram(Collector):
    """A histogram of `LaneTallies`, exposed as a prometheus_client `Histogram` without labels is."""

    def __init__(self, tallies: LaneTallies, name: str, documentation: str) -> None:
        self.tallies, self.name, self.documentation = tallies, name, documentation

    def collect(self) -> Iterator[Metric]:
        cumulative, total = self.tallies.histogram(self.name)
        bounds = self.tallies.histograms[self.name]
        buckets = [(floatToGoString(bound), count) for bound, count in zip(bounds, cumulative, strict=True)]
        yield HistogramMetricFamily(self.name, self.documentation, buckets=buckets, sum_value=total)
