"""Stop 61's reading leftovers (korean62): each case against what the reading before it said (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean61: 10장 30절에서 11장 30절에, 2장 30절에서 3장 30절까지 (a range of times after a name, a verse range)
        ("요나 10:30~11:30에 왔다.", "요나 열 시 30분에서 열한 시 30분에 왔다."),
        ("미가 2:30-3:30까지 일했다.", "미가 두 시 30분에서 세 시 30분까지 일했다."),
        # as before: a verse range with a word of citing, within a chapter, a full book's name
        ("요나 3:16~4:20에 나온다.", "요나 3장 16절에서 4장 20절에 나온다."),
        ("요나 1:15-17에 왔다.", "요나 1장 15절에서 17절에 왔다."),
        ("요한복음 10:30~11:30에 왔다.", "요한복음 10장 30절에서 11장 30절에 왔다."),
        ("요나 10:30에 왔다.", "요나 열 시 30분에 왔다."),
    ],
)
def test_a_range_of_times_after_a_name_that_is_also_a_book_s(text: str, said: str) -> None:
    """korean61 read a time range after 요나, 미가 as a verse range: 요나 10장 30절에서 11장 30절에 왔다."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("3:16로 이겼다.", "3 대 16으로 이겼다."),  # korean61: 세 시 16분으로 이겼다
        ("3:16으로 졌다.", "3 대 16으로 졌다."),  # korean61: 세 시 16분으로
        ("한국이 일본을 3:0으로 꺾었다.", "한국이 일본을 3 대 0으로 꺾었다."),  # korean61: 세 시로
        ("스코어는 3:16이었다.", "스코어는 3 대 16이었다."),  # korean61: 세 시 16분이었다
        ("10:3로 이겼다.", "10 대 3으로 이겼다."),  # korean61: 10 대 3로 (the writer's particle for 삼)
        ("2:1로 이겼다.", "2 대 1로 이겼다."),  # as before
        # a clock's, as before: no game's verb after it
        ("3:05로 옮겼다.", "세 시 5분으로 옮겼다."),
        ("3:16에 이겼다.", "세 시 16분에 이겼다."),
        ("3:16와 같이 한다.", "세 시 16분과 같이 한다."),
    ],
)
def test_a_score_before_a_game_s_verb(text: str, said: str) -> None:
    """korean61 read a score with a particle, "3:16로 이겼다", as a clock time: 세 시 16분으로 이겼다."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("xₙ₊₁을 구한다.", "x n 플러스 1을 구한다."),  # korean61: x n₊₁을 (the sign and its digit unsaid)
        ("aₙ₋₁을 구한다.", "a n 마이너스 1을 구한다."),  # korean61: a n₋₁을
        ("xₙ₊₁ = 2xₙ", "x n 플러스 1은 2x n"),  # korean61: x n₊₁는 (the particle the subscript's)
        ("aᵢ₊₁₀를 본다.", "a i 플러스 10을 본다."),  # korean61: a i₊₁₀를
        ("xₙ을 구한다.", "x n을 구한다."),  # as before
    ],
)
def test_a_subscript_letter_index_one_more_or_less(text: str, said: str) -> None:
    """korean61 left a subscript index's sign and digit to espeak, which said nothing for them."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean61: 192 점 168 점 0 점 1, the Korean word in an English sentence
        (
            "Connect to 192.168.0.1 now. 그렇다.",
            "Connect to one nine two dot one six eight dot zero dot one now. 그렇다.",
        ),
        (
            "The server is at 10.0.0.1. 그렇다.",
            "The server is at one zero dot zero dot zero dot one. 그렇다.",
        ),
        (
            "Connect to 10.0.0.1:8080 now. 그렇다.",
            "Connect to one zero dot zero dot zero dot one colon eight thousand eighty now. 그렇다.",
        ),
        # as before: a Korean sentence's, a version's chain, no address's part over 255
        ("서버 주소는 192.168.0.1입니다.", "서버 주소는 192 점 168 점 0 점 1입니다."),
        # korean63: a version after its word in English words (korean62: 2 점 10 점 3, the Korean chain)
        ("Install version 2.10.3 now. 그렇다.", "Install version two point ten point three now. 그렇다."),
        ("Use 256.1.1.1 here. 그렇다.", "Use 256 점 1 점 1 점 1 here. 그렇다."),
    ],
)
def test_an_ip_address_in_an_english_sentence(text: str, said: str) -> None:
    """korean61 read an IP address in an English sentence with the Korean 점 between its parts."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean61: Call 911 (the Korean voice's 구백십일)
        ("Call 911. 그렇다.", "Call nine one one. 그렇다."),
        ("Dial 112.", "Dial one one two."),  # korean61: 112
        ("Press 1. 그다음 확인을 누른다.", "Press one. 그다음 확인을 누른다."),  # korean61: Press 1 (일)
        ("Wait 5. 그렇다.", "Wait five. 그렇다."),  # korean61: Wait 5
        ("Add 2.5. 그렇다.", "Add two point five. 그렇다."),  # korean61: Add 2 점 오
        ("- Press 2.", "- Press two."),  # korean61: - Press 2
        # as before: a name's or a label's number, a step not closed by its mark
        ("Tesla Model 3. 그렇다.", "Tesla Model 3. 그렇다."),
        ("Figure 3. 그렇다.", "Figure 3. 그렇다."),
        ("Call 911", "Call 911"),
    ],
)
def test_a_two_word_step_is_english(text: str, said: str) -> None:
    """korean61 read a sentence of a verb and its number by the Korean rules: the digits in Korean."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean61: 7일.까지 (a pause before 까지)
        ("마감은 2026.12.07.까지입니다.", "마감은 2026년 12월 7일까지입니다."),
        ("2026.12.07.에 발표", "2026년 12월 7일에 발표"),  # korean61: 7일.에
        ("2026. 12. 7.까지 제출", "2026년 12월 7일까지 제출"),  # korean61: 7일.까지
        ("26.12.07.까지", "26년 12월 7일까지"),  # korean61: 7일.까지
        # as before: a sentence's point, a weekday's brackets, no date
        ("마감: 2026.12.07.", "마감: 2026년 12월 7일."),
        ("2026.12.7.(월) 발표", "2026년 12월 7일 월요일 발표"),
        ("2026.13.07.까지", "2026 점 13 점 07.까지"),
    ],
)
def test_a_date_s_closing_point_before_a_particle(text: str, said: str) -> None:
    """korean61 left a date's closing point between its 일 and the particle: 2026년 12월 7일.까지."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("x̄ = 3.2", "x 바는 3 점 이"),  # korean61: x̄는 (espeak's x, the bar unsaid)
        ("표본평균 x̄는 모평균의 추정량이다.", "표본평균 x 바는 모평균의 추정량이다."),  # korean61: x̄는
        ("p̂ = 0.4", "p 햇은 0 점 사"),  # korean61: p̂는
        ("ȳ와 x̄의 차이", "y 바와 x 바의 차이"),  # korean61: ȳ와 x̄의 (one precomposed, one combining)
        ("x̃을 구한다.", "x 틸드를 구한다."),  # korean61: x̃을
        ("θ̇는 각속도이다.", "세타 닷은 각속도이다."),  # korean61: 세타̇는
        ("The mean x̄ is 3. 그렇다.", "The mean x bar is 3. 그렇다."),  # korean61: x̄
        # as before: a letter of a word
        ("Māori 언어", "Māori 언어"),
        ("naïve 베이즈", "naïve 베이즈"),
    ],
)
def test_a_formula_letter_s_accent(text: str, said: str) -> None:
    """korean61 left a sample mean's bar, an estimate's hat to espeak, which said the letter alone."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("The mean x̄ is 3.", "The mean x bar is 3."),  # korean61: x̄ (espeak's x)
        ("p̂ = 0.4", "p hat = 0.4"),  # korean61: p̂
        ("The Māori word", "The Māori word"),  # as before
    ],
)
def test_a_formula_letter_s_accent_in_english(text: str, said: str) -> None:
    """korean61 left lang=en's accented formula letters to espeak, which said the letter alone."""
    assert spoken_form(text, "en") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("F = -kx", "F는 마이너스 kx"),  # korean61: F는 -kx (espeak: F는 kx, the sign lost)
        ("a = -x", "a는 마이너스 x"),  # korean61: a는 -x
        ("f(-x) = f(x)", "f(마이너스 x)는 f(x)"),  # korean61: f(-x)
        ("-x² + 1 = 0", "마이너스 x의 2제곱 더하기 1은 0"),  # korean61: -x의 2제곱
        ("y = -(x + 1)", "y는 마이너스 (x 더하기 1)"),  # korean61: y는 -(x 더하기 1)
        ("v = -ωA sin ωt", "v는 마이너스 오메가A 사인 오메가t"),  # korean61: -오메가A
        ("x ≥ -y", "x 마이너스 y 이상"),  # korean61: x ≥ -y (the bound unsaid too)
        # as before: an option, a bullet's hyphen, R's assignment, a number's sign
        ("ls -l 명령", "ls -l 명령"),
        ("-v 옵션을 준다.", "-v 옵션을 준다."),
        ("-전압 측정", "-전압 측정"),
        ("x<-y", "x<-y"),
        ("x = -3", "x는 마이너스 3"),
    ],
)
def test_a_minus_glued_before_a_term(text: str, said: str) -> None:
    """korean61 left a minus before a letter's term to espeak, which said nothing for it: F = -kx heard as F = kx."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("(p = .048)", "(p는 0 점 영사팔)"),  # korean61: p는 .048 (espeak: 영사팔, the point lost)
        ("r = .82", "r은 0 점 팔이"),  # korean61: r은 .82
        ("p<.05이면 유의하다.", "p 0 점 영오 미만이면 유의하다."),  # as before
        ("a = ./run.sh", "a는 ./run.sh"),  # as before: a path
    ],
)
def test_a_decimal_without_its_leading_zero_after_equals(text: str, said: str) -> None:
    """korean61 left "p = .048" to espeak, which said 영사팔: a p-value heard as 48."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("χ² 검정을 한다.", "카이제곱 검정을 한다."),  # korean61: 카이의 2제곱 검정
        ("χ²(2) = 6.5", "카이제곱(2)는 6 점 오"),  # korean61: 카이의 2제곱(2)는
        ("χ^2 = 3.84", "카이제곱은 3 점 팔사"),  # korean61: 카이의 2제곱은
        ("θ² = 1", "세타의 2제곱은 1"),  # as before: another letter's power
    ],
)
def test_the_chi_square_statistic(text: str, said: str) -> None:
    """korean61 read "χ²" as a power, 카이의 2제곱, where a lecturer names the statistic 카이제곱."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean61: x -= (espeak: x equals 1, the minus lost)
        ("x -= 1로 줄인다.", "x minus equals 1로 줄인다."),
        ("total -= price;", "total minus equals price;"),  # korean61: total -= price
        ("x-=1", "x minus equals 1"),  # korean61: x-=1
        ("i--를 쓴다", "i minus minus를 쓴다"),  # korean61: i--를 (espeak: i를)
        # korean61: i--) (espeak: i)
        (
            "for (int i = n; 0 <= i; i--)",
            "for (int i에 n을 대입; i가 0보다 크거나 같다; i minus minus)",
        ),
        # korean61: x -= one (espeak: x equals)
        ("Use x -= 1 here. 그렇다.", "Use x minus equals one here. 그렇다."),
        ("Use i-- here. 그렇다.", "Use i minus minus here. 그렇다."),  # korean61: i-- (espeak: i)
        ("C++17 표준", "C++ 17 표준"),  # korean61: C+플러스 17
        ("C#으로 작성한다.", "C 샵으로 작성한다."),  # korean61: C#으로 (espeak: C hash)
        ("F#과 C#", "F 샵과 C 샵"),  # korean61: F#과 C#
        # as before: espeak's plus plus and plus equals, an option, a dash, a heading, an English sentence's C#
        ("i++를 사용한다.", "i++를 사용한다."),
        ("count += 1", "count += 1"),
        ("C++을 배운다", "C++을 배운다"),
        ("--version 옵션", "--version 옵션"),
        ("그런데--", "그런데--"),
        ("a--b", "a--b"),
        ("### 제목", "제목"),
        ("Use C# here. 그렇다.", "Use C# here. 그렇다."),
    ],
)
def test_code_s_step_down_and_a_language_s_sharp(text: str, said: str) -> None:
    """korean61 left "x -= 1" and "i--" to espeak, which said x equals 1 and i: a decrement heard as an assignment."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a⃗ = F⃗/m", "a 벡터는 F 벡터/m"),  # korean61: a⃗는 F⃗/m (espeak: a, F, the arrow unsaid)
        ("v⃗를 구한다.", "v 벡터를 구한다."),  # korean61: v⃗를
    ],
)
def test_a_vector_s_arrow(text: str, said: str) -> None:
    """korean61 left a vector's combining arrow to espeak, which said the letter alone."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("T = 2π√(L/g)", "T는 2파이루트 (L/g)"),  # korean61: 2파이√(L/g) (espeak said nothing for the root)
        ("2π∞", "2파이무한대"),  # korean61: 2파이∞
        ("λόγος", "λόγος"),  # as before: a Greek word
        ("√2", "루트 2"),  # as before
    ],
)
def test_a_sign_after_a_greek_letter(text: str, said: str) -> None:
    """korean61 took a root or infinity after π for a letter of a Greek word, and left it unsaid."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("(x-μ)²", "(x 빼기 뮤)의 2제곱"),  # korean61: (x-뮤)² (the minus and the power unsaid)
        ("Σ(x-μ)²", "시그마(x 빼기 뮤)의 2제곱"),  # korean61: 시그마(x-뮤)²
        ("(x - μ)²의 평균", "(x 빼기 뮤)의 2제곱의 평균"),  # korean61: (x 빼기 뮤)²의
        ("(1-α)", "(1 빼기 알파)"),  # korean61: (1-알파)
        ("그림 3(a-c)", "그림 3(a-c)"),  # as before: a figure's panels
    ],
)
def test_a_greek_letter_s_term_in_a_bracket(text: str, said: str) -> None:
    """korean61 read a bracket's minus and power only between Latin letters and digits: a variance's (x-μ)² unsaid."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean61: 4제곱로 (the writer's particle for 사)
        ("1e-4로 줄였다.", "1 곱하기 10의 마이너스 4제곱으로 줄였다."),
        ("1e-5를 쓴다.", "1 곱하기 10의 마이너스 5제곱을 쓴다."),  # korean61: 5제곱를
        ("1e-2와 1e-3", "1 곱하기 10의 마이너스 2제곱과 1 곱하기 10의 마이너스 3제곱"),  # korean61: 2제곱와
        ("1e-3으로 설정한다.", "1 곱하기 10의 마이너스 3제곱으로 설정한다."),  # as before
        ("1e6개", "1 곱하기 10의 6제곱개"),  # as before
    ],
)
def test_a_particle_after_scientific_notation(text: str, said: str) -> None:
    """korean61 kept the particle the writer chose for the exponent's digit after 제곱: 4제곱로, 5제곱를."""
    assert spoken_form(text, "ko") == said
