"""The espeak-ng engine alone, the way the worker's engine threads run it: the references that
`server_overhead.py` subtracts from what the server took, and the floors it compares the server with.

- `measure_engine`: per preview text, the time to the first trimmed 40 ms frame, the whole sentence and
  its CPU; the 39 sections one after another.
- `engine_batch_ms`: the 39 sections again on a fresh engine, measured just before each server batch.
- `lanes_alone`: two espeak instances on two threads of this process fed the server's own Poisson
  arrivals (`arrival_offsets`, the same seed), with no server.
- `single_engine_floor`: the wait an ideal one-engine server would impose on those arrivals (a model).
"""

from __future__ import annotations

import functools
import queue
import random
import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FIRST_FRAME_MS = 40.0  # the first size of the default --chunk-schedule-ms


def arrival_offsets(rate: float, count: int, seed: int) -> Iterator[float]:
    """Seconds from the start at which each of `count` Poisson arrivals at `rate` per second comes."""
    rng, at = random.Random(seed), 0.0
    for _ in range(count):
        at += rng.expovariate(rate)
        yield at


@dataclass
class EngineFigures:
    first_audio_ms: dict[str, float] = field(default_factory=dict)  # text → first trimmed chunk
    whole_ms: dict[str, float] = field(default_factory=dict)  # text → whole sentence (preview mode)
    cpu_ms: dict[str, float] = field(default_factory=dict)  # text → engine CPU (preview mode)
    batch_ms: float = 0.0  # the 39 sections, files-only mode, summed
    path: str = "stream"  # how the engine alone ran: `stream_into` where the engine has it


class FirstFrame:
    """Feeds chunks through the server's leading-silence trim; notes when the first frame was ready."""

    def __init__(self, sample_rate: int) -> None:
        from npu_worker.audio import LeadingSilenceTrimmer

        self.trimmer = LeadingSilenceTrimmer(sample_rate)
        self.frame = int(sample_rate * FIRST_FRAME_MS / 1000)  # the server's first /ws frame holds this much
        self.ready, self.first = 0, 0.0
        self.started = time.perf_counter()

    def __call__(self, chunk: Any) -> None:
        self.ready += self.trimmer.feed(np.asarray(chunk, dtype=np.float32)).size
        if not self.first and self.ready >= self.frame:
            self.first = time.perf_counter() - self.started


@functools.cache
def allocator_as_served() -> None:
    """The allocator setting `serve` makes, once for this process (where the measured checkout has it)."""
    try:
        from npu_worker.heap import keep_freed_memory
    except ImportError:  # a checkout from before the setting
        return
    keep_freed_memory()


def espeak_engine() -> Any:
    """A loaded espeak engine built as the server builds its own (a fresh one, as a server has), in a
    process whose allocator is set as `serve` sets the worker's. Always espeak in this process, whatever
    the worker's default: "the engine alone" is espeak-ng's own cost, and a child's CPU would not show in
    `time.process_time()` (nor its pipe's hand-off in the engine's time)."""
    import dataclasses

    from npu_worker.config import Settings
    from npu_worker.engine_options import build_engine

    allocator_as_served()
    settings = Settings(backend="espeak")
    if hasattr(settings, "espeak_process"):  # a checkout from before the option has no child
        settings = dataclasses.replace(settings, espeak_process=False)
    engine = build_engine(settings)
    engine.load()
    return engine


def run_engine(engine: Any, text: str, early_audio: bool, on_chunk: Any) -> None:
    """The engine's cheapest way to make a request's chunks: `stream_into` (on this thread, no hand-off;
    what the server's engine thread uses) where the engine has it, else its `stream` iterator."""
    from npu_worker.engine.base import SynthesisRequest

    request = SynthesisRequest(text=text, early_audio=early_audio)
    push = getattr(engine, "stream_into", None)
    if push is not None:
        push(request, lambda chunk: on_chunk(chunk) or True)
        return
    for chunk in engine.stream(request):
        on_chunk(chunk)


def sections_ms(engine: Any, sections: list[str]) -> float:
    """Wall ms of the sections one after another, files-only mode (what a batch asks of the engine)."""
    started = time.perf_counter()
    for text in sections:
        run_engine(engine, text, False, lambda chunk: None)
    return (time.perf_counter() - started) * 1000


