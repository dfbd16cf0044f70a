"""Korean reading (korean13): regressions of stop 55's set and English-sentence readings against the reading before
them. Each comment says what korean12 and its review read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # An "h" between a formula's operators is a variable in an English sentence too (k12: 2 hours plus 1)
        ("This is 2h + 1 in the formula.", "This is 2h plus 1 in the formula."),
        ("We compute f(x + 2h) here.", "We compute f(x plus 2h) here."),
        # ... and hours elsewhere, as k12
        ("The trip took 2h, then we rested.", "The trip took 2 hours, then we rested."),
        ("2h + 1은 홀수입니다.", "2h 더하기 1은 홀수입니다."),
    ],
)
def test_an_english_sentences_h_between_operators_is_a_variable(written: str, said: str) -> None:
    assert spoken(written) == said
