"""Korean lecture text read as a lecturer says it: ranges, slashes, ratios, units, dates, acronyms and
the signs of Korean documents (`korean_reading`, `korean_marks`). Its list items, headings and outline
marks, and where their sentences end, are tested in `test_korean_lecture_items.py`; its formulas and
code in `test_korean_lecture_formulas.py`; the later rules for the notation of numbers (times,
versions, addresses, phone numbers, …) in `test_korean_reading_notation.py`.

Each reading is phonemized by the real espeak tokenizer (what ZipVoice and the espeak engine speak) and
compared with the words a Korean lecturer says; the comment says what espeak said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3-5개의 셀", "3에서 5개의 셀"),  # espeak: "삼 오 개", three five
        ("10-20% 감소", "10에서 20 퍼센트 감소"),
        ("3-5km 구간", "3에서 5 킬로미터 구간"),
        ("1.5-2.5V", "1 점 오에서 2 점 오 볼트"),
    ],
)
def test_a_hyphen_range_before_a_counter_or_unit_is_read_as_a_range(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["3-5", "3-5로 졌다", "123-45번지", "COVID-19"])
def test_a_hyphen_that_is_no_range_is_left(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "그림 2-1 시스템 구성도",  # 시, then a word: it was 2에서 1 시스템
        "표 4-2 개요",  # 개, then a word: it was 4에서 2 개요, then 두 개요
        "그림 1-3 세부 구조",  # 세
        "그림 3-1 분석 결과",
        "그림 5-2도 참고",  # a range runs up, never down
        "2-1장에서",
    ],
)
def test_a_figure_or_section_number_before_a_word_is_no_range(text):
    """A figure's, table's or section's number, "그림 2-1", before a word that opens like a counter."""
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("09:00 - 18:00 근무", "아홉 시에서 열여덟 시 근무"),  # it was 아홉 시 빼기 열여덟 시
        ("10:30 – 12:00", "열 시 30분에서 열두 시"),
        ("15 - 20분 휴식", "15에서 20분 휴식"),  # 15 빼기 20분
        ("2020 - 2024년", "2020에서 2024년"),
    ],
)
def test_a_spaced_hyphen_between_times_or_before_a_counter_is_a_range_not_a_minus(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(("written", "said"), [("5 - 3 = 2", "5 빼기 3은 2"), ("10 - 3개", "10 빼기 세 개")])
def test_a_spaced_hyphen_that_runs_down_is_still_a_minus(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(("written", "said"), [("3-5 개", "3에서 5 개"), ("1-2주차", "1에서 2주차")])
def test_a_range_before_its_counter_alone_or_a_counter_word_is_still_a_range(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("9시~18시 운영", "아홉 시에서 열여덟 시 운영"),  # "아홉 시에서 십팔 시"
        ("3개~5개", "세 개에서 다섯 개"),
        ("3~5개", "3에서 5개"),  # the first number bare: both stay Sino-Korean (삼에서 오 개)
    ],
)
def test_a_range_whose_numbers_both_have_the_counter_reads_both_natively(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3/4분기 실적", "3 4분기 실적"),  # the third quarter; espeak said "삼 slash 사 분기"
        ("250Wh/kg의 밀도", "250 와트시 퍼 킬로그램의 밀도"),  # "slash kay gee"
        ("입/출력 장치", "입 출력 장치"),
        ("A/S 센터", "A-S 센터"),  # letter names, 에이에스
    ],
)
def test_a_slash_is_not_read_as_the_english_word(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")
    assert "slˈaʃ" not in "".join(tokenizer.symbols(written, "ko"))


def test_a_slash_in_an_address_or_a_fraction_is_left():
    assert spoken("https://example.com/a/B/C") == "https://example.com/a/B/C"
    assert spoken("1/2") == "2분의 1"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1:2 비율", "1 대 2 비율"),  # espeak: "일 이 비율"
        ("16:9 화면, 3:2로 이겼다", "16 대 9 화면, 3 대 2로 이겼다"),
        ("1:10 축척", "1 대 10 축척"),  # was a time of day, "한 시 십 분 축척"
        ("혼합비 1:2:3", "혼합비 1 대 2 대 3"),
        ("10:30:15에 시작", "열 시 30분 15초에 시작"),  # "십 삼십 십오"
        ("3:30에 출발", "세 시 30분에 출발"),  # a time of day stays one
    ],
)
def test_a_ratio_is_read_with_dae_and_a_time_with_its_seconds(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_a_unit_squared_stays_a_unit():
    assert spoken("100m² 면적") == "100 제곱미터 면적"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10Ω, 4.7kΩ", "10 옴, 4 점 칠 킬로옴"),  # espeak: "omega"
        ("100μF", "100 마이크로패럿"),  # "mi F"
        ("10A 전류", "10 암페어 전류"),  # the letter's English name
        ("10μs, 5ns", "10 마이크로초, 5 나노초"),
        ("101.3kPa, 85dB", "101 점 삼 킬로파스칼, 85 데시벨"),
    ],
)
def test_electrical_and_physical_units_are_read_as_korean_words(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["A4 용지", "3A+ 등급", "정답은 2 A와 B"])
def test_a_letter_a_that_is_no_ampere_is_left(text):
    assert "암페어" not in spoken(text)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("발표일 24.12.05", "발표일 24년 12월 5일"),  # espeak: "이십사 점 십이 점 영오"
        ("2024.03 발표", "2024년 3월 발표"),  # "이천이십사 점 영삼"
        ("2024.12~2025.02", "2024년 12월에서 2025년 2월"),
    ],
)
def test_dates_with_a_short_year_or_no_day_are_read_as_dates(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"), [("$2019.10", "2019 점 일영 달러"), ("€1999.12", "1999 점 일이 유로")]
)
def test_an_amount_with_cents_is_no_date(written, said):
    """ "$2019.10" was read "2019 달러년 시월": the date's 년 split the amount from its currency."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("12.24", "12 점 이사"), ("v10.12.01", "v10 점 12 점 01"), ("24.13.40", "24 점 13 점 40")],
)
def test_decimals_and_versions_stay_numbers(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"), [("Q&A 시간", "Q앤A 시간"), ("R&D 투자", "R앤D 투자"), ("존슨 & 존슨", "존슨앤존슨")]
)
def test_an_ampersand_is_said_as_koreans_say_it(tokenizer, written, said):
    """espeak said the English word "and" ("kjuː and eɪ")."""
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("단위는 kWh입니다", "단위는 킬로와트시입니다"),  # espeak: "kay double-u eitch"
        ("kWh당 300원", "킬로와트시당 300원"),
        ("용량은 mAh로 표시", "용량은 밀리암페어시로 표시"),
        ("주파수(MHz)", "주파수(메가헤르츠)"),
    ],
)
def test_a_unit_named_without_a_number_is_read_as_its_korean_word(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["KB국민은행", "cc 참조", "Ah, 그렇군요", "example.com/cm", "min 함수"])
def test_letters_that_are_no_unit_are_left(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A4 용지", "A포 용지"),  # espeak: "에이 사"
        ("B2B, MP3", "B투B, M-P쓰리"),
        ("CO2 배출, CO₂", "C-O투 배출, C-O투"),  # "코 이": the word "co" and a Korean two
        ("H₂O", "H투O"),
    ],
)
def test_a_digit_inside_a_name_of_capitals_is_said_in_english(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["COVID-19", "S23", "H100", "5G", "LiFePO4"])
def test_names_with_longer_numbers_are_left(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    "written", ["010.1234.5678", "010 1234 5678", "(010) 1234-5678"]
)  # espeak: "영 십 점 천이백삼십사 점 …", large numbers
def test_a_phone_number_written_as_on_a_business_card_is_read_digit_by_digit(tokenizer, written):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols("공일공 일이삼사 오육칠팔", "ko")


@pytest.mark.parametrize(
    ("written", "said"), [("010-1234.5678", "010-1234 점 오육칠팔"), ("0.123.4567", "0 점 123 점 4567")]
)
def test_numbers_with_mixed_separators_or_no_area_code_are_no_phone_number(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("연구ㆍ개발", "연구 개발"),  # espeak: "Chinese letter", and the words read letter by letter
        ("3ㆍ1절과 6・25", "3 1절과 6 25"),  # "Japanese letter"
        ("효율 ≈ 90%", "효율 약 90%"),  # "approximately"
        ("∴ 결론, ∵ 이유", "따라서 결론, 왜냐하면 이유"),  # "therefore", "because"
    ],
)
def test_signs_of_korean_documents_are_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("SOC 30%에서 EV는", "S-O-C 30%에서 E-V는"),  # espeak: "sock", "ev"
        ("LED, ESS와 ISO 인증", "L-E-D, E-S-S와 I-S-O 인증"),  # "led", "ess", "eye-so"
    ],
)
def test_acronyms_a_lecturer_spells_are_spelled(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["RAM과 LAN", "NEW 신제품, TIP", "Mr. Kim"])
def test_words_and_acronyms_said_as_words_are_left(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    "text", ["MAX_SOC은 90", "LED_PIN 13번", "문의 ESS@kepco.co.kr", "kim@ICT.ac.kr", "https://a.kr/EV/HEV"]
)
def test_an_acronym_inside_a_code_name_or_an_address_is_left(text):
    """ "MAX_SOC" was read MAX_S-O-C, "ESS@kepco.co.kr" E-S-S@…: part of one name, not a word to spell."""
    assert spoken(text) == text


def test_an_up_or_down_arrow_is_no_english_word(tokenizer):
    """espeak said "up arrow" and "down arrow"."""
    assert tokenizer.symbols("매출 15%↑, 비용 10%↓", "ko") == tokenizer.symbols(
        "매출 15% 증가, 비용 10% 감소", "ko"
    )


def test_a_slash_between_acronyms_keeps_them_two_words(tokenizer):
    """ "EV/HEV" was spelled as one run of letters, E-V-H-E-V."""
    assert tokenizer.symbols("EV/HEV 비교", "ko") == tokenizer.symbols("E-V H-E-V 비교", "ko")
    assert spoken("TCP/IP, I/O") == "TCP IP, I-O"


def test_a_markdown_heading_mark_is_not_read(tokenizer):
    """espeak said "hash" for each "#"."""
    assert tokenizer.symbols("### 1. 개요\n## 배터리", "ko") == tokenizer.symbols(
        "첫 번째, 개요\n배터리", "ko"
    )
    assert spoken("C# 언어, #1 제품") == "C 샵 언어, #1 제품"  # no heading (korean62: C# the language, C 샵)


def test_markdown_emphasis_keeps_a_word_with_its_particle(tokenizer):
    """ "**전압**을" was read "전압 을", the particle as a word of its own."""
    assert tokenizer.symbols("**전압**을 재고 __저항__을", "ko") == tokenizer.symbols(
        "전압을 재고 저항을", "ko"
    )


def test_a_colon_after_an_address_is_its_port_not_a_ratio():
    """ "192.168.0.1:8080" was read 1 대 8080; a ratio of three, "1:2:3", is still 대 twice."""
    assert "대" not in spoken("http://192.168.0.1:8080 접속")
    assert spoken("1:2:3 비율") == "1 대 2 대 3 비율"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("12/25(수) 마감", "12월 25일 수요일 마감"),  # espeak: "이십오분의 십이 수", a fraction
        ("2024.12.05(목) 발표", "2024년 12월 5일 목요일 발표"),
    ],
)
def test_a_date_with_its_weekday_is_read_as_a_date(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(("written", "said"), [("1/2(반)", "2분의 1(반)"), ("13/25(수)", "25분의 13(수)")])
def test_a_fraction_before_brackets_stays_a_fraction(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$1.5B 규모", "15억 달러 규모"),  # espeak: "일 점 오 달러 비"
        ("$300M, $10K", "3억 달러, 1만 달러"),
        ("€2.5T", "2조 5000억 유로"),
    ],
)
def test_an_amount_with_an_english_scale_is_read_in_korean_units(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("배터리¹의 구조", "배터리의 구조"),  # espeak: "배터리 일 의", the particle cut from its word
        ("참고문헌[1], 연구[2, 3]와 결과[4-6].", "참고문헌, 연구와 결과."),
        ("x² + y² = r²", "x의 2제곱 더하기 y의 2제곱은 r의 2제곱"),  # "x 이": x two
    ],
)
def test_footnote_marks_are_not_read_and_a_letter_squared_is_a_power(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_a_numbered_reference_that_opens_a_line_and_units_squared_are_left():
    assert spoken("[1] 서론") == "[1] 서론"
    assert spoken("면적(m²), 100m²") == "면적(제곱미터), 100 제곱미터"
