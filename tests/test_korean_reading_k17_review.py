"""Review of korean16's leftovers (korean17): what a Korean text still read wrongly, each against what korean16 read
(the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "확률은 (1-a)¹ 이다.",
            "확률은 (1 빼기 a)의 1제곱 이다.",
        ),  # korean16: (1-a)¹ (a sub-question's label)
        ("(1-a)⁴ 을 구하라.", "(1 빼기 a)의 4제곱 을 구하라."),  # korean16: (1 빼기 a)⁴
        ("(x+1)⁵ 을 전개하라.", "(x 플러스 1)의 5제곱 을 전개하라."),  # korean16: (x 플러스 1)⁵
        ("(1-a)¹⁰ 이다.", "(1 빼기 a)의 10제곱 이다."),  # korean16: (1 빼기 a)¹⁰
        ("(1-a)² 을 구하라.", "(1 빼기 a)의 2제곱 을 구하라."),  # as before
        ("(2020)¹ 참고", "(2020)¹ 참고"),  # a year's footnote, as before
        ("(GPT-4)⁴ 이다", "(GPT-4)⁴ 이다"),  # a name's footnote, as before
        ("(1-a), (1-b)에 답하시오", "(1-a), (1-b)에 답하시오"),  # sub-questions' labels, as before
    ],
)
def test_any_superscript_digit_after_a_formulas_bracket_is_its_power(written: str, said: str) -> None:
    """ "(1-a)¹", "(1-a)⁴" are powers as "(1-a)²" is: ¹²³ are Latin-1's U+00B9/B2/B3, ⁴-⁹ U+2074-2079, and
    korean16 read only ²³ after a bracket (and took "(1-a)¹" for a label, its ¹ outside the class ⁰-⁹)."""
    assert spoken(written) == said
