"""`benchmarks/call_counts.py` counts every function, those that share a label too (stop 56): each
dataclass's generated `__init__` is `<string>:2(__init__)`, and `snapshot_stats` kept one of them."""

from __future__ import annotations

import cProfile
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@dataclass(frozen=True)
class First:
    a: int


@dataclass(frozen=True)
class Second:
    b: int


@pytest.fixture
def call_counts(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import call_counts

    yield call_counts
    sys.modules.pop("call_counts", None)


def test_two_dataclasses_inits_are_both_counted(call_counts) -> None:
    profile = cProfile.Profile()
    profile.enable()
    for i in range(3):
        First(i)
    for i in range(5):
        Second(i)
    profile.disable()
    inits = [
        v for k, v in call_counts.summed_stats(profile).items() if k[2] == "__init__" and k[0] == "<string>"
    ]
    assert len(inits) == 1 and inits[0][1] == 8  # (snapshot_stats: 3 or 5)
    profile.snapshot_stats()
    assert [v[1] for k, v in profile.stats.items() if k[2] == "__init__" and k[0] == "<string>"] in ([3], [5])
