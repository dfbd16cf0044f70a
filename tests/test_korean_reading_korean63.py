"""Stop 61's reading leftovers its reviews found (korean63), each against what the code before read (the comment beside
each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("ü 발음", "ko", "ü 발음"),  # korean62: u 더블 닷 발음
        ("Ä는 독일어 글자다.", "ko", "Ä는 독일어 글자다."),  # korean62: A 더블 닷은
        ("ā", "ko", "ā"),  # korean62: a 바
        ("ā는 1성이다.", "ko", "ā는 1성이다."),  # korean62: a 바는
        ("Ō사카", "ko", "Ō사카"),  # korean62: O 바사카
        ("ñ 발음", "ko", "ñ 발음"),  # korean62: n 틸드 발음
        ("ż는 폴란드어 글자다.", "ko", "ż는 폴란드어 글자다."),  # korean62: z 닷은
        ("The vowel ü is rounded.", "ko", "The vowel ü is rounded."),  # korean62: u double dot
        ("The letter ā is long.", "en", "The letter ā is long."),  # korean62: a bar
        # as korean62: a formula's letter, or a language's letter beside an operator or with a power
        ("ā = 3", "ko", "a 바는 3"),
        ("1 - ā", "ko", "1 빼기 a 바"),
        ("ż = v", "ko", "z 닷은 v"),
        ("ā²", "ko", "a 바의 2제곱"),
        ("ȳ와 x̄의 차이", "ko", "y 바와 x 바의 차이"),
        ("ẋ는 속도다.", "ko", "x 닷은 속도다."),
        ("θ̇는 각속도이다.", "ko", "세타 닷은 각속도이다."),
        ("a⃗ = F⃗/m", "ko", "a 벡터는 F 벡터/m"),
        ("ā = 3", "en", "a bar = 3"),
    ],
)
def test_a_language_s_letter_is_no_formula_s_accent(text: str, lang: str, said: str) -> None:
    """korean62 read a language lesson's letter as a formula letter's accent: "ü 발음" heard as u 더블 닷 발음."""
    assert spoken_form(text, lang) == said
