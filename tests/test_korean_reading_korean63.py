"""Stop 61's reading leftovers its reviews found (korean63), each against what the code before read (the comment beside
each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("ü 발음", "ko", "ü 발음"),  # korean62: u 더블 닷 발음
        ("Ä는 독일어 글자다.", "ko", "Ä는 독일어 글자다."),  # korean62: A 더블 닷은
        ("ā", "ko", "ā"),  # korean62: a 바
        ("ā는 1성이다.", "ko", "ā는 1성이다."),  # korean62: a 바는
        ("Ō사카", "ko", "Ō사카"),  # korean62: O 바사카
        ("ñ 발음", "ko", "ñ 발음"),  # korean62: n 틸드 발음
        ("ż는 폴란드어 글자다.", "ko", "ż는 폴란드어 글자다."),  # korean62: z 닷은
        ("The vowel ü is rounded.", "ko", "The vowel ü is rounded."),  # korean62: u double dot
        ("The letter ā is long.", "en", "The letter ā is long."),  # korean62: a bar
        # as korean62: a formula's letter, or a language's letter beside an operator or with a power
        ("ā = 3", "ko", "a 바는 3"),
        ("1 - ā", "ko", "1 빼기 a 바"),
        ("ż = v", "ko", "z 닷은 v"),
        ("ā²", "ko", "a 바의 2제곱"),
        ("ȳ와 x̄의 차이", "ko", "y 바와 x 바의 차이"),
        ("ẋ는 속도다.", "ko", "x 닷은 속도다."),
        ("θ̇는 각속도이다.", "ko", "세타 닷은 각속도이다."),
        ("a⃗ = F⃗/m", "ko", "a 벡터는 F 벡터/m"),
        ("ā = 3", "en", "a bar = 3"),
    ],
)
def test_a_language_s_letter_is_no_formula_s_accent(text: str, lang: str, said: str) -> None:
    """korean62 read a language lesson's letter as a formula letter's accent: "ü 발음" heard as u 더블 닷 발음."""
    assert spoken_form(text, lang) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean62: one dot two dot three dot four (an IP address's digits)
        ("Install version 1.2.3.4 now.", "Install version one point two point three point four now."),
        (
            "Release 2.0.1.3 is out.",
            "Release two point zero point one point three is out.",
        ),  # korean62: two dot zero …
        (
            "Install v1.2.3.4 now.",
            "Install v one point two point three point four now.",
        ),  # korean62: v1 점 2 점 3 점 4
        ("version 1.2.3 is out.", "version one point two point three is out."),  # korean62: 1 점 2 점 3
        ("See section 2.10.1.", "See section two point ten point one."),  # korean62: 2 점 10 점 1
        ("Use Python 3.11 here.", "Use Python three point eleven here."),  # korean62: three point one one
        (
            "The result was significant (p = .048).",
            "The result was significant (p = zero point zero four eight).",
        ),
        ("It is r = .82 here.", "It is r = zero point eight two here."),  # korean62: r = .82, espeak's 팔이
        # as korean62: an IP address, a decimal
        ("The server 10.0.0.1 is up.", "The server one zero dot zero dot zero dot one is up."),
        ("The battery is 3.7V.", "The battery is three point seven volts."),
        ("Use HTTP/1.1 here.", "Use HTTP one point one here."),
    ],
)
def test_an_english_sentence_s_version_and_section(text: str, said: str) -> None:
    """korean62 read a four-part version as an IP address, one dot two dot three dot four, and left "p = .048"."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Python 3.11을 설치한다.", "Python 3 점 11을 설치한다."),  # korean62: 3 점 일일을
        ("파이썬 3.9로 실행", "파이썬 3 점 9로 실행"),  # korean62: 3 점 구로
        ("CUDA 12.1 설치", "CUDA 12 점 1 설치"),
        ("Node 18.12 버전", "Node 18 점 12 버전"),
        ("Python 3.10", "Python 3 점 10"),  # korean62: 3 점 일영
        # as korean62: a name not one of a language's or a platform's, a three-part version
        ("MyPython 3.11", "MyPython 3 점 일일"),
        ("Python 3.11.4", "Python 3 점 11 점 4"),
    ],
)
def test_a_language_s_version(text: str, said: str) -> None:
    """korean62 read a language's version as a decimal, "Python 3.11" 3 점 일일 (a version is 삼 점 십일)."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("-a ≤ x ≤ a", "x는 마이너스 a 이상 a 이하"),  # korean62: -a ≤ x ≤ a (espeak: the signs unsaid)
        ("-a < x < a", "x는 마이너스 a 초과 a 미만"),  # korean62: as written
        ("-L/2 ≤ x ≤ L/2", "x는 마이너스 2분의 L 이상 2분의 L 이하"),  # korean62: as written
        ("-L/2 < x < L/2에서", "x가 마이너스 2분의 L 초과 2분의 L 미만에서"),  # korean62: as written
        ("x ≤ -y ≤ z", "마이너스 y는 x 이상 z 이하"),  # korean62: x 마이너스 y z 이하 이하
        ("0 ≤ x ≤ -a", "x는 0 이상 마이너스 a 이하"),  # korean62: 0 이상 x 마이너스 a 이하
        ("-σ ≤ x ≤ σ", "x는 마이너스 시그마 이상 시그마 이하"),  # korean62: as written
        # as korean62: a number's, π's and an absolute value's minus, names ranked, a longer chain
        ("-1 ≤ x ≤ 1", "x는 마이너스 1 이상 1 이하"),
        ("-π/2 < θ < π/2", "세타는 마이너스 2분의 파이 초과 2분의 파이 미만"),
        ("-|x| ≤ x ≤ |x|", "x는 마이너스 x의 절댓값 이상 x의 절댓값 이하"),
        ("-A < B < C", "-A < B < C"),
        ("-a < b < c < d", "-a < b < c < d"),
    ],
)
def test_a_chain_s_glued_minus_before_a_letter(text: str, said: str) -> None:
    """korean62 left a chain whose side a minus is glued to, "-a ≤ x ≤ a": espeak said a x a, the bounds unsaid."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("x̄ - μ", "ko", "x 바 빼기 뮤"),  # korean62: x 바 - 뮤 (espeak: the minus unsaid)
        ("x̄ − μ = 0", "ko", "x 바 빼기 뮤는 0"),  # korean62: x 바 − 뮤는 0
        ("(x̄ - μ)²", "ko", "(x 바 빼기 뮤)의 2제곱"),  # korean62: (x 바 - 뮤)²
        ("(x̄ - μ)²의 평균", "ko", "(x 바 빼기 뮤)의 2제곱의 평균"),  # korean62: (x 바 - 뮤)²의 평균
        ("p̂(1-p̂)", "ko", "p 햇(1 빼기 p 햇)"),  # korean62: p 햇(1-p 햇)
        ("x̄₁ = 3", "ko", "x 바 1은 3"),  # korean62: x 바₁는 3
        ("x̄₁ - x̄₂", "ko", "x 바 1 빼기 x 바 2"),  # korean62: x 바₁ - x 바₂
        ("(ȳ - 3)³", "ko", "(y 바 빼기 3)의 3제곱"),  # korean62: (y 바 - 3)³
        ("x̄₁ = 3", "en", "x bar 1 = 3"),  # korean62: x bar₁ = 3
        # as korean62: a power, a particle, a language's letter beside a hyphen, a bracket without an accent
        ("x̄² - 1", "ko", "x 바의 2제곱 빼기 1"),
        ("x̄는 평균이다.", "ko", "x 바는 평균이다."),
        ("ü-Laut", "ko", "ü-Laut"),
        ("(x - μ)²", "ko", "(x 빼기 뮤)의 2제곱"),
    ],
)
def test_an_accented_letter_s_operators(text: str, lang: str, said: str) -> None:
    """korean62 named the accent and left the operators beside it: "x̄ - μ" heard as x 바 뮤, "(x̄ - μ)²" without its
    power, "x̄₁ = 3" with the particle after 바."""
    assert spoken_form(text, lang) == said


def test_a_plain_power_s_minus_beside_an_accented_letter_is_the_powers_rule_s() -> None:
    """An accented letter elsewhere in the text leaves another formula's unspaced minus to its own rule."""
    assert spoken_form("x²-y²이고 x̄ - μ", "ko") == "x의 2제곱 마이너스 y의 2제곱이고 x 바 빼기 뮤"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("2x̄ = 4", "2 x 바는 4"),  # korean62: 2배 바는 4 (the x before 바 read as times)
        ("3x̄를 구한다", "3 x 바를 구한다"),  # korean62: 3배 바를
        ("10x̃", "10 x 틸드"),  # korean62: 10배 틸드
        # as korean62: another letter's coefficient, a plain x's times
        ("2p̂", "2p 햇"),
        ("3x 크기", "3배 크기"),
    ],
)
def test_an_accented_x_after_its_coefficient_is_no_times(text: str, said: str) -> None:
    """korean62 named the accent after a coefficient's x, and the times rule then read "2x 바" as 2배 바."""
    assert spoken_form(text, "ko") == said
