"""Review of korean62's own changes (rvk62): lookalikes of its new rules, each against what korean62 read (the comment
beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("x̄² = 3", "ko", "x 바의 2제곱은 3"),  # korean62: x 바는 3 (the power dropped as a word's footnote)
        ("σ̂²을 구한다.", "ko", "시그마 햇의 2제곱을 구한다."),  # korean62: 시그마 햇을
        ("x̄^2 = 3", "ko", "x 바의 2제곱은 3"),  # korean62: x 바^2는 3
        ("x̂³", "ko", "x 햇의 3제곱"),  # korean62: x 햇
        (
            "The variance σ̂² is 3. 그렇다.",
            "ko",
            "The variance sigma hat squared is 3. 그렇다.",
        ),  # korean62: 의 2제곱
        ("The mean x̄² is 3.", "en", "The mean x bar squared is 3."),  # korean62: x bar²
        ("x̄⁴", "en", "x bar to the power of 4"),  # korean62: x bar⁴
        # as before: no power, a particle
        ("x̄는 평균이다.", "ko", "x 바는 평균이다."),
        ("p̂ = 0.4", "en", "p hat = 0.4"),
    ],
)
def test_an_accented_letter_s_power(text: str, lang: str, said: str) -> None:
    """korean62 named the accent in Korean and then took the power after 바 for a word's footnote: x̄² heard as x 바."""
    assert spoken_form(text, lang) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("cmd [-h] [-v] 파일", "cmd [-h] [-v] 파일"),  # korean62: [마이너스 h] [마이너스 v]
        ("usage: tool [-f FILE]", "usage: tool [-f FILE]"),  # korean62: [마이너스 f FILE]
        ("[-v|--verbose]", "[-v|--verbose]"),  # korean62: [마이너스 v|--verbose]
        ("상세 출력(-v)을 켠다", "상세 출력(-v)을 켠다"),  # korean62: 출력(마이너스 v)을
        ("(-rf 옵션)", "(-rf 옵션)"),  # korean62: (마이너스 rf 옵션)
        ("(-d) 옵션", "(-d) 옵션"),  # korean62: (마이너스 d) 옵션
        # as korean62: a call's, a sign's or a formula's bracket
        ("f(-x) = f(x)", "f(마이너스 x)는 f(x)"),
        ("y = -(-x)", "y는 마이너스 (마이너스 x)"),
        ("a + (-b)", "a 더하기 (마이너스 b)"),
        ("(-x)^2 = x^2", "(마이너스 x)의 2제곱은 x의 2제곱"),
        ("구간 [-a, a]에서", "구간 [마이너스 a, a]에서"),
        ("(-x + 1)", "(마이너스 x 더하기 1)"),
    ],
)
def test_a_command_s_option_in_brackets(text: str, said: str) -> None:
    """korean62 read a usage line's bracketed option as a glued minus: "[-h]" heard as 마이너스 h."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize("text", ["3--5", "1--2쪽", "2020--2024년"])
def test_a_double_hyphen_between_numbers_is_no_step_down(text: str) -> None:
    """korean62 read a TeX range's "--" between numbers as code's step down, 3 minus minus5: English words glued to the
    number (the range itself is left as before korean62, a leftover)."""
    assert "minus" not in spoken_form(text, "ko")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("i--를 쓴다", "i minus minus를 쓴다"),
        ("arr[i]--", "arr[i] minus minus"),
        ("x1--;", "x1 minus minus;"),
    ],
)
def test_a_step_down_after_a_name_as_korean62(text: str, said: str) -> None:
    """A step down after a name, a bracket or a name's digit is still code's, as korean62 read it."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("점수는 10:30부터 공개된다.", "점수는 열 시 30분부터 공개된다."),  # korean62: 10 대 30부터
        ("점수가 10:30에 발표된다.", "점수가 열 시 30분에 발표된다."),  # korean62: 10 대 30에
        ("스코어 9:00까지 입력", "스코어 아홉 시까지 입력"),  # korean62: 9 대 00까지
        ("03:05로 이겼다.", "세 시 5분으로 이겼다."),  # korean62: 03 대 05로
        # as korean62: a score
        ("점수는 3:16이었다.", "점수는 3 대 16이었다."),
        ("3:16로 이겼다.", "3 대 16으로 이겼다."),
        ("한국이 일본을 3:0으로 꺾었다.", "한국이 일본을 3 대 0으로 꺾었다."),
    ],
)
def test_a_time_after_the_word_score(text: str, said: str) -> None:
    """korean62 read any time after 점수 or 스코어 as a score: the scores' release at 10:30 heard as 10 대 30부터."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("-X-ray 촬영", "-X-ray 촬영"),  # korean62: 마이너스 X-ray 촬영
        ("-E-mail 주소", "-E-mail 주소"),  # korean62: 마이너스 E-mail
        ("-C++ 기초\n-Java 기초", "-C++ 기초\n-Java 기초"),  # korean62: 마이너스 C++ 기초
        ("-A+ 학점: 95점 이상", "-A+ 학점: 95점 이상"),  # korean62: 마이너스 A+ 학점
        ("-f - 파일", "-f - 파일"),  # korean62: 마이너스 f - 파일
        # as korean62: a formula opening a line
        ("-x² + 1 = 0", "마이너스 x의 2제곱 더하기 1은 0"),
        ("-n + 1 = 0", "마이너스 n 더하기 1은 0"),
        ("-a = b", "마이너스 a는 b"),
    ],
)
def test_a_bullet_s_hyphen_before_a_capital_s_word(text: str, said: str) -> None:
    """korean62 read a glued bullet's hyphen before a letter and a sign as a formula's minus: -X-ray 마이너스 X-ray."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    "text",
    ["=-=-=-=-=-=", "제목\n=-=-=-=-=\n본문", "-=-=-=-=-", "-=-=- 중요 -=-=-"],
)
def test_a_rule_of_hyphens_and_equals_is_no_formula(text: str) -> None:
    """korean62 read a plain-text rule's "=-" and "-=" as a glued minus and code's step, 마이너스는 마이너스는, minus equals."""
    said = spoken_form(text, "ko")
    assert "마이너스" not in said
    assert "minus" not in said


