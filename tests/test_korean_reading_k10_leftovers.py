"""The leftovers of stop 53's review (`korean_chains`, `korean_ranges`): a pronoun subject before a chain, a single
bound's statement with a space before its copula or as the first of a list. Each comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("우리가 0 < x < 1입니다.", "우리가 x는 0 초과 1 미만입니다."),  # 우리 x가: the pronoun cut
        ("여러분이 0 ≤ x ≤ 1을 가정하면", "여러분이 x는 0 이상 1 이하를 가정하면"),  # 여러분 x가
        ("제가 0 < t < 1을 가정합니다", "제가 t는 0 초과 1 미만을 가정합니다"),  # 제 t가
        ("가격이 1000원 < p < 5000원", "가격 p가 1000원 초과 5000원 미만"),  # a noun's: as before
    ],
)
def test_a_pronoun_subject_before_a_chain_is_kept(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≤ 1 입니다.", "x는 1 이하 입니다."),  # x 1 이하 입니다: no particle
        ("x ≥ 0, y ≥ 0입니다.", "x는 0 이상, y는 0 이상입니다."),  # x 0 이상, y는 …: y's alone
        ("x ≥ 0, y ≥ 0, z ≥ 0입니다.", "x는 0 이상, y는 0 이상, z는 0 이상입니다."),
        ("x ≥ 0, y ≥ 0이면", "x 0 이상, y 0 이상이면"),  # a condition's: as before
        ("x ≤ 1입니다.", "x는 1 이하입니다."),  # as before
    ],
)
def test_a_statement_gives_each_bounded_letter_its_topic(written: str, said: str) -> None:
    assert spoken(written) == said
