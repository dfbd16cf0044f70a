"""Python's cyclic garbage collector held off while `npu-worker serve` starts, then the start's objects
kept out of its later passes.

A start imports about 640 modules (aiohttp, numpy, msgspec, the app's) and builds the app: ≈ 90 000
objects the collector tracks, all alive for the worker's life. With the collector on, those allocations
set off ≈ 130 collections on the way (gen 0 119, gen 1 10, a full one 1), each walking the heap grown so
far: ≈ 50 ms of the main thread's CPU before `/health` could say loaded, every start, freeing nothing
that mattered (benchmarks/SERVER_OVERHEAD.md, 2026-12-08, stop 64). Held off until the app is built,
then frozen (`gc.freeze`: moved to a generation no pass walks) and the collector on again: the worker
serves with it on as before, and its later full passes no longer walk the start's heap either. The
cost: what the start made into cycles and dropped (≈ 1 900 objects, ≈ 0.4 MB, attrs' class builders,
import-time closures) stays for the process's life, as the suite's collection does (tests/conftest.py).

Process-wide on purpose, as the collector is: `hold` remembers whether it turned the collector off, so
a caller that had it off already (an embedding program) gets it back as it was.
"""

from __future__ import annotations

import gc

_held = False  # whether `hold` turned the collector off (and `let_go` has not yet turned it on)


def hold() -> None:
    """The collector off for the start (where it was on)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def let_go(keep_start_objects: bool) -> None:
    """The collector on again, where `hold` turned it off; `keep_start_objects` (the app is built and
    about to serve): everything made so far frozen first. Without it (a start refused before its app was
    built, a command that ended), nothing is frozen; a port in use, found by `run`, comes after the freeze."""
    global _held
    if not _held:
        return
    if keep_start_objects:
        gc.freeze()
    gc.enable()
    _held = False  # only now: a stop raised at the freeze (a SIGTERM's handler) leaves it to `main`'s call
