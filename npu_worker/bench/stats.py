"""Percentiles by nearest rank: every reported figure is a latency that was really observed."""

from __future__ import annotations

import math
from collections.abc import Iterable

PERCENTILES = (50, 95, 99)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The nearest-rank q-th percentile (q in (0, 100]); None for no values.

    Nearest rank (no interpolation) so that every figure is one a request had: p99 of fewer than 100
    requests is the largest, p95 of 40 the third largest.
    """
    ordered = sorted(v for v in values if v is not None and math.isfinite(v))
    if not ordered:
        return None
    if not 0 < q <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {q}")
    rank = math.ceil(q / 100.0 * len(ordered))
    return ordered[max(rank, 1) - 1]


def summarize(values: Iterable[float | None]) -> dict[str, float | int | None]:
    """n, p50/p95/p99, max and mean of the finite values."""
    finite = [v for v in values if v is not None and math.isfinite(v)]
    summary: dict[str, float | int | None] = {"n": len(finite)}
    for q in PERCENTILES:
        summary[f"p{q}"] = percentile(finite, q)
    summary["max"] = max(finite) if finite else None
    summary["mean"] = sum(finite) / len(finite) if finite else None
    return summary
