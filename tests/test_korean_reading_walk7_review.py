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


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # (2 빼기 b) 다음 …: korean7's "(n-k)" rule read a sub-question's label as a subtraction
        ("(2-b) 다음 함수의 극한을 구하시오.", "(2-b) 다음 함수의 극한을 구하시오."),
        ("문제 (2-b)에서 x의 값을 구하라.", "문제 (2-b)에서 x의 값을 구하라."),
        ("다음 (1-a), (1-b)에 답하시오.", "다음 (1-a), (1-b)에 답하시오."),
    ],
)
def test_a_sub_questions_label_is_no_subtraction(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("분산은 np(1-p)이다.", "분산은 np(1 빼기 p)이다."),
        ("(1-a)^2", "(1 빼기 a)의 2제곱"),
        ("(1-a)(1-b)", "(1 빼기 a)(1 빼기 b)"),
        ("y = (2-a) + 1", "y는 (2 빼기 a) 더하기 1"),
        ("x + (1-a)", "x 더하기 (1 빼기 a)"),
        ("(1-a)!", "(1 빼기 a) 팩토리얼"),
        ("(1-a)의 2제곱", "(1 빼기 a)의 2제곱"),
        ("(2-x)", "(2 빼기 x)"),
    ],
)
def test_a_bracketed_formula_is_still_a_subtraction(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 1/2", "x 2분의 1 미만"),  # x 1 미만/2: the bound's word inside the fraction, its slash unsaid
        ("x ≥ -1/2", "x 마이너스 2분의 1 이상"),  # x 마이너스 1 이상/2
        ("x > 1/3일 때", "x 3분의 1 초과일 때"),
        ("0 < x < 1/2", "x는 0 초과 2분의 1 미만"),  # 0 초과 x 1 미만/2
        ("0 < x < 3/4이면", "x가 0 초과 4분의 3 미만이면"),
        ("1/2 < x < 1", "x는 2분의 1 초과 1 미만"),  # 2분의 1 초과 x 1 미만
        ("1/2 < 3/4", "2분의 1 < 4분의 3"),  # two numbers compared: left, as "3 < 5"
    ],
)
def test_a_fraction_as_a_bound_is_said_whole(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x₁ < x₂이면", "x₁ x₂ 미만이면"),  # x₁ < x₂이면: the sign unsaid
        ("t < t₁", "t t₁ 미만"),  # t t 미만₁: the bound's word inside the term
        ("x₁ ≥ 0", "x₁ 0 이상"),  # as before
        ("x < y이면", "x y 미만이면"),  # as before
    ],
)
def test_a_subscripted_variable_is_bounded_whole(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("0 ≤ i ≤ N-1", "i는 0 이상 N 빼기 1 이하"),  # 0 이상 i ≤ N-1: the second sign unsaid
        ("0 <= i <= N-1", "i는 0 이상 N 빼기 1 이하"),
        ("0 ≤ i ≤ N−1이면", "i가 0 이상 N 빼기 1 이하이면"),
        ("1 ≤ k ≤ K-1에 대해", "k가 1 이상 K 빼기 1 이하에 대해"),
        ("2 ≤ k ≤ N - 1", "k는 2 이상 N 빼기 1 이하"),  # as before
        ("a < b < C-1", "a < b < C-1"),  # a count bounds a variable from a number: left, as "a < b < C"
    ],
)
def test_a_count_less_one_unspaced_ends_a_chain(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("θ < π이면", "세타 파이 미만이면"),  # 세타 < 파이이면: the sign unsaid
        ("x ≥ -π", "x 마이너스 파이 이상"),  # x ≥ -파이
        ("x ≤ π/2", "x 2분의 파이 이하"),  # x ≤ 2분의 파이
        ("if (x < π)", "if (x가 파이보다 작다)"),
        ("3 < π", "3 < 파이"),  # two numbers compared: left, as "3 < 5"
    ],
)
def test_pi_alone_as_a_bound_is_said(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("n > 1/ε", "n 1/엡실론 초과"),  # n 1 초과/엡실론: the bound's word inside the quotient
        ("x < 1/n", "x 1/n 미만"),  # x 1 미만/n
        (
            "x < 1/n^2이면",
            "x n의 2제곱분의 1 미만이면",
        ),  # x 1 미만/n의 2제곱이면; stop 52: x 1/n의 2제곱 미만이면
    ],
)
def test_a_quotient_over_a_letter_as_a_bound_is_said_whole(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("π > x > -π", "x는 마이너스 파이 초과 파이 미만"),  # 파이 > x > -파이: the signs unsaid
        ("π/2 ≥ θ ≥ -π/2이면", "세타가 마이너스 2분의 파이 이상 2분의 파이 이하이면"),
        ("π > x > -π에서", "x가 마이너스 파이 초과 파이 미만에서"),
        ("-π < θ < π", "세타는 마이너스 파이 초과 파이 미만"),  # as before
    ],
)
def test_a_falling_chain_to_minus_pi_is_read(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("90 ≤ 점수 < 100", "점수는 90 이상 100 미만"),  # 90 ≤ 점수 100 미만: the first sign unsaid
        ("18 ≤ 나이 ≤ 65이면", "나이가 18 이상 65 이하이면"),
        ("80 ≤ 점수 < 90인 학생", "점수가 80 이상 90 미만인 학생"),
        ("a < 점수 < b", "a < 점수 < b"),  # a word between letters: left, as before
    ],
)
def test_a_word_between_two_numbers_is_a_chains_subject(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1 ≤ a_i ≤ 10⁹", "a_i는 1 이상 10의 9제곱 이하"),  # 1 이상 a_i 10의 9제곱 이하: the bounds apart
        ("0 ≤ a_i < N", "a_i는 0 이상 N 미만"),  # 0 이상 a_i < N: the second sign unsaid
        ("1 ≤ i, j ≤ n", "i, j는 1 이상 n 이하"),  # 1 이상 i, j n 이하
        ("1 ≤ i, j ≤ N이면", "i, j가 1 이상 N 이하이면"),
    ],
)
def test_an_indexed_term_or_two_indices_are_a_chains_subject(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x₀ < x < x₁", "x는 x₀ 초과 x₁ 미만"),  # x₀ < x < x₁: both signs unsaid
        ("t₁ < t < t₂이면", "t가 t₁ 초과 t₂ 미만이면"),
        ("0 < t < t₁", "t는 0 초과 t₁ 미만"),  # 0 초과 t t 미만₁
    ],
)
def test_a_chain_to_subscripted_bounds_is_read(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("f(a) < k < f(b)", "k는 f(a) 초과 f(b) 미만"),  # f(a) < k < f(b): both signs unsaid
        ("f(a) < k < f(b)인 k", "k가 f(a) 초과 f(b) 미만인 k"),
        ("g(x) ≤ f(x) ≤ h(x)", "f(x)는 g(x) 이상 h(x) 이하"),
        ("f(1) < x < 3", "x는 f(1) 초과 3 미만"),  # f(1) x 3 미만 미만
        ("f(a) < f(b)", "f(a) < f(b)"),  # no chain: as before
    ],
)
def test_a_function_as_a_chains_first_term(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("-π < x", "마이너스 파이 초과 x"),  # -파이 < x: the sign unsaid
        ("2π < x", "2파이 초과 x"),  # 2파이 < x
        ("π < x이면", "파이 초과 x이면"),
        ("π < xy", "파이 < xy"),  # a product's letters: left, as "3 < xy"
    ],
)
def test_pi_bounds_a_variable_after_it(written: str, said: str) -> None:
    assert spoken(written) == said
