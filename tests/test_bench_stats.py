"""Benchmark statistics: nearest-rank percentiles over the values that exist."""

import math

import pytest

from npu_worker.bench.stats import percentile, summarize


def test_percentiles_are_observed_values_by_nearest_rank():
    values = list(range(1, 101))  # 1..100
    assert percentile(values, 50) == 50
    assert percentile(values, 95) == 95
    assert percentile(values, 99) == 99
    assert percentile(values, 100) == 100


def test_p99_of_a_few_requests_is_the_largest():
    assert percentile([30.0, 10.0, 20.0], 99) == 30.0
    assert percentile([30.0, 10.0, 20.0], 50) == 20.0


def test_p95_of_40_requests_is_the_third_largest_and_p99_the_largest():
    values = [float(v) for v in range(1, 41)]
    assert percentile(values, 95) == 38.0 and percentile(values, 99) == 40.0


def test_order_of_the_input_does_not_matter():
    assert percentile([5, 1, 4, 2, 3], 50) == 3


def test_no_values_give_none():
    assert percentile([], 50) is None
    assert summarize([None, None]) == {
        "n": 0,
        "p50": None,
        "p95": None,
        "p99": None,
        "max": None,
        "mean": None,
    }


def test_missing_and_non_finite_values_are_left_out():
    summary = summarize([None, 2.0, math.nan, 4.0, math.inf])
    assert summary["n"] == 2 and summary["max"] == 4.0 and summary["mean"] == 3.0 and summary["p50"] == 2.0


def test_a_percentile_outside_0_to_100_is_an_error():
    with pytest.raises(ValueError):
        percentile([1.0], 0)
