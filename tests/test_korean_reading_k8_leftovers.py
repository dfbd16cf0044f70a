"""The chains' leftovers of stop 51 (`korean_chains`, `korean_ranges`): a chain's last side with its counter or unit,
spaced or not. Each comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10 < n < 20명", "n은 10 초과 스무 명 미만"),  # 10 초과 n 스무 명 미만
        ("10 < n < 20명이면", "n이 10 초과 스무 명 미만이면"),
        ("0 ≤ t ≤ 10 초", "t는 0 이상 10 초 이하"),  # t는 0 이상 10 이하 초
        ("0 ≤ t ≤ 10초 동안", "t는 0 이상 10초 이하 동안"),  # 0 이상 t 10초 이하 동안
        ("1 ≤ n ≤ 5 개", "n은 1 이상 다섯 개 이하"),  # n은 1 이상 5 이하 개
        ("0 ≤ x ≤ 3개", "x는 0 이상 세 개 이하"),  # 0 이상 x 세 개 이하
        ("1 < x < 3일 동안", "x는 1 초과 3일 미만 동안"),  # 1 초과 x 3일 미만 동안
        ("0 ≤ x ≤ 10 m", "x는 0 이상 10 미터 이하"),  # x는 0 이상 10 이하 m
        ("0 < θ < 90도", "세타는 0 초과 90도 미만"),
        ("1 ≤ k ≤ 10 개의 원소", "k가 1 이상 열 개 이하의 원소"),
        ("t ≤ 10 초", "t 10 초 이하"),  # a single bound too: t 10 이하 초
    ],
)
def test_a_counter_or_a_unit_after_the_last_side(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("0 < x < 1일 때", "x가 0 초과 1 미만일 때"),  # the copula, no day
        ("0 < x < 1인 실수", "x가 0 초과 1 미만인 실수"),
        ("3 < x < 5 등", "x는 3 초과 5 미만 등"),  # "and so on", no counter
        ("20 ≤ T ≤ 40°F", "20 이상 T 40 이하°F"),  # a unit not read: the single bounds, as before
    ],
)
def test_lookalikes_of_a_counter_read_as_before(written: str, said: str) -> None:
    assert spoken(written) == said
