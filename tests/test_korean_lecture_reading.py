"""Korean lecture text read as a lecturer says it: list marks, ranges, slashes, ratios, powers, formulas,
units, dates, acronyms and the signs of Korean documents (`korean_reading`, `korean_marks`), and where
its sentences end (`sentence_ends`: the segmenter and the stream socket's assembler alike).

Each reading is phonemized by the real espeak tokenizer (what ZipVoice and the espeak engine speak) and
compared with the words a Korean lecturer says; the comment says what espeak said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.segmenter import split_sentences
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer
from npu_worker.openai_compat.sentences import SentenceAssembler


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    return EspeakTokenizer()


def streamed(text: str, size: int) -> list[str]:
    """The stream socket's sentences for `text` arriving `size` characters at a time."""
    assembler, pieces = SentenceAssembler(), []
    for start in range(0, len(text), size):
        pieces += assembler.feed(text[start : start + size])
    return pieces + assembler.flush()


NUMBERED = "1. 전압을 측정한다. 2. 저항을 계산한다.\n12. 보고서를 쓴다."


@pytest.mark.parametrize("size", [1, 3, len(NUMBERED)])
def test_a_numbered_list_item_is_one_sentence(size):
    """ "1." was a sentence of its own: "일." with a falling tone and a pause, then the item."""
    expected = ["1. 전압을 측정한다.", "2. 저항을 계산한다.", "12. 보고서를 쓴다."]
    assert split_sentences(NUMBERED) == expected
    assert streamed(NUMBERED, size) == expected


def test_a_numbered_list_item_is_read_as_a_lecturer_reads_it(tokenizer):
    said = "첫 번째, 전압을 측정한다. 두 번째, 저항을 계산한다.\n열두 번째, 보고서를 쓴다."
    assert tokenizer.symbols(NUMBERED, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("정답은 1. 다음 문제.", ["정답은 1.", "다음 문제."]),  # a number ending a sentence
        ("회의는 2024. 12. 5. 오후에 열립니다.", ["회의는 2024. 12. 5.", "오후에 열립니다."]),
        ("We counted to 10. Then stopped.", ["We counted to 10.", "Then stopped."]),
    ],
)
def test_a_number_that_opens_no_list_item_is_left(text, sentences):
    assert split_sentences(text) == sentences
    assert "번째" not in spoken(text)


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


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("10^3 배", "10의 3제곱 배"),  # espeak: "십 삼 배", ten three
        ("10³ 배", "10의 3제곱 배"),
        ("10^-3 m", "10의 마이너스 3제곱 미터"),
        ("10⁻³", "10의 마이너스 3제곱"),
    ],
)
def test_a_power_is_read_as_a_power(tokenizer, written, said):
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
        ("2 + 3 = 5", "2 더하기 3은 5"),  # espeak: English "plus" and "equals"
        ("5 - 3 = 2, 5-3=2", "5 빼기 3은 2, 5 빼기 3은 2"),  # the minus was dropped: "오 삼"
        ("3x3 행렬", "3 곱하기 3 행렬"),  # "ex"
        ("P = V × I", "P는 V 곱하기 I"),  # the sign between letters was said as nothing
        ("전력 = 전압 × 전류", "전력은 전압 곱하기 전류"),
        ("2^10 = 1024, 10 = 5 + 5", "2의 10제곱은 1024, 10은 5 더하기 5"),
        ("L = 5", "L은 5"),  # 엘은
    ],
)
def test_arithmetic_is_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["0x1F", "a == b", "배터리 - 30종", "3-5"])
def test_what_is_no_arithmetic_is_left(text):
    assert spoken(text) == text


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


HEADINGS = "Ⅰ. 서론\nⅡ. 배터리의 구조입니다. Ⅲ. 결론입니다."


@pytest.mark.parametrize("size", [1, 4, len(HEADINGS)])
def test_a_roman_numeral_heading_is_one_sentence(size):
    expected = ["Ⅰ. 서론", "Ⅱ. 배터리의 구조입니다.", "Ⅲ. 결론입니다."]
    assert split_sentences(HEADINGS) == expected
    assert streamed(HEADINGS, size) == expected


