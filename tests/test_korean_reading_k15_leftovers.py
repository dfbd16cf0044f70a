"""korean15: what rvk14's review left of the Korean reading, each against what korean14 read (the comment beside
each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken, spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A ⊂ B가 성립하면", "A가 B의 부분집합임이 성립하면"),  # korean14: A ⊂ B가 성립하면, the sign unsaid
        ("A ⊂ B를 보이자.", "A가 B의 부분집합임을 보이자."),
        ("x ∈ A를 만족하는 x", "x가 A의 원소임을 만족하는 x"),
        ("x ∉ A는 거짓이다.", "x가 A의 원소가 아님은 거짓이다."),
        ("A ⊇ B를 보이자.", "A가 B를 포함함을 보이자."),
        ("x ∈ ℝ를 만족하는", "x가 실수 집합의 원소임을 만족하는"),
        # a copula and code as before
        ("x ∈ A이면", "x가 A의 원소이면"),
        ("if x ∈ A이 참", "if x ∈ A이 참"),
    ],
)
def test_a_relation_before_a_particle_is_said_as_a_noun_clause(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("∀x ∈ A이면", "모든 x가 A의 원소이면"),  # korean14: A의 모든 x에 대해 이면
        ("∀x ∈ A이므로 y > 0", "모든 x가 A의 원소이므로 y 0 초과"),  # korean14: A의 모든 x에 대해 이므로
        ("∃y ∈ B입니다.", "어떤 y는 B의 원소입니다."),
        ("∀ε ∈ A라고 하자.", "모든 엡실론이 A의 원소라고 하자."),
        # a quantifier without a copula as before
        ("∀x ∈ A에 대해", "A의 모든 x에 대해"),
        ("∀x ∈ A, x > 0", "A의 모든 x에 대해, x 0 초과"),
    ],
)
def test_a_quantified_element_before_a_copula_takes_it(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ ℝ^{n}", "x in R n"),  # korean14: x in R^{n}, the braces to espeak
        ("x ∈ ℝ^n_+", "x in R n plus"),  # korean14: x in R to the power of n_+
        ("n ∈ ℤ⁺", "n in Z plus"),  # korean14: n in Z⁺
        ("x ∈ ℝ₊", "x in R plus"),
        ("x ∈ ℝ^{n}_{+}", "x in R n plus"),
        # as before: a dimension alone, and a subscript not a sign's half left to the powers
        ("x ∈ ℝ^n", "x in R n"),
        ("x ∈ ℝ^n_x", "x in R to the power of n_x"),
    ],
)
def test_lang_en_a_number_sets_dimension_in_braces_and_its_signed_half_are_said(
    written: str, said: str
) -> None:
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean14: 1 point 5 곱하기 10의 마이너스 3제곱, two voices in one number
        ("The rate is 1.5e-3 here.", "The rate is 1 점 오 곱하기 10의 마이너스 3제곱 here."),
        ("The rate is 1.5e3 here.", "The rate is 1 점 오 곱하기 10의 3제곱 here."),
        # as before
        ("The offset is -0.5 here.", "The offset is 마이너스 0 점 오 here."),
        ("The mass is 2.5 kg today.", "The mass is two point five kilograms today."),
        (
            "It weighs 2.5 kg.",
            "It weighs two point five kilograms.",
        ),  # korean15: 2 점 오 킬로그램 (korean16's "It")
        ("The value is 0.5 here.", "The value is zero point five here."),
        # rvk16: 1 점 팔 곱하기 10의 3제곱 (was 1 point 8e plus 03, the mantissa's "+" a sum's)
        ("It took 1.8e+03 s in the test.", "It took 1 점 팔 곱하기 10의 3제곱 s in the test."),
    ],
)
def test_an_english_sentences_decimal_is_english_only_standing_alone(written: str, said: str) -> None:
    """The boundary, rvk14's rule kept: English "point" only for a decimal of its own, after a space, a bracket, a quote
    or a name's "/", and not before a sign. A mantissa, "1.5e-3", is a sign's number: the Korean rules say it whole
    (1 점 오 곱하기 10의 마이너스 3제곱), as they say a decimal after a sign, "-0.5" (마이너스 0 점 오: the minus is
    the Korean rules', so is its decimal); "1.8e+03" too (rvk16: its "+" is no sum's, its
    exponent 3). A unit after a decimal is English in an English sentence, "2.5 kg" two point five kilograms (korean16: its digits in words); which sentence is
    English is `korean_code.english_sentences`' (two of its small words, or one and a longer word): "It weighs 2.5 kg."
    had none of them in korean15 (2 점 오 킬로그램); korean16 counts a capitalized "It" (an iterator's "it" in code is
    lowercase), two point five kilograms."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ ℤ⁺이면", "x가 양의 정수 집합의 원소이면"),  # korean14: x는 정수 집합의 원소⁺이면
        ("x ∈ ℝ₊일 때", "x가 양의 실수 집합의 원소일 때"),
        ("ℤ⁺는 무한집합이다.", "양의 정수 집합은 무한집합이다."),  # korean14: 정수 집합⁺는
        # as before
        ("x ∈ ℝ", "x는 실수 집합의 원소"),
    ],
)
def test_a_number_sets_positive_half_is_said(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # before: A는 B의 부분집합이고 B가 C의 부분집합임이, a topic opening the clause
        ("A ⊂ B ⊂ C가 성립하면", "A가 B의 부분집합이고 B가 C의 부분집합임이 성립하면"),
        ("x ∈ A ⊂ B를 보이자.", "x가 A의 원소이고 A가 B의 부분집합임을 보이자."),
        # as before
        ("A ⊂ B ⊂ C입니다.", "A는 B의 부분집합이고 B는 C의 부분집합입니다."),
        ("A ⊂ B ⊂ C이면", "A가 B의 부분집합이고 B가 C의 부분집합이면"),
    ],
)
def test_a_chain_of_sets_before_a_particle_is_one_noun_clause(written: str, said: str) -> None:
    assert spoken(written) == said
