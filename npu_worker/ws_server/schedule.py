"""The growing frame schedule in samples (pure Python: checked at start-up without loading numpy)."""

from __future__ import annotations

from collections.abc import Sequence


def schedule_sizes(schedule_ms: Sequence[float], sample_rate: int) -> tuple[int, ...]:
    """Frame sizes in samples for a schedule in milliseconds; the last size repeats."""
    if not schedule_ms:
        raise ValueError("the chunk schedule needs at least one size")
    sizes = tuple(int(round(sample_rate * ms / 1000.0)) for ms in schedule_ms)
    if min(sizes) < 1:
        raise ValueError(f"chunk sizes must be at least one sample, got {tuple(schedule_ms)} ms")
    return sizes
