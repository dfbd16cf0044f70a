"""Review of stop 54's Korean reading (korean11): readings it changed that it should not have. Each comment says
what korean11 read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # The writer's own subject and topic, no sign: korean11 read 성적 A가 90점 이상입니다 (another sentence)
        ("성적이 A는 90점 이상입니다", "성적이 A는 90점 이상입니다"),
        ("회사가 A는 매출이 10억 이상입니다", "회사가 A는 매출이 10억 이상입니다"),  # 회사 A가 매출이 …
        ("점수가 x는 10 이하입니다", "점수가 x는 10 이하입니다"),  # 점수 x가 10 이하입니다
        # ... while the topic a bound's reading gives is still the subject's, a sentence without a sign beside it
        ("값이 x ≤ 1입니다. 성적이 A는 90점 이상입니다", "값 x가 1 이하입니다. 성적이 A는 90점 이상입니다"),
        ("값이 x <= 1입니다", "값 x가 1 이하입니다"),
        ("확률이 p < 0.05입니다.", "확률 p가 0 점 영오 미만입니다."),
    ],
)
def test_a_writers_subject_and_topic_are_kept(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # The "**" closing Markdown's emphasis, a number or a letter after it: korean11 read a power (2의 x제곱)
        ("**2**x 빠릅니다", "2x 빠릅니다"),
        ("**F**1 점수", "F1 점수"),
        ("**x**2", "x2"),
        ("**Top**3", "Top3"),
        # ... while Python's powers are said, after an emphasis too, and on a line after an unclosed one
        ("**중요**: y = x**2", "중요: y는 x의 2제곱"),
        ("y = x**2 + z**2", "y는 x의 2제곱 더하기 z의 2제곱"),
        ("**주의\ny = x**2", " 주의\ny는 x의 2제곱"),  # the unclosed stars a space, as before
        ("10**6", "10의 6제곱"),
    ],
)
def test_an_emphasis_closing_before_a_term_is_no_power(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A note in English words glued to a bound's number: korean11 read it inside the bound, 0 점 영오(two-sided) 미만
        ("p < 0.05(two-sided)", "p 0 점 영오 미만(two-sided)"),
        ("n > 30(approx.)", "n 30 초과(approx.)"),
        ("x ≥ 2(see below)", "x 2 이상(see below)"),
        # ... while a product with a bracket is the bound's amount, as korean11
        ("x ≥ 2(x - 1)", "x 2(x 빼기 1) 이상"),
        ("k ≤ 2(N - 1)", "k 2(N 빼기 1) 이하"),
    ],
)
def test_a_note_after_a_bounds_number_stays_after_its_word(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A side with its sign unsaid between two joins: korean11 read 그리고 beside it, by the bound before the join
        (
            "bool inside = x >= 0 && x < width && y >= 0 && y < height;",
            "bool inside는 x 0 이상 && x < width && y 0 이상 && y < height;",
        ),
        ("x ≥ 0 && x < width", "x 0 이상 && x < width"),
        # ... while each join between two bounds is said, in a chain too
        ("x ≥ 0 && y ≥ 0 && z ≥ 0", "x 0 이상 그리고 y 0 이상 그리고 z 0 이상"),
        ("x>y||y>z", "x y 초과 또는 y z 초과"),
    ],
)
def test_a_join_is_said_between_its_own_two_bounds(written: str, said: str) -> None:
    assert spoken(written) == said
