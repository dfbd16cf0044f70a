"""The leftovers of stop 55's brief (`korean_code`, `korean_arrows`, `korean_sets`, `korean_chains`,
`english_reading`): a long line of joins, set and logic signs, a formula's topic after a sentence's, a bound whose
side goes on after a bracket, English sentences' signs and units. Each comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine import korean_code
from npu_worker.engine.korean_reading import spoken


class _LookedAt(str):
    """A text that keeps how many characters each `rfind` on it was asked to look through."""

    reaches: list[int]

    def rfind(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        self.reaches.append((len(self) if end is None else end) - (start or 0))
        return str.rfind(self, sub, start, end)


def test_a_long_line_of_joins_is_looked_back_on_a_bounded_window() -> None:
    """Each "&&" looked for its line's start through the whole line before it: 100 000 characters of "a&&b" on one
    line took 0.26 s and 200 000 0.73 s (quadratic); now each look is bounded (0.15 s and 0.29 s)."""
    line = _LookedAt("0 이상 x&&x 1 미만 " * 400)
    line.reaches = []
    said = korean_code.formula_joins_said(line)
    assert said.count("그리고") == 400
    assert (
        line.reaches and max(line.reaches) <= 80
    )  # 6 000 characters before the last join: all looked through


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "if (0 <= x && x < n)",
            "if (x가 0보다 크거나 같다 && x가 n보다 작다)",
        ),  # a keyword's statement: as before
        ("0 <= x && x < n", "0 이상 x 그리고 x n 미만"),  # as before
        (
            "if " + "y" * 90 + " 0 <= x && x < n",
            "if " + "y" * 90 + " 0 이상 x 그리고 x n 미만",
        ),  # keyword far back
    ],
)
def test_a_join_still_reads_its_line(written: str, said: str) -> None:
    assert spoken(written) == said