def test_a_roman_numeral_is_read_as_its_number(tokenizer):
    """espeak spelled "Ⅱ" as the word "letter" and digits of its code point."""
    said = "첫 번째, 서론\n두 번째, 배터리의 구조입니다. 세 번째, 결론입니다."
    assert tokenizer.symbols(HEADINGS, "ko") == tokenizer.symbols(said, "ko")
    assert tokenizer.symbols("제Ⅲ장", "ko") == tokenizer.symbols("제3장", "ko")


@pytest.mark.parametrize(
    ("written", "said"), [("Q&A 시간", "Q앤A 시간"), ("R&D 투자", "R앤D 투자"), ("존슨 & 존슨", "존슨앤존슨")]
)
def test_an_ampersand_is_said_as_koreans_say_it(tokenizer, written, said):
    """espeak said the English word "and" ("kjuː and eɪ")."""
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


OUTLINE = "I. 서론\nII. 본론입니다. 가. 전압을 측정한다. 나. 저항을 계산한다. XIV. 끝"


@pytest.mark.parametrize("size", [1, 5, len(OUTLINE)])
def test_roman_numeral_and_korean_outline_marks_open_their_item(size):
    """ "II." and "가." were sentences of their own (espeak: "roman two." with a falling tone, "가.")."""
    expected = ["I. 서론", "II. 본론입니다.", "가. 전압을 측정한다.", "나. 저항을 계산한다.", "XIV. 끝"]
    assert split_sentences(OUTLINE) == expected
    assert streamed(OUTLINE, size) == expected


def test_roman_numeral_and_korean_outline_marks_are_read_as_a_lecturer_reads_them(tokenizer):
    said = "첫 번째, 서론\n두 번째, 본론입니다. 가, 전압을 측정한다. 나, 저항을 계산한다. 열네 번째, 끝"
    assert tokenizer.symbols(OUTLINE, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("So do I. Then we left.", ["So do I.", "Then we left."]),
        ("World War II. It ended.", ["World War II.", "It ended."]),
        ("그건 나. 너는?", ["그건 나.", "너는?"]),
        ("Who was it? I. Then we left.", ["Who was it?", "I.", "Then we left."]),  # was "I. Then we left."
    ],
)
def test_a_pronoun_or_numeral_inside_a_sentence_still_ends_it(text, sentences):
    assert split_sentences(text) == sentences
    assert streamed(text, 2) == sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("I. Introduction\nWho was it? I. 서론", ["I. Introduction", "Who was it?", "I. 서론"]),
        ("끝입니다. I. Intro 부분", ["끝입니다.", "I. Intro 부분"]),
    ],
)
def test_a_roman_one_that_opens_a_line_or_follows_korean_still_opens_its_item(text, sentences):
    assert split_sentences(text) == sentences
    assert streamed(text, 1) == sentences


NUMBER_SIGN = "서울 No. 1 대학입니다. See No. 5 in the list. Say No. Then go."


@pytest.mark.parametrize("size", [1, 3, len(NUMBER_SIGN)])
def test_the_number_sign_no_stays_with_its_number(size):
    """ "No. 1" was cut into two sentences: "No." with a falling tone and a pause, then "1 대학입니다."."""
    expected = ["서울 No. 1 대학입니다.", "See No. 5 in the list.", "Say No.", "Then go."]
    assert split_sentences(NUMBER_SIGN) == expected
    assert streamed(NUMBER_SIGN, size) == expected


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
        ("2x + 3 = 7", "2x 더하기 3은 7"),  # espeak: English "plus" after a variable
        ("a - b = c", "a 빼기 b는 c"),  # the minus was dropped
        ("(a + b) × 2", "(a 더하기 b) 곱하기 2"),
        ("삼성 + LG", "삼성 플러스 LG"),
        ("속도 ×2, 1.5× 빠르다", "속도 2배, 1 점 오배 빠르다"),  # the sign said nothing
    ],
)
def test_formulas_with_variables_and_times_signs_are_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["Plan A - 설명", "배터리 - 30종", "- 항목"])
def test_a_dash_between_words_is_no_minus(text):
    assert spoken(text) == text


SECTIONS = "1.1. 개요\n2.3.1. 세부 내용입니다. 2.4. 다음 내용"


