"""Stop 60's leftovers of the Korean/English reading (korean60): each case against what read59k read (the comment
beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "α⁺β⁻ 상태",
            "알파 플러스 베타 마이너스 상태",
        ),  # read59k: 알파⁺베타 마이너스 (the first sign unsaid)
        ("π⁺π⁻가 생성된다", "파이 플러스 파이 마이너스가 생성된다"),  # read59k: 파이⁺파이 마이너스가
        # as read59k read them: one letter's sign, with a particle, before a Hangul word
        ("Σ⁻ 입자", "시그마 마이너스 입자"),
        ("α⁺는 양이온", "알파 플러스는 양이온"),
        ("α⁺한 값", "알파 플러스한 값"),
    ],
)
def test_a_pair_of_greek_letters_with_signs_says_each_sign(text: str, said: str) -> None:
    """read59k said a Greek letter's sign only where no letter followed: "α⁺β⁻" lost its plus (espeak said nothing for
    the superscript)."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("x₀.₅ 값", "x 제로 포인트 파이브 값"),  # read59k: x₀.₅ (espeak: x, the index unsaid)
        ("α₀.₂₅ 값", "알파 제로 포인트 투 파이브 값"),  # read59k: 알파₀.₂₅
        ("x₀.₅와 y₀.₅", "x 제로 포인트 파이브와 y 제로 포인트 파이브"),
        ("NCM₀.₈ 양극", "N-C-M 제로 포인트 에잇 양극"),  # read59k: N-C-M제로.₈ (the .8 unsaid)
        ("LFP₀.₅ 양극", "L-F-P 제로 포인트 파이브 양극"),
        # as read59k read them: a half-life's, a formula's, a cathode's, a name's part
        ("T₀.₅ 반감기", "T 제로 포인트 파이브 반감기"),
        ("CO₀.₅ 값", "C-O 제로 포인트 파이브 값"),
        (
            "LiNi₀.₈Co₀.₁Mn₀.₁O₂ 양극",
            "L-I-N-I 제로 포인트 에잇 C-O 제로 포인트 원 M-N 제로 포인트 원 O투 양극",
        ),
        ("file_x₀.₅ 값", "file_x₀.₅ 값"),
    ],
)
def test_a_decimal_index_is_said_after_a_small_letter_or_an_acronym(text: str, said: str) -> None:
    """read59k said a decimal subscript after a capital of its own or an element's symbol only: a small letter's
    "x₀.₅" and an acronym's "NCM₀.₈" lost their index or its fraction."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # read59k: three point five, not 4 (the 4 the Korean voice's 사)
        (
            "The answer is 3.5, not 4 here. 그렇습니다.",
            "The answer is three point five, not four here. 그렇습니다.",
        ),
        (
            "The answer is 4, not 3.5 here. 그렇습니다.",
            "The answer is four, not three point five here. 그렇습니다.",
        ),
        ("It is 3.5, not 4, and more. 그렇다.", "It is three point five, not four, and more. 그렇다."),
        ("It is 3.5 or 4 volts. 그렇다.", "It is three point five or four volts. 그렇다."),
        # read59k: 3에서 5 dollars, 5 dollars (the Korean rules' range and digits)
        ("It costs 3~5 dollars here. 그렇습니다.", "It costs three to five dollars here. 그렇습니다."),
        ("It costs 5 dollars here. 그렇습니다.", "It costs five dollars here. 그렇습니다."),
        # read59k: 2분의 x (Korean words in an English sentence)
        ("The value is x/2 here. 그렇습니다.", "The value is x over two here. 그렇습니다."),
        (
            "The value is x/2, not y/3 here. 그렇습니다.",
            "The value is x over two, not y over three here. 그렇습니다.",
        ),
        # as read59k read them: a year alone, a name's version, a path, a division by a decimal, a Korean sentence
        ("In 2024 we grew. 그렇다.", "In 2024 we grew. 그렇다."),
        ("It uses HTTP/2 here. 그렇다.", "It uses HTTP 2 here. 그렇다."),
        ("Go to a/x/2 here. 그렇다.", "Go to a/x/2 here. 그렇다."),
        ("The rate is x/1.5 here.", "The rate is x/one point five here."),
        ("값은 x/2이다.", "값은 2분의 x이다."),
    ],
)
def test_an_english_sentence_s_numbers_are_english_beside_one_said_so(text: str, said: str) -> None:
    """read59k said a decimal in English words and left the whole number beside it, a range before a currency's name
    and a letter's division to the Korean rules: two languages in one sentence."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        # read59k: 알파, 델타x, 2알파, 전년 대비, 시그마의 2제곱 (Korean words in an English sentence)
        ("The angle α is small here. 그렇습니다.", "ko", "The angle alpha is small here. 그렇습니다."),
        ("The angle α is small here.", "ko", "The angle alpha is small here."),
        (
            "The Δx is small and 2α grows here. 그렇다.",
            "ko",
            "The Delta x is small and 2 alpha grows here. 그렇다.",
        ),
        ("The α⁺β⁻ state is here. 그렇다.", "ko", "The alpha plus beta minus state is here. 그렇다."),
        ("Here σ² is the variance. 그렇다.", "ko", "Here sigma squared is the variance. 그렇다."),
        (
            "Revenue grew 5% YoY here. 그렇습니다.",
            "ko",
            "Revenue grew five percent year over year here. 그렇습니다.",
        ),
        ("Revenue grew QoQ here. 그렇습니다.", "ko", "Revenue grew quarter over quarter here. 그렇습니다."),
        ("Here σ² = 1 holds.", "en", "Here σ squared = 1 holds."),  # read59k: σ² (espeak: sigma two)
        # as read59k read them: a mother, a Korean sentence's letter, a bound's letter in an English sentence
        ("It is my MoM here. 그렇습니다.", "ko", "It is my MoM here. 그렇습니다."),
        ("각도 α는 작다.", "ko", "각도 알파는 작다."),
        ("매출이 YoY 5% 증가했다.", "ko", "매출이 전년 대비 5 퍼센트 증가했다."),
        ("It holds for x < 2π here. 그렇다.", "ko", "It holds for x less than two pi here. 그렇다."),
    ],
)
def test_an_english_sentence_s_greek_letters_and_report_words_are_english(
    text: str, lang: str, said: str
) -> None:
    """read59k named a Greek letter and a report's "YoY" in Korean inside an English sentence of a Korean text (the
    Korean rules ran after the English ones): The angle 알파 is small, grew five percent 전년 대비."""
    assert spoken_form(text, lang) == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # read59k: A와 B holds, x는 x plus one, x는 3 (the Korean rules' particles in an English sentence)
        ("Here A ↔ B holds. 그렇다.", "Here A and B holds. 그렇다."),
        ("Here p ↔ q holds. 그렇다.", "Here p if and only if q holds. 그렇다."),
        ("Here x ← x + 1 is an update. 그렇다.", "Here x gets x plus one is an update. 그렇다."),
        ("Here x ← 3 is an update. 그렇다.", "Here x gets three is an update. 그렇다."),
        # read59k: x는 3을 대입한다, x는 x 더하기 1로 (a topic's particle beside the verb's object)
        ("x ← 3을 대입한다.", "x에 3을 대입한다."),
        ("x ← y를 넣는다.", "x에 y를 넣는다."),
        ("x ← x + 1로 갱신한다.", "x를 x 더하기 1로 갱신한다."),
        ("합 ← 평균값으로 설정", "합을 평균값으로 설정"),
        ("x ← 0으로 초기화", "x를 0으로 초기화"),
        # as read59k read them: an assignment alone, a clause's ending after it, a Korean sentence's "↔"
        ("x ← x + 1", "x는 x 더하기 1"),
        ("x ← 3, y ← 4", "x는 3, y는 4"),
        ("A ← B 이므로", "A는 B 이므로"),
        ("A ← B이므로", "A는 B이므로"),
        ("충전 ↔ 방전을 반복한다", "충전과 방전을 반복한다"),
    ],
)
def test_a_left_arrow_and_a_two_way_arrow_take_the_sentence_s_words(text: str, said: str) -> None:
    """read59k read "←" and "↔" with the Korean rules' particles in an English sentence too (A와 B holds), and "←" as
    a topic's 는 before an object's particle, x는 3을 대입한다."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # read59k: The F-E atom (the Korean text's spelling in an English sentence)
        (
            "Fe³⁺ 이온이 생긴다. The Fe atom loses electrons here.",
            "F-E 쓰리 플러스 이온이 생긴다. The Fe atom loses electrons here.",
        ),
        # as read59k read them: a Korean sentence's, a formula's
        ("Fe³⁺ 이온과 Fe 원자", "F-E 쓰리 플러스 이온과 F-E 원자"),
        ("Cu²⁺ + 2e⁻ → Cu", "C-U 투 플러스 플러스 2 e 마이너스에서 C-U"),
    ],
)
def test_an_element_in_an_english_sentence_is_not_spelled(text: str, said: str) -> None:
    """read59k spelled an element bare beside its spelled ion anywhere in the text, in an English sentence too, whose
    own ion, "The Fe³⁺ ion", is English: Fe three plus."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # read59k: 8080 대 80, 스물두 시 22분 (a score's word, a clock's)
        (
            "docker run -p 8080:80 nginx 명령으로 실행합니다.",
            "docker run -p 8080 콜론 80 nginx 명령으로 실행합니다.",
        ),
        ("docker run -p 22:22 sshd 로 띄운다.", "docker run -p 22 콜론 22 sshd 로 띄운다."),
        # as read59k read them: a ratio, a clock
        ("비율은 10:3 입니다.", "비율은 10 대 3 입니다."),
        ("회의는 10:30에 시작한다.", "회의는 열 시 30분에 시작한다."),
    ],
)
def test_a_container_s_port_mapping_says_its_colon(text: str, said: str) -> None:
    """read59k read a port mapping's colon as a ratio's 대 or a clock's 시."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("x<5>y 이면", "x와 y는 5 미만 이면"),  # read59k: x 5 미만 미만 y (each sign a bound of its own)
        ("x < 5 > y 이면", "x와 y는 5 미만 이면"),
        ("a ≤ 3 ≥ b", "a와 b는 3 이하"),
        ("x > 0 < y 일 때", "x와 y는 0 초과 일 때"),
        ("l < 3 > m", "l과 m은 3 미만"),
        # as read59k read them: a generic type's brackets, a chain that runs one way
        ("Array<5> x;", "Array<5> x;"),
        ("vector<int> v;", "vector<int> v;"),
        ("a<b>c", "a<b>c"),
        ("a < b > c", "a < b > c"),
        ("0 < x < 1", "x는 0 초과 1 미만"),
    ],
)
def test_a_peak_between_two_letters_bounds_both(text: str, said: str) -> None:
    """read59k read "x<5>y" as two bounds in a row, x 5 미만 미만 y: the second sign's word after the first's; a letter
    between, "a<b>c", held as written as k5 held it."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "요한복음 3:16 말씀입니다.",
            "요한복음 3장 16절 말씀입니다.",
        ),  # read59k: 요한복음 세 시 16분 (a clock's)
        ("마태복음 10:3 참조", "마태복음 10장 3절 참조"),  # read59k: 10 대 3 (a ratio's)
        ("창세기 1:1에 나온다.", "창세기 1장 1절에 나온다."),
        ("시편 23:1-6을 읽자.", "시편 23장 1절에서 6절을 읽자."),
        ("고린도전서 13:4~7절", "고린도전서 13장 4절에서 7절"),
        ("요한복음 3:16절 말씀", "요한복음 3장 16절 말씀"),
        # as read59k read them: a score, a clock, a book's abbreviation
        ("10:3으로 이겼다.", "10 대 3으로 이겼다."),
        ("오전 10:30 예배", "오전 열 시 30분 예배"),
        ("요 3:16", "요 세 시 16분"),
    ],
)
def test_a_bible_verse_is_cited_by_chapter_and_verse(text: str, said: str) -> None:
    """read59k read a verse's "3:16" after its book as a clock or a ratio, 요한복음 세 시 16분, 마태복음 10 대 3."""
    assert spoken_form(text, "ko") == said
