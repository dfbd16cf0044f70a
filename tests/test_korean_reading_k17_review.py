"""Review of korean16's leftovers (korean17): what a Korean text still read wrongly, each against what korean16 read
(the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "확률은 (1-a)¹ 이다.",
            "확률은 (1 빼기 a)의 1제곱 이다.",
        ),  # korean16: (1-a)¹ (a sub-question's label)
        ("(1-a)⁴ 을 구하라.", "(1 빼기 a)의 4제곱 을 구하라."),  # korean16: (1 빼기 a)⁴
        ("(x+1)⁵ 을 전개하라.", "(x 플러스 1)의 5제곱 을 전개하라."),  # korean16: (x 플러스 1)⁵
        ("(1-a)¹⁰ 이다.", "(1 빼기 a)의 10제곱 이다."),  # korean16: (1 빼기 a)¹⁰
        ("(1-a)² 을 구하라.", "(1 빼기 a)의 2제곱 을 구하라."),  # as before
        ("(2020)¹ 참고", "(2020)¹ 참고"),  # a year's footnote, as before
        ("(GPT-4)⁴ 이다", "(GPT-4)⁴ 이다"),  # a name's footnote, as before
        ("(1-a), (1-b)에 답하시오", "(1-a), (1-b)에 답하시오"),  # sub-questions' labels, as before
    ],
)
def test_any_superscript_digit_after_a_formulas_bracket_is_its_power(written: str, said: str) -> None:
    """ "(1-a)¹", "(1-a)⁴" are powers as "(1-a)²" is: ¹²³ are Latin-1's U+00B9/B2/B3, ⁴-⁹ U+2074-2079, and
    korean16 read only ²³ after a bracket (and took "(1-a)¹" for a label, its ¹ outside the class ⁰-⁹)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The year 2024 to 2025 was long.", "The year twenty twenty-four to twenty twenty-five was long."),
        # korean16: two thousand twenty-four to two thousand twenty-five
        ("It ran from 1990 to 2000 here.", "It ran from nineteen ninety to two thousand here."),
        ("The years 1905 and 1910 were hard.", "The years nineteen oh five and nineteen ten were hard."),
        # korean16: 1905 and 1910 (the Korean voice)
        # as before: a unit's numbers, a span running back, a year alone
        (
            "It ran from 1500 to 2000 volts here.",
            "It ran from one thousand five hundred to two thousand volts here.",
        ),
        (
            "It ran from 2005 to 1990 here.",
            "It ran from two thousand five to one thousand nine hundred ninety here.",
        ),
        ("In 2024 we grew.", "In 2024 we grew."),
    ],
)
def test_a_span_of_years_in_an_english_sentence_is_said_as_years(written: str, said: str) -> None:
    """A span of two four-digit years (1100-2099, the later one last) after a word that dates it (year, from, between,
    in, since, during), no unit after it, is said as a lecturer says years, twenty twenty-four, not a count's two
    thousand twenty-four; a year alone stays the Korean rules' (korean16's boundary)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("It costs 007 volts here.", "It costs zero zero seven volts here."),  # korean16: 007 volts (공공칠)
        ("It is 00.5 volts here.", "It is zero zero point five volts here."),  # korean16: 00 point five
        (
            "It is 1234567890 volts here.",
            "It is one billion two hundred thirty-four million five hundred sixty-seven thousand eight hundred ninety"
            " volts here.",
        ),  # korean16: 1234567890 volts (the Korean voice's digits)
        (
            "It is 12345678901234 volts here.",
            "It is one two three four five six seven eight nine zero one two three four volts here.",
        ),  # korean16: as written
        ("The value is 0.5 volts.", "The value is zero point five volts."),  # as before
    ],
)
def test_an_english_number_before_a_unit_is_english_whatever_its_digits(written: str, said: str) -> None:
    """A number before a unit's name in an English sentence is English words however it is written: a leading zero or
    over twelve digits, which `english_number` cannot say, digit by digit in English (korean16 left them, and over nine
    digits, to the Korean voice: 공공칠 volts)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("It reads 5-10 volts here.", "It reads five to ten volts here."),  # korean16: 5-10 volts
        ("It reads 5-10 V here.", "It reads five to ten volts here."),  # korean16: 5-10 volts
        (
            "It ranges 10-20% in the test.",
            "It ranges ten to twenty percent in the test.",
        ),  # korean16: 10-20 percent
        # as before: a range running down, a decimal's, a date, a list's numbers, a Korean sentence's
        ("The loss is 5-3 dB here.", "The loss is 5-3 decibels here."),
        ("It reads 1.5-2.5 V here.", "It reads 1 점 오-2 점 오 volts here."),
        ("The dates are 2024-01-05 here.", "The dates are 2024년 1월 5일 here."),
        ("See items 3-5 here.", "See items 3-5 here."),
        ("배터리는 3-5 V입니다.", "배터리는 3에서 5 볼트입니다."),
        # a whole number in brackets before a unit (korean16: (마이너스 3) volts)
        ("It reads (−3) volts here.", "It reads (minus three) volts here."),
        ("It reads (5) volts here.", "It reads (five) volts here."),
        ("배터리는 (−3) V입니다.", "배터리는 (마이너스 3) V입니다."),  # a Korean sentence's as before
    ],
)
def test_an_unspaced_range_before_a_unit_in_an_english_sentence_is_said_to(written: str, said: str) -> None:
    """Item (2) of the review, by rvk16's rule (a number in a form the English rules made English is English words)
    and korean16's `english_numbers`: a whole number's range before a unit's name, "5-10 volts", is said "to", as a
    spaced one was (k12), and one in brackets, "(−3) volts". Decided and left, the boundary: "§14.2", "1.5e-3"
    and a decimal's range "1.5-2.5 V" stay the Korean rules' (a section, a mantissa, read whole by the Korean rules, rvk14;
    "$3.50", "3:30", "1/2" and "p < 0.05" English words since korean18)."""
    assert spoken(written) == said
