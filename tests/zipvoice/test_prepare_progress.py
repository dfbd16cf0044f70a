"""`npu-worker prepare`'s "about N s left": from the buckets compiled so far, for the larger ones left."""

from __future__ import annotations

import pytest

from npu_worker.engine.zipvoice.bucket_runs import seconds_left

# The small real-structure export's five default buckets, `prepare --optimization fast --precision fp32`
# on the 2-core VM (2026-12-06): frames, seconds specialising + compiling, seconds specialising.
MEASURED = [(383, 10.9, 5.3), (767, 14.5, 5.9), (1151, 17.0, 4.9), (1535, 18.0, 5.3), (2079, 28.9, 5.4)]


@pytest.mark.parametrize("compiled", [1, 2, 3, 4])
def test_the_time_left_follows_the_larger_buckets_still_to_compile(compiled):
    """The mean bucket's time said "about 44 s left" after the first bucket where 78 s were: compiling
    grows with the frames (5.6 s at 383, 23.5 s at 2079), specialising does not."""
    done, left = MEASURED[:compiled], MEASURED[compiled:]
    took = sum(seconds for _, seconds, _ in left)
    estimate = seconds_left(done, [size for size, _, _ in left])
    assert took / 1.5 <= estimate <= took * 1.5, (estimate, took)


def test_no_bucket_left_is_no_time_left():
    assert seconds_left(MEASURED[:2], []) == 0
