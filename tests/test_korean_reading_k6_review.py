"""The review of the last stop's Korean reading (k6): what a caller's text made of its new rules.

Each reading is the words a Korean lecturer says; the comment says what happened before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("n!의 값은", "n 팩토리얼의 값은"),
        ("5!의 값", "5 팩토리얼의 값"),
        ("(n-1)!의 값", "(n-1) 팩토리얼의 값"),
        ("(2n)!의", "(2n) 팩토리얼의"),
        ("(n+1)!의 값", "(n 플러스 1) 팩토리얼의 값"),
    ],
)
def test_a_factorial_before_the_possessive_is_said_and_fails_no_request(written, said):
    """ "n!의 값" raised KeyError in the reading (의 has one form, `particle_after` knew only those with two): the
    whole request failed."""
    assert spoken(written) == said
