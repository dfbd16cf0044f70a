"""korean17's leftovers (korean18): what a Korean text still read wrongly, each against what korean17 read (the comment
beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken, spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "황산은 H₂SO₄입니다.",
            "황산은 H투S-O포입니다.",
        ),  # korean17: H₂S-O포 (H₂ left to espeak's code points)
        ("인산 H₃PO₄와 HNO₃", "인산 H쓰리P-O포와 H-N-O쓰리"),  # korean17: H₃P-O포
        ("과산화수소 H₂O₂는", "과산화수소 H투O투는"),  # korean17: H₂O투
        ("HSO₄⁻ 이온", "H-S-O포 마이너스 이온"),  # as before
        ("H₂O와 CO₂", "H투O와 C-O투"),  # as before: one part's subscript
        ("A4 용지와 MP3", "A포 용지와 M-P쓰리"),  # as before
    ],
)
def test_a_formula_with_subscripts_on_several_parts_is_one_formula(written: str, said: str) -> None:
    """ "H₂SO₄" reads each part as "H₂O" and "SO₄" are read (the letters by name, a subscript in English): H투S-O포."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("클로저 C⁺는 집합입니다.", "클로저 C⁺는 집합입니다."),  # korean17: C 플러스는 (an ion's)
        ("V⁺ 공간의 원소", "V⁺ 공간의 원소"),  # korean17: V 플러스
        ("S⁺와 U⁺를 비교한다.", "S⁺와 U⁺를 비교한다."),  # korean17: S 플러스와 U 플러스를
        ("The function C⁺ is finite.", "The function C⁺ is finite."),  # korean17: C plus
        # ions as before: a word of chemistry, another ion, a size, two letters, an electron
        ("C⁺ 이온의 전하", "C 플러스 이온의 전하"),
        ("H⁺ 농도가 높다.", "H 플러스 농도가 높다."),
        ("Na⁺와 K⁺가 이동한다.", "N-A 플러스와 K 플러스가 이동한다."),
        ("H⁺와 OH⁻", "H 플러스와 O-H 마이너스"),
        ("Ca²⁺", "C-A 투 플러스"),
        ("Cl⁻", "C-L 마이너스"),
        ("Cu²⁺ + 2e⁻ → Cu", "C-U 투 플러스 플러스 2 e 마이너스에서 C-U"),  # rvk22: C-U as the ion
        ("The H⁺ ion is small.", "The H plus ion is small."),
    ],
)
def test_a_single_letter_with_a_sign_is_an_ion_only_beside_chemistry(written: str, said: str) -> None:
    """A single capital with a sign and no size is an ion only in a text about chemistry; elsewhere it is left to espeak
    as "x⁺" is (a closure, a space's half)."""
    assert spoken(written) == said


