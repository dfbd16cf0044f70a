"""rvk21: a review of korean21's readings, each case against what korean21 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Meet me at 24:00 here.", "Meet me at 스물네 시 here."),  # korean21: twenty-four to 00
        (
            "The shop closes at 24:30 here.",
            "The shop closes at 스물네 시 30분 here.",
        ),  # korean21: twenty-four to thirty
        ("The ratio is 007:1 here.", "The ratio is 007 대 1 here."),  # korean21: 007 to one
        # a ratio as korean21 read it
        ("Mix them 3:2 in the bowl.", "Mix them three to two in the bowl."),
        ("The mix is 0:1 here.", "The mix is zero to one here."),
        ("It runs 25:10 here.", "It runs twenty-five to ten here."),
    ],
)
def test_a_day_s_end_in_an_english_sentence_is_no_ratio(written: str, said: str) -> None:
    """ "24:30" is a clock the Korean rules read (스물네 시 30분), not a ratio of twenty-four to thirty; a term with a
    leading zero is no ratio's either (its "00" was left as digits)."""
    assert spoken_form(written, "ko") == said
