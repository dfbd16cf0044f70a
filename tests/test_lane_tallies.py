"""`http_compat/lane_tallies.py`: counts kept by each thread and summed at scrape time expose what
prometheus_client's own `Counter` and `Histogram` would for the same counts, and lose none when
several threads count at once."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from npu_worker.http_compat.lane_tallies import LaneTallies, TalliedCounter, TalliedHistogram

BOUNDS = (0.05, 0.1, 0.25, 1.0)
# Values on the bounds (a bucket's `le` takes its bound), between, past the last, zero and negative.
AMOUNTS = (0.05, 0.1, 0.25, 1.0, 0.0, -0.5, 0.07, 0.2500001, 3.0, 1e9, 0.099999)
SERIES = (
    ("preview", "ok"),
    ("batch", "partial"),
    ("preview", "ok"),
    ("batch", "cancelled"),
    ("batch", "partial"),
)


def tallied_registry() -> tuple[CollectorRegistry, LaneTallies]:
    tallies = LaneTallies(counters={"t_jobs": ("kind", "outcome")}, histograms={"t_seconds": BOUNDS})
    registry = CollectorRegistry(auto_describe=True)
    registry.register(TalliedCounter(tallies, "t_jobs", "Jobs"))
    registry.register(TalliedHistogram(tallies, "t_seconds", "Seconds"))
    return registry, tallies


def test_the_exposition_is_the_librarys_for_the_same_counts():
    reference = CollectorRegistry(auto_describe=True)
    jobs = Counter("t_jobs", "Jobs", ["kind", "outcome"], registry=reference)
    seconds = Histogram("t_seconds", "Seconds", buckets=BOUNDS, registry=reference)
    registry, tallies = tallied_registry()
    assert generate_latest(registry) == generate_latest(reference)  # before any count: no series
    for labels in SERIES:
        jobs.labels(*labels).inc()
        tallies.here.counts.count("t_jobs", labels)
    for amount in AMOUNTS:
        seconds.observe(amount)
        tallies.here.counts.observe("t_seconds", amount)
    assert generate_latest(registry) == generate_latest(reference)


def test_threads_counting_at_once_lose_no_count_and_series_keep_their_first_order():
    registry, tallies = tallied_registry()
    threads_n, rounds = 4, 5000
    start = threading.Barrier(threads_n)

    def work(number: int) -> None:
        counts = tallies.here.counts
        start.wait()
        for i in range(rounds):
            counts.count("t_jobs", SERIES[(i + number) % len(SERIES)])
            counts.observe("t_seconds", AMOUNTS[(i + number) % len(AMOUNTS)])

    tallies.here.counts.count("t_jobs", ("batch", "cancelled"))  # this thread first: the first series
    threads = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    series = dict(tallies.series("t_jobs"))
    assert next(iter(series)) == ("batch", "cancelled")
    assert sum(series.values()) == threads_n * rounds + 1
    buckets, _ = tallies.histogram("t_seconds")
    assert buckets[-1] == threads_n * rounds
    expected = {labels: 0 for labels in SERIES}
    for number in range(threads_n):
        for i in range(rounds):
            expected[SERIES[(i + number) % len(SERIES)]] += 1
    expected[("batch", "cancelled")] += 1
    assert series == expected
