"""rvk19: the review of korean19's readings, each case against what korean19 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("I <3 mA이면", "ko", "I 3 밀리암페어 미만이면"),  # korean19: I heart 밀리암페어이면
        # korean19: The current I heart 밀리암페어 here.
        ("The current I <3 mA here.", "ko", "The current I less than three milliamperes here."),
        ("We <3 ms later", "ko", "We 3 밀리초 미만 later"),  # korean19: We heart 밀리초 later
        ("I <3 volts", "ko", "I 3 volts 미만"),  # korean19: I heart volts
        ("I <3 and J > 5", "ko", "I 3 미만 and J 5 초과"),  # korean19: I heart and J 5 초과
        ("If I <3 mA, stop.", "en", "If I <3 mA, stop."),  # korean19: If I heart mA, stop.
        # a heart still before any other word
        ("I <3 you", "ko", "I heart you"),
        ("We <3 Python.", "en", "We heart Python."),
    ],
)
def test_a_bound_on_a_current_before_a_unit_is_no_heart(written: str, lang: str, said: str) -> None:
    """ "I <3 mA" bounds a current I: the unit or a conjunction after "<3" makes it no heart."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("S₂₁ 파라미터", "S₂₁ 파라미터"),  # korean19: S트웬티원 (an S-parameter's index said as a count)
        ("S₁₁과 S₂₁", "S₁₁과 S₂₁"),  # korean19: S일레븐과 S트웬티원
        ("V₁₂는 전압이다", "V₁₂는 전압이다"),  # korean19: V트웰브는, while R₁₂ stayed as written
        ("B₁₂ 비타민", "B₁₂ 비타민"),  # korean19: B트웰브
        # formulas korean19 read whole, as it did
        ("Fe₂O₃", "F-E투O쓰리"),
        ("C₆H₁₂O₆", "C식스H트웰브O식스"),
        ("2H₂O", "2 H투O"),
        ("Cl₂ 기체", "C-L투 기체"),
    ],
)
def test_a_single_capitals_two_digit_index_is_no_formulas_count(written: str, said: str) -> None:
    """A lone capital with two subscript digits, "S₂₁", "V₁₂", is a variable's index (as "R₁₂" and "x₁₂" are), not an
    element's count read twenty-one."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean19: less than or equal to 2파이 (the Korean rules' π in an English sentence)
        ("It holds for x ≤ 2π.", "It holds for x less than or equal to two pi."),
        ("It holds for x >= 2π.", "It holds for x greater than or equal to two pi."),
        # as korean19 read them
        ("It holds for x < 2π.", "It holds for x less than two pi."),
        ("x ≥ 2π 일 때", "x 2파이 이상 일 때"),
    ],
)
def test_pi_after_an_english_bound_or_equal_is_english(written: str, said: str) -> None:
    """ "x ≤ 2π" in an English sentence is said two pi after "less than or equal to", as after "less than"."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean19: 오늘 비는 1 대 10에 그쳤다 (the rain's time a ratio)
        ("오늘 비는 1:10에 그쳤다", "오늘 비는 한 시 10분에 그쳤다"),
        # a ratio's 비 after 의, as korean19 read it
        ("A와 B의 비는 1:10입니다", "A와 B의 비는 1 대 10입니다"),
        ("두 값의 비 1:10", "두 값의 비 1 대 10"),
    ],
)
def test_rain_is_no_ratios_word(written: str, said: str) -> None:
    """A bare 비 before a clock is a ratio's only as "A와 B의 비"; "비는 1:10에" is also the rain's (비) time."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("len<5, size>3이면 오류", "len 5 미만, size 3 초과이면 오류"),  # korean19: len<5, size>3이면 (held)
        ("조건 ab<5, cd>3", "조건 ab 5 미만, cd 3 초과"),  # korean19: 조건 ab<5, cd>3
        ("ab<3, cd>2", "ab 3 미만, cd 2 초과"),  # korean19: ab<3, cd>2
        # generic types held as korean19 held them
        ("std::array<int, 5> a;", "std::array<int, 5> a;"),
        ("Map<K, V> m;", "Map<K, V> m;"),
        ("Array<Array<int>> a;", "Array<Array<int>> a;"),
        ("Array<5>는 배열이다", "Array<5>는 배열이다"),
    ],
)
def test_two_bounds_joined_by_a_comma_are_no_generic_type(written: str, said: str) -> None:
    """ "len<5, size>3" bounds two names: a ">" glued to the number after it closes no generic type's brackets."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("비율을 1:10으로 맞춘다", "비율을 1 대 10으로 맞춘다"),  # korean19: 비율을 한 시 10분으로
        ("혼합 비율은 약 1:10입니다", "혼합 비율은 약 1 대 10입니다"),  # korean19: 약 한 시 10분
        ("비율은 1:10~1:20", "비율은 1 대 10에서 1 대 20"),  # korean19: 1 대 10에서 1시 20분
        # korean19: 비율은 1 대 10에서 1시 20분으로
        ("비율은 1:10에서 1:20으로", "비율은 1 대 10에서 1 대 20으로"),
        # a range of times as korean19 read it
        ("회의는 1:10~1:20에 합니다", "회의는 한 시 10분에서 한 시 20분에 합니다"),
    ],
)
def test_a_ratio_words_object_amount_and_range_are_ratios(written: str, said: str) -> None:
    """ "비율을 1:10으로", "비율은 약 1:10" and a range from a ratio, "비율은 1:10~1:20", are ratios at both ends."""
    assert spoken_form(written, "ko") == said
