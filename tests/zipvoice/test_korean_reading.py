"""Korean numbers, units and symbols as a Korean reader says them, on the real espeak tokenizer.

espeak-ng's Korean voice read the lecture's "3.7V" as "삼 칠 V" (three seven), "80%" with the English word
"percent", "-5.5도" as "오 오 도" and "~" as "tilde"; the model speaks what the phonemes say.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken, spoken_form
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    return EspeakTokenizer()


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "셀 하나의 전압은 보통 3.7V 정도입니다.",
            "셀 하나의 전압은 보통 3 점 칠 볼트 정도입니다.",
        ),  # slide 6
        (
            "보통 50kW에서 350kW까지의 출력을 냅니다.",
            "보통 50 킬로와트에서 350 킬로와트까지의 출력을 냅니다.",
        ),
        ("잔량이 80%를 넘으면", "잔량이 80 퍼센트를 넘으면"),
        ("온도는 -5.5도입니다.", "온도는 마이너스 5 점 오도입니다."),
        ("1,234.5원", "1234 점 오원"),  # the ".5" was lost
        ("섭씨 25℃, 77°F", "섭씨 25 도, 화씨 77도"),
        ("3~5개", "3에서 5개"),
        ("감사합니다~", "감사합니다"),
        ("010-1234-5678", "공일공 일이삼사 오육칠팔"),
        ("$5, ₩5,000", "5 달러, 5000 원"),
        ("2024.12.05 발표", "2024년 12월 5일 발표"),
        ("6월과 10월", "유월과 시월"),
        ("5×3, 1/2", "5 곱하기 3, 2분의 1"),
        ("5㎞를 100km/h로", "5 킬로미터를 시속 100킬로미터로"),
        ("GPU 3개와 20살, 1번째", "GPU 세 개와 스무 살, 첫 번째"),  # "삼 개", "이십 살", "일 번째"
        ("3:30에 24시간", "세 시 30분에 스물네 시간"),  # "삼 삼십"
        ("몇 %인가요? 1½컵", "몇 퍼센트인가요? 1과 2분의 1컵"),  # English "percent", "a half"
    ],
)
def test_korean_numbers_units_and_symbols_are_phonemized_as_spoken(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


def test_the_decimal_point_is_said(tokenizer):
    """espeak's Korean voice has no word for the point: 3.7 and 3 7 sounded the same."""
    assert tokenizer.symbols("3.7", "ko") != tokenizer.symbols("3 7", "ko")
    assert "".join(tokenizer.symbols("3.7", "ko")) == "".join(tokenizer.symbols("삼 점 칠", "ko"))


@pytest.mark.parametrize("lang", ["ko-KR", "ko_kr", "kor", "korean", " KO "])
def test_every_spelling_of_korean_is_korean(tokenizer, lang):
    """ "ko-KR" (a browser's language) was an unknown language to ZipVoice, which the espeak engine
    speaks; "korean" was phonemized without the Korean reading."""
    assert tokenizer.knows_language(lang)
    assert tokenizer.symbols("전압은 3.7V입니다.", lang) == tokenizer.symbols("전압은 3.7V입니다.", "ko")


def test_other_languages_are_left_to_espeak(tokenizer):
    assert spoken_form("3.7V, 80%", "en") == "3.7V, 80%"
    assert tokenizer.symbols("It costs $5.", "en") != tokenizer.symbols("It costs 5 달러.", "en")


@pytest.mark.parametrize(
    "text",
    [
        "COVID-19",  # a hyphen after a letter is no minus
        "3-5",  # a bare hyphen between numbers: a range or a score, left to espeak
        "배터리 - 30종",  # a spaced dash is no minus
        "5mi, 5G",  # no unit: a letter follows, or not a unit
        "정답은 1. 다음",  # a number ending a sentence is no decimal
        "3개월, 제3장, 2달러, 100명",  # Sino-Korean counters and numbers
        "안녕하세요.",
    ],
)
def test_text_that_is_not_a_number_reading_is_left_as_it_is(text):
    assert spoken(text) == text


def test_versions_and_addresses_are_numbers_joined_by_points():
    assert spoken("v2.3.1") == "v2 점 3 점 1"
    assert spoken("192.168.0.1") == "192 점 168 점 0 점 1"
    assert spoken("3.14") == "3 점 일사"
    assert spoken("2024.13.40") == "2024 점 13 점 40"  # no month 13: not a date
