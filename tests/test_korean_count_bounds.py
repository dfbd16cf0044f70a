"""A bound of a variable by a count's capital, "i < N", "n ≥ N일 때", "while (i < N)": read as one between two
variables is (`korean_ranges.VARIABLE_BOUND`). The sign was left as written, and espeak-ng says nothing for it:
the caller heard "i N". The comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("i < N", "i N 미만"),  # i < N
        ("n ≥ N일 때", "n N 이상일 때"),
        ("i < N이면", "i N 미만이면"),
        ("k ≤ K를 만족", "k K 이하를 만족"),
        ("while (i < N)", "while (i가 N보다 작다)"),  # code: as a lecturer says it
        ("for (i = 0; i < N; i++)", "for (i에 0을 대입; i가 N보다 작다; i++)"),
    ],
)
def test_a_variable_bounded_by_a_count(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    "written", ["A < B", "vector<T> v;", "a<B>", "x<T>y", "i < NaN", "x < N(x)", "A > B > C"]
)
def test_tags_names_and_longer_words_are_left(written: str) -> None:
    """Capitals compared, a type's brackets, a word, a function ("i < N1" is read since stop 53: i N원 미만)."""
    said = spoken(written)
    assert "미만" not in said and "초과" not in said and "이하" not in said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("0 ≦ x ≦ 1이면", "x가 0 이상 1 이하이면"),  # 0 ≦ x ≦ 1이면: espeak-ng silent on the signs
        ("a ⩽ b ⩽ c", "b는 a 이상 c 이하"),
        ("x ≧ 0일 때", "x 0 이상일 때"),
        ("n ⩾ 1인 정수", "n 1 이상인 정수"),
    ],
)
def test_the_other_forms_of_the_bound_signs_read_as_the_signs(written: str, said: str) -> None:
    """JIS's "≦", "≧" (Japanese and some Korean input methods) and the slanted "⩽", "⩾" of math fonts."""
    assert spoken(written) == said
