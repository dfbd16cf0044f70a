"""The single bounds' leftovers of stop 52 (`korean_ranges`, `korean_formulas`): a statement's copula after a single
bound, a letter's fraction on either side, a Greek letter's multiple as the right side. Each comment says what was read
before."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≤ 1입니다", "x는 1 이하입니다"),  # x 1 이하입니다: no particle, where a chain's x는 is said
        ("x<1입니까?", "x는 1 미만입니까?"),  # x 1 미만입니까?
        ("x ≤ 1이다.", "x는 1 이하이다."),
        ("n ≥ 3입니다.", "n은 3 이상입니다."),  # n's sound, 엔: 은
        ("θ < π입니다", "세타는 파이 미만입니다"),  # 세타 파이 미만입니다
        ("n ≥ 100명입니다", "n은 100명 이상입니다"),
        ("x ≥ y입니다", "x는 y 이상입니다"),  # x y 이상입니다
        ("x₁ < x₂입니다", "x₁은 x₂ 미만입니다"),  # x₁ x₂ 미만입니다
        ("i < N입니다", "i는 N 미만입니다"),  # i < N입니다: the sign unsaid
        ("x ≤ y/2입니다", "x는 2분의 y 이하입니다"),  # x y/2 이하입니다
        ("y ≥ 2x + 1입니다", "y는 2x 더하기 1 이상입니다"),  # y 2x 더하기 1 이상입니다
        ("x^2 < 4입니다", "x의 2제곱은 4 미만입니다"),  # x의 2제곱 4 미만입니다
        ("P(A) ≤ 1입니다", "P(A)는 1 이하입니다"),  # P(A) 1 이하입니다
        ("f(1) < 3입니다", "f(1)은 3 미만입니다"),
    ],
)
def test_a_single_bound_before_a_statements_copula_says_its_topic(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≤ 1이면", "x 1 이하이면"),  # a condition's: as before
        ("x ≤ 1", "x 1 이하"),
        ("x ≥ y이면", "x y 이상이면"),
        ("i < N이면", "i N 미만이면"),
        ("x^2 < 4이면", "x의 2제곱 4 미만이면"),
        ("y ≥ 2x + 1", "y 2x 더하기 1 이상"),
        ("3 < 5입니다", "3 < 5입니다"),  # two numbers compared: left
        ("2x - 3 > 0입니다", "2x 빼기 3이 0 초과입니다"),  # a formula's subject has its particle
        ("x > 0인 경우입니다", "x 0 초과인 경우입니다"),  # the copula is not the bound's
    ],
)
def test_conditions_and_formulas_read_as_before(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x/2 ≤ y", "2분의 x가 y 이하"),  # x/2 이상 y: the 2 taken for y's bound, the sign turned
        ("x/3 ≤ y이면", "3분의 x가 y 이하이면"),
        ("x/2 ≤ 3", "2분의 x가 3 이하"),  # x/2 ≤ 3: the sign unsaid
        ("x^2 < y/2", "x의 2제곱이 2분의 y 미만"),  # x의 2제곱 초과 y/2: the exponent taken for y's bound
        ("n/2 < k", "2분의 n이 k 미만"),  # n/2 초과 k
        ("k ≤ n/2", "k 2분의 n 이하"),  # k ≤ n/2
        ("0 ≤ k ≤ n/2이면", "k가 0 이상 2분의 n 이하이면"),  # 0 이상 k ≤ n/2이면
        ("n/2를 구한다", "2분의 n을 구한다"),  # n/2를: espeak said "slash"
    ],
)
def test_a_letters_fraction_as_a_side(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize("written", ["km/2", "w/o", "a/b", "I/O 장치"])
def test_a_units_or_a_words_slash_is_no_letters_fraction(written: str) -> None:
    assert "분의" not in spoken(written)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x - 1 ≤ kσ", "x 빼기 1이 k시그마 이하"),  # x 빼기 1이 k 이하시그마
        ("x ≤ kσ", "x k시그마 이하"),  # x k 이하시그마
        ("x ≤ 2σ", "x 2시그마 이하"),  # x 2 이하시그마
        ("0 < x < 2σ", "x는 0 초과 2시그마 미만"),  # 0 초과 x 2 미만시그마
        ("μ - 2σ < x < μ + 2σ", "x는 뮤 빼기 2시그마 초과 뮤 더하기 2시그마 미만"),  # both signs unsaid
    ],
)
def test_a_greek_letters_multiple_as_a_side(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    "pattern",
    [
        "x/2 ≤ ",
        "x ≤ 1입니다 ",
        "x - 1 ≤ kσ ",
        "0 ≤ k ≤ n/2",
        "a/2/",
        "σσσσ ≤ ",
        "x₁ < x₂입니다",
        "the x = ",
        "a=",
        "let x = 3; ",
    ],
)
def test_a_hostile_text_is_read_in_bounded_time(pattern: str) -> None:
    """4 000 characters of a pattern these rules try (21 ms at most on the 2-core VM, best of 3: a generous bound here,
    no speed figure)."""
    text = (pattern * 4000)[:4000]
    started = time.process_time()  # this process's CPU: a busy machine's other work does not stretch it
    spoken(text)
    assert time.process_time() - started < 2


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Use let x = 3; here.", "Use let x = three; here."),  # Use let x에 3을 대입; here.
        ("In JavaScript, let x = 3; declares x.", "In JavaScript, let x = three; declares x."),  # let x는 3;
        ("Set x = 5 first.", "Set x = five first."),  # Set x는 5 first.
    ],
)
def test_an_english_sentences_code_and_equals_are_left_to_espeak(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("let x = 3;", "let x에 3을 대입;"),  # a line of code alone: code's voice, as before
        ("let x = 3, y = 4;", "let x에 3을 대입, y에 4를 대입;"),
        ("JavaScript에서는 let x = 3;처럼 씁니다", "JavaScript에서는 let x에 3을 대입;처럼 씁니다"),
        ("for x in xs: total = 0", "for x in xs: total은 0"),  # code's "in": one small word
        (
            "x = 3. Use the value in a loop.",
            "x는 3. Use the value in a loop.",
        ),  # the English is the next sentence
    ],
)
def test_code_and_korean_sentences_read_as_before(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2x ≤ 1", "2x가 1 이하"),  # 2 곱하기 1 이하: "2x 1" read as the product 2 x 1, the x lost
        ("3x < 5이면", "3x가 5 미만이면"),  # 3 곱하기 5 미만이면
        ("2x ≤ 1입니다", "2x가 1 이하입니다"),
        ("2x > 0일 때", "2x가 0 초과일 때"),  # 2 곱하기 0 초과일 때
        ("2n ≥ 10", "2n이 10 이상"),  # n's sound: 이
    ],
)
def test_a_coefficients_product_bounded_by_a_number_is_its_subject(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("3x3 ≤ 9", "3 곱하기 3 ≤ 9"), ("y ≥ 2x + 1", "y 2x 더하기 1 이상"), ("2x < 3y", "2x 3y 미만")],
)
def test_a_product_of_numbers_and_a_formulas_bound_read_as_before(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x + 1 ≤ 2y이면", "x 더하기 1이 2y 이하이면"),  # x 더하기 1 ≤ 2y이면: the sign unsaid
        ("x - 1 < 2cm", "x 빼기 1이 2 센티미터 미만"),
        ("x + 1 ≤ 2x", "x 더하기 1이 2x 이하"),  # k11 (k9 left it, the sign unsaid)
        ("f(x) > 0이면", "f(x) 0 초과이면"),  # a condition's: as before
    ],
)
def test_a_formulas_bound_by_a_coefficients_product(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("a ≠ 0입니다", "a는 0이 아닙니다"),  # a 낫 이퀄 0입니다
        ("n ≠ 1이다.", "n은 1이 아니다."),  # n 낫 이퀄 1이다.
        ("x != 0입니다", "x는 0이 아닙니다"),
        ("a ≠ b입니까?", "a는 b가 아닙니까?"),
        ("x ≠ 0일 때", "x가 0이 아닐 때"),  # a condition's: as before
    ],
)
def test_not_equal_before_a_statements_copula(written: str, said: str) -> None:
    assert spoken(written) == said
