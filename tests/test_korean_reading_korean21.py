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
