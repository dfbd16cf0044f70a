"""Review of korean62's own changes (rvk62): lookalikes of its new rules, each against what korean62 read (the comment
beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("x̄² = 3", "ko", "x 바의 2제곱은 3"),  # korean62: x 바는 3 (the power dropped as a word's footnote)
        ("σ̂²을 구한다.", "ko", "시그마 햇의 2제곱을 구한다."),  # korean62: 시그마 햇을
        ("x̄^2 = 3", "ko", "x 바의 2제곱은 3"),  # korean62: x 바^2는 3
        ("x̂³", "ko", "x 햇의 3제곱"),  # korean62: x 햇
        (
            "The variance σ̂² is 3. 그렇다.",
            "ko",
            "The variance sigma hat squared is 3. 그렇다.",
        ),  # korean62: 의 2제곱
        ("The mean x̄² is 3.", "en", "The mean x bar squared is 3."),  # korean62: x bar²
        ("x̄⁴", "en", "x bar to the power of 4"),  # korean62: x bar⁴
        # as before: no power, a particle
        ("x̄는 평균이다.", "ko", "x 바는 평균이다."),
        ("p̂ = 0.4", "en", "p hat = 0.4"),
    ],
)
def test_an_accented_letter_s_power(text: str, lang: str, said: str) -> None:
    """korean62 named the accent in Korean and then took the power after 바 for a word's footnote: x̄² heard as x 바."""
    assert spoken_form(text, lang) == said
