"""korean16: what korean15 left of the Korean reading, each against what korean15 read (the comment beside each
case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.english_numbers import english_number
from npu_worker.engine.korean_reading import spoken, spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "Ca²⁺ 이온",
            "C-A 투 플러스 이온",
        ),  # korean15: Ca의 2제곱⁺ 이온 (espeak: Ca 이온, the charge unsaid)
        ("Fe²⁺가 Fe³⁺로 산화된다.", "F-E 투 플러스가 F-E 쓰리 플러스로 산화된다."),
        ("Na⁺ 이온과 Cl⁻ 이온", "N-A 플러스 이온과 C-L 마이너스 이온"),  # korean15: Na⁺, Cl⁻ (unsaid)
        ("SO₄²⁻ 이온", "S-O포 투 마이너스 이온"),  # korean15: S-O포²⁻
        ("Ca²⁺은 뼈에 있다.", "C-A 투 플러스는 뼈에 있다."),  # the particle in 플러스's form
        ("The Ca²⁺ ion is small.", "The Ca two plus ion is small."),  # an English sentence's: English words
        # a power, a variable's or a set's sign, a symbol of no element: as before
        ("x² + y²", "x의 2제곱 더하기 y의 2제곱"),
        ("A²⁺", "A의 2제곱⁺"),
        ("x⁺", "x⁺"),
        ("ℤ⁺는", "양의 정수 집합은"),
        ("mol⁻¹", "mol의 마이너스 1제곱"),
    ],
)
def test_an_ions_charge_is_said_as_a_chemistry_lecturer_says_it(written: str, said: str) -> None:
    """A superscript digit and sign after a chemical formula is the ion's charge, not a power: a Korean lecturer says
    its size and sign in English words, C-A 투 플러스, F-E 쓰리 플러스, C-L 마이너스. Only a formula of element symbols;
    "A²⁺" (no element A) keeps korean15's power."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean15: as written (espeak spelled the sign's code point, "letter 211D n")
        ("x ∈ ℝⁿ₊", "x는 n차원 양의 실수 공간의 원소"),
        ("ℝⁿ", "n차원 실수 공간"),  # k15's case
        ("ℝ²는 평면입니다.", "2차원 실수 공간은 평면입니다."),  # k12's case, its particle in 공간's form
        ("x ∈ ℝⁿ이면", "x가 n차원 실수 공간의 원소이면"),
        ("ℝ³와 ℝ²", "3차원 실수 공간과 2차원 실수 공간"),  # the particle in 공간's form
        ("f: ℝⁿ → ℝ", "f: n차원 실수 공간에서 실수 집합"),
        ("∀x ∈ ℝⁿ, x > 0", "n차원 실수 공간의 모든 x에 대해, x 0 초과"),
        ("ℝ^{nm}", "nm차원 실수 공간"),  # korean15: 실수 집합의 나노미터제곱
        ("x ∈ ℝ^n", "x는 n차원 실수 공간의 원소"),  # korean15: x는 실수 집합의 원소^n
        ("x ∈ ℝ^{10}", "x는 10차원 실수 공간의 원소"),
        ("x ∈ ℂⁿ", "x는 n차원 복소수 공간의 원소"),
        # a set without a dimension, and an exponent of no dimension's form: as before
        ("x ∈ ℝ₊", "x는 양의 실수 집합의 원소"),
        ("x ∈ ℝ^n_x", "x는 실수 집합의 원소^n_x"),
        ("ℝᶜ", "실수 집합ᶜ"),
    ],
)
def test_a_number_sets_dimension_is_said_as_a_space(written: str, said: str) -> None:
    """A number set with a dimension, "ℝⁿ", "ℝ²", "ℝ^{nm}", is the space of that many dimensions: n차원 실수 공간, as a
    lecturer names it (lang=en: R n, `english_reading`); its positive half, "ℝⁿ₊", n차원 양의 실수 공간. The dimension
    is held as superscripts before a power's rule reads it (`korean_sets.dimensions_held`)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("x ∈ ℝ^{nm}", "x in R n m"), ("x ∈ ℝ^{n}", "x in R n")],  # korean15: x in R^{nm}, the braces to espeak
)
def test_lang_en_a_dimension_of_two_letters_in_braces_is_said(written: str, said: str) -> None:
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("It weighs 2.5 kg.", "It weighs two point five kilograms."),  # korean15: It weighs 2 점 오 킬로그램.
        ("They weigh 2.5 kg.", "They weigh two point five kilograms."),
        # an iterator's "it" in code, and a sentence with Hangul: as before
        ("for it in items: n = 0", "for it in items: n은 0"),
        ("It 무게는 2.5 kg.", "It 무게는 2 점 오 킬로그램."),
    ],
)
def test_a_sentence_opened_by_it_is_english(written: str, said: str) -> None:
    """A capitalized "It" or "They" counts among English's small words: "It weighs 2.5 kg." is an English sentence (one
    small word and a longer one, closed), its decimal and unit in English."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "for x in xs: total = 0.",
            "for x in xs: total은 0.",
        ),  # korean15: for x in xs: total = 0. (English "equals")
        ("if x in items: found = 1.", "if x in items: found는 1."),  # korean15: found = 1.
        ("for i in range(10): s = s + i.", "for i in range(10): s는 s 더하기 i."),  # korean15: s = s plus i.
        # without the period, and a formula's or an English sentence's: as before
        ("for x in xs: total = 0", "for x in xs: total은 0"),
        ("total = 0.", "total은 0."),
        ("x^2 is positive.", "x squared is positive."),
        ("a = 1 is true.", "a = one is true."),
    ],
)
def test_a_code_line_closed_by_a_period_reads_as_code(written: str, said: str) -> None:
    """A line of code, a block's keyword, its ":" and a statement after it, "for x in xs: total = 0.", is no English
    sentence for its period: it reads as without it, the formula's voice (k9, k10's "for x in xs: total = 0")."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "The battery is 3.7V.",
            "The battery is three point seven volts.",
        ),  # korean15: 3 point 7 volts (삼 point 칠)
        (
            "The speed is 5 km/h and 3 + 4 = 7.",
            "The speed is five kilometers per hour and three plus four = seven.",
        ),
        ("It ranges 10 - 20% in the test set.", "It ranges ten to twenty percent in the test set."),
        (
            "The value of 2^10 is 1024.",
            "The value of two to the power of ten is 1024.",
        ),  # a count after "is": Korean's
        (
            "In 2024 we grew by 1.25 here.",
            "In 2024 we grew by one point two five here.",
        ),  # a year alone: Korean's
        (
            "Send HTTP/1.1 to the worker.",
            "Send HTTP one point one to the worker.",
        ),  # rvk22: a name's version in one voice
        # a Korean sentence and a mantissa: the Korean rules', as before; a bound's number English words since korean18
        ("배터리는 3.7V입니다.", "배터리는 3 점 칠 볼트입니다."),
        ("The rate is 1.5e-3 here.", "The rate is 1 점 오 곱하기 10의 마이너스 3제곱 here."),
        (
            "The score is x >= 90 in the test.",
            "The score is x greater than or equal to ninety in the test.",
        ),  # korean17: x 90 이상 (korean18: an English sentence's bound in English words)
    ],
)
def test_an_english_sentences_numbers_in_english_forms_are_english_words(written: str, said: str) -> None:
    """The Korean voice says digits in Korean and an English word in English (espeak-ng's ko voice: "3 point 7 volts"
    sˈɐm pˈɔɪnt tʃhˈir vˈəʊlts, "three point seven volts" θɹˈiː pˈɔɪnt sˈɛvən vˈəʊlts): an English sentence's numbers
    in the forms its rules made English, a decimal's "point", a number before a unit's name, beside "plus", "minus",
    "to", "=" or in a power, are English words (`english_numbers`); a year, a count or a version elsewhere stays the
    Korean rules' (no English rule reads it, no redesign)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("digits", "words"),
    [
        ("0", "zero"),
        ("13", "thirteen"),
        ("21", "twenty-one"),
        ("105", "one hundred five"),
        ("2024", "two thousand twenty-four"),
        ("1000001", "one million one"),
        ("007", "007"),  # a leading zero: as written
        (
            "1234567890",
            "one billion two hundred thirty-four million five hundred sixty-seven thousand eight hundred ninety",
        ),
        ("1234567890123", "1234567890123"),  # over twelve digits: as written (korean17; korean16: over nine)
    ],
)
def test_english_number_words(digits: str, words: str) -> None:
    assert english_number(digits) == words