@pytest.mark.parametrize("size", [1, 4, len(SECTIONS)])
def test_a_section_number_opens_its_heading(size):
    """ "2.3.1." was a sentence of its own ("이 점 삼 점 일." with a falling tone)."""
    expected = ["1.1. 개요", "2.3.1. 세부 내용입니다.", "2.4. 다음 내용"]
    assert split_sentences(SECTIONS) == expected
    assert streamed(SECTIONS, size) == expected
    assert spoken(SECTIONS) == "1 점 일, 개요\n2 점 3 점 1, 세부 내용입니다. 2 점 사, 다음 내용"


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


STARTS_WITH_A_NUMBER = "1. 3.7V 셀 96개를 연결한다. 2. 10%에서 멈춘다."


@pytest.mark.parametrize("size", [1, 3, len(STARTS_WITH_A_NUMBER)])
def test_a_list_item_that_starts_with_a_number_is_one_sentence(size):
    expected = ["1. 3.7V 셀 96개를 연결한다.", "2. 10%에서 멈춘다."]
    assert split_sentences(STARTS_WITH_A_NUMBER) == expected
    assert streamed(STARTS_WITH_A_NUMBER, size) == expected
    assert spoken(STARTS_WITH_A_NUMBER).startswith("첫 번째, 3 점 칠 볼트")


def test_an_up_or_down_arrow_is_no_english_word(tokenizer):
    """espeak said "up arrow" and "down arrow"."""
    assert tokenizer.symbols("매출 15%↑, 비용 10%↓", "ko") == tokenizer.symbols(
        "매출 15% 증가, 비용 10% 감소", "ko"
    )


def test_a_slash_between_acronyms_keeps_them_two_words(tokenizer):
    """ "EV/HEV" was spelled as one run of letters, E-V-H-E-V."""
    assert tokenizer.symbols("EV/HEV 비교", "ko") == tokenizer.symbols("E-V H-E-V 비교", "ko")
    assert spoken("TCP/IP, I/O") == "TCP IP, I-O"


MARKDOWN = "### 1. 개요\n## 배터리의 원리\n1. **전압**을 측정한다. 2. 저항을 계산한다."


@pytest.mark.parametrize("size", [1, 4, len(MARKDOWN)])
def test_markdown_headings_and_bold_items_keep_their_list_marks(size):
    """An LLM's Markdown: "### 1." and "1." before "**전압**" were cut off alone."""
    expected = ["### 1. 개요", "## 배터리의 원리", "1. **전압**을 측정한다.", "2. 저항을 계산한다."]
    assert split_sentences(MARKDOWN) == expected
    assert streamed(MARKDOWN, size) == expected


def test_a_markdown_heading_mark_is_not_read(tokenizer):
    """espeak said "hash" for each "#"."""
    assert tokenizer.symbols("### 1. 개요\n## 배터리", "ko") == tokenizer.symbols(
        "첫 번째, 개요\n배터리", "ko"
    )
    assert spoken("C# 언어, #1 제품") == "C# 언어, #1 제품"  # no heading


def test_markdown_emphasis_keeps_a_word_with_its_particle(tokenizer):
    """ "**전압**을" was read "전압 을", the particle as a word of its own."""
    assert tokenizer.symbols("**전압**을 재고 __저항__을", "ko") == tokenizer.symbols(
        "전압을 재고 저항을", "ko"
    )


@pytest.mark.parametrize(
    ("written", "said"),
    [("2**10", "2 10"), ("a*b", "a b"), ("my__var", "my var"), ("**전압**과 *저항*", "전압과 저항")],
)
def test_stars_that_emphasise_nothing_still_part_their_neighbours(written, said):
    """ "2**10" was read 210 (이백십) and "a*b" as the word "ab": only emphasis pairs are dropped whole."""
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["x₂ = 3", "x² = 4", "٣ = 3", "= 5", "(a) = b", "3 ="])
def test_an_equals_sign_after_any_character_is_read(text):
    """ "x₂ = 3" raised AttributeError: "₂" is a digit to str.isdigit() but not to the regex's \\d."""
    assert "=" not in spoken(text)


