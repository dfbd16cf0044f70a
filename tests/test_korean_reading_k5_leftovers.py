"""What the k5 round found misread in a lecture's formulas, bounds, units and amounts of money, each beside
text that looks like it and reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > 3인치", "x 3인치 초과"),  # it was x 3인 초과치: 인 read as a counter
        ("x<3인치이면", "x 3인치 미만이면"),
        ("t > 3개월", "t 3개월 초과"),  # it was t 세 개 초과월
        ("d ≥ 2일차", "d 2일차 이상"),  # it was d 2일 이상차
        ("d > 10피트", "d 10피트 초과"),  # it was d 10 초과피트
        ("x > 3인분", "x 3인분 초과"),
        ("x>0이면", "x 0 초과이면"),  # it was x0 초과이면: the variable and the number one word
        ("온도>45℃", "온도 45 도 초과"),
    ],
)
def test_a_bound_says_its_whole_unit_apart_from_its_variable(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > 0일 때", "x 0 초과일 때"),
        ("x>0일 때", "x 0 초과일 때"),
        ("t > 3일 동안", "t 3일 초과 동안"),
        ("직원 ≥ 5인 사업장", "직원 5인 이상 사업장"),
        ("SOC < 20%", "S-O-C 20 퍼센트 미만"),
        ("p < 0.05이면", "p 0 점 영오 미만이면"),
    ],
)
def test_a_bounds_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2ab+b^2", "2ab 플러스 b의 2제곱"),  # it was 2ab+b의 2제곱: espeak said the English "plus"
        ("a^2+2ab+b^2", "a의 2제곱 플러스 2ab 플러스 b의 2제곱"),
        ("a^2 + 2ab + b^2", "a의 2제곱 더하기 2ab 더하기 b의 2제곱"),
        ("3xy - 1", "3xy 빼기 1"),  # it was 3xy - 1: the minus unsaid
    ],
)
def test_a_product_of_letters_after_its_coefficient_is_a_term_of_the_sum(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Ctrl+C", "Ctrl+C"),
        ("ctrl+c", "ctrl+c"),
        ("Ctrl+Shift+Esc", "Ctrl+Shift+Esc"),
        ("0x1ab+1", "0x1ab+1"),  # a hexadecimal's digits: no coefficient
        ("C++", "C++"),
    ],
)
def test_a_products_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$100+", "100 달러 이상"),  # it was 100 달러+: espeak said the English "plus"
        ("$100+ 예산", "100 달러 이상 예산"),
        ("€50+", "50 유로 이상"),
        ("$100-200", "100에서 200 달러"),  # it was 100 달러-200
        ("$100-$200", "100에서 200 달러"),  # it was 100 달러-200 달러
        ("$100~200", "100에서 200 달러"),  # it was 100 달러에서 200, the second amount no money
        ("$100-200 달러", "100에서 200 달러"),
        ("$100-200을", "100에서 200 달러를"),
        ("$100만-200만", "100만에서 200만 달러"),
    ],
)
def test_an_amount_of_money_or_more_and_a_range_of_them_say_the_currency_once(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$500 - 200 = $300", "500 달러 - 200은 300 달러"),  # a difference, no range
        ("$500-200", "500 달러-200"),  # runs down
        ("$100에서 200명이", "100 달러에서 200명이"),
        ("$100을", "100 달러를"),
        # "$100만": a Korean amount's scale, as "100만 원" is written; "only $100" is written "100달러만"
        ("$100만 있으면", "100만 달러 있으면"),
    ],
)
def test_an_amounts_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10⁸ m/s", "10의 8제곱 미터 퍼 초"),  # it was 10의 8제곱 m/s: espeak said 엠 "slash" 에스
        ("3×10⁸m/s", "3 곱하기 10의 8제곱 미터 퍼 초"),
        ("10⁵ km/h", "10의 5제곱 킬로미터 퍼 시간"),
        ("10⁻³ m", "10의 마이너스 3제곱 미터"),  # it was 10의 마이너스 3제곱 m
        ("10⁶ W", "10의 6제곱 와트"),
    ],
)
def test_a_unit_after_a_superscript_power_is_said_in_korean(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("5 m/s", "초속 5미터"),
        ("3 × 10^8 m/s", "3 곱하기 10의 8제곱 미터 퍼 초"),
        ("x² m", "x의 2제곱 m"),  # a letter's power: no number before the letter m
        ("3²A반", "3의 2제곱A반"),
    ],
)
def test_a_superscript_units_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("sin²x", "사인 제곱 x"),  # it was sin의 2제곱x: espeak said the English "sin"
        ("sin^{2}x", "사인 제곱 x"),
        ("cos²θ + sin²θ = 1", "코사인 제곱 세타 더하기 사인 제곱 세타는 1"),  # a spaced "+" between terms
        ("sin⁻¹x", "아크사인 x"),  # it was sin의 마이너스 1제곱x
        ("tan^-1 x", "아크탄젠트 x"),
        ("log²n", "로그 제곱 n"),
        ("sinθ", "사인 세타"),
    ],
)
def test_a_functions_name_and_its_power_are_said_as_a_korean_lecturer_says_them(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("log 파일", "log 파일"),
        ("sin x", "sin x"),  # espeak says 사인 x itself
        ("O(n log n)", "O(n log n)"),
        ("e^x와 ln x", "e의 x제곱과 ln x"),
        ("basin²", "basin의 2제곱"),
        ("Lincoln", "Lincoln"),
        ("log⁻¹", "log의 마이너스 1제곱"),  # no arc of a logarithm
        ("cos", "cos"),
    ],
)
def test_a_functions_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("∂f/∂x", "x에 대한 f의 편미분"),  # it was 편미분 f/편미분 x: espeak said "slash"
        ("∂f/∂x는", "x에 대한 f의 편미분은"),
        ("∂L/∂w를", "w에 대한 L의 편미분을"),
        ("∂²f/∂x²", "x에 대한 f의 이계 편미분"),
        ("∂²f/∂x∂y", "x, y에 대한 f의 이계 편미분"),
        ("∂/∂t", "t에 대한 편미분"),
    ],
)
def test_a_partial_derivative_is_said_as_one(written, said):
    assert spoken(written) == said


def test_a_partial_derivative_says_no_slash(tokenizer):
    assert tokenizer.symbols("∂f/∂x", "ko") == tokenizer.symbols("x에 대한 f의 편미분", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x^{n+1}", "x의 n 플러스 1제곱"),  # it was x^{n 플러스 1}: the power unsaid
        ("x^{n+1}을", "x의 n 플러스 1제곱을"),
        ("2^{n-1}", "2의 n 마이너스 1제곱"),
        ("e^{2x}", "e의 2x제곱"),
        ("x^(n+1)", "x의 n 플러스 1제곱"),
        ("e^(-x)", "e의 마이너스 x제곱"),
    ],
)
def test_a_power_whose_exponent_is_a_sum_says_the_power(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("f^(n)(x)", "f^(n)(x)"),  # a derivative's order, no power
        ("x^{2}", "x의 2제곱"),
        ("2^{10}", "2의 10제곱"),
    ],
)
def test_a_compound_exponents_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("FY2024", "2024 회계연도"),  # espeak said the English "fy"
        ("FY2024 실적", "2024 회계연도 실적"),
        ("FY 2024에", "2024 회계연도에"),
        ("FY24", "24 회계연도"),
        ("p<.05", "p 0 점 영오 미만"),  # it was p<.05: the bound unsaid
        ("p < .05이면", "p 0 점 영오 미만이면"),
    ],
)
def test_a_fiscal_year_and_a_bound_below_one_are_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("FY2025-24", "FY2025-24"),
        ("1.5<.5", "1 점 오<.5"),  # two numbers: no bound
    ],
)
def test_a_fiscal_years_lookalikes_read_as_before(written, said):
    assert spoken(written) == said
