"""The review of stop 53's Korean readings (korean9): near misses its new patterns took for their own. Each comment
says what korean9 read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("다음과 같이 0 ≤ x ≤ 1로 제한한다", "다음과 같이 x는 0 이상 1 이하로 제한한다"),  # 다음과 같 x가
        ("제한 없이 0 < x < 1", "제한 없이 x는 0 초과 1 미만"),  # 제한 없 x가
        ("끊임없이 0 < x < 1", "끊임없이 x는 0 초과 1 미만"),  # 끊임없 x가
        ("많이 1 < n < 10", "많이 n은 1 초과 10 미만"),  # 많 n이
        ("가격이 1000원 < p < 5000원", "가격 p가 1000원 초과 5000원 미만"),  # a subject noun: as korean9
    ],
)
def test_an_adverbs_i_before_a_chain_is_no_subjects_particle(written: str, said: str) -> None:
    assert spoken(written) == said
