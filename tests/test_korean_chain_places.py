"""A chain of bounds before a place or a range it names, "1 ≤ i ≤ n에 대해", "a ≤ x ≤ b에서 연속": read as other
chains are, the middle term first (`korean_chains`). It was 1 이상 i n 이하에 대해, each bound where it stood, and
"a ≤ x ≤ b에서" was left with its signs unsaid. The comment says what was read before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1 ≤ i ≤ n에 대해", "i가 1 이상 n 이하에 대해"),  # 1 이상 i n 이하에 대해
        ("1 ≤ i ≤ 10에 대해 합을 구한다.", "i가 1 이상 10 이하에 대해 합을 구한다."),
        ("1 ≤ i ≤ n에서", "i가 1 이상 n 이하에서"),
        ("a ≤ x ≤ b에서 연속", "x가 a 이상 b 이하에서 연속"),  # a ≤ x ≤ b에서 연속: the signs unsaid
        ("0 ≤ x ≤ 1의 범위", "x가 0 이상 1 이하의 범위"),
        ("0 < t < 1에서", "t가 0 초과 1 미만에서"),
    ],
)
def test_chain_before_a_place(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "middle"),
    [
        ("1 ≤ x ≤ 3에너지", "x"),  # a word that starts with 에: no place, the chain left to the single bounds
        ("0 ≤ x ≤ 1의견", "x"),
        ("0 < x < 1에게", "x"),  # a person, not a range
        ("1 < 2 < 3에서", "2"),  # numbers alone: a ranking, left
    ],
)
def test_chain_before_a_word_is_not_a_place(written: str, middle: str) -> None:
    assert not spoken(written).startswith(middle)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1 ≤ i ≤ N", "i는 1 이상 N 이하"),  # 1 이상 i ≤ N: the second sign unsaid
        ("0 ≤ i < N", "i는 0 이상 N 미만"),
        ("1 ≤ i ≤ N이면", "i가 1 이상 N 이하이면"),
        ("1 ≤ n ≤ N에 대해", "n이 1 이상 N 이하에 대해"),
        ("1 ≤ k ≤ K인 정수 k", "k가 1 이상 K 이하인 정수 k"),
        ("1 ≤ i ≤ N. 다음", "i는 1 이상 N 이하. 다음"),
        ("2 ≤ k ≤ N - 1", "k는 2 이상 N 빼기 1 이하"),  # 2 이상 k N 빼기 1 이하
        ("0 ≤ i ≤ N − 1이면", "i가 0 이상 N 빼기 1 이하이면"),
        ("1 ≤ i ≤ N + 1", "i는 1 이상 N 더하기 1 이하"),
    ],
)
def test_a_count_s_capital_as_the_last_side(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize("written", ["a < b < C", "A > B > C", "1 < 2 < N", "1 ≤ i ≤ NaN"])
def test_names_ranked_and_longer_words_are_left(written: str) -> None:
    """Capitals ranked, a number in the middle, a word: not a count's bound ("1 ≤ i ≤ N(x)" is a function's, read as one)."""
    said = spoken(written)
    assert not said.startswith(("b는", "B는", "2는", "i는"))
