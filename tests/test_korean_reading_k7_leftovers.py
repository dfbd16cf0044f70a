"""The Korean reading's leftovers of the last stop (k7): chains of bounds read with their middle term first, a formula
on a comparison's left before a variable, the single angle quote typed for "<", a factorial before a copula, a
bracket's minus, a Greek letter's quotient, code's "and" (`korean_chains`, `korean_ranges`, `korean_formulas`,
`korean_reading`).

Each reading is the words a Korean lecturer says; the comment says what was read before. The lookalikes below read
as before."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("a ≤ b ≤ c", "b는 a 이상 c 이하"),  # a 이상 b c 이하: b's bounds on either side of it
        ("1 ≤ x ≤ 3", "x는 1 이상 3 이하"),  # 1 이상 x 3 이하
        ("1 ≤ n ≤ 3일 때", "n이 1 이상 3 이하일 때"),
        ("1 ≤ k ≤ n인 정수 k", "k가 1 이상 n 이하인 정수 k"),  # a clause's subject: 가, not the topic's 는
        ("0 ≤ x ≤ 1이면", "x가 0 이상 1 이하이면"),
        ("0 ≤ x ≤ 1이라면", "x가 0 이상 1 이하이라면"),
        ("0 < x < 1일수록", "x가 0 초과 1 미만일수록"),
        ("1 ≤ x ≤ 3을 만족하는", "x는 1 이상 3 이하를 만족하는"),  # the particle in the form 이하 takes
        ("-1 ≤ x ≤ 1", "x는 마이너스 1 이상 1 이하"),
        ("0 ≤ p ≤ 100%", "p는 0 이상 100 퍼센트 이하"),
        ("0 ≤ N ≤ 100", "N은 0 이상 100 이하"),  # a capital between numbers is a variable
        ("20℃ ≤ t ≤ 40℃", "t는 20 도 이상 40 도 이하"),  # 20 도 이상 t 40 도 이하
        ("2.5V ≤ V ≤ 4.2V이면", "V가 2 점 오 볼트 이상 4 점 이 볼트 이하이면"),
        ("20 ≤ T ≤ 40℃", "T는 20 이상 40 도 이하"),
        ("0 < x - 1 < 3", "x 빼기 1은 0 초과 3 미만"),  # 0 초과 x 빼기 1이 3 미만: a formula in the middle
        ("0 ≤ x^2 ≤ 4이면", "x의 2제곱이 0 이상 4 이하이면"),  # 제곱: a closed syllable, 이
        ("1 < 2x + 1 < 5", "2x 더하기 1은 1 초과 5 미만"),
        ("a < 1 < b", "1은 a 초과 b 미만"),  # a 1 미만 초과 b: the number taken for a's bound
        ("v1 < v2 < v3", "v2는 v1 초과 v3 미만"),  # v1 초과 v2 초과 v3
        ("a > b > c이면", "b가 c 초과 a 미만이면"),  # a 미만 b c 초과: the lower bound first
        ("0 < θ < π", "세타는 0 초과 파이 미만"),  # 0 < 세타 < 파이: the signs unsaid
        ("0 < ε < 1", "엡실론은 0 초과 1 미만"),  # the particle for the letter's name
        ("a < b < n - 1", "b는 a 초과 n 빼기 1 미만"),
        ("a - 3 > b", "a 빼기 3이 b 초과"),  # a 빼기 3 미만 b: the formula's 3 taken for b's bound
        ("a - 3 > b이면", "a 빼기 3이 b 초과이면"),
        ("x + 1 ≤ y가 되면", "x 더하기 1이 y 이하가 되면"),
        ("a - 3 > b + 1", "a 빼기 3이 b 더하기 1 초과"),
        ("if (a - 3 > b)", "if (a 빼기 3이 b보다 크다)"),  # if (a 빼기 3 미만 b): in code, code's voice
        ("while (x + 1 <= y) {", "while (x 더하기 1이 y보다 작거나 같다) {"),
        ("x ‹ 2πr", "x 2파이r 미만"),  # x ‹ 2파이r: the quote unsaid
        ("x < 2πr", "x 2파이r 미만"),  # x 2 미만파이r
        ("r › 0", "r 0 초과"),
    ],
)
def test_the_last_stops_leftovers_are_said_as_a_lecturer_says_them(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1 < 2 < 3", "1 < 2 < 3"),  # numbers alone compared
        ("0 < 2 - 1 < 3", "0 < 2 빼기 1 < 3"),
        ("A > B > C", "A > B > C"),  # names ranked
        ("a < b < c < d", "a < b < c < d"),  # a longer chain, left whole
        ("a < b < f(x) < c", "a < b < f(x) < c"),  # a longer chain (k7's review reads "a < b < f(x)")
        ("a < b < n-1", "a < b < n-1"),  # a name's hyphen, no minus
        (
            "20 ≤ T ≤ 40°F",
            "20 이상 T 40 이하°F",
        ),  # a unit not read after a chain: the single bounds, as before
        ("3 > b", "3 미만 b"),  # no formula before the number
        ("5 - 3 > 0", "5 빼기 3 > 0"),  # two numbers compared
        ("2x - 3 > 0이면", "2x 빼기 3이 0 초과이면"),
        ("le ‹ mot ›", "le ‹ mot ›"),  # a French quotation
        ("‹제목›", "‹제목›"),
        ("x ≤ 3이 되면", "x 3 이하가 되면"),
    ],
)
def test_the_lookalikes_of_the_last_stops_leftovers_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("n!이다", "n 팩토리얼이다"),  # n!이다: the sign unsaid before a copula
        ("3!이면", "3 팩토리얼이면"),
        ("n!일 때", "n 팩토리얼일 때"),
        ("(n-k)", "(n 빼기 k)"),  # (n-k): the hyphen unsaid
        ("(n-1)!", "(n 빼기 1) 팩토리얼"),  # (n-1) 팩토리얼
        ("2(n-1)", "2(n 빼기 1)"),
        (
            "n!/(k!(n-k)!)",
            "n 팩토리얼 나누기 (k 팩토리얼 곱하기 (n 빼기 k) 팩토리얼)",
        ),
        ("ρ/ε₀", "엡실론 제로분의 로"),  # 로/엡실론₀: espeak's "slash", the subscript unsaid
        ("E = ρ/ε₀", "E는 엡실론 제로분의 로"),
        ("q/ε₀이다", "엡실론 제로분의 q이다"),
        ("μ₀/ε₀", "엡실론 제로분의 뮤 제로"),
        ("π/2", "2분의 파이"),  # 파이/2: espeak's "slash"
        ("2π/3", "3분의 2파이"),
        ("sin(π/2) = 1", "사인(2분의 파이)는 1"),
        ("0 < θ < π/2", "세타는 0 초과 2분의 파이 미만"),  # 0 < 세타 < 파이/2: the signs unsaid
        ("0 ≤ θ ≤ π/2이면", "세타가 0 이상 2분의 파이 이하이면"),
        (
            "if x > 10 and y < 5:",
            "if x가 10보다 크다 and y가 5보다 작다:",
        ),  # if x 10 초과 and y 5 미만: a formula's
        ("while (x > 0 or y < 3)", "while (x가 0보다 크다 or y가 3보다 작다)"),
    ],
)
def test_a_factorial_a_brackets_minus_a_greek_quotient_and_codes_and_are_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("정답은 3!", "정답은 3!"),  # an exclamation
        ("n-k", "n-k"),  # no bracket: a name's hyphen
        ("(T-1)", "(T-1)"),
        ("(1-2)", "(1-2)"),
        ("그림 3(a-c)", "그림 3(a-c)"),  # a figure's panels
        ("Fig. 2 (a-d)", "Fig. 2 (a-d)"),
        ("a/b", "a/b"),
        ("π/2.5", "파이/2 점 오"),  # no decimal's fraction
        ("ω/2π", "오메가/2파이"),
        ("and/or", "and/or"),
        ("x >= 0 and y >= 0", "x 0 이상 and y 0 이상"),  # no keyword: a formula's
    ],
)
def test_their_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "hostile",
    [
        "a < " * 1000,
        "1 ≤ x" * 800,
        "a - 3 > b + 1 " * 300,
        "1 < a1 < 2 < " * 330,
        "x ‹ " * 1000,
        "0 < " + "1 + " * 1000,
        "(n-" * 1000,
        "ρ/ε₀" * 1000,
        "n!" * 2000,
        "π/" * 2000,
        "2π/3 " * 800,
        "0 < θ < " * 500,
        "if (x > 1 and " * 300,
        "n!이" * 1300,
        "(a-b)" * 800,
    ],
)
def test_a_hostile_text_is_read_in_bounded_time(hostile):
    """About 4 000 characters built to make the chain, side and angle patterns backtrack: bounded repeats and
    look-aheads keep each linear (a generous bound, no speed figure: the work measured is `benchmarks/reading_cost.py`'s)."""
    started = time.process_time()  # this process's CPU: a busy machine's other work does not stretch it
    spoken(hostile)
    assert time.process_time() - started < 2