def test_a_single_letter_with_a_sign_in_english_text() -> None:
    """The same rule for `lang=en`: "C⁺" of a closure as written, "K⁺" beside "Na⁺" an ion."""
    assert spoken_form("The closure C⁺ is finite.", "en") == "The closure C⁺ is finite."
    assert spoken_form("The ions Na⁺ and K⁺ move.", "en") == "The ions Na plus and K plus move."


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "결과는 p < 0.05 here.",
            "결과는 p 0 점 영오 미만 here.",
        ),  # korean17: p 0 점 영오 here 미만 ("here" a unit)
        # as before: a unit apart from its number, "and" after a bound
        ("x < 10 dBm이면", "x 10 dBm 미만이면"),
        ("n > 3000 rpm", "n 3000 rpm 초과"),
        ("x < 5 kg이면", "x 5 킬로그램 미만이면"),
        ("x >= 0 and y >= 0", "x 0 이상 and y 0 이상"),
    ],
)
def test_a_word_after_a_bounds_amount_is_no_unit(written: str, said: str) -> None:
    """A small word apart from a bound's amount, "p < 0.05 here.", is the sentence's, not the amount's unit: the bound's
    word 미만 goes after the amount, before it."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "It costs $3.50 today.",
            "It costs three dollars and fifty cents today.",
        ),  # korean17: 3 점 오영 달러
        (
            "It costs $1 or $0.50 here.",
            "It costs one dollar or fifty cents here.",
        ),  # korean17: 1 달러 or 0 점 오영 달러
        (
            "It costs $1,200.05 here.",
            "It costs one thousand two hundred dollars and five cents here.",
        ),  # korean17: 1200 점 영오 달러
        ("We met at 3:30 today.", "We met at three thirty today."),  # korean17: 세 시 30분
        ("We met at 3:05 PM here.", "We met at three oh five PM here."),  # korean17: 오후 세 시 5분
        ("It opens at 10:00 here.", "It opens at ten o'clock here."),  # korean17: 열 시
        ("Add 1/2 cup of sugar.", "Add one half cup of sugar."),  # korean17: 2분의 1
        ("Use 3/4 of it here.", "Use three quarters of it here."),  # korean17: 4분의 3
        ("The result has p < 0.05 here.", "The result has p less than zero point zero five here."),
        # korean17: p 0 점 영오 here 미만
        (
            "It holds for n >= 10 here.",
            "It holds for n greater than or equal to ten here.",
        ),  # korean17: n 10 here 이상
        ("It holds for x <= -3 here.", "It holds for x less than or equal to minus three here."),
        (
            "It is p<.05 here.",
            "It is p less than zero point zero five here.",
        ),  # korean17: p 0 점 영오 here 미만
        # as before: a scaled amount, a range of times, a ratio, a date, 24/7, a chain, a bound on a term, Korean sentences
        ("The total is $1.5M now.", "The total is 150만 달러 now."),
        ("It ran 3:30-4:00 here.", "It ran 세 시 30분에서 네 시 here."),
        ("The ratio is 16:9 here.", "The ratio is sixteen to nine here."),  # korean21: 16 대 9
        ("It was on 1/2/2024 here.", "It was on 1/2/2024 here."),
        ("It runs 24/7 here.", "It runs 24 7 here."),
        ("It is 0 < x < 1 here.", "It is x는 0 초과 1 미만 here."),
        ("It is x < y here.", "It is x y 미만 here."),
        ("가격은 $3.50입니다.", "가격은 3 점 오영 달러입니다."),
        ("회의는 3:30에 합니다.", "회의는 세 시 30분에 합니다."),
        ("설탕 1/2컵", "설탕 2분의 1컵"),
        ("유의수준은 p < 0.05 입니다.", "유의수준은 p는 0 점 영오 미만 입니다."),
    ],
)
def test_an_english_sentences_money_times_fractions_and_bounds_are_english(written: str, said: str) -> None:
    """In an English sentence of a Korean text, dollars, a clock time, a small fraction and a bound on a number are
    English words (korean17 left them to the Korean rules: 3 점 오영 달러, 세 시 30분, 2분의 1, 미만 in an English
    sentence, two voices); a Korean sentence's as before."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ ℝ^{n+1}", "x in R n plus 1"),  # korean17: x in R^{n+1}
        ("x is in ℝ^{n-1} here.", "x is in R n minus 1 here."),  # korean17: R^{n-1}
        ("ℝⁿ⁺¹", "R n plus 1"),  # korean17: R n plus¹
        ("ℝ^{n+1}_+", "R n plus 1 plus"),
        # as before
        ("ℝ^{n}", "R n"),
        ("ℝ^n_+", "R n plus"),
        ("ℤ⁺", "Z plus"),
        ("ℝ^{2n+1}", "R^{2n+1}"),
    ],
)
def test_english_text_says_a_number_sets_dimension_one_more_or_less(written: str, said: str) -> None:
    """`lang=en`: "ℝ^{n+1}" is R n plus 1 as "ℝ^{n}" is R n (the dimension, no power)."""
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "x is in ℝ^{n+1}.",
            "x is in n 플러스 1차원 실수 공간.",
        ),  # korean17: ℝ^{n plus one} (the set, its braces unread)
        ("x is in ℝⁿ here.", "x is in n차원 실수 공간 here."),  # as before
        ("The term x^{n+1} is large.", "The term x의 n 플러스 1제곱 is large."),  # korean17: x^{n plus one}
        ("It is 3 + 4 cm here.", "It is three plus four centimeters here."),  # as before
    ],
)
def test_an_english_sentences_braced_exponent_is_read_whole(written: str, said: str) -> None:
    """The "+" of a braced exponent in an English sentence is no sum for the English rules: the exponent is read whole,
    as "ℝⁿ" is in one (korean17 made it "plus one" inside the braces, and the set and the braces went unread)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said", "lang"),
    [
        ("(5) V는 전압이다", "다섯 번째, V는 전압이다", "ko"),
        ("(5) kV는", "다섯 번째, 킬로볼트는", "ko"),
        ("(5) V is the voltage.", "다섯 번째, V is the voltage.", "ko"),
        ("(5) V is the voltage.", "(5) V is the voltage.", "en"),
    ],
)
def test_a_numbered_item_before_a_unit_letter_stays_an_item(written: str, said: str, lang: str) -> None:
    """The review's "(5) V": an item's number, then a letter (espeak-ng's en voice: five V); no rule takes the number for
    the amount of a unit (not "(five) volts", as an English sentence's "(5) volts" is). As korean17 read it."""
    assert spoken_form(written, lang) == said
