"""rvk22: a review of rvk21's readings, each case against what rvk21 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The limit as x → +∞ is 0.", "The limit as x approaches plus infinity is 0."),  # rvk21: x to +무한대
        ("The limit as x→+∞ is 0.", "The limit as x approaches plus infinity is 0."),
        ("The limit as N → ∞ is 0.", "The limit as N approaches infinity is 0."),  # rvk21: N to 무한대
        (
            "The limit as N → -∞ is 0.",
            "The limit as N approaches minus infinity is 0.",
        ),  # rvk21: N to -무한대
        # as rvk21 read them: a small letter's limit, a capital's map
        ("The limit as x → -∞ is 0.", "The limit as x approaches minus infinity is 0."),
        ("The limit as x→∞ is 0.", "The limit as x approaches infinity is 0."),
        ("Here A → B is a map.", "Here A to B is a map."),
    ],
)
def test_a_limit_to_a_signed_infinity_or_a_capital_s_limit_is_english(written: str, said: str) -> None:
    """A limit at plus infinity, or of a capital letter, in an English sentence: rvk21 said "→ -∞" in English words
    but left "+∞" and a capital's "N → ∞" to a map's "to" and the Korean rules' 무한대 (Korean in English)."""
    assert spoken_form(written, "ko") == said
