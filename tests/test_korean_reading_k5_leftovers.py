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
