"""The review of stop 53's Korean readings (korean9): near misses its new patterns took for their own. Each comment
says what korean9 read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("다음과 같이 0 ≤ x ≤ 1로 제한한다", "다음과 같이 x는 0 이상 1 이하로 제한한다"),  # 다음과 같 x가
        ("제한 없이 0 < x < 1", "제한 없이 x는 0 초과 1 미만"),  # 제한 없 x가
        ("끊임없이 0 < x < 1", "끊임없이 x는 0 초과 1 미만"),  # 끊임없 x가
        ("많이 1 < n < 10", "많이 n은 1 초과 10 미만"),  # 많 n이
        ("가격이 1000원 < p < 5000원", "가격 p가 1000원 초과 5000원 미만"),  # a subject noun: as korean9
    ],
)
def test_an_adverbs_i_before_a_chain_is_no_subjects_particle(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("|x| ≤ 1인 구간의 길이는 2", "x의 절댓값이 1 이하인 구간의 길이는 2"),  # x의 길이가 1 이하인 …
        ("|x| < 1이면 곡선의 길이", "x의 절댓값이 1 미만이면 곡선의 길이"),  # x의 길이가
        ("길이가 3인 선분과 |y|", "길이가 3인 선분과 y의 절댓값"),  # y의 길이
        ("벡터 v의 길이 |v|", "벡터 v의 길이 v의 길이"),  # just before the bars: a length, as korean9
        ("문자열의 길이 |s| ≤ 100", "문자열의 길이 s의 길이가 100 이하"),
    ],
)
def test_a_length_word_elsewhere_in_the_sentence_leaves_the_absolute_value(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("a = 3, b = 2a", "a는 3, b는 2a"),  # a = 3, b = 2a: left to espeak, "a equals 3"
        ("a = 1 in R", "a는 1 in R"),  # a = 1 in R
        ("u = a to b", "u는 a to b"),  # u = a to b
        ("Set x = 5 first.", "Set x = five first."),  # an English sentence: as korean9
        ("x = 3 in a loop here.", "x = three in a loop here."),
    ],
)
def test_a_formulas_letter_a_is_no_english_article(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1.5m < 2", "1 점 오 미터 2 미만"),  # 1 점 오 미터이 2 미만
        ("5m ≤ 10이면", "5 미터 10 이하이면"),  # 5 미터이
        ("3h < 5", "세 시간 5 미만"),  # 세 시간가
        ("2g < 5", "2 그램 5 미만"),  # 2 그램가
        ("2x ≤ 1", "2x가 1 이하"),  # a coefficient's product: as korean9
    ],
)
def test_a_number_with_its_unit_before_a_bound_is_no_coefficients_product(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # "|x| ≤ Mᵢ" is read since stop 53, its index on M: tests/test_korean_reading_k10_leftovers.py
        ("x + 1 ≤ 2yᵢ", "x 더하기 1이 2y i 이하"),  # k11 (it was left, the sign unsaid)
        ("|x| ≤ M", "x의 절댓값이 M 이하"),  # as korean9
    ],
)
def test_a_bound_with_a_subscript_letter_is_left_whole(written: str, said: str) -> None:
    assert spoken(written) == said
