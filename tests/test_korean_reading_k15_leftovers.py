"""korean15: what rvk14's review left of the Korean reading, each against what korean14 read (the comment beside
each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A ⊂ B가 성립하면", "A가 B의 부분집합임이 성립하면"),  # korean14: A ⊂ B가 성립하면, the sign unsaid
        ("A ⊂ B를 보이자.", "A가 B의 부분집합임을 보이자."),
        ("x ∈ A를 만족하는 x", "x가 A의 원소임을 만족하는 x"),
        ("x ∉ A는 거짓이다.", "x가 A의 원소가 아님은 거짓이다."),
        ("A ⊇ B를 보이자.", "A가 B를 포함함을 보이자."),
        ("x ∈ ℝ를 만족하는", "x가 실수 집합의 원소임을 만족하는"),
        # a copula and code as before
        ("x ∈ A이면", "x가 A의 원소이면"),
        ("if x ∈ A이 참", "if x ∈ A이 참"),
    ],
)
def test_a_relation_before_a_particle_is_said_as_a_noun_clause(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("∀x ∈ A이면", "모든 x가 A의 원소이면"),  # korean14: A의 모든 x에 대해 이면
        ("∀x ∈ A이므로 y > 0", "모든 x가 A의 원소이므로 y 0 초과"),  # korean14: A의 모든 x에 대해 이므로
        ("∃y ∈ B입니다.", "어떤 y는 B의 원소입니다."),
        ("∀ε ∈ A라고 하자.", "모든 엡실론이 A의 원소라고 하자."),
        # a quantifier without a copula as before
        ("∀x ∈ A에 대해", "A의 모든 x에 대해"),
        ("∀x ∈ A, x > 0", "A의 모든 x에 대해, x 0 초과"),
    ],
)
def test_a_quantified_element_before_a_copula_takes_it(written: str, said: str) -> None:
    assert spoken(written) == said