@pytest.mark.parametrize(
    ("text", "said"),
    [  # as korean62
        ("x -= 1로 줄인다.", "x minus equals 1로 줄인다."),
        ("x -= (a+b)", "x minus equals (a 플러스 b)"),
        ("F = -kx", "F는 마이너스 kx"),
        ("x ≥ -y", "x 마이너스 y 이상"),
    ],
)
def test_a_step_and_a_minus_beside_such_a_rule_s_signs(text: str, said: str) -> None:
    """Code's "-=" before a term and a minus after "=" before a letter are still read."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("x > -∞", "x 마이너스 무한대 초과"),  # korean62: x 마이너스 초과 무한대 (greater than infinity)
        ("f(x) > -∞이면", "f(x) 마이너스 무한대 초과이면"),  # korean62: f(x) 마이너스 초과 무한대이면
        ("x < ∞", "x 무한대 미만"),  # korean62: x < 무한대 (the bound unsaid)
        ("x > -b/a", "x > 마이너스 b/a"),  # korean62: x 마이너스 초과 b/a
        # as korean62
        ("x ≥ -y", "x 마이너스 y 이상"),
        ("x > -2b", "x 마이너스 2b 초과"),
        ("0 < x < ∞", "x는 0 초과 무한대 미만"),
    ],
)
def test_a_bound_on_a_glued_minus_s_term(text: str, said: str) -> None:
    """korean62's 마이너스 before ∞ or a fraction was taken for the whole bound: x > -∞ heard as greater than infinity."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("첫째<br>-둘째", "첫째<br>-둘째"),  # korean62: 첫째<br>마이너스 둘째 (a tag's ">" taken for a bound)
        ("<li>-항목</li>", "<li>-항목</li>"),  # korean62: <li>마이너스 항목
        ("첫째<br> -둘째", "첫째<br> -둘째"),  # korean62: 첫째<br> 마이너스 둘째
        # as korean62: a bound's sign after a letter
        ("x>-y", "x 마이너스 y 초과"),
        ("2x>-y", "2x 마이너스 y 초과"),
    ],
)
def test_a_hyphen_after_a_tag_s_bracket(text: str, said: str) -> None:
    """korean62 read a markup tag's closing ">" before a glued bullet as a bound's: <br>-둘째 heard as 마이너스 둘째."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "구간 (-∞, 0)에서",
            "구간 (마이너스 무한대, 0)에서",
        ),  # korean62: (-무한대, 0) (the sign unsaid, as (-a, b) was)
        ("[-π, π]", "[마이너스 파이, 파이]"),  # korean62: [-파이, 파이]
        ("f(-π)", "f(마이너스 파이)"),  # korean62: f(-파이)
        ("(-π/2, π/2)", "(마이너스 2분의 파이, 2분의 파이)"),  # korean62: (-2분의 파이, …)
        # as korean62: a letter's term, an option
        ("(-a, b)", "(마이너스 a, b)"),
        ("옵션(-π)", "옵션(-파이)"),
    ],
)
def test_a_minus_glued_before_a_greek_letter_or_infinity_in_a_bracket(text: str, said: str) -> None:
    """korean62 read an interval's glued minus before a letter, (-a, b), but not before ∞ or π: (-∞, 0) heard as (∞, 0)."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "xᵢ₁과 xᵢ₂의 차이",
            "x i₁과 x i₂의 차이",
        ),  # korean62: xᵢ₁과 xᵢ₂의 (the index unsaid, as korean61 read it)
        ("aᵢ₂를 구한다.", "a i₂를 구한다."),  # korean62: aᵢ₂를
        # as korean62
        ("xₙ₊₁을 구한다.", "x n 플러스 1을 구한다."),
        ("aₙ₋₁을 구한다.", "a n 마이너스 1을 구한다."),
    ],
)
def test_a_letter_index_before_a_digit_index(text: str, said: str) -> None:
    """korean62's index pattern took no index a subscript digit follows: "xᵢ₁" was left whole, its i unsaid."""
    assert spoken_form(text, "ko") == said
