"""Review of stop 55's Korean reading (korean12): readings it made worse than before. Each comment says what korean12
read."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A number set's or the empty set's particle in its name's form: korean12 read the particle written for the sign
        ("정의역은 ℝ로 둡니다.", "정의역은 실수 집합으로 둡니다."),  # 실수 집합로
        ("ℝ와 ℂ는 체입니다.", "실수 집합과 복소수 집합은 체입니다."),  # 실수 집합와 복소수 집합는
        ("ℤ가 환입니다.", "정수 집합이 환입니다."),  # 정수 집합가
        ("∅를 공집합이라 부릅니다.", "공집합을 공집합이라 부릅니다."),  # 공집합를
        ("f: ℝ → ℝ는 연속 함수입니다.", "f: 실수 집합에서 실수 집합은 연속 함수입니다."),  # 실수 집합는
        # ... while one of a single form, or a copula, as korean12
        ("ℕ의 원소", "자연수 집합의 원소"),
        ("ℝ을 실수 전체의 집합이라 합니다.", "실수 집합을 실수 전체의 집합이라 합니다."),
        ("정의역은 ℝ이고 치역도 ℝ입니다.", "정의역은 실수 집합이고 치역도 실수 집합입니다."),
        ("A = ∅이면", "A는 공집합이면"),
    ],
)
def test_a_number_sets_particle_follows_its_name(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A quantifier named as a sign, a Korean word after it: korean12 took the word for its variable
        ("∀ 기호는 '모든'을 뜻합니다.", "∀ 기호는 '모든'을 뜻합니다."),  # 모든 기호는에 대해 '모든'을 …
        ("∀ 학생은 시험을 봅니다.", "∀ 학생은 시험을 봅니다."),  # 모든 학생은에 대해 시험을 …
        ("기호 ∀는 모든을 뜻합니다.", "기호 ∀는 모든을 뜻합니다."),  # 기호 모든 는에 대해 모든을 …
        # ... while a Greek letter's variable is still said, glued or spaced
        ("∀ε > 0, ∃δ", "0 초과인 모든 엡실론에 대해, 어떤 델타에 대해"),
        ("∀ θ, sin θ ≤ 1", "모든 세타에 대해, 사인 세타 1 이하"),
        ("∀x ∈ ℝ, x² ≥ 0", "실수 집합의 모든 x에 대해, x의 2제곱 0 이상"),
    ],
)
def test_a_quantifiers_variable_is_no_korean_word(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # The writer's own "에 대해" after a quantifier: korean12 said it twice (모든 엡실론에 대해 에 대해)
        ("∀ε > 0에 대해 δ를 찾습니다.", "0 초과인 모든 엡실론에 대해 델타를 찾습니다."),
        ("∀x ∈ A에 대해 성립합니다.", "A의 모든 x에 대해 성립합니다."),  # A의 모든 x에 대해 에 대해
        ("∃x에 대하여", "어떤 x에 대하여"),
    ],
)
def test_a_quantifiers_about_is_said_once(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # One of a unit in an English sentence: korean12 read 1 kilometers per hour, 1 meters per second
        ("The speed is 1 km/h today.", "The speed is one kilometer per hour today."),
        ("The speed is 1 m/s today.", "The speed is one meter per second today."),
        # ... while the others as korean12
        ("The speed is 2 km/h today.", "The speed is two kilometers per hour today."),
        ("The oven is at 1 °C now.", "The oven is at one degree Celsius now."),
        ("The rate is 1 Hz and 1 % today.", "The rate is one hertz and one percent today."),
    ],
)
def test_one_of_an_english_unit_is_singular(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A set read on past the letter, a function space or a set difference written with "\": korean12 said the
        # letter's membership and left the rest after it
        ("f ∈ C[0, 1]", "f ∈ C[0, 1]"),  # f는 C의 원소[0, 1]
        ("x ∈ A[i]이면", "x ∈ A[i]이면"),  # x가 A의 원소[i]이면
        ("x ∈ ℝ \\ {0}", "x ∈ 실수 집합 \\ {0}"),  # x는 실수 집합의 원소 \ {0}
        # ... while a set alone, before a comma or a chain's next sign, as korean12
        ("x ∈ A, y ∈ B", "x는 A의 원소, y는 B의 원소"),
        ("x ∈ [0, 1]이면", "x가 0 이상 1 이하이면"),
        ("A ⊂ B ⊂ C", "A는 B의 부분집합이고 B는 C의 부분집합"),
    ],
)
def test_a_set_read_on_leaves_the_sign(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A spaced hyphen an English sentence's range: korean12 read a minus (2024 minus 2025; before it 2024에서 2025)
        (
            "In 2024 - 2025 we grew.",
            "In twenty twenty-four to twenty twenty-five we grew.",
        ),  # years (korean17)
        (
            "Use a 1 - 2 mm gap in the part.",
            "Use a one to two millimeters gap in the part.",
        ),  # 1 minus 2 millimeters
        ("It ranges 10 - 20% in the test set.", "It ranges ten to twenty percent in the test set."),
        # ... while a difference is a minus, and a Korean sentence's range as before
        ("The answer is 3 - 1.", "The answer is three minus one."),
        ("The loss is 5 - 3 dB here.", "The loss is five minus three decibels here."),
        ("2024 - 2025 기간", "2024에서 2025 기간"),
        ("1 - 2 mm 간격", "1에서 2 밀리미터 간격"),
        (
            "The gap was 2024 - 2020 = 4 years.",
            "The gap was two thousand twenty-four minus two thousand twenty = four years.",
        ),
    ],
)
def test_an_english_sentences_range_is_said_to(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A quantifier over an interval: korean12 said the quantifier, then the interval's bounds after 에 대해's 해
        ("∀i ∈ [1, n]", "1 이상 n 이하인 모든 i에 대해"),  # 모든 i에 대해는 1 이상 n 이하
        (
            "∃t ∈ [0, 1), f(t) = 0",
            "0 이상 1 미만인 어떤 t에 대해, f(t)는 0",
        ),  # 어떤 t에 대해는 0 이상 1 미만, …
        ("∀x ∈ (0, ∞)에 대해", "0 초과인 모든 x에 대해"),
        ("∀x ∈ (-∞, ∞)", "실수 집합의 모든 x에 대해"),
        # A word after a quantifier cut at its fourth letter: korean12 read 모든 vert에 대해 ex v는 V의 원소
        ("∀ vertex v ∈ V", "∀ vertex v는 V의 원소"),
        # ... while a set and an element's interval as korean12
        ("∀x ∈ ℝ, x² ≥ 0", "실수 집합의 모든 x에 대해, x의 2제곱 0 이상"),
        ("x ∈ [0, 1]이면", "x가 0 이상 1 이하이면"),
        ("θ ∈ [0, 2π)", "세타는 0 이상 2파이 미만"),
    ],
)
def test_a_quantifier_over_an_interval_says_its_bounds_first(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A slide title's dash in an English sentence: korean12 read a minus (Part 1 minus Introduction …)
        ("Part 1 - Introduction to the course.", "Part 1 - Introduction to the course."),
        ("Week 2 - Linear regression in the lab.", "Week 2 - Linear regression in the lab."),
        ("Lecture 5 - Sets and logic in the course.", "Lecture 5 - Sets and logic in the course."),
        # ... while a minus between a formula's terms is said, as korean12
        ("The answer is 3 - 1.", "The answer is three minus one."),
        ("Set it to x - 1 in the code.", "Set it to x minus one in the code."),
        ("Use (a + b) - c in the end.", "Use (a plus b) minus c in the end."),
    ],
)
def test_a_titles_dash_in_an_english_sentence_is_no_minus(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A letter apart from its number in an English sentence, a label: korean12 read amperes (Figure 3 amperes)
        ("See Figure 3 A for the details.", "See Figure 3 A for the details."),
        ("The answer is in Appendix 2 A of the book.", "The answer is in Appendix 2 A of the book."),
        ("We use the Model 4 J in the lab.", "We use the Model 4 J in the lab."),
        # ... while glued to it, and the other units spaced, as korean12 (and the Korean rules: "2 A" a letter, "2A" 암페어)
        ("The current is 2A in the test.", "The current is two amperes in the test."),
        ("It is at 5 V in the test.", "It is at five volts in the test."),
    ],
)
def test_a_letter_apart_from_its_number_is_no_unit(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # A topic's list of "=": korean12 gave its first term the subject particle, the rest the topic's (x가 2 또는 x는 3)
        ("해는 x = 2 또는 x = 3입니다.", "해는 x가 2 또는 x가 3입니다."),
        ("즉, 값은 x = 3, y = 4입니다.", "즉, 값은 x가 3, y가 4입니다."),
        ("해는 x = -1 또는 x = 4입니다.", "해는 x가 마이너스 1 또는 x가 4입니다."),
        ("근은 x = 1, x = 2, x = 3입니다.", "근은 x가 1, x가 2, x가 3입니다."),
        # ... while with no topic before, or one term, as korean12
        ("x = 2 또는 x = 3", "x는 2 또는 x는 3"),
        ("또는 x = 3입니다.", "또는 x는 3입니다."),
        ("전력은 P = VI입니다.", "전력은 P가 VI입니다."),
        ("a는 b, c = 3", "a는 b, c는 3"),
    ],
)
def test_a_topics_list_of_equals_keeps_one_particle(written: str, said: str) -> None:
    assert spoken(written) == said
