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


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A ∪ B", "A 합집합 B"),  # A ∪ B: no rule read the sign
        ("A ∩ B = ∅", "A 교집합 B는 공집합"),  # A ∩ B는 ∅
        ("x ∈ A", "x는 A의 원소"),  # x ∈ A
        ("x ∈ A이면 x ∈ B입니다.", "x가 A의 원소이면 x는 B의 원소입니다."),  # x ∈ A이면 x ∈ B입니다.
        ("x ∉ A ∪ B이면", "x가 A 합집합 B의 원소가 아니면"),  # x ∉ A ∪ B이면
        ("x₁ ∈ S", "x₁은 S의 원소"),  # x₁ ∈ S (엑스 원: 은)
        ("A ⊆ B일 때", "A가 B의 부분집합일 때"),  # A ⊆ B일 때
        ("A ⊄ B입니다.", "A는 B의 부분집합이 아닙니다."),  # A ⊄ B입니다.
        ("n ∈ ℕ이면", "n이 자연수 집합의 원소이면"),  # n ∈ ℕ이면
        ("∀x ∈ ℝ, x² ≥ 0", "실수 집합의 모든 x에 대해, x의 2제곱 0 이상"),  # ∀x ∈ ℝ, x의 2제곱 0 이상
        (
            "∀ε > 0, ∃δ > 0",
            "0 초과인 모든 엡실론에 대해, 0 초과인 어떤 델타에 대해",
        ),  # ∀엡실론 0 초과, ∃델타 0 초과
        ("∀x∃y", "모든 x에 대해 어떤 y에 대해"),  # ∀x∃y
        ("¬(p ∧ q)", "낫 (p 그리고 q)"),  # ¬(p ∧ q)
        ("¬p ∨ q이면", "낫 p 또는 q이면"),  # ¬p ∨ q이면
        ("p ⇔ q", "p와 q는 동치"),  # p와 q: the equivalence unsaid
        ("충전 ⇔ 방전", "충전과 방전"),  # not propositions: as before
        ("∅10mm 파이프", "∅10 밀리미터 파이프"),  # a diameter: as before
        ("원소 ∈ 집합", "원소 ∈ 집합"),  # no letter on either side: as before
    ],
)
def test_set_and_logic_signs_are_said(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("전력은 P = VI입니다.", "전력은 P가 VI입니다."),  # 전력은 P는 VI입니다.: two topics in a row
        ("전력은 P=VI입니다.", "전력은 P가 VI입니다."),  # 전력은 P는 VI입니다.
        ("힘은 F = ma입니다", "힘은 F가 ma입니다"),  # 힘은 F는 ma입니다
        ("함수는 f(x) = x + 1입니다", "함수는 f(x)가 x 더하기 1입니다"),  # 함수는 f(x)는 …
        ("P = VI입니다", "P는 VI입니다"),  # no topic before it: as before
        ("x 또는 y = 3", "x 또는 y는 3"),  # "or", no topic: as before
        ("따라서 x = 3", "따라서 x는 3"),  # as before
    ],
)
def test_an_equation_after_a_topic_takes_the_subject_particle(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≥ 2(x - 1) + 3", "x 2(x 빼기 1) 더하기 3 이상"),  # x 2 이상(x 빼기 1) 더하기 3
        ("x ≥ 2(x - 1) + 3이면", "x 2(x 빼기 1) 더하기 3 이상이면"),  # x 2 이상(x 빼기 1) 더하기 3이면
        (
            "y < 3(x + 2) - 1입니다",
            "y는 3(x 더하기 2) 빼기 1 미만입니다",
        ),  # y 3 미만(x 더하기 2) 빼기 1입니다
        ("x + 1 ≤ 2(x - 1) + 3", "x 더하기 1이 2(x 빼기 1) 더하기 3 이하"),  # x 더하기 1 2 이하(…) 더하기 3
        ("x ≥ 2(x - 1) - y", "x 2(x 빼기 1) 빼기 y 이상"),  # x 2 이상(x 빼기 1) 빼기 y
        ("x ≥ 2(x - 1)", "x 2(x 빼기 1) 이상"),  # as before
        ("x ≥ 2(x - 1) + 3x", "x 2 이상(x 빼기 1) 더하기 3x"),  # a product after it: as before
        ("x < 10(단위: m) + 3", "x 10 미만(단위: m) 더하기 3"),  # a note: as before
    ],
)
def test_a_bound_by_a_bracket_goes_on_after_it(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("This is 3 + 4 cm.", "This is three plus four centimeters."),  # This is 3 더하기 4 센티미터.
        (
            "The speed is 5 km/h and 3 + 4 = 7.",
            "The speed is five kilometers per hour and three plus four = seven.",
        ),  # 시속 5킬로미터 and 3 더하기 4
        ("The loss is 5 - 3 dB here.", "The loss is five minus three decibels here."),  # 5 빼기 3 데시벨
        (
            "It runs at 2 GHz with 8 GB of memory.",
            "It runs at two gigahertz with eight gigabytes of memory.",
        ),  # 기가헤르츠
        ("It is 1 m in the room.", "It is one meter in the room."),  # 1 미터
        (
            "The temperature is 25°C in the room.",
            "The temperature is twenty-five degrees Celsius in the room.",
        ),  # 25도
        ("The battery is at 50% now.", "The battery is at fifty percent now."),  # 50 퍼센트
        ("전압은 3 + 4V입니다.", "전압은 3 더하기 4 볼트입니다."),  # a Korean sentence: as before
        ("Add 5 kg + 3 kg.", "Add 5 킬로그램 플러스 3 킬로그램."),  # not found English (one word): as before
    ],
)
def test_an_english_sentence_says_its_signs_and_units_in_english(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "A ⊂ B ⊂ C",
            "A는 B의 부분집합이고 B는 C의 부분집합",
        ),  # A는 B의 부분집합는 C의 부분집합: a wrong particle
        ("x ∈ A ⊂ B", "x는 A의 원소이고 A는 B의 부분집합"),  # x는 A의 원소는 B의 부분집합
        ("x ∉ A ⊂ B", "x는 A의 원소가 아니고 A는 B의 부분집합"),  # x는 A의 원소가 아님는 B의 부분집합
    ],
)
def test_a_chain_of_set_signs_says_each_link(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ [0, 1]", "x는 0 이상 1 이하"),  # x ∈ [0, 1]: the sign unsaid
        ("x ∈ [0, 1]이면 f(x) ≥ 0", "x가 0 이상 1 이하이면 f(x) 0 이상"),  # x ∈ [0, 1]이면 …
        ("t ∈ (0, ∞)이면", "t가 0 초과이면"),  # t ∈ (0, 무한대)이면
        ("x ∈ [0.5, 2)입니다.", "x는 0 점 오 이상 2 미만입니다."),  # x ∈ [0 점 오, 2)입니다.
        ("x ∈ (-∞, 0]", "x는 0 이하"),  # x ∈ (-무한대, 0]
        ("x ∈ (-∞, ∞)", "x는 실수 집합의 원소"),  # x ∈ (-무한대, 무한대)
        ("θ ∈ [0, 2π)", "세타는 0 이상 2파이 미만"),  # 세타 ∈ [0, 2파이)
    ],
)
def test_an_element_of_an_interval_is_said_by_its_bounds(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A ⊃ B", "A는 B를 포함"),  # A ⊃ B: the sign unsaid
        ("A ⊇ B이면", "A가 B를 포함하면"),  # A ⊇ B이면
        ("A ⊃ B ⊃ C", "A는 B를 포함하고 B는 C를 포함"),  # A ⊃ B ⊃ C
        ("ℝ ⊃ ℚ입니다.", "실수 집합은 유리수 집합을 포함합니다."),  # 실수 집합 ⊃ 유리수 집합입니다.
        ("ℕ ⊂ ℤ", "자연수 집합은 정수 집합의 부분집합"),  # the particle after 집합, not after "ℕ"
        ("x ∈ A₁이면", "x가 A원의 원소이면"),  # x ∈ A원이면: a capital's index said before the sign was
        ("A ⊃ B₁", "A는 B원을 포함"),  # A ⊃ B원
    ],
)
def test_a_superset_and_an_indexed_set_are_said(written: str, said: str) -> None:
    assert spoken(written) == said
