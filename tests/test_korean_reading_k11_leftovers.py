"""The leftovers of stop 54's brief (`korean_ranges`, `korean_chains`, `korean_code`, `korean_reading`): a formula's
bound by a term after its last number, a subject noun before a single bound's statement, an English sentence's powers,
a formula's "&&" and "||". Each comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x + 1 ≤ 2x", "x 더하기 1이 2x 이하"),  # x 더하기 1 ≤ 2x: the sign unsaid
        ("x + 1 ≤ 2yᵢ", "x 더하기 1이 2y i 이하"),  # x 더하기 1 ≤ 2yᵢ
        ("x + 1 ≤ 2σᵢ", "x 더하기 1이 2시그마 i 이하"),  # x 더하기 1 ≤ 2시그마ᵢ
        ("x + 1 ≤ 2x이면", "x 더하기 1이 2x 이하이면"),  # x 더하기 1 ≤ 2x이면
        ("x^2 + 1 ≤ 2x", "x의 2제곱 더하기 1이 2x 이하"),  # x의 2제곱 더하기 1 ≤ 2x
        ("x² - 4 ≥ 3x", "x의 2제곱 빼기 4가 3x 이상"),  # x의 2제곱 빼기 4 ≥ 3x
        ("x+1<=2x", "x 플러스 1이 2x 이하"),  # x 플러스 1≤2x
        (
            "x + 1.5 ≤ 2x입니다",
            "x 더하기 1 점 오가 2x 이하입니다",
        ),  # x 더하기 1 점 오 ≤ 2x입니다
        ("3 < 2x", "3 < 2x"),  # no formula before its number: as before
        ("5 - 3 > 2x", "5 빼기 3 > 2x"),  # numbers alone before the sign: as before
        ("x + 1 ≤ 2y", "x 더하기 1이 2y 이하"),  # as before
    ],
)
def test_a_formula_ending_in_a_number_is_bound_by_a_term(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("값이 x ≤ 1입니다", "값 x가 1 이하입니다"),  # 값이 x는 1 이하입니다: a subject, then a topic
        ("값이 x ≤ y입니다", "값 x가 y 이하입니다"),  # 값이 x는 y 이하입니다
        ("값이 x₁ ≥ 0입니다", "값 x₁이 0 이상입니다"),  # 값이 x₁은 0 이상입니다
        ("함수가 f(x) > 0입니다", "함수 f(x)가 0 초과입니다"),  # 함수가 f(x)는 0 초과입니다
        ("확률이 p < 0.05입니다.", "확률 p가 0 점 영오 미만입니다."),  # 확률이 p는 …
        ("값이 θ < π입니다", "값 세타가 파이 미만입니다"),  # 값이 세타는 파이 미만입니다
        ("그것이 x ≤ 1입니다", "그것이 x는 1 이하입니다"),  # a pronoun's: kept, as before a chain
        ("길이 x ≤ 1입니다", "길이 x는 1 이하입니다"),  # a noun's own 이 (length): as before
        ("같이 x ≤ 1입니다", "같이 x는 1 이하입니다"),  # an adverb's 이: as before
        ("값이 x ≤ 1이면", "값이 x 1 이하이면"),  # a condition's: as before
        ("x ≤ 1입니다", "x는 1 이하입니다"),  # as before
    ],
)
def test_a_subject_noun_names_a_bounded_letter(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("E = mc^2 is the equation.", "E = m c squared is the equation."),  # E = mc의 2제곱 is the equation.
        ("E = mc² is the equation.", "E = m c squared is the equation."),  # E = mc의 2제곱 is …
        ("In this case x^2 is the square.", "In this case x squared is the square."),  # x의 2제곱
        ("The value of 2^10 is 1024.", "The value of two to the power of ten is 1024."),  # 2의 10제곱
        ("The area is 5 m^2 here.", "The area is 5 square meters here."),  # 5 미터^2: the power unsaid
        ("E = mc^2 입니다.", "E는 mc의 2제곱 입니다."),  # a Korean sentence's: as before
        ("x^2 = 4", "x의 2제곱은 4"),  # a formula alone: as before
    ],
)
def test_an_english_sentences_powers_are_said_in_english(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("0 <= x && x < n", "0 이상 x 그리고 x n 미만"),  # 0 이상 x && x n 미만: the join unsaid
        ("x>y||y>z", "x y 초과 또는 y z 초과"),  # x y 초과||y z 초과
        ("x ≥ 0 && y ≥ 0이면", "x 0 이상 그리고 y 0 이상이면"),  # x 0 이상 && y 0 이상이면
        ("if (0 <= x && x < n)", "if (x가 0보다 크거나 같다 && x가 n보다 작다)"),  # code's: as before
        (
            "while (count > 0 && lo <= hi)",
            "while (count가 0보다 크다 && lo가 hi보다 작거나 같다)",
        ),  # as before
        ("a && b > c", "a && b c 초과"),  # no bound on its left: as before
        ("a || b", "a || b"),  # as before
        ("||x|| < 1", "||x|| 1 미만"),  # a norm's bars: as before
    ],
)
def test_a_formulas_join_of_two_bounds_is_said(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≥ 2(x - 1)", "x 2(x 빼기 1) 이상"),  # x 2 이상(x 빼기 1): the bound's word inside the product
        ("x + 1 ≥ 2(x - 1)", "x 더하기 1이 2(x 빼기 1) 이상"),  # x 더하기 1이 2 이상(x 빼기 1)
        ("y < 3(x + 2)이면", "y 3(x 더하기 2) 미만이면"),  # y 3 미만(x 더하기 2)이면
        ("x ≤ 2(x - 1)입니다", "x는 2(x 빼기 1) 이하입니다"),  # x 2 이하(x 빼기 1)입니다
        ("x ≥ 2(x - 1)가 되면", "x 2(x 빼기 1) 이상이 되면"),  # x 2 이상(x 빼기 1)가 되면
        ("x > 0.5(a + b)", "x 0 점 오(a 더하기 b) 초과"),  # x 0 점 오 초과(a 더하기 b)
        ("x < 10(단위: m)", "x 10 미만(단위: m)"),  # a note in the bracket: as before
        ("x < 3(1 + 2)", "x 3 미만(1 더하기 2)"),  # no letter in the bracket: as before
        ("3 < 2(x)", "3 < 2(x)"),  # two numbers' sides: as before
    ],
)
def test_a_bound_by_a_numbers_product_with_a_bracket_is_said_after_it(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("y = x**2", "y는 x의 2제곱"),  # y는 x 2: the power unsaid
        ("2**10", "2의 10제곱"),  # 2 10
        ("x**-1", "x의 마이너스 1제곱"),  # x -1
        ("a**b", "a의 b제곱"),  # a b
        ("x**2 + y**2 ≤ 1이면", "x의 2제곱 더하기 y의 2제곱 1 이하이면"),  # as "x^2 + y^2 ≤ 1이면"
        ("The result is 2**10 here.", "The result is two to the power of ten here."),  # an English sentence's
        ("**전압**과 *저항*", "전압과 저항"),  # emphasis: as before
        ("값은 **2**입니다", "값은 2입니다"),  # as before
        ("my**var", "my var"),  # a longer word: as before
    ],
)
def test_a_python_power_is_said(written: str, said: str) -> None:
    assert spoken(written) == said