def measure_engine(previews: list[str], sections: list[str], repeats: int) -> EngineFigures:
    engine = espeak_engine()
    rate = engine.info.sample_rate
    figures = EngineFigures()
    for text in previews:
        firsts, wholes, cpus = [], [], []
        for _ in range(repeats):
            clock = FirstFrame(rate)
            cpu_started = time.process_time()
            run_engine(engine, text, True, clock)
            wholes.append((time.perf_counter() - clock.started) * 1000)
            cpus.append((time.process_time() - cpu_started) * 1000)
            firsts.append((clock.first or wholes[-1] / 1000) * 1000)
        figures.first_audio_ms[text] = min(firsts)
        figures.whole_ms[text] = min(wholes)
        figures.cpu_ms[text] = statistics.median(cpus)
    figures.batch_ms = min(sections_ms(engine, sections) for _ in range(repeats))
    figures.path = "stream_into" if hasattr(engine, "stream_into") else "stream"
    engine.close()
    return figures


def spaced_cpu_ms(previews: list[str], rate: float, count: int, seed: int) -> float:
    """The engine alone's CPU a preview (ms, the mean) on the open loop's texts at its arrival times
    (`arrival_offsets`, the same seed), one after another on a fresh engine, idle until each arrival:
    spaced as the server's requests come, where `measure_engine` runs each text again at once (warm
    caches). Beside the old figure, never in its place (stop 61)."""
    engine = espeak_engine()
    try:
        for text in previews[:10]:  # warm, as a served engine's first requests are
            run_engine(engine, text, True, lambda chunk: None)
        spent, started = 0.0, time.perf_counter()
        for i, offset in enumerate(arrival_offsets(rate, count, seed)):
            wait = started + offset - time.perf_counter()
            if wait > 0:
                time.sleep(wait)  # the next arrival's time: nothing to await in this thread
            cpu = time.process_time()
            run_engine(engine, previews[i % len(previews)], True, lambda chunk: None)
            spent += time.process_time() - cpu
        return spent * 1000 / count
    finally:
        engine.close()


def engine_batch_ms(sections: list[str]) -> float:
    """The engine alone on the batch's sections, files-only mode, on a fresh engine."""
    engine = espeak_engine()
    try:
        return sections_ms(engine, sections)
    finally:
        engine.close()


def lanes_alone(
    previews: list[str],
    rate: float,
    count: int,
    seed: int,
    reference: dict[str, float],
    lanes: int = 2,
    cpu_ms: list[float] | None = None,
) -> list[float]:
    """First-frame overhead (ms) with no server at all: `lanes` espeak instances on their own threads in
    this process (what the worker's preview lanes are), fed the same Poisson arrivals as the server gets,
    each arrival to the first free lane. What this machine gives two lanes before any socket, event loop
    or job is involved: the part of the `/ws` tail that is the engines sharing its cores. `cpu_ms` gets each
    request's CPU on its lane's thread (ms): the engine alone as the worker's lanes run it, at the same
    times, two at once when two arrivals overlap (stop 61)."""
    first = espeak_engine()
    engines = [first]
    for _ in range(lanes - 1):
        engines.append(first.lane())
        engines[-1].load()
    sample_rate = first.info.sample_rate
    arrivals: queue.Queue[tuple[str, FirstFrame] | None] = queue.Queue()
    overheads: list[float] = []

    def serve(engine: Any) -> None:
        while (item := arrivals.get()) is not None:
            text, clock = item
            cpu = time.thread_time()
            run_engine(engine, text, True, clock)
            if cpu_ms is not None:
                cpu_ms.append((time.thread_time() - cpu) * 1000)
            overheads.append((clock.first or time.perf_counter() - clock.started) * 1000 - reference[text])

    threads = [threading.Thread(target=serve, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    started = time.perf_counter()
    for i, offset in enumerate(arrival_offsets(rate, count, seed)):
        delay = started + offset - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        arrivals.put((previews[i % len(previews)], FirstFrame(sample_rate)))
    for _ in threads:
        arrivals.put(None)
    for thread in threads:
        thread.join()
    for engine in engines:
        engine.close()
    return overheads


def single_engine_floor(sent: list[tuple[str, float]], service_ms: dict[str, float]) -> list[float]:
    """The wait (ms) an ideal server with one engine, first come first served, would impose on each
    request sent at these times (text, seconds): what no server that runs one section at a time could
    beat on this arrival sequence. The engine alone's whole-sentence time is each request's service."""
    waits, free = [], 0.0
    for text, at in sorted(sent, key=lambda item: item[1]):
        start = max(at * 1000, free)
        waits.append(start - at * 1000)
        free = start + service_ms[text]
    return waits
