"""The review of walk7's and rvk7's Korean readings: "또는" and "혹은" ("or") before a chain are no topic. Each
reading is the words a Korean lecturer says; the comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # x는 1 초과 2 미만 또는 x가 3 초과 4 미만: "또는" taken for a topic's 는
        ("1 < x < 2 또는 3 < x < 4", "x는 1 초과 2 미만 또는 x는 3 초과 4 미만"),
        ("1 < x < 2 혹은 3 < x < 4", "x는 1 초과 2 미만 혹은 x는 3 초과 4 미만"),
        ("상관계수는 -1 ≤ r ≤ 1", "상관계수는 r이 마이너스 1 이상 1 이하"),  # a topic before it: as before
    ],
)
def test_or_before_a_chain_is_no_topic(written: str, said: str) -> None:
    assert spoken(written) == said
