"""korean21: the leftovers of korean20, each case against what korean20 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean20: as x가 0으로 minus is 1 (the Korean rules' particles in an English sentence)
        (
            "극한은 다음과 같다. The limit as x→0⁻ is 1.",
            "극한은 다음과 같다. The limit as x approaches 0 minus is 1.",
        ),
        (
            "The limit as n → ∞ is zero.",
            "The limit as n approaches infinity is zero.",
        ),  # korean20: n이 무한대로
        ("The limit as x → a is L.", "The limit as x approaches a is L."),  # korean20: x가 a로
        ("Here A → B is a map.", "Here A to B is a map."),  # korean20: A에서 B
        ("We map x → 2x here.", "We map x to 2x here."),  # korean20: x에서 2x
        ("Here p ⇒ q is true.", "Here p implies q is true."),  # korean20: p면 q
        # a Korean sentence's arrows as before
        ("x→0일 때 극한값은 1입니다.", "x가 0으로 갈 때 극한값은 1입니다."),
        ("수집 → 전처리 → 학습", "수집, 전처리, 학습"),
    ],
)
def test_an_english_sentence_s_arrow_is_said_in_english(written: str, said: str) -> None:
    """An arrow in an English sentence of a Korean text in English words: one voice a sentence."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("설탕을 넣는다. Add 1/2 cup.", "설탕을 넣는다. Add one half cup."),  # korean20: Add 2분의 1 cup.
        ("Heat 2.5 liters.", "Heat two point five liters."),  # korean20: Heat 2 점 오 리터.
        ("Wait 10 ms here.", "Wait ten milliseconds here."),  # one small word, as before
        # a name, a formula and a Korean report's period stay the Korean rules'
        ("Tesla Model 3.", "Tesla Model 3."),
        ("Let x = 3.", "Let x는 3."),
        ("Revenue grew 5% YoY.", "Revenue grew 5 퍼센트 전년 대비."),
    ],
)
def test_a_short_english_sentence_is_taken_for_english(written: str, said: str) -> None:
    """A step of a recipe or a manual, "Add 1/2 cup.", has none of English's small words but is English: one voice."""
    assert spoken_form(written, "ko") == said
