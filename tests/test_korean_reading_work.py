"""The Korean reading's work grows with the text, not with its square: a text of many dated events ("3.1절")
was searched whole once for each of them (a 20 000-character one took 1.7 s, 70 times a 2 000-character one)."""

from __future__ import annotations

import re

from npu_worker.engine import korean_dates
from npu_worker.engine.korean_reading import spoken


class CountingSearches:
    """The real pattern, counting its searches."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searches = pattern, 0

    def search(self, text: str, *bounds: int) -> re.Match[str] | None:
        self.searches += 1
        return self.pattern.search(text, *bounds)


def test_a_text_of_many_dated_events_is_searched_for_sections_once(monkeypatch):
    counting = CountingSearches(korean_dates._OTHER_SECTION)
    monkeypatch.setattr(korean_dates, "_OTHER_SECTION", counting)
    text = "3.1절과 3.2절을 보라. " + "3.1절 " * 300
    said = spoken(text)
    assert counting.searches <= 1
    assert said.count("3 점 일절") == 301 and "삼일절" not in said  # sections, as one search said
    assert spoken("3.1절 " * 300).count("삼일절") == 300  # no section named: the holiday, each time
