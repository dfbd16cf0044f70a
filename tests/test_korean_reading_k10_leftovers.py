"""The leftovers of stop 53's review (`korean_chains`, `korean_ranges`): a pronoun subject before a chain, a single
bound's statement with a space before its copula or as the first of a list. Each comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("우리가 0 < x < 1입니다.", "우리가 x는 0 초과 1 미만입니다."),  # 우리 x가: the pronoun cut
        ("여러분이 0 ≤ x ≤ 1을 가정하면", "여러분이 x는 0 이상 1 이하를 가정하면"),  # 여러분 x가
        ("제가 0 < t < 1을 가정합니다", "제가 t는 0 초과 1 미만을 가정합니다"),  # 제 t가
        ("가격이 1000원 < p < 5000원", "가격 p가 1000원 초과 5000원 미만"),  # a noun's: as before
    ],
)
def test_a_pronoun_subject_before_a_chain_is_kept(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≤ 1 입니다.", "x는 1 이하 입니다."),  # x 1 이하 입니다: no particle
        ("x ≥ 0, y ≥ 0입니다.", "x는 0 이상, y는 0 이상입니다."),  # x 0 이상, y는 …: y's alone
        ("x ≥ 0, y ≥ 0, z ≥ 0입니다.", "x는 0 이상, y는 0 이상, z는 0 이상입니다."),
        ("x ≥ 0, y ≥ 0이면", "x 0 이상, y 0 이상이면"),  # a condition's: as before
        ("x ≤ 1입니다.", "x는 1 이하입니다."),  # as before
    ],
)
def test_a_statement_gives_each_bounded_letter_its_topic(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean61: each index's letter said after a space, y i (espeak read "yᵢ" y letter 이디유키, the index's garbled name)
        ("x < yᵢ", "x y i 미만"),  # x y 미만ᵢ: the index after the bound's word
        ("x < yᵢ이면", "x y i 미만이면"),  # x y 미만ᵢ이면
        ("xᵢ < y", "x i y 미만"),  # xᵢ < y: the sign unsaid
        ("x ≤ 2σᵢ", "x 2시그마 i 이하"),  # x 2시그마 이하ᵢ
        ("x ≤ 2σᵢ가 되면", "x 2시그마 i 이하가 되면"),  # x 2시그마 이하ᵢ가 되면
        ("x ≤ M₁", "x M원 이하"),  # x ≤ M원: the sign unsaid (M₁ said in English, as "A4" is)
        ("i < N1", "i N원 미만"),  # i < N원: the sign unsaid
        ("|x| ≤ M₁", "x의 절댓값이 M원 이하"),  # x의 절댓값 ≤ M원
        ("|x| ≤ Mᵢ", "x의 절댓값이 M i 이하"),  # x의 절댓값 ≤ Mᵢ: left whole by k9's review
        ("|x| ≤ Mⱼ입니다", "x의 절댓값이 M j 이하입니다"),  # x의 절댓값 ≤ Mⱼ입니다
        ("x < y₁", "x y₁ 미만"),  # as before
        ("x ≤ 2σ입니다", "x는 2시그마 이하입니다"),  # as before
        ("|x| ≤ AB", "x의 절댓값 ≤ AB"),  # names: left, as before
    ],
)
def test_a_subscript_stays_on_its_term_and_the_sign_is_said(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x/2²", "2의 2제곱분의 x"),  # 2분의 x의 2제곱: (x/2)², the power taken for the fraction's
        ("1/2²", "2의 2제곱분의 1"),  # 2분의 1의 2제곱
        ("a/n²", "n의 2제곱분의 a"),  # a/n의 2제곱: the slash unsaid
        ("x/2^3입니다", "2의 3제곱분의 x입니다"),  # 2분의 x의 3제곱입니다
        ("x/2²이 작다", "2의 2제곱분의 x가 작다"),  # 2분의 x의 2제곱이 작다
        ("(x/2)²", "(2분의 x)의 2제곱"),  # the bracket's: as before
        ("x/2", "2분의 x"),  # as before
    ],
)
def test_a_power_of_the_denominator_is_said_under_the_fraction(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "E = mc^2 is the equation.",
            "E = m c squared is the equation.",
        ),  # E는 mc의 2제곱 is …: "=" said in Korean (k11: its power in English too)
        (
            "f(x) = x + 1 for the interval",
            "f(x) = x plus one for the interval",
        ),  # f(x)는 …; k12: "+" in English
        (
            "E = mc^2 is the equation. 그리고 x = 3입니다.",
            "E = m c squared is the equation. 그리고 x는 3입니다.",
        ),
        ("E = mc^2는 유명하다.", "E는 mc의 2제곱은 유명하다."),  # a Korean sentence: as before
        ("for x in xs: total = 0", "for x in xs: total은 0"),  # code's "for": as before
        ("x = 3 for all x", "x는 3 for all x"),  # one small word: as before
        ("a = 1 is true", "a는 1 is true"),
    ],
)
def test_an_english_sentence_keeps_its_equals_sign_for_espeak(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "값이 0 ≠ 1입니다.",
            "값 0이 1이 아닙니다.",
        ),  # 값이 0은 1이 아닙니다: a subject and a topic in a row
        ("값이 x ≠ 0이면", "값 x가 0이 아니면"),  # 값이 x가 0이 아니면
        ("분모가 n ≠ 0일 때", "분모 n이 0이 아닐 때"),  # 분모가 n이 0이 아닐 때
        ("우리가 x ≠ 0입니다", "우리가 x는 0이 아닙니다"),  # a pronoun's: as before
        ("길이 x ≠ 0이면", "길이 x가 0이 아니면"),  # a noun's own 이 (length): as before
        ("x ≠ 0입니다.", "x는 0이 아닙니다."),  # as before
    ],
)
def test_a_subject_noun_before_not_equal_names_its_term(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x₁ ≥ 0입니다", "x₁은 0 이상입니다"),  # x₁ 0 이상입니다: no particle, as "x ≥ 0입니다" has
        ("xᵢ ≥ 0입니다", "x i는 0 이상입니다"),  # xᵢ 0 이상입니다
        ("θ₁ < π입니다", "세타₁은 파이 미만입니다"),
        ("P(A) ≤ 1입니다", "P(A)는 1 이하입니다"),  # a function's value: as before
    ],
)
def test_an_indexed_letters_statement_takes_its_topic(written: str, said: str) -> None:
    assert spoken(written) == said
