"""Formulas and code on a lecture's slides read as a lecturer says them (`korean_reading`): arithmetic,
powers, formulas with variables, bounds, equals signs, and what only looks like them (a dash between
words, a compound assignment, stars that emphasise nothing, a code name's index). The readings of the
rest of a lecture's text are tested in `test_korean_lecture_reading.py`.

Each reading is phonemized by the real espeak tokenizer and compared with the words a Korean lecturer
says; the comment says what espeak said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10^3 배", "10의 3제곱 배"),  # espeak: "십 삼 배", ten three
        ("10³ 배", "10의 3제곱 배"),
        ("10^-3 m", "10의 마이너스 3제곱 미터"),
        ("10⁻³", "10의 마이너스 3제곱"),
    ],
)
def test_a_power_is_read_as_a_power(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2 + 3 = 5", "2 더하기 3은 5"),  # espeak: English "plus" and "equals"
        ("5 - 3 = 2, 5-3=2", "5 빼기 3은 2, 5 빼기 3은 2"),  # the minus was dropped: "오 삼"
        ("3x3 행렬", "3 곱하기 3 행렬"),  # "ex"
        ("P = V × I", "P는 V 곱하기 I"),  # the sign between letters was said as nothing
        ("전력 = 전압 × 전류", "전력은 전압 곱하기 전류"),
        ("2^10 = 1024, 10 = 5 + 5", "2의 10제곱은 1024, 10은 5 더하기 5"),
        ("L = 5", "L은 5"),  # 엘은
    ],
)
def test_arithmetic_is_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["0x1F", "a == b", "배터리 - 30종", "3-5"])
def test_what_is_no_arithmetic_is_left(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2x + 3 = 7", "2x 더하기 3은 7"),  # espeak: English "plus" after a variable
        ("a - b = c", "a 빼기 b는 c"),  # the minus was dropped
        ("(a + b) × 2", "(a 더하기 b) 곱하기 2"),
        ("삼성 + LG", "삼성 플러스 LG"),
        ("속도 ×2, 1.5× 빠르다", "속도 2배, 1 점 오배 빠르다"),  # the sign said nothing
    ],
)
def test_formulas_with_variables_and_times_signs_are_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["Plan A - 설명", "배터리 - 30종", "- 항목"])
def test_a_dash_between_words_is_no_minus(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2**10", "2의 10제곱"),
        ("my*var", "my var"),
        ("my__var", "my var"),
        ("**전압**과 *저항*", "전압과 저항"),
    ],
)
def test_stars_that_emphasise_nothing_still_part_their_neighbours(written, said):
    """ "2**10" was read 210 (이백십) and "a*b" as the word "ab": only emphasis pairs are dropped whole ("2**10" is a
    Python power since k11, 2의 10제곱)."""
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["x₂ = 3", "x² = 4", "٣ = 3", "= 5", "(a) = b", "3 ="])
def test_an_equals_sign_after_any_character_is_read(text):
    """ "x₂ = 3" raised AttributeError: "₂" is a digit to str.isdigit() but not to the regex's \\d."""
    assert "=" not in spoken(text)


@pytest.mark.parametrize("text", ["x += 1", "x *= 2", "x /= 2", "a |= b"])  # "x -= 1": korean62, minus equals
def test_a_compound_assignment_is_no_equals_sign(text):
    """ "x += 1" was read "x +는 1": the "=" of an operator is no topic's 은/는."""
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("SOC < 20%", "SOC 20% 미만"),  # espeak said nothing for the sign: "SOC 20%"
        ("온도 > 45℃", "온도 45℃ 초과"),
        ("≥ 80%, ≤ 1,000원", "80% 이상, 1000원 이하"),
        ("20 ≤ x ≤ 40", "x는 20 이상 40 이하"),
    ],
)
def test_a_bound_is_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["<그림 1> 구조", "<1> 서론 <12> 본론", "p->next", "3 < 5"])
def test_brackets_arrows_and_comparisons_of_numbers_are_no_bound(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    "text", ["배열 arr[1]은 두 번째 원소", "list[0] 값", "data[12] 출력", "배열[0]의 값"]
)
def test_an_index_of_a_code_name_is_no_citation(text):
    """ "arr[1]은" was read "arr은", the index dropped as if it were a citation's mark."""
    assert spoken(text) == text
