"""Review of korean18 (rvk18): what its new rules read wrongly or slowly, each against what korean18 read (the comment
beside each case)."""

from __future__ import annotations

import re

import pytest

from npu_worker.engine import korean_charges
from npu_worker.engine.korean_reading import spoken, spoken_form


class CountingSearches:
    """The real pattern, counting its searches."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searches = pattern, 0

    def search(self, text: str, *bounds: int) -> re.Match[str] | None:
        self.searches += 1
        return self.pattern.search(text, *bounds)


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_a_text_of_many_single_letter_signs_is_searched_for_chemistry_once(monkeypatch, lang: str) -> None:
    """korean18 searched the whole text for a word of chemistry once for each "V⁺" in it: a 2 000-character text of
    them took 0.5 s where it took 24 ms (its square); now once for the text, as read as before."""
    counting = CountingSearches(korean_charges._CHEMISTRY)
    monkeypatch.setattr(korean_charges, "_CHEMISTRY", counting)
    said = spoken_form("V⁺ " * 300, lang)
    assert counting.searches <= 2  # once for the text (and once for an English sentence's pass)
    assert said.split() == ["V⁺"] * 300  # no chemistry: each left as "x⁺" is
    ions = spoken_form("용액의 " + "H⁺ " * 300, lang)  # beside chemistry: ions, as before
    assert ions.count("H 플러스" if lang == "ko" else "H plus") == 300


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "The meeting is at 3:30pm today.",
            "The meeting is at three thirty PM today.",
        ),  # korean18: three thirtypm
        (
            "The meeting is at 10:00am today.",
            "The meeting is at ten o'clock AM today.",
        ),  # korean18: o'clockam
        (
            "The meeting is at 9:05PM today.",
            "The meeting is at nine oh five PM today.",
        ),  # korean18: oh fivePM
        ("We open 9:00 - 17:00 daily.", "We open 아홉 시 minus 열일곱 시 daily."),
        # korean18: 아홉 시 - seventeen o'clock (two voices in one range); the Korean rules' as before it
        # as korean18 read them
        ("The meeting is at 3:30 PM today.", "The meeting is at three thirty PM today."),
        ("We open 9:00–17:00 daily.", "We open 아홉 시에서 열일곱 시 daily."),
        ("회의는 3:30pm에 합니다.", "회의는 오후 세 시 30분에 합니다."),
    ],
)
def test_an_english_sentences_clock_with_am_or_pm_glued_or_in_a_spaced_range(written: str, said: str) -> None:
    """A clock's "pm" glued to it is said apart (espeak said "thirtypm" as one word, θˈɜːtɪpəm); a spaced range of
    clock times is no English clock time and a Korean one."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("속도가 x < 100 kbps이면", "속도가 x 100 kbps 미만이면"),  # korean18: x 100 미만 kbps이면
        ("x < 10 lbs이면", "x 10 lbs 미만이면"),  # korean18: x 10 미만 lbs이면
        ("x < 5 days이면", "x 5 days 미만이면"),  # korean18: x 5 미만 days이면
        # as korean18 read them
        ("결과는 p < 0.05 here.", "결과는 p 0 점 영오 미만 here."),
        ("x >= 0 and y >= 0", "x 0 이상 and y 0 이상"),
        ("x < 10 dBm이면", "x 10 dBm 미만이면"),
    ],
)
def test_a_spaced_word_with_a_korean_particle_after_a_bounds_amount_is_its_unit(
    written: str, said: str
) -> None:
    """A word of three or four letters apart from a bound's amount with a Korean particle glued to it is the amount's
    unit, as before korean18 (which took any such word but a capital's or a known unit's for the sentence's)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "It costs $5 million in total.",
            "It costs five million dollars in total.",
        ),  # korean18: five dollars million
        (
            "It costs $2.5 billion in total.",
            "It costs two point five billion dollars in total.",
        ),  # korean18: 2 점 오 달러 billion
        ("It costs $5–10 in total.", "It costs 5에서 10 달러 in total."),  # korean18: five dollars–10
        (
            "It costs $5-$10 in total.",
            "It costs 5에서 10 달러 in total.",
        ),  # korean18: five dollars-ten dollars
        ("It costs $5 - $10 in total.", "It costs 5에서 10 달러 in total."),  # korean18: 5 달러 - ten dollars
        # as korean18 read them
        ("It costs $5 to $10 in total.", "It costs five dollars to ten dollars in total."),
        ("It costs $3.50 today.", "It costs three dollars and fifty cents today."),
        ("The total is $1.5M now.", "The total is 150만 달러 now."),
    ],
)
def test_an_english_sentences_dollars_with_a_scale_or_in_a_range(written: str, said: str) -> None:
    """Dollars with a scale's word are said as English says them, the scale before "dollars"; a range of dollars is
    left to the Korean rules as before korean18 (korean18 said its first end in English, its second in Korean)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said", "lang"),
    [
        ("V⁻ 단자", "V 마이너스 단자", "ko"),  # korean18: V⁻ 단자, which espeak says V hyphen 단자
        ("The F⁻ level is high.", "The F minus level is high.", "ko"),  # korean18: F⁻ (F hyphen)
        ("The closure C⁻ is here.", "The closure C minus is here.", "en"),  # korean18: C⁻ (C hyphen)
        # as korean18 read them
        ("클로저 C⁺는 집합입니다.", "클로저 C⁺는 집합입니다.", "ko"),
        ("Cl⁻ 이온", "C-L 마이너스 이온", "ko"),
        ("A⁻¹", "A의 마이너스 1제곱", "ko"),
    ],
)
def test_a_single_capital_with_a_minus_is_said_minus_beside_no_chemistry(
    written: str, said: str, lang: str
) -> None:
    """A single capital's "⁻" away from chemistry, "V⁻ 단자" (an amplifier's input), is a minus as before korean18: a
    "⁻" left to espeak is said "hyphen" (its "⁺" is said "plus", so korean18 left "C⁺" to it)."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "It is 5 1/2 inches.",
            "It is five and one half inches.",
        ),  # korean18: 5 one half (the 5 the Korean voice's)
        (
            "It is 10 3/4 inches long.",
            "It is ten and three quarters inches long.",
        ),  # korean18: 10 three quarters
        # as korean18 read them
        ("Add 1/2 cup of sugar.", "Add one half cup of sugar."),
        ("It was on 1/2/2024 here.", "It was on 1/2/2024 here."),
        ("설탕 1/2컵", "설탕 2분의 1컵"),
    ],
)
def test_an_english_sentences_mixed_number_is_one_number(written: str, said: str) -> None:
    """A whole number before a small fraction, "5 1/2", is one number in English words: five and one half."""
    assert spoken(written) == said
