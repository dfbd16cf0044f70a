"""Korean reading (korean13): regressions of stop 55's set and English-sentence readings against the reading before
them. Each comment says what korean12 and its review read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # An "h" between a formula's operators is a variable in an English sentence too (k12: 2 hours plus 1)
        ("This is 2h + 1 in the formula.", "This is 2h plus one in the formula."),
        ("We compute f(x + 2h) here.", "We compute f(x plus 2h) here."),
        # ... and hours elsewhere, as k12
        ("The trip took 2h, then we rested.", "The trip took two hours, then we rested."),
        ("2h + 1은 홀수입니다.", "2h 더하기 1은 홀수입니다."),
    ],
)
def test_an_english_sentences_h_between_operators_is_a_variable(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A word's pair is the quantifier's variable (k12: 모든 edge에 대해 (u, v) ∈ E에 대해)
        ("∀ edge (u, v) ∈ E에 대해 가중치를 더합니다.", "E의 모든 edge (u, v)에 대해 가중치를 더합니다."),
        # A list of variables takes the writer's 에 대해 once (k12: 모든 i에 대해, j에 대해) ...
        ("∀i, j에 대해 a가 0입니다.", "모든 i, j에 대해 a가 0입니다."),
        # ... or, without it, its own after the last (k12: 모든 i에 대해, j: …), over a set or a bound too
        ("∀i, j: a가 0입니다.", "모든 i, j에 대해: a가 0입니다."),
        ("∀x, y ∈ A에 대해", "A의 모든 x, y에 대해"),
        ("∀x, y > 0", "0 초과인 모든 x, y에 대해"),
        # ... a letter before a Korean word's particle the next clause's subject, as k12
        ("∀x, a가 0이면", "모든 x에 대해, a가 0이면"),
        # One variable, a proposition or a quantifier after the comma, as k12
        ("∀x, P(x)", "모든 x에 대해, P(x)"),
        ("∀x, ∃y", "모든 x에 대해, 어떤 y에 대해"),
        ("∀x ∈ A에 대해", "A의 모든 x에 대해"),
    ],
)
def test_a_quantifiers_pair_or_list_of_variables_is_one_variable(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A code line's membership is code, left as written (k12: if x는 S의 원소:)
        ("if x ∈ S:", "if x ∈ S:"),
        ("코드는 `if x ∈ S:` 입니다.", "코드는 `if x ∈ S:` 입니다."),
        ("while k ∈ seen:", "while k ∈ seen:"),
        ("elif t ∈ [0, 1]:", "elif t ∈ [0, 1]:"),
        # ... on the line after its keyword too (k13's first fix: if (x ∈ S && y는 T의 원소) {)
        ("if (x ∈ S && y ∈ T) {", "if (x ∈ S && y ∈ T) {"),
        ("return x ∈ S and y ∉ T", "return x ∈ S and y ∉ T"),
        ("if x ∈ A ∪ B:", "if x ∈ A ∪ B:"),  # k12: if x ∈ A 합집합 B:
        ("A ∪ B는 합집합입니다.", "A 합집합 B는 합집합입니다."),
        # ... a sentence's as k12
        ("만약 x ∈ S이면", "만약 x가 S의 원소이면"),
        ("x ∈ S이면 if 문을 씁니다.", "x가 S의 원소이면 if 문을 씁니다."),
        ("if 문에서는 x ∈ S이면 참입니다.", "if 문에서는 x가 S의 원소이면 참입니다."),
    ],
)
def test_a_code_lines_set_sign_is_left_as_written(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A statement on either side of an equivalence: left as written, as before korean12 (k12: x는 S의 원소와
        # x 0 초과, the arrow's "와" after a topic)
        ("x ∈ S ⇔ x > 0", "x ∈ S와 x 0 초과"),
        ("x ∈ A ⇔ x ∈ B", "x ∈ A와 x ∈ B"),
        ("x ∈ A ↔ y", "x ∈ A와 y"),
        # ... a conditional's and propositions' as k12
        ("x ∈ A ⇒ x ∈ B", "x는 A의 원소면 x는 B의 원소"),
        ("p ⇔ q", "p와 q는 동치"),
    ],
)
def test_a_membership_beside_an_equivalence_is_left_as_written(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A bracket's bound before a comma or a stop (k12 as before: x 2 이상(x 빼기 1) 더하기 3, the word inside)
        ("x ≥ 2(x - 1) + 3, x ≤ 10", "x 2(x 빼기 1) 더하기 3 이상, x 10 이하"),
        ("x ≥ 2(x - 1).", "x 2(x 빼기 1) 이상."),
        # ... a decimal comma after it and a note as before
        ("x ≥ 2(x - 1),5", "x 2 이상(x 빼기 1),5"),
        ("x < 10(단위: m).", "x 10 미만(단위: m)."),
        # A bracket's product in a chain's middle (k12: y 3(x 더하기 2) 빼기 1 미만 10 미만; before it y 3 미만(x 더하기 2)
        # 빼기 1이 10 미만)
        ("y < 3(x + 2) - 1 < 10", "3(x 더하기 2) 빼기 1은 y 초과 10 미만"),
        ("0 ≤ 2(x - 1) ≤ 4이면", "2(x 빼기 1)이 0 이상 4 이하이면"),
        ("y < 3(x + 2) < 10", "3(x 더하기 2)는 y 초과 10 미만"),
        # ... a chain of terms as before
        ("y < 3x - 1 < 10", "3x 빼기 1은 y 초과 10 미만"),
    ],
)
def test_a_bracket_bound_before_a_comma_or_in_a_chain(written: str, said: str) -> None:
    assert spoken(written) == said
