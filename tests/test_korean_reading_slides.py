"""Korean slide text a lecturer reads that the reading got wrong: a number before a word that only opens like a
counter, arrows and marks, "≠", English ordinals in compounds, a level's "Lv." (`korean_reading`,
`korean_numerals`, `korean_marks`).

Each reading is phonemized by the real espeak tokenizer (what ZipVoice and the espeak engine speak) and
compared with the words a Korean lecturer says; the comment says what was said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    return EspeakTokenizer()


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("레벨 3 달성", "레벨 삼 달성"),  # 세 달성: the native number of the counter 달 (months)
        ("버전 2 개발", "버전 이 개발"),  # 두 개발
        ("모듈 3 시스템", "모듈 삼 시스템"),  # 세 시스템
        ("그룹 2 잔여 용량", "그룹 이 잔여 용량"),  # 두 잔여
        ("표 3 살펴보기", "표 삼 살펴보기"),  # 세 살펴보기
    ],
)
def test_a_number_before_a_word_that_only_opens_like_a_counter_is_sino_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("총 3 명이 참석", "총 세 명이 참석"),
        ("3 시간동안 충전", "세 시간동안 충전"),
        ("오후 3 시부터", "오후 세 시부터"),
        ("2 가지를 봅니다", "두 가지를 봅니다"),
        ("20 살이다", "스무 살이다"),
        ("3 달 후", "세 달 후"),
    ],
)
def test_a_spaced_counter_with_its_particles_still_takes_a_native_number(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A → B로 변환", "A에서 B로 변환"),  # espeak said nothing for the arrow
        ("화학 에너지 → 전기 에너지", "화학 에너지에서 전기 에너지"),
        ("3.7V → 4.2V", "3 점 칠 볼트에서 4 점 이 볼트"),
        ("A -> B", "A에서 B"),  # "A" and "B" side by side
        ("x → ∞", "x가 무한대로"),  # a limit: nothing for the arrow
        ("x → 0", "x가 0으로"),
        ("높은 온도 ⇒ 수명 단축", "높은 온도면 수명 단축"),
        ("전압 상승 ⇒ 위험", "전압 상승이면 위험"),
        ("A => B", "A면 B"),  # English "equals"
        ("충전 ↔ 방전", "충전과 방전"),
        ("A ↔ B", "A와 B"),
        ("x ← x + 1", "x는 x 더하기 1"),  # as "="
    ],
)
def test_an_arrow_links_its_terms_as_a_lecturer_says_it(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("→ 충전 속도 감소", "충전 속도 감소"),  # a bullet
        ("장점:\n→ 빠르다", "장점:\n 빠르다"),
        ("전류 →\n다음", "전류 \n다음"),  # nothing after it: no dangling 에서
        ("p->next", "p->next"),  # code, no spaces
    ],
)
def test_an_arrow_that_opens_or_ends_a_line_or_sits_in_code_is_no_link(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≠ 0", "x는 0이 아님"),  # espeak: English "not equal to"
        ("a ≠ b", "a는 b가 아님"),
        ("결과 ≠ 원인", "결과는 원인이 아님"),
        ("x ≠ 2y + 1", "x 낫 이퀄 2y 더하기 1"),  # no single term after it to take a particle
    ],
)
def test_not_equal_is_said_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("삼성®의 제품", "삼성의 제품"),  # the "®" cut the particle from its word: 삼성 의
        ("Galaxy™의 화면", "Galaxy의 화면"),
        ("© 2024 삼성", "저작권 2024 삼성"),  # nothing for the "©"
        ("Copyright © 2024 Samsung", "Copyright 2024 Samsung"),  # said once
        ("Lv. 3 달성", "레벨 삼 달성"),  # "el vee", a pause, then 세 달성
    ],
)
def test_marks_and_a_level_are_read_as_a_lecturer_reads_them(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2nd-order 필터", "second-order 필터"),  # 두 번째-order: half Korean, half English
        ("3rd-party 라이브러리", "third-party 라이브러리"),
        ("21st-century 기술", "twenty-first-century 기술"),
        ("20th-century", "twentieth-century"),
    ],
)
def test_an_english_ordinal_in_an_english_compound_is_said_in_english(tokenizer, written, said):
    assert spoken(written) == said
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_an_english_ordinal_alone_is_still_read_in_korean():
    assert spoken("2nd 세대, 1st") == "두 번째 세대, 첫 번째"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("9am-6pm", "오전 아홉 시에서 오후 여섯 시"),  # 오전 아홉 시-오후 여섯 시: no 에서
        ("1pm~3pm", "오후 한 시에서 오후 세 시"),  # the tilde dropped, no 에서
        ("AM 9:00 - PM 6:00", "오전 아홉 시에서 오후 여섯 시"),
        ("1-3pm 회의", "오후 한 시에서 세 시 회의"),  # 1-오후 세 시
        ("3 p.m. 회의", "오후 세 시 회의"),  # left: 삼, "p", "m" and two pauses
        ("회의는 3 p.m.", "회의는 오후 세 시."),  # the point that ends the text kept
    ],
)
def test_times_of_day_with_their_half_in_ranges_and_with_points(tokenizer, written, said):
    assert spoken(written) == said
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("NCM811 배터리", "NCM 팔일일 배터리"),  # 팔백십일, eight hundred and eleven
        ("NCM 622와 LFP", "NCM 육이이와 LFP"),
        ("NCA-955", "NCA 구오오"),
        ("5년/10만km 보증", "5년 10만km 보증"),  # English "slash"
    ],
)
def test_a_cathodes_ratio_and_a_slash_before_a_number_are_read_as_said(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3.7±0.1V", "3.7 플러스마이너스 0.1V"),  # English "plus or minus"
        ("정격 ± 5%", "정격 플러스마이너스 5%"),
        ("x±1", "x 플러스마이너스 1"),
        ("매출 ▲3.5%", "매출 증가 3.5%"),  # nothing for the sign
        ("영업이익 ▼2%", "영업이익 감소 2%"),
        ("△5억 원", "마이너스 5억 원"),  # an account's negative number
        ("▲ 안전 관리 강화", "안전 관리 강화"),  # a bullet stays unsaid
    ],
)
def test_a_tolerance_and_the_signs_of_korean_reports_before_a_number(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1) 안전성\n2) 경제성", "첫 번째, 안전성\n두 번째, 경제성"),  # 일 안전성, 이 경제성
        ("(1) 양극\n(2) 음극", "첫 번째, 양극\n두 번째, 음극"),
        ("IP67 등급", "IP 육칠 등급"),  # 육십칠
    ],
)
def test_a_bracketed_list_mark_opening_a_line_and_a_protection_rating(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["식 (1)에서", "값은 (1) 또는 (2)", "f(1) 값", "IP 주소"])
def test_a_bracketed_number_inside_a_line_is_no_list_mark(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("전년比 10%", "전년비 10%"),  # the Hangul spelled as jamo, then "Chinese letter"
        ("전년對比 증가", "전년대비 증가"),
        ("前年 대비", "전년 대비"),  # "Chinese letter" twice
        ("約 10%", "약 10%"),
        ("株式會社 삼성", "주식회사 삼성"),
        ("年間 계획", "연간 계획"),  # 年 opening a word
        ("매출(賣出)이 늘었다", "매출이 늘었다"),  # a gloss: not read again
        ("용(龍)의 해", "용의 해"),
    ],
)
def test_hanja_on_a_slide_is_read_in_korean_or_left_unsaid(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_a_hanja_run_with_a_character_it_does_not_know_is_left_out_whole():
    assert spoken("龍虎 대결") == "  대결"  # nothing for it, not "Chinese letter" twice
