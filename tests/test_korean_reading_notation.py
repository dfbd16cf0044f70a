"""Korean lecture text read as a lecturer says it, the notation of its numbers: accelerations, Latin
abbreviations, years, amperes, powers and scientific notation, litres and calories, web addresses, times of
day, versions, "No.", roots and Greek letters, prices per unit, ordinals and pages, weekdays, quarters,
dotted dates, section abbreviations, the tilde, full-width signs, energy and chemistry units, zero-width
characters, phone numbers, dates of Korean history, dollars (`korean_reading` and its rules). The lists,
ranges, slashes, ratios, formulas and sentence ends are in `test_korean_lecture_reading.py`.

Each reading is phonemized by the real espeak tokenizer (what ZipVoice and the espeak engine speak) and
compared with the words a Korean lecturer says; the comment says what espeak said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.segmenter import split_sentences
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer
from tests.reading_support import streamed


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    return EspeakTokenizer()


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
