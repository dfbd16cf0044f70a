"""The review of k8's absolute values (`korean_absolute`): a set's or a graph's size, "O(|V| + |E|)", and a
determinant, "|A|", are no absolute value; a bound's right side that ends in one before a particle or a copula, "|a +
b| ≤ |a| + |b|가 성립", or a term that goes on after a letter, "≥ kσ)". Each comment says what k8 read."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # O(V의 절댓값 더하기 E의 절댓값): a graph's vertices and edges counted, no absolute value
        ("BFS는 O(|V| + |E|)입니다.", "BFS는 O(|V| 플러스 |E|)입니다."),
        ("|V| = n이라 합시다.", "|V|는 n이라 합시다."),  # V의 절댓값은 n (k13: |V| 는, the particle apart)
        ("행렬식 |A|는 0이 아닙니다.", "행렬식 |A|는 0이 아닙니다."),  # A의 절댓값은
        ("선분의 길이 |AB| = 5", "선분의 길이 |AB|는 5"),  # AB의 절댓값은 5 (k13: |AB| 는)
    ],
)
def test_a_size_or_a_determinant_is_no_absolute_value(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # a 더하기 b의 절댓값이 a의 절댓값 이하 플러스 b의 절댓값이 성립합니다: the bound's word inside its right side
        (
            "|a + b| ≤ |a| + |b|가 성립합니다.",
            "a 더하기 b의 절댓값이 a의 절댓값 더하기 b의 절댓값 이하가 성립합니다.",
        ),
        (
            "|x - y| ≤ |x - z| + |z - y|입니다.",
            "x 빼기 y의 절댓값이 x 빼기 z의 절댓값 더하기 z 빼기 y의 절댓값 이하입니다.",
        ),
        # a의 절댓값 빼기 b의 절댓값 ≤ a 빼기 b의 절댓값입니다: the sign unsaid
        ("|a| - |b| ≤ |a - b|입니다.", "a의 절댓값 빼기 b의 절댓값이 a 빼기 b의 절댓값 이하입니다."),
        ("|x| > |y|이면", "x의 절댓값이 y의 절댓값 초과이면"),  # x의 절댓값 > y의 절댓값이면
    ],
)
def test_a_right_side_that_ends_in_an_absolute_value_before_a_particle(written: str, said: str) -> None:
    assert spoken(written) == said


def test_a_right_side_is_not_cut_inside_a_term() -> None:
    """Chebyshev's inequality: k8 read k 이상시그마 (the bound's word between k and σ)."""
    said = spoken("P(|X - μ| ≥ kσ) ≤ 1/k²입니다.")
    assert "이상시그마" not in said
    assert said.startswith("P(X 빼기 뮤의 절댓값")


@pytest.mark.parametrize(
    "written",
    ["|a| + |b| + |c| + |d| + |e| < 1이면", "|x| < |y|²이면", "|x| < 2πr이면"],
)
def test_a_right_side_too_long_or_going_on_keeps_no_bound_word_inside_it(written: str) -> None:
    """A right side the pattern cannot take whole: the bound's word is never said inside it."""
    said = spoken(written)
    assert not any(
        f"{word}{after}" in said for word in ("미만", "이하") for after in (" 더하기", "파이", "의 2제곱")
    )


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("0 ≤ P(A|B) ≤ 1입니다.", "P(A|B)는 0 이상 1 이하입니다."),  # 0 이상 P(A|B) 1 이하입니다.
        ("1 ≤ x ≤ 5입니다.", "x는 1 이상 5 이하입니다."),  # 1 이상 x 5 이하입니다.
        ("5 명 < n < 10 명입니다.", "n은 다섯 명 초과 열 명 미만입니다."),  # … 10 미만 명입니다.
        ("0 < x < 1입니까?", "x는 0 초과 1 미만입니까?"),
    ],
)
def test_a_chain_before_a_lecture_s_copula(written: str, said: str) -> None:
    """ "입니다", a lecture's most common ending after a formula, ends a chain as "이다" does."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 3분의 1이면", "x 3분의 1 미만이면"),  # x 3분 미만의 1이면: 분 read as minutes
        ("p > 2 분의 1이면", "p 2 분의 1 초과이면"),  # p 2 분 초과의 1이면 (k8; before it 2 초과 분의 1)
        ("0 < x < 3분의 1입니다.", "x는 0 초과 3분의 1 미만입니다."),  # x가 0 초과 3분 미만의 1입니다.
        ("3분의 1 < x < 1이면", "x가 3분의 1 초과 1 미만이면"),
        ("0 ≤ t ≤ 10 분 동안", "t는 0 이상 10 분 이하 동안"),  # minutes as before
    ],
)
def test_a_fraction_said_in_korean_as_a_bound(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "if (score >= 90) grade = 'A';",
            "if (score가 90보다 크거나 같다) grade는 'A';",
        ),  # if (score 90 이상)
        (
            "while (count > 0 && lo <= hi)",
            "while (count가 0보다 크다 && lo가 hi보다 작거나 같다)",
        ),  # count 0 초과
        ("if len(s) > 0:", "if len(s)가 0보다 크다:"),  # if len(s) 0 초과:
        ("score >= 90이면 A입니다.", "score 90 이상이면 A입니다."),  # a sentence's, as before
    ],
)
def test_a_longer_name_s_bound_in_code_in_code_s_voice(written: str, said: str) -> None:
    """k8 read code's comparisons between names in code's voice, "if (count > max)", but a name's bound by a number in
    a formula's, "if (score >= 90)" (one line in two voices)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 5 초과입니다.", "x 5 미만 초과입니다."),  # x 5 초 미만과입니다.: 초 a second, 과 a particle
        ("1 < x < 5 초과 입니다.", "x는 1 초과 5 미만 초과 입니다."),  # x는 1 초과 5 초 미만과 입니다.
        ("t ≤ 10 초 동안", "t 10 초 이하 동안"),  # seconds as k8 reads them
    ],
)
def test_the_bound_s_own_word_after_a_number_is_no_counter(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("float pi = 3.14;", "float pi에 3 점 일사를 대입;"),  # float pi는 3 점 일사;
        (
            "for (int j = i + 1; j < n; j++)",
            "for (int j에 i 더하기 1을 대입; j가 n보다 작다; j++)",
        ),  # int j는 i 더하기 1
        ("int x = 5, y = x + 1;", "int x에 5를 대입, y에 x 더하기 1을 대입;"),  # …, y는 x 더하기 1;
        # korean62: i-- (espeak: i)
        (
            "for (int i = n - 1; i >= 0; i--)",
            "for (int i에 n 빼기 1을 대입; i가 0보다 크거나 같다; i minus minus)",
        ),
        ("x = 0.5;", "x는 0 점 오;"),  # no type nor "for": a formula's, as before
    ],
)
def test_an_assignment_of_a_decimal_or_a_short_formula_in_code_s_voice(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "x < |y| 이면 됩니다.",
            "x y의 절댓값 미만 이면 됩니다.",
        ),  # x y 미만의 절댓값: the bound inside the value
        ("x ≤ |x|는 항상 참입니다.", "x x의 절댓값 이하는 항상 참입니다."),  # x x 이하의 절댓값은
        (
            "ε > |x - a|이면",
            "엡실론 x 빼기 a의 절댓값 초과이면",
        ),  # 엡실론 > x 빼기 a의 절댓값이면: the sign unsaid
        (
            "x < |y| + 1",
            "x y의 절댓값 더하기 1 미만",
        ),  # x y 미만의 절댓값 더하기 1
        ("a + x < |y|", "a 더하기 x y의 절댓값 미만"),  # a 더하기 x y 미만의 절댓값
        ("x - 1 < |y|이면", "x 빼기 1이 y의 절댓값 미만이면"),  # x 빼기 1이 y 미만의 절댓값이면
        ("x - 1 < |y - 2|", "x 빼기 1이 y 빼기 2의 절댓값 미만"),  # … 1이 y 빼기 2 미만의 절댓값
        ("x - 1 < |y| + 1", "x 빼기 1이 y의 절댓값 더하기 1 미만"),  # … 1이 y 미만의 절댓값 더하기 1
        ("2x < |x - a|이면", "2x x 빼기 a의 절댓값 미만이면"),  # 2x x 빼기 a 미만의 절댓값이면
        ("f(x) < |x - a|", "f(x) x 빼기 a의 절댓값 미만"),  # f(x) x 빼기 a 미만의 절댓값
        ("y ≥ |x| + 1", "y x의 절댓값 더하기 1 이상"),
    ],
)
def test_a_letter_bounded_by_an_absolute_value(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize("pattern", ["x < |y| ", "x < |", "a < |b| + ", "x<|y|<", "|x| < |y|가 "])
def test_a_hostile_text_of_bounded_absolute_values_is_read_in_bounded_time(pattern: str) -> None:
    """4 000 characters (a generous bound, no speed figure: `benchmarks/reading_cost.py` measures)."""
    text = (pattern * 4000)[:4000]
    started = time.process_time()
    spoken(text)
    assert time.process_time() - started < 2


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # 0 초과 x의 절댓값이 y의 절댓값 이하이면: the chain left to the single bounds, read as two
        ("0 < |x| ≤ |y|이면", "x의 절댓값이 0 초과 y의 절댓값 이하이면"),
        ("0 < x < |y|", "x는 0 초과 y의 절댓값 미만"),  # x는 0 초과 y 미만의 절댓값
        ("0 < |x| ≤ M", "x의 절댓값은 0 초과 M 이하"),  # 0 초과 x의 절댓값 ≤ M: the second sign unsaid
        # a quotient of one, left whole (k8: x y의 절댓값 이하/2, the bound's word inside the quotient)
        ("x ≤ |y|/2이면", "x ≤ |y|/2이면"),
        ("1/|x| < ε", "1/|x| < 엡실론"),
        (
            "|x - y| ≤ 3명이면",
            "x 빼기 y의 절댓값 세 명 이하이면",
        ),  # … 절댓값이 3 이하명이면: the bound before the counter
    ],
)
def test_a_chain_to_an_absolute_value_and_a_quotient_of_one(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # … x++; Map가 String보다 작다, Integer> m; }: a generic type's bracket read as a comparison
        (
            "for (int i = 0; i < n; i++) { x++; Map<String, Integer> m; }",
            "for (int i에 0을 대입; i가 n보다 작다; i++) { x++; Map<String, Integer> m; }",
        ),
        (
            "while (lo < hi && count > max)",
            "while (lo가 hi보다 작다 && count가 max보다 크다)",
        ),  # as k8 reads them
        ("return lo < hi;", "return lo가 hi보다 작다;"),
    ],
)
def test_a_generic_type_in_a_loop_s_body_is_no_comparison(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "-|x| ≤ x ≤ |x|입니다.",
            "x는 마이너스 x의 절댓값 이상 x의 절댓값 이하입니다.",
        ),  # -x의 절댓값 ≤ x ≤ x의 절댓값
        ("|a| < b < |c|", "b는 a의 절댓값 초과 c의 절댓값 미만"),  # a의 절댓값 < b < c의 절댓값
    ],
)
def test_a_chain_from_an_absolute_value(written: str, said: str) -> None:
    assert spoken(written) == said
