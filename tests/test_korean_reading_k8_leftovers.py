"""The chains' leftovers of stop 51 (`korean_chains`, `korean_ranges`): a chain's last side with its counter or unit,
spaced or not; a long formula or a function of several arguments as a side; absolute values and a limit's terms;
code's assignments and a number's bound in code, in the voice of code's comparisons. Each comment says what was read before."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10 < n < 20명", "n은 10 초과 스무 명 미만"),  # 10 초과 n 스무 명 미만
        ("10 < n < 20명이면", "n이 10 초과 스무 명 미만이면"),
        ("0 ≤ t ≤ 10 초", "t는 0 이상 10 초 이하"),  # t는 0 이상 10 이하 초
        ("0 ≤ t ≤ 10초 동안", "t는 0 이상 10초 이하 동안"),  # 0 이상 t 10초 이하 동안
        ("1 ≤ n ≤ 5 개", "n은 1 이상 다섯 개 이하"),  # n은 1 이상 5 이하 개
        ("0 ≤ x ≤ 3개", "x는 0 이상 세 개 이하"),  # 0 이상 x 세 개 이하
        ("1 < x < 3일 동안", "x는 1 초과 3일 미만 동안"),  # 1 초과 x 3일 미만 동안
        ("0 ≤ x ≤ 10 m", "x는 0 이상 10 미터 이하"),  # x는 0 이상 10 이하 m
        ("0 < θ < 90도", "세타는 0 초과 90도 미만"),
        ("1 ≤ k ≤ 10 개의 원소", "k가 1 이상 열 개 이하의 원소"),
        ("t ≤ 10 초", "t 10 초 이하"),  # a single bound too: t 10 이하 초
        ("10명 < n < 20명", "n은 열 명 초과 스무 명 미만"),  # the first side too: 열 명 초과 n 스무 명 미만
        ("0초 ≤ t ≤ 10초", "t는 0초 이상 10초 이하"),  # 0초 이상 t 10초 이하
        ("10 km < d < 20 km", "d는 10 킬로미터 초과 20 킬로미터 미만"),
        ("1 ≤ k ≤ 10 번", "k는 1 이상 10 번 이하"),  # k는 1 이상 10 이하 번
    ],
)
def test_a_counter_or_a_unit_on_a_side(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("0 < x < 1일 때", "x가 0 초과 1 미만일 때"),  # the copula, no day
        ("0 < x < 1인 실수", "x가 0 초과 1 미만인 실수"),
        ("3 < x < 5 등", "x는 3 초과 5 미만 등"),  # "and so on", no counter
        ("1 ≤ k ≤ 3 번째", "k는 1 이상 3 이하 번째"),  # an ordinal's 번째, no count of times
        ("1 < 2 < 3개", "1 < 2 < 세 개"),  # numbers alone
        ("20 ≤ T ≤ 40°F", "20 이상 T 40 이하°F"),  # a unit not read: the single bounds, as before
    ],
)
def test_lookalikes_of_a_counter_read_as_before(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "a + b + c + d + e < x < 1",
            "x는 a 더하기 b 더하기 c 더하기 d 더하기 e 초과 1 미만",
        ),  # a 더하기 … 더하기 e x 미만 1 미만 (k7's review: 더하기 x는 e 초과)
        (
            "x1 + x2 + x3 + x4 + x5 ≤ n ≤ 100이면",
            "n이 x1 더하기 x2 더하기 x3 더하기 x4 더하기 x5 이상 100 이하이면",
        ),
        ("f(1, 2) < x < 3", "x는 f(1, 2) 초과 3 미만"),  # f(1, 2) x 3 미만 미만
        ("0 ≤ f(x, y) ≤ 1", "f(x, y)는 0 이상 1 이하"),  # 0 이상 f(x, y) 1 이하
        ("0 ≤ P(A, B) ≤ 1", "P(A, B)는 0 이상 1 이하"),
        ("0 ≤ P(A|B) ≤ 1", "P(A|B)는 0 이상 1 이하"),  # 0 이상 P(A|B) 1 이하
    ],
)
def test_a_long_formula_or_a_function_of_several_arguments_as_a_side(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("|x - a| < δ", "x 빼기 a의 절댓값이 델타 미만"),  # |x 빼기 a| < 델타: the bars and the sign unsaid
        ("|x| ≤ 1이면", "x의 절댓값이 1 이하이면"),  # |x| 1 이하이면
        ("|f(x) - L| < ε", "f(x) 빼기 L의 절댓값이 엡실론 미만"),
        ("0 < |x - a| < δ", "x 빼기 a의 절댓값은 0 초과 델타 미만"),  # 0 < |x 빼기 a| < 델타
        ("0 < |x - a| < δ이면", "x 빼기 a의 절댓값이 0 초과 델타 미만이면"),
        ("|-3| = 3", "마이너스 3의 절댓값은 3"),  # |마이너스 3| 는 3
        ("|x|를 구하라", "x의 절댓값을 구하라"),
        ("|a| + |b|", "a의 절댓값 더하기 b의 절댓값"),  # |a| 플러스 |b| (its first form: a의 절댓값 플러스)
        ("|x| + 1 < 3", "x의 절댓값 더하기 1이 3 미만"),  # |x| 플러스 1 < 3 (its first form: the sign unsaid)
        (
            "|a - b| ≥ |a| - |b|",
            "a 빼기 b의 절댓값이 a의 절댓값 빼기 b의 절댓값 이상",
        ),  # |a 빼기 b| ≥ |a| 빼기 |b|: the triangle inequality's signs unsaid
        ("0 < 1/n < ε", "n분의 1은 0 초과 엡실론 미만"),  # 0 < 1/n < 엡실론: both signs unsaid
        ("0 < 1/n < ε이므로", "n분의 1이 0 초과 엡실론 미만이므로"),
        ("0 < e^(-x) < 1", "e의 마이너스 x제곱은 0 초과 1 미만"),  # 0 초과 e의 마이너스 x제곱 1 미만
        ("0 < e^x < 1", "e의 x제곱은 0 초과 1 미만"),
    ],
)
def test_absolute_values_and_a_limit_s_terms(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    "written",
    [
        "|x|² < 1",
        "|x|^2 = x^2",
        "a || b",
        "if (a || b)",
        "| a | b |",
        "||x|| < 1",
        "P(A|B)",
        "x|y",
        "|a|b|",
        "cat a.txt | grep b",
    ],
)
def test_bars_that_are_no_absolute_value_read_as_before(written: str) -> None:
    """An absolute value's power (left whole), code's or, a pipe, a table, a norm, a conditional probability: no
    절댓값."""
    assert "절댓값" not in spoken(written)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "for (int i = 0; i < n; i++)",
            "for (int i에 0을 대입; i가 n보다 작다; i++)",
        ),  # for (int i는 0; …: the "=" a formula's topic beside code's 작다
        ("for (i = 0; i < n; i++)", "for (i에 0을 대입; i가 n보다 작다; i++)"),
        ("int x = 5;", "int x에 5를 대입;"),  # int x는 5;
        ("int x = -1;", "int x에 마이너스 1을 대입;"),
        ("int n = a.size();", "int n에 a.size()를 대입;"),  # int n은 a.size();
        ("let f = g();", "let f에 g()를 대입;"),
        (
            "for (int i = 1, j = n; i < j; i++)",
            "for (int i에 1을 대입, j에 n을 대입; i가 j보다 작다; i++)",
        ),
        (
            "if (0 <= x && x < n)",
            "if (x가 0보다 크거나 같다 && x가 n보다 작다)",
        ),  # if (0 이상 x && x가 n보다 작다)
        ("if (0 < n)", "if (n이 0보다 크다)"),  # if (0 초과 n)
        (
            "for (size_t i = 0; i < v.size(); ++i)",
            "for (size_t i에 0을 대입; i가 v.size()보다 작다; ++i)",
        ),  # for (size_t i는 0; i v 미만.size(); ++i): the bound's word inside the member
        ("while (i < s.length)", "while (i가 s.length보다 작다)"),
        ("while (lo <= hi)", "while (lo가 hi보다 작거나 같다)"),  # while (lo ≤ hi): the sign unsaid
        (
            "for (int i = 0; i < arr.length; i++)",
            "for (int i에 0을 대입; i가 arr.length보다 작다; i++)",
        ),  # i < arr.length
        (
            "for (int i = 0; i < n - 1; i++)",
            "for (int i에 0을 대입; i가 n 빼기 1보다 작다; i++)",
        ),  # i n 빼기 1 미만: a formula's voice in code's
        ("if (count > max)", "if (count가 max보다 크다)"),
        ("x < y. 다음", "x y 미만. 다음"),  # a sentence's full stop, no member
        (
            "for (int i = n; 0 <= i; i--)",
            "for (int i에 n을 대입; i가 0보다 크거나 같다; i minus minus)",  # korean62: i-- (espeak: i)
        ),
    ],
)
def test_code_in_one_voice(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x = 0;", "x는 0;"),  # no type, no "for": a formula's
        ("x = 3, y = 4이면", "x는 3, y는 4이면"),
        ("f(x, y = 3)", "f(x, y는 3)"),
        ("0 <= x && x < n", "0 이상 x 그리고 x n 미만"),  # no keyword: a formula's throughout (k11: && said)
        ("if (0 <= x이면", "if (0 이상 x이면"),  # a sentence's
        ("vector<int> v;", "vector<int> v;"),  # a type's brackets
        ("template<typename T>", "template<typename T>"),
    ],
)
def test_formulas_that_look_like_code_read_as_before(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    "pattern",
    [
        "0 ≤ t ≤ 10 초 ",
        "1<x<1 ",
        "a + a + a ",
        "a+1+a+1<",
        "f(1, 2, 3, 4, 5) < ",
        "1 + " * 13 + "< x < ",
        "|x - a| < ",
        "|a",
        "0 < 1/n < ",
        "|x|",
    ],
)
def test_a_hostile_text_is_read_in_bounded_time(pattern: str) -> None:
    """4 000 characters of a pattern these rules try: bounded repeats keep each linear (a generous bound, no speed
    figure: the work measured is `benchmarks/reading_cost.py`'s)."""
    text = (pattern * 4000)[:4000]
    started = time.process_time()  # this process's CPU: a busy machine's other work does not stretch it
    spoken(text)
    assert time.process_time() - started < 2
