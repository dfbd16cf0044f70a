"""Review of stop 54's Korean reading (korean11): readings it changed that it should not have. Each comment says
what korean11 read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # The writer's own subject and topic, no sign: korean11 read 성적 A가 90점 이상입니다 (another sentence)
        ("성적이 A는 90점 이상입니다", "성적이 A는 90점 이상입니다"),
        ("회사가 A는 매출이 10억 이상입니다", "회사가 A는 매출이 10억 이상입니다"),  # 회사 A가 매출이 …
        ("점수가 x는 10 이하입니다", "점수가 x는 10 이하입니다"),  # 점수 x가 10 이하입니다
        # ... while the topic a bound's reading gives is still the subject's, a sentence without a sign beside it
        ("값이 x ≤ 1입니다. 성적이 A는 90점 이상입니다", "값 x가 1 이하입니다. 성적이 A는 90점 이상입니다"),
        ("값이 x <= 1입니다", "값 x가 1 이하입니다"),
        ("확률이 p < 0.05입니다.", "확률 p가 0 점 영오 미만입니다."),
    ],
)
def test_a_writers_subject_and_topic_are_kept(written: str, said: str) -> None:
    assert spoken(written) == said
