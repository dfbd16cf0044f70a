"""The subjects' leftovers of stop 52 (`korean_chains`, `korean_absolute`): a capital bound of an absolute value, a topic
particle after a chain, a subject noun before one, a string's length written in bars. Each comment says what was read
before."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("|f(x)| ≤ M", "f(x)의 절댓값이 M 이하"),  # f(x)의 절댓값 ≤ M: the sign unsaid
        ("|x| ≤ M이면", "x의 절댓값이 M 이하이면"),
        ("|f(x)| ≤ M입니다", "f(x)의 절댓값이 M 이하입니다"),
    ],
)
def test_a_capital_bounds_an_absolute_value(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize("written", ["|x| ≤ AB", "|x| ≤ M(x)"])
def test_a_name_or_a_function_after_the_sign_is_left_as_before(written: str) -> None:
    assert "이하" not in spoken(written)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "-1 < |x| < 1은",
            "x의 절댓값이 마이너스 1 초과 1 미만은",
        ),  # x의 절댓값은 … 1 미만은: the topic twice
        ("0 ≤ x ≤ 1은 닫힌 구간이다", "x가 0 이상 1 이하는 닫힌 구간이다"),  # x는 0 이상 1 이하는
        ("0 ≤ x ≤ 1", "x는 0 이상 1 이하"),  # no particle after: as before
        ("1 ≤ x ≤ 3을 만족하는", "x는 1 이상 3 이하를 만족하는"),  # an object's: as before
    ],
)
def test_a_topic_after_a_chain_is_said_once(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("가격이 1000원 < p < 5000원", "가격 p가 1000원 초과 5000원 미만"),  # 가격이 p는 …: two subjects
        ("가격이 1000원 < p < 5000원이면", "가격 p가 1000원 초과 5000원 미만이면"),
        ("나이가 18 ≤ a ≤ 65", "나이 a가 18 이상 65 이하"),  # 나이가 a는
        ("확률이 0 ≤ P(A) ≤ 1", "확률 P(A)가 0 이상 1 이하"),
        ("길이 0 ≤ l ≤ 10", "길이 l은 0 이상 10 이하"),  # 길이 is a noun, length: as before
        ("주가 1000 < p < 2000", "주가 p는 1000 초과 2000 미만"),  # a stock's price: as before
        ("속도 v는 0 ≤ v ≤ c", "속도 v는 0 이상 c 이하"),
    ],
)
def test_a_subject_before_a_chain_names_its_letter(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("len(s)는 |s|이다", "len(s)는 s의 길이이다"),  # s의 절댓값이다
        ("문자열의 길이 |s| ≤ 100", "문자열의 길이 s의 길이가 100 이하"),
        ("문자열 s에 대해 |s| + |t|가", "문자열 s에 대해 s의 길이 더하기 t의 길이가"),
        ("0 ≤ i < |s|인 문자열", "i가 0 이상 s의 길이 미만인 문자열"),  # … s의 절댓값 미만인
    ],
)
def test_bars_round_a_name_where_a_length_is_spoken_of(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("|s| ≤ n", "s의 절댓값이 n 이하"),  # no word of a length near: the absolute value, as before
        ("문자열 길이는 |x - y|", "문자열 길이는 x 빼기 y의 절댓값"),  # a formula is no string's name
    ],
)
def test_bars_elsewhere_are_an_absolute_value(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize("pattern", ["가격이 1 < p < 2", "문자열 |s| ", "|a| ≤ M ", "-1 < |x| < 1은 "])
def test_a_hostile_text_is_read_in_bounded_time(pattern: str) -> None:
    """4 000 characters of a pattern these rules try (a generous bound, no speed figure)."""
    text = (pattern * 4000)[:4000]
    started = time.process_time()  # this process's CPU: a busy machine's other work does not stretch it
    spoken(text)
    assert time.process_time() - started < 2
