"""The misreadings of Korean lecture text left by earlier rounds (`korean_reading`, `korean_formulas`,
`korean_marks`, `sentence_ends`), each beside text that only looks like it and reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("행렬 A^T 를 곱한다", "행렬 A의 전치 를 곱한다"),  # it was A의 T제곱: a transpose, no power
        ("x^T y", "x의 전치 y"),
    ],
)
def test_a_letters_power_of_t_is_its_transpose(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("2^T", "2의 T제곱"), ("e^x", "e의 x제곱"), ("10^3", "10의 3제곱"), ("A^2", "A의 2제곱")],
)
def test_other_powers_are_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("매출▲3%", "매출 증가 3 퍼센트"),  # the sign glued to its word was said not at all
        ("영업이익▼2억 원", "영업이익 감소 2억 원"),
        ("손익△5억", "손익 마이너스 5억"),
    ],
)
def test_a_reports_sign_glued_to_its_word_is_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("시즌▲3대 전략", "시즌▲3대 전략"), ("▲3대 전략", "▲3대 전략"), ("▲3.5%", "증가 3 점 오 퍼센트")],
)
def test_a_glued_sign_before_no_amount_and_a_spaced_one_read_as_before(written, said):
    assert spoken(written) == said
