"""What a `/metrics` scrape of the engine lanes' four families costs: the jobs and sections counters and
the TTFA and section-time histograms, kept by prometheus_client's `Counter`/`Histogram` (before stop 58)
against `http_compat/lane_tallies.py`'s per-thread numbers (after), filled by the same counts.

`--threads` threads each count `--previews` previews (a section's `ok`, a job's `ok`, a TTFA and a
section time, seeded, so every run counts the same), into both; then `generate_latest` of each
registry, alternated, `--rounds` rounds of `--scrapes` scrapes, best round's µs a scrape. The texts are
compared too: the same, but a histogram's `_sum` may differ in its last digits (added thread by
thread). In one process, no server: a scrape is this call on the worker's loop.

    PYTHONPATH=<checkout> python benchmarks/scrape_cost.py --threads 3 --previews 1000 --rounds 5 --scrapes 2000
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from npu_worker.http_compat.lane_tallies import LaneTallies, TalliedCounter, TalliedHistogram
from npu_worker.http_compat.metrics import SECTION_BUCKETS, TTFA_BUCKETS  # (turns `_created` off)

Count = Callable[[float, float], None]


def library_registry() -> tuple[CollectorRegistry, Count]:
    registry = CollectorRegistry(auto_describe=True)
    jobs = Counter(
        "npu_worker_jobs", "Finished jobs by kind and outcome", ["kind", "outcome"], registry=registry
    )
    sections = Counter("npu_worker_sections", "Finished sections by outcome", ["outcome"], registry=registry)
    ttfa = Histogram(
        "npu_worker_ttfa_seconds",
        "Submission to first audio, per job",
        buckets=TTFA_BUCKETS,
        registry=registry,
    )
    section = Histogram(
        "npu_worker_section_seconds", "Engine time per section", buckets=SECTION_BUCKETS, registry=registry
    )

    def count(first_audio: float, engine: float) -> None:
        sections.labels("ok").inc()
        jobs.labels("preview", "ok").inc()
        ttfa.observe(first_audio)
        section.observe(engine)

    return registry, count


def tallied_registry() -> tuple[CollectorRegistry, Count]:
    tallies = LaneTallies(
        counters={"npu_worker_jobs": ("kind", "outcome"), "npu_worker_sections": ("outcome",)},
        histograms={"npu_worker_ttfa_seconds": TTFA_BUCKETS, "npu_worker_section_seconds": SECTION_BUCKETS},
    )
    registry = CollectorRegistry(auto_describe=True)
    registry.register(TalliedCounter(tallies, "npu_worker_jobs", "Finished jobs by kind and outcome"))
    registry.register(TalliedCounter(tallies, "npu_worker_sections", "Finished sections by outcome"))
    registry.register(
        TalliedHistogram(tallies, "npu_worker_ttfa_seconds", "Submission to first audio, per job")
    )
    registry.register(TalliedHistogram(tallies, "npu_worker_section_seconds", "Engine time per section"))

    def count(first_audio: float, engine: float) -> None:
        counts = tallies.here.counts
        counts.count("npu_worker_sections", ("ok",))
        counts.count("npu_worker_jobs", ("preview", "ok"))
        counts.observe("npu_worker_ttfa_seconds", first_audio)
        counts.observe("npu_worker_section_seconds", engine)

    return registry, count


def fill(counts: list[Count], threads: int, previews: int) -> None:
    """Each thread counts the same seeded previews into every registry (its own numbers each)."""

    def work(number: int) -> None:
        rng = random.Random(number)
        for _ in range(previews):
            first_audio, engine = rng.uniform(0.005, 0.4), rng.uniform(0.01, 2.0)
            for count in counts:
                count(first_audio, engine)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def best_us(registry: CollectorRegistry, scrapes: int) -> float:
    started = time.perf_counter()
    for _ in range(scrapes):
        generate_latest(registry)
    return (time.perf_counter() - started) / scrapes * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=3)
    parser.add_argument("--previews", type=int, default=1000, help="previews each thread counts")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scrapes", type=int, default=2000, help="scrapes a round")
    args = parser.parse_args()
    (library, by_library), (tallied, by_tallies) = library_registry(), tallied_registry()
    fill([by_library, by_tallies], args.threads, args.previews)
    times: dict[str, list[float]] = {"library": [], "tallies": []}
    for _ in range(args.rounds):  # alternated, so a change of the machine's load falls on both
        times["library"].append(best_us(library, args.scrapes))
        times["tallies"].append(best_us(tallied, args.scrapes))
    texts = [generate_latest(r).decode().splitlines() for r in (library, tallied)]
    differ = [(a, b) for a, b in zip(*texts, strict=True) if a != b]
    print(
        f"{args.threads} threads × {args.previews} previews; best of {args.rounds} × {args.scrapes} scrapes"
    )
    print(f"µs a scrape: library {min(times['library']):.0f}, tallies {min(times['tallies']):.0f}")
    print(f"lines that differ: {len(differ)} (all `_sum`: {all('_sum ' in a for a, _ in differ)})")
    for a, b in differ:
        print(f"  {a}\n  {b}")


if __name__ == "__main__":
    main()
