"""Korean lecture text read as a lecturer says it: list marks, ranges, slashes, ratios, powers, formulas,
units, dates, acronyms and the signs of Korean documents (`korean_reading`, `korean_marks`), and where
its sentences end (`sentence_ends`: the segmenter and the stream socket's assembler alike). The later
rules for the notation of numbers (times, versions, addresses, phone numbers, …) are tested in
`test_korean_reading_notation.py`.

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
