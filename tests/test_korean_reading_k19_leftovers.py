"""korean19: what korean18 and its review (rvk18) left of the Korean and English reading, each against what the text
read before (the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 5 ohm.", "x 5 ohm 미만."),  # korean18: x 5 미만 ohm.
        ("x < 5 bits 이면", "x 5 bits 미만 이면"),  # korean18: x 5 미만 bits 이면
        ("x ≥ 3 volts", "x 3 volts 이상"),  # korean18: x 3 이상 volts
        ("x < 5 days.", "x 5 days 미만."),  # korean18: x 5 미만 days.
        # as korean18 read them: a small word that is no unit stays the sentence's
        ("x < 5 here.", "x 5 미만 here."),
        ("결과는 p < 0.05 here.", "결과는 p 0 점 영오 미만 here."),
        ("x < 10 dBm이면", "x 10 dBm 미만이면"),
    ],
)
def test_a_unit_written_out_after_a_bounds_amount_is_its_unit(written: str, said: str) -> None:
    """A unit in small letters apart from a bound's amount, before a space or a stop, is the amount's: the bound's word
    after it (korean18 took any small word there for the sentence's, "here." and "ohm." alike)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("비율은 1:10입니다", "비율은 1 대 10입니다"),  # korean18: 비율은 한 시 10분입니다
        ("축척 1:10", "축척 1 대 10"),  # korean18: 축척 한 시 10분
        ("A와 B의 비는 1:10입니다", "A와 B의 비는 1 대 10입니다"),  # korean18: 비는 한 시 10분
        ("scale 1:10", "scale 1 대 10"),  # korean18: scale 한 시 10분
        ("The ratio is 1:10.", "The ratio is one to ten."),  # korean18: one ten
        ("The scale of 1:10 is used.", "The scale of one to ten is used."),  # korean18: one ten
        # as korean18 read them: a time of day elsewhere, after a ratio's word further back too
        ("회의는 1:10에 시작합니다", "회의는 한 시 10분에 시작합니다"),
        ("비율을 설명하고 3:30에 끝냅니다", "비율을 설명하고 세 시 30분에 끝냅니다"),
        ("We met at 3:30.", "We met at three thirty."),
        ("1:10 축척", "1 대 10 축척"),
    ],
)
def test_a_colon_after_a_ratios_word_is_a_ratio(written: str, said: str) -> None:
    """ "1:10" after 비율, 축척, 비, ratio or scale is a ratio, 1 대 10 (one to ten in an English sentence), not a time of
    day."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean18: 1000 volts (천, the Korean voice's), less than 1000
        ("It takes 1,000 volts.", "It takes one thousand volts."),
        ("The limit is x < 1,000 here.", "The limit is x less than one thousand here."),
        (
            "The limit is x < 1,000, y > 3 here.",
            "The limit is x less than one thousand, y greater than three here.",
        ),
        ("It takes 1,000.5 volts.", "It takes one thousand point five volts."),  # korean18: 1000 점 오 volts
        # as korean18 read them
        ("It costs $1,000.", "It costs one thousand dollars."),
        ("The values are 1,2,3 here.", "The values are 1,2,3 here."),
        ("전압은 1,000 V입니다", "전압은 1000 볼트입니다"),
    ],
)
def test_thousands_grouped_in_an_english_sentence_are_said_in_english(written: str, said: str) -> None:
    """An English sentence's "1,000" before a unit or after a bound is one number in English words, as "1000" is."""
    assert spoken_form(written, "ko") == said
