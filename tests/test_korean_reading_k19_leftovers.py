"""korean19: what korean18 and its review (rvk18) left of the Korean and English reading, each against what the text
read before (the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 5 ohm.", "x 5 ohm 미만."),  # korean18: x 5 미만 ohm.
        ("x < 5 bits 이면", "x 5 bits 미만 이면"),  # korean18: x 5 미만 bits 이면
        ("x ≥ 3 volts", "x 3 volts 이상"),  # korean18: x 3 이상 volts
        ("x < 5 days.", "x 5 days 미만."),  # korean18: x 5 미만 days.
        # as korean18 read them: a small word that is no unit stays the sentence's
        ("x < 5 here.", "x less than five here."),  # korean21: English (x 5 미만 here.)
        ("결과는 p < 0.05 here.", "결과는 p 0 점 영오 미만 here."),
        ("x < 10 dBm이면", "x 10 dBm 미만이면"),
    ],
)
def test_a_unit_written_out_after_a_bounds_amount_is_its_unit(written: str, said: str) -> None:
    """A unit in small letters apart from a bound's amount, before a space or a stop, is the amount's: the bound's word
    after it (korean18 took any small word there for the sentence's, "here." and "ohm." alike)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("비율은 1:10입니다", "비율은 1 대 10입니다"),  # korean18: 비율은 한 시 10분입니다
        ("축척 1:10", "축척 1 대 10"),  # korean18: 축척 한 시 10분
        ("A와 B의 비는 1:10입니다", "A와 B의 비는 1 대 10입니다"),  # korean18: 비는 한 시 10분
        ("scale 1:10", "scale 1 대 10"),  # korean18: scale 한 시 10분
        ("The ratio is 1:10.", "The ratio is one to ten."),  # korean18: one ten
        ("The scale of 1:10 is used.", "The scale of one to ten is used."),  # korean18: one ten
        # as korean18 read them: a time of day elsewhere, after a ratio's word further back too
        ("회의는 1:10에 시작합니다", "회의는 한 시 10분에 시작합니다"),
        ("비율을 설명하고 3:30에 끝냅니다", "비율을 설명하고 세 시 30분에 끝냅니다"),
        ("We met at 3:30.", "We met at three thirty."),
        ("1:10 축척", "1 대 10 축척"),
    ],
)
def test_a_colon_after_a_ratios_word_is_a_ratio(written: str, said: str) -> None:
    """ "1:10" after 비율, 축척, 비, ratio or scale is a ratio, 1 대 10 (one to ten in an English sentence), not a time of
    day."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean18: 1000 volts (천, the Korean voice's), less than 1000
        ("It takes 1,000 volts.", "It takes one thousand volts."),
        ("The limit is x < 1,000 here.", "The limit is x less than one thousand here."),
        (
            "The limit is x < 1,000, y > 3 here.",
            "The limit is x less than one thousand, y greater than three here.",
        ),
        ("It takes 1,000.5 volts.", "It takes one thousand point five volts."),  # korean18: 1000 점 오 volts
        # as korean18 read them
        ("It costs $1,000.", "It costs one thousand dollars."),
        ("The values are 1,2,3 here.", "The values are 1,2,3 here."),
        ("전압은 1,000 V입니다", "전압은 1000 볼트입니다"),
    ],
)
def test_thousands_grouped_in_an_english_sentence_are_said_in_english(written: str, said: str) -> None:
    """An English sentence's "1,000" before a unit or after a bound is one number in English words, as "1000" is."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("lim x→0⁻", "ko", "lim x에서 0 마이너스"),  # korean18: 0⁻, espeak's 0 hyphen (korean20: Korean)
        ("x→a⁻", "ko", "x에서 a 마이너스"),  # korean18: a⁻ (a hyphen)
        ("x → 0⁻일 때", "ko", "x에서 0 마이너스일 때"),  # korean18: 0⁻일 때
        ("f(0⁻)", "ko", "f(0 마이너스)"),  # korean18: f(0⁻)
        ("lim x→0⁻", "en", "lim x→0 minus"),  # korean18: 0⁻ (zero hyphen)
        ("lim x→0⁺", "ko", "lim x에서 0 플러스"),  # korean18: 0⁺ (espeak's English plus)
        # as korean18 read them: a power, an ion, an electron
        ("10⁻³", "ko", "10의 마이너스 3제곱"),
        ("e⁻ˣ 는 감소한다.", "ko", "e⁻ˣ 는 감소한다."),
        ("2e⁻", "ko", "2 e 마이너스"),
        ("Cl⁻", "en", "Cl minus"),
    ],
)
def test_a_one_sided_limits_minus_is_said_minus(written: str, lang: str, said: str) -> None:
    """A "⁻" on a number or a lone letter with nothing after it, a left limit's, is said minus (espeak-ng says "⁻" as
    "hyphen"), in a Korean sentence 마이너스 as "0⁺" 플러스 (korean20)."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean18: V⁺ (espeak: English plus) … V 마이너스
        ("V⁺ 단자와 V⁻ 단자", "V 플러스 단자와 V 마이너스 단자"),
        ("S⁻와 S⁺", "S 마이너스와 S 플러스"),  # korean18: S 마이너스와 S⁺
        # as korean18 read them: no single capital's minus in the text, its plus left to espeak
        ("V⁺ 단자", "V⁺ 단자"),
        ("클로저 C⁺는 집합입니다.", "클로저 C⁺는 집합입니다."),
        ("V⁻ 단자", "V 마이너스 단자"),
    ],
)
def test_a_single_capitals_plus_beside_its_minus_is_said_in_the_same_voice(written: str, said: str) -> None:
    """A text that says a single capital's minus 마이너스 says its plus 플러스, one line in one voice."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2H₂SO₄", "2 H투S-O포"),  # korean18: 2H₂S-O포 (its first part to espeak's code-point names)
        ("2H₂O", "2 H투O"),  # korean18: 2H₂O
        ("Fe₂O₃", "F-E투O쓰리"),  # korean18: Fe₂O쓰리
        ("Fe₂O₃는 녹이다", "F-E투O쓰리는 녹이다"),  # korean18: Fe₂O쓰리는
        ("CaCO₃", "C-A-C-O쓰리"),  # korean18: CaCO₃
        ("C₆H₁₂O₆", "C식스H트웰브O식스"),  # korean18: C₆H₁₂O식스
        ("C₁₂H₂₂O₁₁", "C트웰브H트웬티투O일레븐"),  # korean18: C₁₂H₂₂O일레븐
        # as korean18 read them: capitals with single counts, no count, no element's symbol, a variable's index
        ("H₂SO₄", "H투S-O포"),
        ("CO₂", "C-O투"),
        ("C₂H₅OH", "C투H파이브O-H"),
        ("NaCl", "NaCl"),
        ("Xy₂", "Xy₂"),
        ("x₁₂", "x₁₂"),
    ],
)
def test_a_formula_with_a_coefficient_a_two_letter_element_or_a_two_digit_count_is_read_whole(
    written: str, said: str
) -> None:
    """Each element spelled, its count in English words, the coefficient a number apart, as "H₂SO₄" is read."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        (
            "It holds for x ‹ 2π.",
            "ko",
            "It holds for x less than two pi.",
        ),  # korean18: x 2파이 미만 (Korean words)
        ("It holds for x < 2π.", "ko", "It holds for x less than two pi."),  # korean18: less than 2파이
        ("I <3 you", "ko", "I heart you"),  # korean18: I 3 미만 you
        ("I <3 you so much.", "ko", "I heart you so much."),  # korean18: I less than three you so much.
        ("We <3 Python.", "en", "We heart Python."),  # korean18: We <3 Python. (espeak: We three Python)
        ("Array<5> x;", "ko", "Array<5> x;"),  # korean18: Array 5 미만 미만 x;
        ("std::array<int, 5> a;", "ko", "std::array<int, 5> a;"),  # korean18: std::array<int, 5 미만 a;
        # as korean18 read them
        ("x ‹ 2π", "ko", "x 2파이 미만"),
        ("le ‹ mot ›", "ko", "le ‹ mot ›"),
        ("x<3 is true.", "ko", "x less than three is true."),
        ("n <3 times", "ko", "n 3 미만 times"),
        ("We use Array<5> in the code.", "ko", "We use Array<5> in the code."),
    ],
)
def test_a_heart_or_a_generic_type_is_no_comparison_and_an_english_bound_on_pi_is_english(
    written: str, lang: str, said: str
) -> None:
    """ "<3" between a pronoun and a word is a heart and a name's "<5>" a generic type's brackets (no bound's words);
    an English sentence's "‹" is its "<", and π after its "less than" is said pi."""
    assert spoken_form(written, lang) == said
