"""korean20: the leftovers of korean19's review, each case against what korean19 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        # korean19: x에서 0 minus일 때 (an English word in a Korean sentence)
        ("x→0⁻일 때 극한값은 1입니다.", "ko", "x에서 0 마이너스일 때 극한값은 1입니다."),
        # korean19: x에서 0⁺일 때 (espeak's English "plus")
        ("x→0⁺일 때 극한값은 1입니다.", "ko", "x에서 0 플러스일 때 극한값은 1입니다."),
        # korean19: 0 minus로 갈 때와 0⁺로 갈 때
        ("x가 0⁻로 갈 때와 0⁺로 갈 때", "ko", "x가 0 마이너스로 갈 때와 0 플러스로 갈 때"),
        ("a⁻에서의 극한", "ko", "a 마이너스에서의 극한"),  # korean19: a minus에서의 극한
        ("x→a⁺일 때", "ko", "x에서 a 플러스일 때"),  # korean19: x에서 a⁺ (espeak's "plus")
        ("x⁺는 양의 부분", "ko", "x⁺는 양의 부분"),  # a variable's positive part as before
        # an English sentence's in English words, either sign
        ("값은 다음과 같다. The value at 0⁺ is 1.", "ko", "값은 다음과 같다. The value at 0 plus is 1."),
        ("값은 다음과 같다. The value at 0⁻ is 1.", "ko", "값은 다음과 같다. The value at 0 minus is 1."),
        # lang=en as before: the minus said, the plus left to espeak's "plus"
        ("The limit as x→0⁻ is 1.", "en", "The limit as x→0 minus is 1."),
        ("x→0⁺", "en", "x→0⁺"),
        # no limit's: a power's, an ion's and a set's signs as before
        ("x⁺¹", "ko", "x⁺¹"),
        ("Na⁺ 이온", "ko", "N-A 플러스 이온"),
        ("ℤ⁺의 원소", "ko", "양의 정수 집합의 원소"),
    ],
)
def test_a_one_sided_limit_in_the_sentence_s_language(written: str, lang: str, said: str) -> None:
    """ "x→0⁻", "0⁺": in a Korean sentence 0 마이너스, 0 플러스; in an English one minus, plus: one voice a sentence."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        # korean19: C 플러스 (a minus anywhere made the text chemistry's)
        ("V⁺ 단자와 V⁻ 단자, C⁺", "ko", "V 플러스 단자와 V 마이너스 단자, C⁺"),
        ("C⁺는 폐포이고 V⁻는 단자", "ko", "C⁺는 폐포이고 V 마이너스는 단자"),  # korean19: C 플러스는
        # korean19: A⁻ (espeak: A hyphen), C 플러스
        ("A⁻ 와 C⁺ 폐포", "ko", "A 마이너스 와 C⁺ 폐포"),
        ("A⁻ 단자와 A⁺ 단자", "ko", "A 마이너스 단자와 A 플러스 단자"),  # korean19: A hyphen, A⁺
        ("The A⁻ node is low.", "ko", "The A minus node is low."),  # korean19: The A⁻ node (hyphen)
        ("The A⁻ node is low.", "en", "The A minus node is low."),  # korean19: The A⁻ node (hyphen)
        # chemistry's as before: a word of it makes every capital's plus an ion's
        ("H⁺ 이온과 C⁺", "ko", "H 플러스 이온과 C 플러스"),
        ("V⁺ 단자와 V⁻ 단자", "ko", "V 플러스 단자와 V 마이너스 단자"),
    ],
)
def test_a_capital_s_minus_says_its_own_plus_only(written: str, lang: str, said: str) -> None:
    """A capital written with a minus has its plus said too; another capital's plus is not made an ion's by it."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        # korean19: x 파이 이상 here. (the Korean bound's words and π in an English sentence)
        (
            "The answer holds for x >= π here.",
            "ko",
            "The answer holds for x greater than or equal to pi here.",
        ),
        ("It holds when x > -π.", "ko", "It holds when x greater than minus pi."),  # korean19: x > -파이.
        ("It holds when x > π.", "ko", "It holds when x greater than pi."),  # korean19: x > 파이.
        ("It holds when x < 2π.", "ko", "It holds when x less than two pi."),  # as before
        # as before: a fraction of π, a Korean sentence's bound, lang=en's
        ("It holds when x < π/2.", "ko", "It holds when x less than pi over two."),  # korean21: x < 파이/2
        ("θ < π이면", "ko", "세타 파이 미만이면"),
        ("x >= π", "en", "x >= π"),
    ],
)
def test_a_bound_on_a_bare_pi_in_an_english_sentence_is_english(written: str, lang: str, said: str) -> None:
    """ "x >= π", "x > -π" in an English sentence of a Korean text: greater than or equal to pi, one voice."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("비율(1:10)", "ko", "비율(1 대 10)"),  # korean19: 비율(한 시 10분)
        ("비율 = 1:10", "ko", "비율은 1 대 10"),  # korean19: 비율은 한 시 10분
        # korean19: one ten
        ("The ratio of A to B is 1:10.", "ko", "The ratio of A to B is one to ten."),
        ("The ratio of sugar to water is 1:10.", "ko", "The ratio of sugar to water is one to ten."),
        # as before: a time in brackets, an English time, lang=en's
        ("회의(1:10)에", "ko", "회의(한 시 10분)에"),
        ("The meeting is at 1:10.", "ko", "The meeting is at one ten."),
        ("The ratio is 1:10.", "en", "The ratio is 1:10."),
    ],
)
def test_a_ratio_after_its_word_in_brackets_or_after_equals_is_no_time(
    written: str, lang: str, said: str
) -> None:
    """ "비율(1:10)", "비율 = 1:10", "The ratio of A to B is 1:10": a ratio, 1 대 10, one to ten, not a time of day."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("x ‹ 2π", "en", "x < 2π"),  # korean19: x ‹ 2π (espeak: x two pi, nothing for "‹")
        ("x › 3", "en", "x > 3"),  # korean19: x › 3
        # as before: a quotation's angle quotes, a Korean text's bound
        ("le ‹ mot ›", "en", "le ‹ mot ›"),
        ("He said ‹hello›.", "en", "He said ‹hello›."),
        ("x ‹ 2πr이면", "ko", "x 2파이r 미만이면"),
    ],
)
def test_an_angle_quote_typed_for_a_bound_is_the_sign_in_english(written: str, lang: str, said: str) -> None:
    """ "x ‹ 2π" with lang=en: the sign espeak says, less than, as in a Korean text."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x가 0⁻으로 갈 때", "x가 0 마이너스로 갈 때"),  # korean19: 0 minus으로
        ("x가 0⁺으로 갈 때", "x가 0 플러스로 갈 때"),  # korean19: 0⁺으로
        ("0⁻은 왼쪽", "0 마이너스는 왼쪽"),  # korean19: 0 minus은
        ("x→0⁺이면", "x에서 0 플러스이면"),  # a copula as written
    ],
)
def test_a_particle_after_a_one_sided_sign_takes_the_word_s_form(written: str, said: str) -> None:
    """ "0⁻으로" written for 0 (영으로): said 0 마이너스로, the particle in the form the said word takes."""
    assert spoken_form(written, "ko") == said