@pytest.mark.parametrize("text", ["x += 1", "x -= 1", "x *= 2", "x /= 2", "a |= b"])
def test_a_compound_assignment_is_no_equals_sign(text):
    """ "x += 1" was read "x +는 1": the "=" of an operator is no topic's 은/는."""
    assert spoken(text) == text


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
        ("SOC < 20%", "SOC 20% 미만"),  # espeak said nothing for the sign: "SOC 20%"
        ("온도 > 45℃", "온도 45℃ 초과"),
        ("≥ 80%, ≤ 1,000원", "80% 이상, 1000원 이하"),
        ("20 ≤ x ≤ 40", "20 이상 x 40 이하"),
    ],
)
def test_a_bound_is_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["<그림 1> 구조", "<1> 서론 <12> 본론", "p->next", "3 < 5"])
def test_brackets_arrows_and_comparisons_of_numbers_are_no_bound(text):
    assert spoken(text) == text


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


@pytest.mark.parametrize(
    "text", ["배열 arr[1]은 두 번째 원소", "list[0] 값", "data[12] 출력", "배열[0]의 값"]
)
def test_an_index_of_a_code_name_is_no_citation(text):
    """ "arr[1]은" was read "arr은", the index dropped as if it were a citation's mark."""
    assert spoken(text) == text


def test_a_numbered_reference_that_opens_a_line_and_units_squared_are_left():
    assert spoken("[1] 서론") == "[1] 서론"
    assert spoken("면적(m²), 100m²") == "면적(제곱미터), 100 제곱미터"


def test_an_acceleration_is_read_as_one(tokenizer):
    """ "9.8m/s²" was 초속 구 점 팔 미터 and a stray 이 (the "²")."""
    said = "중력가속도 9 점 팔 미터 퍼 초 제곱"
    assert tokenizer.symbols("중력가속도 9.8m/s²", "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("양극재(e.g. NCM)", "양극재(예를 들어 NCM)"),  # espeak: English "for example"
        ("니켈, 코발트 etc. 다음 문장.", "니켈, 코발트 등. 다음 문장."),  # "etcetera"
        ("NCM vs. LFP, cf. 참고문헌", "NCM 대 LFP, 참고 참고문헌"),
    ],
)
def test_latin_abbreviations_are_read_as_a_korean_lecturer_reads_them(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_words_that_only_begin_like_an_abbreviation_are_left():
    assert spoken("etcetera, vsync") == "etcetera, vsync"


@pytest.mark.parametrize("text", ["VS Code에서 실행한다", "삼성 VS 애플", "ETC 하이패스"])
def test_capitals_without_a_point_are_no_latin_abbreviation(text):
    """ "VS Code" was read 대 Code; capitals are a name or letters, said as before."""
    assert spoken(text) == text


def test_a_number_and_x_before_a_word_is_so_many_times(tokenizer):
    """ "2x 빠르다" was "이 ex 빠르다", the English letter."""
    assert tokenizer.symbols("2x 빠르다, 10x 이상", "ko") == tokenizer.symbols("2배 빠르다, 10배 이상", "ko")
    assert spoken("2x는 6이다") == "2x는 6이다"  # a variable with its particle


JAMO_OUTLINE = "ㄱ. 전압을 측정한다. ㄴ. 저항을 계산한다."


@pytest.mark.parametrize("size", [1, len(JAMO_OUTLINE)])
def test_a_jamo_outline_mark_opens_its_item(tokenizer, size):
    """ "ㄱ." was a sentence of its own, "기역." with a falling tone."""
    expected = ["ㄱ. 전압을 측정한다.", "ㄴ. 저항을 계산한다."]
    assert split_sentences(JAMO_OUTLINE) == expected
    assert streamed(JAMO_OUTLINE, size) == expected
    assert spoken(JAMO_OUTLINE) == "ㄱ, 전압을 측정한다. ㄴ, 저항을 계산한다."


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2020 - 2024 기간", "2020에서 2024 기간"),  # espeak: 빼기, a minus
        ("2020-2024", "2020에서 2024"),  # the two years said as one run
        ("2020 - 2024, 기간", "2020에서 2024, 기간"),
        ("1999 - 2000", "1999에서 2000"),
    ],
)
def test_a_range_of_years_is_read_as_a_range(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"), [("2024 - 2020 = 4", "2024 빼기 2020은 4"), ("2024-2020", "2024-2020")]
)
def test_a_difference_of_years_is_no_range(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "text", ["3A반 학생", "2A동 101호", "1A조의 발표", "3A형", "모델 3A를 출시", "Model 3A"]
)
def test_a_class_building_or_model_named_3a_is_no_ampere(text):
    """ "3A반" was read 3 암페어반: a class's name, 삼 에이 반."""
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3A의 전류", "3 암페어의 전류"),
        ("3A용 충전기", "3 암페어용 충전기"),
        ("USB 3A 충전", "USB 3 암페어 충전"),
    ],
)
def test_a_current_in_amperes_is_still_read_as_one(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2ⁿ개의 경우", "2의 n제곱개의 경우"),  # espeak said nothing for the "ⁿ": 이 개
        ("2^n, e^x", "2의 n제곱, e의 x제곱"),  # "이 엔", the power unsaid
    ],
)
def test_a_letter_as_a_power_is_read_as_a_power(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("학습률 1e-4", "학습률 1 곱하기 10의 마이너스 4제곱"),  # espeak: "일 이 사", the power lost
        ("3.0E+8", "3 점 영 곱하기 10의 8제곱"),  # the English "plus"
    ],
)
def test_a_number_in_scientific_notation_is_read_as_a_power_of_ten(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["0x1e3", "해시 5e3f", "a1e3"])
def test_a_hexadecimal_or_a_hash_is_no_scientific_notation(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("500㎖ 생수", "500 밀리리터 생수"),  # espeak: "오백 미터" and "letter 2113" for the "ℓ"
        ("㎖ 단위, 2ℓ", "밀리리터 단위, 2 리터"),
        ("1㏊, 5㎈", "1 헥타르, 5 칼로리"),  # "에이치 에이", the letters
    ],
)
def test_liters_hectares_and_calories_are_read_as_their_korean_words(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    "address",
    [
        "https://a.kr/search?q=1&page=2",  # "q는 1&page는 2"
        "https://a.com/R&D/A4",  # "R앤D-A4", the slash lost
        "https://arxiv.org/abs/2401.12345",  # a decimal, 이천사백일 점 일이삼사오
        "www.kepco.co.kr/ev?id=3-5",  # "id는 3에서 5"
    ],
)
def test_a_web_address_path_and_query_are_left_as_written(address):
    assert spoken(f"참고: {address} 3개") == f"참고: {address} 세 개"


