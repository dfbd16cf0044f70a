"""Load generation: Poisson arrivals within bounds, loopback targets only, validated configuration."""

import random
import statistics

import pytest

from npu_worker.bench.load import LoadConfig, TargetNotAllowed, check_loopback, poisson_schedule


def test_arrivals_stop_at_the_duration():
    offsets = poisson_schedule(rate=5.0, duration=10.0, max_requests=10_000, rng=random.Random(3))
    assert offsets == sorted(offsets) and offsets[-1] <= 10.0
    assert 25 <= len(offsets) <= 75  # 50 expected; a seeded run, far from the tails


def test_arrivals_stop_at_the_request_count():
    assert len(poisson_schedule(rate=100.0, duration=60.0, max_requests=7, rng=random.Random(1))) == 7


def test_gaps_between_arrivals_average_one_over_the_rate():
    offsets = poisson_schedule(rate=4.0, duration=1000.0, max_requests=1000, rng=random.Random(7))
    gaps = [b - a for a, b in zip([0.0, *offsets[:-1]], offsets, strict=True)]
    assert statistics.mean(gaps) == pytest.approx(0.25, rel=0.1)
    # Exponential gaps: standard deviation equals the mean (a fixed-interval schedule would have none).
    assert statistics.stdev(gaps) == pytest.approx(0.25, rel=0.15)


def test_the_same_seed_gives_the_same_arrivals():
    a = poisson_schedule(2.0, 30.0, 100, random.Random("1:2.0"))
    b = poisson_schedule(2.0, 30.0, 100, random.Random("1:2.0"))
    assert a == b


@pytest.mark.parametrize(
    "base", ["http://127.0.0.1:7768", "http://127.3.4.5:80/", "http://localhost:1", "http://[::1]:7768"]
)
def test_loopback_targets_are_accepted(base):
    assert check_loopback(base) == base.rstrip("/")


@pytest.mark.parametrize(
    "base", ["http://10.0.0.1:7768", "http://example.com", "http://0.0.0.0:7768", "ftp://127.0.0.1"]
)
def test_other_targets_are_refused(base):
    with pytest.raises(TargetNotAllowed):
        check_loopback(base)


@pytest.mark.parametrize(
    "change",
    [
        {"rates": (0.0,)},
        {"rates": (500.0,)},
        {"rates": (1.0, 2.0, 1.0)},  # both runs of 1/s were merged into one row, with the same seeds
        {"duration": 10_000.0},
        {"max_requests": 0},
        {"transports": ("udp",)},
    ],
)
def test_unbounded_or_invalid_runs_are_refused(change):
    settings = {"base": "http://127.0.0.1:7768", "rates": (1.0,), "texts": ("a",), **change}
    with pytest.raises(ValueError):
        LoadConfig(**settings)


def test_the_recorded_configuration_never_holds_the_token():
    config = LoadConfig(base="http://127.0.0.1:7768", rates=(1.0,), texts=("a", "b"), token="secret")
    assert config.public()["token"] is True and config.public()["texts"] == 2
    assert "secret" not in repr(config.public())


@pytest.mark.parametrize("rates", ["2,fast", "1,,2", "1,2,"])
def test_rates_that_are_not_numbers_are_named(capsys, rates):
    """An empty item (`1,,2`) is refused as a word is: it was skipped without a word."""
    from npu_worker.cli import main

    assert main(["bench", "--rps", rates]) == 2
    assert (
        f"npu-worker bench: --rps takes requests/s separated by commas, not {rates!r}"
        in capsys.readouterr().err
    )
