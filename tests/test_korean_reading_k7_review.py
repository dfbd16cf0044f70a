"""The review of k7's chains of bounds (`korean_chains`): a function as the middle term, "-1 ≤ sin x ≤ 1"; π's minus
as a chain's bound; infinity as its upper bound; a copula's "일 확률" after it; a topic or the middle term itself just
before it. Each reading is the words a Korean lecturer says; the comment says what was read before. The lookalikes
below read as before."""

from __future__ import annotations

import time

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("-1 ≤ sin x ≤ 1", "sin x는 마이너스 1 이상 1 이하"),  # 마이너스 1 ≤ sin x 1 이하
        ("-1 ≤ sin x ≤ 1을 만족합니다", "sin x는 마이너스 1 이상 1 이하를 만족합니다"),
        ("-1 ≤ cos θ ≤ 1이므로", "코사인 세타가 마이너스 1 이상 1 이하이므로"),  # 1 ≤ 코사인 세타 1 이하
        ("0 < x < 1이므로", "x가 0 초과 1 미만이므로"),  # 0 초과 x 1 미만이므로
        ("0 ≤ sin²x ≤ 1", "사인 제곱 x는 0 이상 1 이하"),  # 0 ≤ 사인 제곱 x 1 이하
        ("-1 ≤ sin(x) ≤ 1", "sin(x)는 마이너스 1 이상 1 이하"),
        ("0 ≤ f(x) ≤ 1", "f(x)는 0 이상 1 이하"),  # 0 이상 f(x) 1 이하
        ("0 ≤ f(n) ≤ 1이면", "f(n)이 0 이상 1 이하이면"),  # n's sound: 이
        ("a < b < f(x)", "b는 a 초과 f(x) 미만"),  # a < b < f(x): the signs unsaid
        ("0 < x < g(y)이면", "x가 0 초과 g(y) 미만이면"),  # 0 초과 x < g(y)이면
        ("0 <= i < len(arr)", "i는 0 이상 len(arr) 미만"),  # 0 이상 i < len(arr)
        ("0 ≤ P(A) ≤ P(B)", "P(A)는 0 이상 P(B) 이하"),  # 0 이상 P(A) ≤ P(B)
        ("n - 1 < k < n", "k는 n 빼기 1 초과 n 미만"),  # n 빼기 k는 1 초과 n 미만: another formula
        ("a + 1 < x < 5", "x는 a 더하기 1 초과 5 미만"),  # a 더하기 x는 1 초과 5 미만
        ("3 × 2 < x < 7", "x는 3 곱하기 2 초과 7 미만"),  # 3 곱하기 x는 2 초과 7 미만
        ("0 < x < 6 ÷ 2", "x는 0 초과 6 나누기 2 미만"),  # x는 0 초과 6 미만 나누기 2
        ("6 ÷ 2 < x < 5", "x는 6 나누기 2 초과 5 미만"),  # 6 나누기 x는 2 초과 5 미만
        ("-π/2 < θ < π/2", "세타는 마이너스 2분의 파이 초과 2분의 파이 미만"),  # signs unsaid
        ("-π < θ ≤ π인 주값", "세타가 마이너스 파이 초과 파이 이하인 주값"),  # -파이 < 세타 ≤ 파이인
        ("1 ≤ γ < ∞", "감마는 1 이상 무한대 미만"),  # 1 ≤ 감마 < 무한대
        ("-1.96 < Z < 1.96일 확률은", "Z가 마이너스 1 점 구육 초과 1 점 구육 미만일 확률은"),  # 구육일 미만
        ("-1 < x < 1일 가능성", "x가 마이너스 1 초과 1 미만일 가능성"),  # 마이너스 1 초과 x 1일 미만 가능성
        ("-π/2 < θ < π/2에서", "세타가 마이너스 2분의 파이 초과 2분의 파이 미만에서"),  # signs unsaid
        ("-1 < x ≤ 1에서", "x가 마이너스 1 초과 1 이하에서"),  # 마이너스 1 초과 x 1 이하에서
        ("각도는 0 ≤ θ ≤ 2π 입니다", "각도는 세타가 0 이상 2파이 이하 입니다"),  # 각도는 세타는: two topics
        ("확률은 0 ≤ P(A) ≤ 1 입니다", "확률은 P(A)가 0 이상 1 이하 입니다"),  # 확률은 0 이상 P(A) 1 이하
        ("속도 v는 0 ≤ v ≤ c 입니다", "속도 v는 0 이상 c 이하 입니다"),  # 속도 v는 v는
        ("x가 -2 < x < 3이면", "x가 마이너스 2 초과 3 미만이면"),  # x가 x가
    ],
)
def test_chains_read_as_a_lecturer_says_them(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 2πr²", "x 2파이r의 2제곱 미만"),  # x 2 미만파이r의 2제곱: the bound's word inside the amount
        ("S < 4πr^2이면", "S 4파이r의 2제곱 미만이면"),  # S < 4파이r의 2제곱이면: the sign unsaid
        ("y > 2π²", "y 2파이의 2제곱 초과"),  # y 2 초과파이의 2제곱
        ("V ≤ 3πr³", "V 3파이r의 3제곱 이하"),  # V ≤ 3파이r의 3제곱
    ],
)
def test_a_bound_of_pi_times_a_power_is_said_after_it(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1 ≤ x ≤ 3", "x는 1 이상 3 이하"),  # no word before it: the topic's 는
        ("-π/2", "-2분의 파이"),  # no chain: π's minus left as it was
        ("a < b < f(x) < c", "a < b < f(x) < c"),  # a longer chain
        ("단위는 V/Ω 입니다.", "단위는 V/오메가 입니다."),  # a unit, volt per ohm (k7: 오메가분의 V)
        ("ρ/ε₀", "엡실론 제로분의 로"),  # a Greek quotient still read
        ("A > B > C 순서입니다.", "A > B > C 순서입니다."),  # names ranked
        ("0 ≤ basin x ≤ 1", "0 ≤ basin x 1 이하"),  # "basin" no function's name
    ],
)
def test_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "1 ≤ n ≤ 2×10⁵인 정수",
            "n이 1 이상 2 곱하기 10의 5제곱 이하인 정수",
        ),  # n은 1 이상 2 이하×10의 5제곱인
        (
            "0 ≤ t ≤ 1.5×10³",
            "t는 0 이상 1 점 오 곱하기 10의 3제곱 이하",
        ),  # t는 0 이상 1 점 오 이하×10의 3제곱
        ("1 ≤ n ≤ 10⁵", "n은 1 이상 10의 5제곱 이하"),  # 1 이상 n 10 이하⁵
        ("0 < ε < 10⁻⁶", "엡실론은 0 초과 10의 마이너스 6제곱 미만"),  # 엡실론은 0 초과 10 미만⁻⁶
        ("n ≤ 10⁵", "n 10의 5제곱 이하"),  # n 10 이하⁵
        ("x < 10⁻³이면", "x 10의 마이너스 3제곱 미만이면"),  # x 10 미만⁻³이면
    ],
)
def test_a_bound_written_with_a_product_or_superscript_power_is_said_after_it(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "hostile",
    [
        "-1 ≤ sin x ≤ " * 330,
        "각도는 0 ≤ θ ≤ " * 330,
        "-π/2 < " * 600,
        "0 ≤ f(x) ≤ 1에서 " * 250,
        "1 ≤ γ < ∞" * 450,
        "x < 2πr² " * 450,
        "0 ≤ 사인 제곱 x ≤ " * 300,
        "v는 0 ≤ v ≤ c " * 300,
        "n - 1 < " * 500,
        "1 - 2 - 3 - 4 - 5 < " * 200,
    ],
)
def test_a_hostile_text_is_read_in_bounded_cpu_time(hostile):
    """About 4 000 characters built to make the function middle, π's minus and the look-behind for a topic
    backtrack: each stays linear (0.02 s of CPU measured here; a generous bound in this process's CPU time, which
    other processes' load does not stretch)."""
    started = time.process_time()
    spoken(hostile)
    assert time.process_time() - started < 2
