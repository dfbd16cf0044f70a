"""Review of korean16: what its charges and an English sentence's numbers read wrongly, each against what korean16
read (the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.english_reading import spoken as english_spoken
from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "The temperature is −5 degrees.",
            "The temperature is minus five degrees.",
        ),  # korean16: −five (sign unsaid)
        (
            "The temperature is -5 degrees.",
            "The temperature is minus five degrees.",
        ),  # korean16: 마이너스 5 degrees
        ("The value is 3 - 4 volts.", "The value is three minus four volts."),  # a spaced minus as before
        # a hyphen between digits, a date, a letter's: the Korean rules' as before
        ("The dates are 2024-01-05 here.", "The dates are 2024년 1월 5일 here."),
        ("The value is x-5 volts.", "The value is x-5 volts."),
    ],
)
def test_a_sign_before_an_english_number_is_said_minus(written: str, said: str) -> None:
    """An English sentence's number before a unit is said in English: its sign glued before it too, not a Korean
    마이너스 before English words, nor a "−" left before a word (the Korean rules read it only before a digit)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("B⁻ⁿ 은 역행렬의 거듭제곱이다.", "B⁻ⁿ 은 역행렬의 거듭제곱이다."),  # korean16: B 마이너스ⁿ
        ("B⁻ᵀ 는 전치 역행렬이다.", "B⁻ᵀ 는 전치 역행렬이다."),  # korean16: B 마이너스ᵀ
        ("K⁺ⁿ 이다.", "K⁺ⁿ 이다."),  # korean16: K 플러스ⁿ
        ("B⁻ˣ 이다.", "B⁻ˣ 이다."),  # korean16: B 마이너스ˣ (ˣ a modifier letter, U+02E3)
        ("Na⁺의 농도", "N-A 플러스의 농도"),  # an ion still
    ],
)
def test_a_superscript_letter_after_the_sign_is_a_powers_not_a_charge(written: str, said: str) -> None:
    """ "B⁻ⁿ", "B⁻ᵀ" are a matrix's powers (B is boron's symbol too): its sign and letter stay together, as before
    korean16, not a charge with the exponent's letter left over."""
    assert spoken(written) == said


def test_a_superscript_letter_after_the_sign_in_english() -> None:
    assert english_spoken("Let B⁻ⁿ be the matrix.") == "Let B⁻ⁿ be the matrix."  # korean16: B minusⁿ
    assert english_spoken("The O²⁻ ion.") == "The O two minus ion."


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "전자 e⁻는 음전하를 띤다.",
            "전자 e 마이너스는 음전하를 띤다.",
        ),  # korean16: e⁻ (espeak: e, the sign unsaid)
        (
            "Cu²⁺ + 2e⁻ → Cu",
            "C-U 투 플러스 플러스 2 e 마이너스에서 C-U",
        ),  # korean16: 2e⁻ (rvk22: C-U as the ion)
        ("The e⁻ moves to the anode.", "The e minus moves to the anode."),  # korean16: e⁻
        # a power of e as before
        ("e⁻ˣ 는 감소한다.", "e⁻ˣ 는 감소한다."),
        ("e⁻¹ 이다.", "e의 마이너스 1제곱 이다."),
    ],
)
def test_an_electron_is_said_as_its_charge(written: str, said: str) -> None:
    """A half-reaction's electron, "e⁻", "2e⁻", is said as a lecturer says it, e 마이너스, not an e alone."""
    assert spoken(written) == said


def test_an_electron_in_english() -> None:
    assert english_spoken("Cu²⁺ + 2e⁻ → Cu") == "Cu two plus + 2 e minus → Cu"  # korean16: 2e⁻


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("total = 0", "total은 0"),  # korean16: total는 (토탈 ends closed)
        ("for x in xs: total = 0.", "for x in xs: total은 0."),
        ("name = 3", "name은 3"),  # korean16: name는 (네임)
        ("a=1&token=s3cret-value", "a는 1&token은 s3cret-value"),  # korean16: token는 (토큰)
        # an open last syllable, a unit's abbreviation, a letter alone: as before
        ("count = 5", "count는 5"),  # 카운트
        ("5 km는 멀다.", "5 킬로미터는 멀다."),
        ("x = 3", "x는 3"),
    ],
)
def test_the_particle_after_an_english_word_follows_its_spoken_last_sound(written: str, said: str) -> None:
    """Korean picks 은/는 by the last sound said: an English word ending in -l, -m, -n, -ng, -le, -me, -ne is said
    closed as Korean borrows it (토탈, 네임, 토큰), so 은, as a lecturer says; not 는, as for an open vowel."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean16: 1 point 8e plus 03 volts (the mantissa's sign a sum's, the Korean voice's 03)
        ("The value is 1.8e+03 volts.", "The value is 1 점 팔 곱하기 10의 3제곱 volts."),
        ("The value is 2e+5 here.", "The value is 2 곱하기 10의 5제곱 here."),  # korean16: 2e plus 5
        ("값은 1.8e+03이다.", "값은 1 점 팔 곱하기 10의 3제곱이다."),  # korean16: 10의 03제곱
        ("값은 1e-03이다.", "값은 1 곱하기 10의 마이너스 3제곱이다."),  # korean16: 마이너스 03제곱
        # a sum after a letter e: as before
        ("This is 2e+x here.", "This is 2e plus x here."),
        ("This is a+b here.", "This is a plus b here."),
    ],
)
def test_an_exponents_plus_sign_and_leading_zero(written: str, said: str) -> None:
    """ "1.8e+03", as a program prints it, is 1.8 times ten to the third: one number the Korean rules read whole, as
    they read "1.5e-3" (korean14), its exponent's leading zero unsaid."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ ℝ^{n+1}", "x는 n 플러스 1차원 실수 공간의 원소"),  # korean16: x ∈ 실수 집합의 n 플러스 1제곱
        (
            "ℝ^{n+1}은 공간이다.",
            "n 플러스 1차원 실수 공간은 공간이다.",
        ),  # korean16: 실수 집합의 n 플러스 1제곱은
        (
            "x ∈ ℝ^{n-1}이면",
            "x가 n 마이너스 1차원 실수 공간의 원소이면",
        ),  # korean16: 실수 집합의 n 마이너스 1제곱
        ("ℝ^{n+1}₊", "n 플러스 1차원 양의 실수 공간"),  # korean16: 실수 집합의 n 플러스 1제곱₊
        # a dimension of one letter or two, a positive half: as korean16
        ("x ∈ ℝⁿ₊", "x는 n차원 양의 실수 공간의 원소"),
        ("x ∈ ℝ^{nm}", "x는 nm차원 실수 공간의 원소"),
        ("ℤ⁺는", "양의 정수 집합은"),
    ],
)
def test_a_number_sets_dimension_one_more_or_less(written: str, said: str) -> None:
    """ "ℝ^{n+1}" is the space one dimension above ℝⁿ, n 플러스 1차원 실수 공간, not a power of the set."""
    assert spoken(written) == said
