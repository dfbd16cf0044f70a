"""Review of korean18's own changes: lookalikes of its new rules, each against what its first cut read (the comment
beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "It holds for n >= 3 and m < 5 here.",
            "It holds for n greater than or equal to three and m less than five here.",
        ),  # first cut: n 3 이상 and m 5 미만 (taken for a chain)
        (
            "It is x < 5, y > 3 here.",
            "It is x less than five, y greater than three here.",
        ),  # first cut: less than 5,
        (
            "Use 2 < 3 here.",
            "Use two less than three here.",
        ),  # first cut: 2 less than three (the Korean voice's 이)
        # a chain stays the Korean rules', as before
        ("It is 0 < x < 1 here.", "It is x는 0 초과 1 미만 here."),
        ("It is -1 ≤ sin x ≤ 1 here.", "It is sin x는 마이너스 1 이상 1 이하 here."),
    ],
)
def test_an_english_sentences_bounds_apart_are_each_said(written: str, said: str) -> None:
    """Two bounds joined by "and" or a comma are no chain: each in English words, and a number before "less than" too."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("It costs $3.50/kWh here.", "It costs 3 점 오영 달러 퍼 킬로와트시 here."),
        # first cut: three dollars and fifty cents/kWh (the rate's unit unread)
        ("It costs $5/month here.", "It costs 5 달러/month here."),  # as before korean18
    ],
)
def test_a_rate_in_dollars_stays_the_korean_rules(written: str, said: str) -> None:
    """A rate, "$3.50/kWh", is left whole to the Korean rules, which read its unit (퍼 킬로와트시)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("저항 R₁R₂의 곱", "저항 R원R투의 곱"),  # korean17: R₁R투 (R₁ to espeak's code points)
        ("P₁V₁ = P₂V₂", "P원V원은 P투V투"),  # korean17: P₁V원은 P₂V투
        ("V₁과 V₂", "V원과 V투"),  # as before
    ],
)
def test_subscripted_variables_side_by_side_read_as_one_formula_is(written: str, said: str) -> None:
    """The formula rule also reads a product of subscripted variables, "R₁R₂", each part by name: R원R투, as "R₁" alone
    is R원 (korean17 left the first part's subscript to espeak)."""
    assert spoken(written) == said
