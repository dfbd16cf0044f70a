"""The buckets of `npu-worker prepare` compiled in turn (each by bucket_compile.py), with a line of progress
each and an estimate of the time left; with weight sharing, the accuracy checks run once the last bucket
has written the binary they all name."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npu_worker.engine.providers import RuntimeConfig
from npu_worker.engine.zipvoice.bucket_compile import Bucket, compile_bucket
from npu_worker.engine.zipvoice.prepared import Progress

if TYPE_CHECKING:
    from npu_worker.engine.zipvoice.calibration import Recording


@dataclass(frozen=True)
class Compiling:
    """What every bucket of one prepare is compiled with: the decoder's staged copy, the folder its contexts
    go to, the target and its devices, the fp32 reference the held-out feeds are checked against (None: no
    check), the precision, weight sharing, the folder named in errors (--out) and where progress is said."""

    staged: Path
    contexts_dir: Path
    config: RuntimeConfig
    devices: list[Any]
    reference: Any
    precision: str
    share: bool
    shown_dir: Path
    progress: Progress


def compile_buckets(
    plan: Compiling, shapes: dict[int, dict[str, int]], calibration: Recording | None, check_calls: int
) -> dict[str, Any]:
    """Each bucket of `shapes` (frames → its dims) compiled; their records for the manifest, by frames. A
    quantised prepare's `calibration` feeds each bucket; its last `check_calls` feeds are held out for the
    check."""
    contexts: dict[str, Any] = {}
    checks: list[Callable[[], None]] = []  # with weight sharing: once the shared binary is written
    done: list[tuple[int, float, float]] = []  # per bucket compiled: frames, seconds, specialising
    buckets = tuple(shapes)
    for index, (size, dims) in enumerate(shapes.items()):
        bucket_started = time.monotonic()
        feeds = calibration.feeds[size] if calibration is not None else []
        held_out = (
            feeds[len(feeds) - check_calls :]
            if plan.reference is not None and len(feeds) > check_calls
            else []
        )
        bucket = Bucket(
            plan.staged, size, dims, plan.precision, feeds[: len(feeds) - len(held_out)], held_out
        )
        record = contexts[str(size)] = compile_bucket(
            bucket,
            plan.contexts_dir,
            plan.config,
            plan.devices,
            plan.reference,
            share=plan.share,
            last=index == len(buckets) - 1,
            checks=checks,
            shown_dir=plan.shown_dir,
        )
        done.append((size, time.monotonic() - bucket_started, record["specialise_seconds"]))
        left = seconds_left(done, buckets[index + 1 :])
        plan.progress(
            f"bucket {size} ({index + 1}/{len(buckets)}): {_compiled_line(record)}; about {left:.0f} s left"
        )
    for check in checks:  # the binary every bucket's context names is written with the last one
        check()
    for name, checked_late in contexts.items() if checks else ():
        if "accuracy" in checked_late:
            distance = checked_late["accuracy"]["max_relative_l2"]
            plan.progress(f"bucket {name}: {distance:.2e} from fp32 on the CPU")
    return contexts


def _compiled_line(record: dict[str, Any]) -> str:
    """A compiled bucket's record, said: its placement, the time of each step, its distance from fp32."""
    checked = record.get("accuracy")
    return (
        f"{record['placement']['on_device']} of {record['placement']['nodes']} nodes on QNN, "
        f"specialised in {record['specialise_seconds']} s, "
        + (f"quantised in {record['quantise_seconds']} s, " if "quantise_seconds" in record else "")
        + f"compiled in {record['compile_seconds']} s"
        + (f", {checked['max_relative_l2']:.2e} from fp32 on the CPU" if checked else "")
    )


def seconds_left(done: Sequence[tuple[int, float, float]], left: Sequence[int]) -> float:
    """The seconds the buckets `left` (their frames) will take, from those `done` (frames, seconds,
    seconds of it specialising): specialising costs about the same at every bucket, the rest (quantising,
    compiling, checking) grows with the frames. The mean bucket's time said "about 44 s left" after the
    first of the small export's five where 78 s were (compiled in 5.6 s at 383 frames, 23.5 s at 2079)."""
    fixed = sum(specialising for _, _, specialising in done) / len(done)
    per_frame = sum(max(0.0, seconds - specialising) for _, seconds, specialising in done) / sum(
        size for size, _, _ in done
    )
    return sum(fixed + per_frame * size for size in left)