def test_a_web_address_host_keeps_the_reading_of_its_numbers():
    assert spoken("http://10.0.0.1:8080/a=1") == "http://10 점 0 점 0 점 1:8080/a=1"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3:00 PM 회의", "오후 세 시 회의"),  # espeak: 세 시 "pee em"
        ("AM 9:30 시작", "오전 아홉 시 30분 시작"),
        ("10am, 오후 3PM", "오전 열 시, 오후 세 시"),
    ],
)
def test_a_time_with_am_or_pm_is_read_with_its_half_of_the_day(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["PM 3명", "13 PM", "3.5 PM"])
def test_am_or_pm_beside_no_time_is_left(text):
    assert "오후" not in spoken(text)


@pytest.mark.parametrize(
    ("written", "said"),
    [("v2.10 출시", "v2 점 10 출시"), ("버전 3.12.", "버전 3 점 12."), ("3.10 버전", "3 점 10 버전")],
)
def test_a_version_with_one_point_reads_its_parts_as_numbers(tokenizer, written, said):
    """ "v2.10" was a decimal, 이 점 일영."""
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [("서울 No. 1 대학", "서울 넘버 원 대학"), ("No.5 향수, No. 12.", "넘버 파이브 향수, 넘버 12.")],
)
def test_the_number_sign_no_is_read_numbeo(tokenizer, written, said):
    """ "No. 1" was the English "no", the point a pause, and 일."""
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_an_hour_written_with_a_leading_zero_is_read_natively(tokenizer):
    """ "09시 30분" was 영구 시 삼십 분."""
    assert tokenizer.symbols("09시 30분 시작", "ko") == tokenizer.symbols("아홉 시 30분 시작", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("√2 배", "루트 2 배"),  # espeak said nothing for the "√": 이 배
        ("x → ∞", "x → 무한대"),  # nothing for the "∞"
        ("θ = 30°", "세타는 30 도"),  # "theta", and the 는 after it spelled as jamo
        ("λ = 500nm, π", "람다는 500 나노미터, 파이"),
        ("ΔV = 0.1V", "델타V는 0 점 일 볼트"),
    ],
)
def test_roots_infinity_and_greek_letters_are_read_by_their_korean_names(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_ohms_and_micro_units_stay_units_beside_greek_names():
    assert spoken("10Ω, 5μs, Ω") == "10 옴, 5 마이크로초, 오메가"
    assert spoken("λόγος") == "λόγος"  # a Greek word's letters


@pytest.mark.parametrize(
    ("written", "said"),
    [("1,000원/kg", "1000원 퍼 킬로그램"), ("300원/kWh당", "300원 퍼 킬로와트시당"), ("원/A4", "원/A포")],
)
def test_a_price_per_unit_is_read_with_per(written, said):
    """ "1,000원/kg" was 천 원 "slash kay gee"."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1st, 2nd, 3rd", "첫 번째, 두 번째, 세 번째"),  # espeak: 일, 이 "en dee", 삼 "are dee"
        ("p. 25 참고", "25페이지 참고"),  # the letter and a pause
        ("참고: p. 25.", "참고: 25페이지."),
        ("pp. 10-20", "10에서 20페이지"),
        ("24/7 지원", "24 7 지원"),  # a fraction, 7분의 24
    ],
)
def test_ordinals_pages_and_around_the_clock_are_read_as_a_lecturer_says_them(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3일(월)~5일(수)", "3일 월요일에서 5일 수요일"),  # the 에서 was lost
        ("월~금 09:00~18:00", "월요일에서 금요일 아홉 시에서 열여덟 시"),  # "월 금"
        ("월요일 ~ 금요일에", "월요일에서 금요일에"),
    ],
)
def test_a_range_of_weekdays_is_read_as_a_range(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [("세월~금방", "세월 금방"), ("7/24", "24분의 7"), ("app. 3", "app. 3"), ("4th gen", "네 번째 gen")],
)
def test_words_that_only_look_like_weekdays_ordinals_or_pages_are_no_such(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Q1~Q3 실적", "Q원에서 Q쓰리 실적"),  # espeak: Q원 Q쓰리, the tilde unsaid
        ("1Q~3Q 실적", "1분기에서 3분기 실적"),  # 일 큐에서 삼 큐
        ("2024년 4Q", "2024년 4분기"),
    ],
)
def test_quarters_and_ranges_of_letter_digit_names_are_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["1Q84", "4Q24", "5Q"])
def test_what_is_no_quarter_is_left(text):
    assert spoken(text) == text


DATE_WITH_WEEKDAY = "회의는 2024. 12. 5.(목) 오후입니다. 다음 안건."


@pytest.mark.parametrize("size", [1, 3, len(DATE_WITH_WEEKDAY)])
def test_a_dotted_date_with_its_weekday_is_one_sentence(tokenizer, size):
    """It was cut after "12." (the day's point before the bracket was not seen as a date's part)."""
    expected = ["회의는 2024. 12. 5.(목) 오후입니다.", "다음 안건."]
    assert split_sentences(DATE_WITH_WEEKDAY) == expected
    assert streamed(DATE_WITH_WEEKDAY, size) == expected
    said = "회의는 2024년 12월 5일 목요일 오후입니다."
    assert tokenizer.symbols(expected[0], "ko") == tokenizer.symbols(said, "ko")


PARTS = "Sec. 2에서 다룬다. Ch. 3, Ref. 5 참고. It took 5 sec. Then we left."


@pytest.mark.parametrize("size", [1, 4, len(PARTS)])
def test_a_section_chapter_or_reference_number_stays_with_its_abbreviation(size):
    expected = ["Sec. 2에서 다룬다.", "Ch. 3, Ref. 5 참고.", "It took 5 sec.", "Then we left."]
    assert split_sentences(PARTS) == expected
    assert streamed(PARTS, size) == expected


def test_the_tilde_operator_of_korean_word_processors_is_a_range(tokenizer):
    """ "3∼5개" (U+223C, as HWP writes it) was 삼 다섯 개: the range unsaid."""
    assert tokenizer.symbols("3∼5개, 월∼금", "ko") == tokenizer.symbols("3에서 5개, 월요일에서 금요일", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("50％ 할인", "50 퍼센트 할인"),  # a Korean IME's full-width signs: espeak said 오십 할인
        ("３．７Ｖ, １，０００원", "3 점 칠 볼트, 1000원"),  # 삼칠 볼트
        ("５－３＝２, ￦5,000", "5 빼기 3은 2, 5000 원"),
    ],
)
def test_full_width_signs_are_read_as_their_ascii_signs(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_a_full_width_comma_between_words_stays_a_cjk_mark():
    assert spoken("네，좋아요") == "네，좋아요"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1kWh = 3.6MJ", "1 킬로와트시는 3 점 육 메가줄"),  # espeak: "em jay"
        ("100J, 1.5kN", "100 줄, 1 점 오 킬로뉴턴"),
        ("1TWh, 5mW, 3kVA", "1 테라와트시, 5 밀리와트, 3 킬로볼트암페어"),  # "tee double-u eitch" …
        ("2mol, 1atm", "2 몰, 1 기압"),
    ],
)
def test_energy_force_and_chemistry_units_are_read_as_korean_words(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["3J반", "2 J", "mol 단위", "atm 기기"])
def test_letters_that_name_no_energy_or_chemistry_unit_are_left(text):
    assert spoken(text) == text


def test_zero_width_characters_of_copied_text_part_no_word_or_number(tokenizer):
    """ "전압\\u200b은" was read as two words (the particle cut off), "3\\u200b.7V" as 삼 칠 볼트."""
    written = "전압\u200b은 3\u200b.7V\u2060입니다\ufeff"
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols("전압은 3 점 칠 볼트입니다", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("고객센터 1588-1234로", "고객센터 일오팔팔 일이삼사로"),  # espeak: 천오백팔십팔 천이백삼십사
        ("+82-10-1234-5678", "플러스 팔이 일공 일이삼사 오육칠팔"),  # 팔십이 십 천이백삼십사 …
    ],
)
def test_a_company_or_international_phone_number_is_read_digit_by_digit(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [("임진왜란(1592-1598)", "임진왜란(1592에서 1598)"), ("1800 - 1900년", "1800에서 1900년")],
)
def test_years_before_1900_that_run_up_are_a_range_not_a_phone_number(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("6.25 전쟁과 3.1절", "육이오 전쟁과 삼일절"),  # espeak: 육 점 이오, a decimal
        ("5.18 민주화운동, 8.15 광복절", "오일팔 민주화운동, 팔일오 광복절"),
        ("12.12 사태, 6.10 민주항쟁", "십이십이 사태, 육십 민주항쟁"),
    ],
)
def test_an_event_of_korean_history_named_by_its_date_is_read_as_koreans_say_it(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(("written", "said"), [("3.5 운동량", "3 점 오 운동량"), ("13.1절", "13 점 일절")])
def test_a_decimal_before_a_word_that_only_opens_like_an_event_stays_a_decimal(written, said):
    assert spoken(written) == said


def test_us_dollars_are_read_as_such(tokenizer):
    """ "US$100" was read US 백 달러, the letters before the number."""
    assert tokenizer.symbols("US$100", "ko") == tokenizer.symbols("미화 100 달러", "ko")


@pytest.mark.parametrize("text", ["정답은 2024. 1", "Kim. was 1. 3", "회의는 2024. 12"])
def test_a_point_still_undecided_when_the_stream_ends_is_cut_as_the_segmenter_cuts_it(text):
    """The stream's last point after a digit waited for a date's next part; at the end it was given with
    the rest as one piece ("정답은 2024. 1"), where the segmenter cuts two."""
    for size in (1, 2, len(text)):
        assert streamed(text, size) == split_sentences(text)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("5min, 30sec", "5 분, 30 초"),  # espeak: 오 "min", 삼십 "sec"
        ("2h 30m 소요", "두 시간 30분 소요"),  # 이 에이치 삼십 미터
        ("1hr", "한 시간"),
    ],
)
def test_hours_minutes_and_seconds_written_in_english_are_read_in_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize("text", ["0x1A", "0x10A 주소", "0x10h", "#FF00A"])
def test_a_hexadecimal_number_or_a_variable_has_no_unit(text):
    """ "0x1A" was 0x1 암페어: its letter read as a unit."""
    assert spoken(text) == text
    assert spoken("2h + 1") == "2h 더하기 1"  # a formula's variable, not 두 시간
