"""A lecture's list items, headings and outline marks: where their sentences end (`sentence_ends`: the
segmenter and the stream socket's assembler alike) and how their marks are read (`korean_marks`).
The readings of the rest of a lecture's text are tested in `test_korean_lecture_reading.py`.

Each reading is phonemized by the real espeak tokenizer and compared with the words a Korean lecturer
says; the comment says what espeak said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.segmenter import split_sentences
from tests.reading_support import streamed
from tests.reading_support import tokenizer as tokenizer  # a fixture

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


SECTIONS = "1.1. 개요\n2.3.1. 세부 내용입니다. 2.4. 다음 내용"


@pytest.mark.parametrize("size", [1, 4, len(SECTIONS)])
def test_a_section_number_opens_its_heading(size):
    """ "2.3.1." was a sentence of its own ("이 점 삼 점 일." with a falling tone)."""
    expected = ["1.1. 개요", "2.3.1. 세부 내용입니다.", "2.4. 다음 내용"]
    assert split_sentences(SECTIONS) == expected
    assert streamed(SECTIONS, size) == expected
    assert spoken(SECTIONS) == "1 점 일, 개요\n2 점 3 점 1, 세부 내용입니다. 2 점 사, 다음 내용"


STARTS_WITH_A_NUMBER = "1. 3.7V 셀 96개를 연결한다. 2. 10%에서 멈춘다."


@pytest.mark.parametrize("size", [1, 3, len(STARTS_WITH_A_NUMBER)])
def test_a_list_item_that_starts_with_a_number_is_one_sentence(size):
    expected = ["1. 3.7V 셀 96개를 연결한다.", "2. 10%에서 멈춘다."]
    assert split_sentences(STARTS_WITH_A_NUMBER) == expected
    assert streamed(STARTS_WITH_A_NUMBER, size) == expected
    assert spoken(STARTS_WITH_A_NUMBER).startswith("첫 번째, 3 점 칠 볼트")


MARKDOWN = "### 1. 개요\n## 배터리의 원리\n1. **전압**을 측정한다. 2. 저항을 계산한다."


@pytest.mark.parametrize("size", [1, 4, len(MARKDOWN)])
def test_markdown_headings_and_bold_items_keep_their_list_marks(size):
    """An LLM's Markdown: "### 1." and "1." before "**전압**" were cut off alone."""
    expected = ["### 1. 개요", "## 배터리의 원리", "1. **전압**을 측정한다.", "2. 저항을 계산한다."]
    assert split_sentences(MARKDOWN) == expected
    assert streamed(MARKDOWN, size) == expected
