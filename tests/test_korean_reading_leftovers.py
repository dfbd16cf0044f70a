"""The misreadings of Korean lecture text left by earlier rounds (`korean_reading`, `korean_formulas`,
`korean_marks`, `sentence_ends`), each beside text that only looks like it and reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.segmenter import split_sentences
from tests.reading_support import streamed
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("행렬 A^T 를 곱한다", "행렬 A의 전치 를 곱한다"),  # it was A의 T제곱: a transpose, no power
        ("x^T y", "x의 전치 y"),
    ],
)
def test_a_letters_power_of_t_is_its_transpose(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("2^T", "2의 T제곱"), ("e^x", "e의 x제곱"), ("10^3", "10의 3제곱"), ("A^2", "A의 2제곱")],
)
def test_other_powers_are_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("매출▲3%", "매출 증가 3 퍼센트"),  # the sign glued to its word was said not at all
        ("영업이익▼2억 원", "영업이익 감소 2억 원"),
        ("손익△5억", "손익 마이너스 5억"),
    ],
)
def test_a_reports_sign_glued_to_its_word_is_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("시즌▲3대 전략", "시즌▲3대 전략"), ("▲3대 전략", "▲3대 전략"), ("▲3.5%", "증가 3 점 오 퍼센트")],
)
def test_a_glued_sign_before_no_amount_and_a_spaced_one_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Step 1. 준비 단계입니다.", ["Step 1. 준비 단계입니다."]),  # it was cut after "Step 1."
        ("Part 2. 실습", ["Part 2. 실습"]),
        ("Chapter 3. 결론", ["Chapter 3. 결론"]),
        ("Q1. 무엇인가요?", ["Q1. 무엇인가요?"]),
        ("설명을 마칩니다. Step 2. 실행합니다.", ["설명을 마칩니다.", "Step 2. 실행합니다."]),
        ("- Step 1. 준비\n- Step 2. 실행", ["- Step 1. 준비", "- Step 2. 실행"]),
    ],
)
def test_a_labelled_list_items_number_ends_no_sentence(text, sentences):
    assert split_sentences(text) == sentences
    assert streamed(text, 3) == sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("정답은 Q1. 다음 문제", ["정답은 Q1.", "다음 문제"]),  # inside a sentence: the answer ends it
        ("I did Step 1. Then I left.", ["I did Step 1.", "Then I left."]),
        ("총 Part 2. 끝", ["총 Part 2.", "끝"]),
    ],
)
def test_a_label_and_number_inside_a_sentence_still_ends_it(text, sentences):
    assert split_sentences(text) == sentences
    assert streamed(text, 3) == sentences


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "Step 1. 준비 단계입니다.",
            "Step 1, 준비 단계입니다.",
        ),  # a label's number, not 첫 번째, and a pause
        ("Q1. 무엇인가요?", "Q원, 무엇인가요?"),
        ("정답은 Q1. 다음 문제", "정답은 Q원. 다음 문제"),
        ("1. 전압을 측정한다.", "첫 번째, 전압을 측정한다."),
    ],
)
def test_a_labelled_list_mark_is_read_as_its_label_and_number(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "사망률은 3.2명/10만 명이다",
            "사망률은 10만 명당 3 점 이명이다",
        ),  # it was 3 점 이명 10만 명: no "per"
        ("사고 5건/1,000명", "사고 1000명당 5건"),
        ("2명/1만명", "1만명당 두 명"),
    ],
)
def test_a_rate_over_a_round_base_is_read_per_the_base(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("5년/10만km", "5년 10만킬로미터"),  # a warranty's limits, either one
        ("3명/5명", "세 명 다섯 명"),  # no round base
        ("5건/1000명단", "5건 1000명단"),  # no counter: a word
        ("입/출력", "입 출력"),
    ],
)
def test_a_slash_that_is_no_rate_reads_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("§ 3 조항", "3절 조항"),  # the sign was said not at all: 삼 조항
        ("§3.2 배터리 구조", "3 점 이절 배터리 구조"),
        ("№ 5", "넘버 파이브"),  # nothing for the sign: 오
        ("№5 제품", "넘버 파이브 제품"),
    ],
)
def test_a_section_or_numero_sign_before_its_number_is_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("§ 참고", "§ 참고"),
        ("§§ 3-5", "§§ 3-5"),  # a range of sections: it was §3절-5
        ("§ 3-5", "§ 3-5"),
        ("No. 5", "넘버 파이브"),
        ("3.2절", "3 점 이절"),
        ("정답은 No. 2번", "정답은 No. 2번"),
    ],
)
def test_signs_with_no_number_and_the_spelled_forms_read_as_before(written, said):
    assert spoken(written) == said


def test_kana_is_left_out_and_the_hangul_joined_to_it_read_as_korean(tokenizer):
    """espeak said "Japanese letter" for each kana and spelled the Hangul joined to it as jamo."""
    assert spoken("한국어すし") == "한국어 "
    assert spoken("사과ひらがな 단어") == "사과  단어"
    assert spoken("ｶﾀｶﾅ 쓰기") == "  쓰기"
    assert tokenizer.symbols("한국어すし", "ko") == tokenizer.symbols("한국어", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("한국〜일본", "한국 일본"),
        ("전압ㆍ전류", "전압 전류"),
        ("전압・전류", "전압 전류"),
        ("「전압」", "「전압」"),
    ],
)
def test_marks_beside_the_kana_block_read_as_before(written, said):
    """A wave dash, middle dots and corner brackets sit beside or inside the kana blocks: not kana."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("p -> next 로 이동", "p->next 로 이동"),  # a pointer's member: it was p에서 next, a step from p
        ("node -> left", "node->left"),
        ("cur_node -> data", "cur_node->data"),
    ],
)
def test_a_spaced_code_arrow_reads_as_the_unspaced_one(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("input -> output", "input에서 output"),
        ("A -> B", "A에서 B"),
        ("p -> q", "p면 q"),
        ("a -> b", "a가 b로"),
        ("x -> y -> z", "x, y, z"),
        ("n -> inf", "n에서 inf"),
        ("p -> 다음", "p에서 다음"),
    ],
)
def test_arrows_between_terms_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("dV/dt 가 크다", "d-V d-t 가 크다"),  # espeak said the English word "slash" between them
        ("dy/dx", "d-y d-x"),
        ("4K@60Hz 출력", "4K 60 헤르츠 출력"),  # espeak: English "at sign"
        ("1080p@60fps", "1080p 60fps"),
    ],
)
def test_a_derivative_and_a_display_modes_rate_are_read(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "text", ["d/dt", "and/dt", "user1@163.com", "user@60hz.com", "4K@ 60 헤르츠", "admin@host"]
)
def test_an_operator_a_word_and_an_email_address_are_left(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("행렬 Aᵀ", "행렬 A의 전치"),  # espeak spelled the superscript T's code point
        ("(AB)^T 는", "(AB)의 전치 는"),  # a bracket's power: the caret was unsaid, 에이 비 티
        ("f(x)^2", "f(x)의 2제곱"),
        (
            "(1+r)^n",
            "(1 플러스 r)의 n제곱",
        ),  # its "+" a Korean word since (test_korean_reading_last_leftovers.py)
    ],
)
def test_a_brackets_power_and_a_superscript_transpose_are_read(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"), [("(2020)¹", "(2020)¹"), ("x²", "x의 2제곱"), ("2^T", "2의 T제곱")]
)
def test_a_footnote_after_a_bracket_and_a_numbers_power_read_as_before(written, said):
    """A superscript after a bracket is a footnote's mark, no power."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("e^T", "e의 T제곱"),  # Euler's number to the power T: it was e의 전치
        ("온도 T에서 e^T 배", "온도 T에서 e의 T제곱 배"),
        ("eᵀ", "e의 T제곱"),
        ("벡터 be^T", "벡터 be의 전치"),  # a name ending in "e" is no Euler's number
        ("E^T", "E의 전치"),
    ],
)
def test_eulers_number_to_the_power_t_is_no_transpose(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("state s -> state t", "state s에서 state t"),  # a transition: it was s->state t, read as code
        ("s -> goal state 로 간다", "s에서 goal state 로 간다"),
        ("p -> next 를 따라간다", "p->next 를 따라간다"),  # a pointer's member, as in the branch
        ("p -> next;", "p->next;"),
    ],
)
def test_an_arrow_whose_right_side_goes_on_in_english_words_is_a_step(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("18 U.S.C. § 1030 위반", "18 U.S.C. 1030절 위반"),  # it was 103절0: the last digit cut off
        ("§ 2020", "2020절"),
        ("§ 3", "3절"),
        ("§ 12345", "§ 12345"),
        ("§ 3-5", "§ 3-5"),
    ],
)
def test_a_four_digit_section_is_read_whole(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("문의: kp@60fps.net", "문의: kp@60fps.net"),  # an e-mail's "@": it was kp 60fps.net
        ("admin1@60hz.com", "admin1@60hz.com"),
        ("4K@60Hz.", "4K 60 헤르츠."),  # a display mode ending a sentence
    ],
)
def test_an_at_sign_before_a_rate_in_an_email_address_is_kept(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("text", "sentences", "said"),
    [
        # it was cut after "Unit 3.", which the spoken form read as a label with its pause
        ("Lesson 5. Unit 3. 문법", ["Lesson 5. Unit 3. 문법"], "Lesson 5, Unit 3, 문법"),
        ("Part 2. Chapter 3. 결론", ["Part 2. Chapter 3. 결론"], "Part 2, Chapter 3, 결론"),
        (
            "끝났습니다. Week 2. Day 3. 실습",
            ["끝났습니다.", "Week 2. Day 3. 실습"],
            "끝났습니다. Week 2, Day 3, 실습",
        ),
    ],
)
def test_chained_labels_are_one_run_of_labels_split_and_said_alike(text, sentences, said):
    assert split_sentences(text) == sentences
    assert streamed(text, 3) == sentences
    assert spoken(text) == said


@pytest.mark.parametrize(
    ("text", "sentences", "said"),
    [
        # inside a sentence the chain opens nothing: each label still ends its sentence, as it is read
        ("정답은 Q1. Q2. 다음", ["정답은 Q1.", "Q2.", "다음"], "정답은 Q원. Q투. 다음"),
        ("총 Part 2. Unit 3. 끝", ["총 Part 2.", "Unit 3.", "끝"], "총 Part 2. Unit 3. 끝"),
        # a bare list mark after a label is no label: cut there, and read with its sentence's end
        ("Lesson 5. 1. 문법", ["Lesson 5. 1.", "문법"], "Lesson 5, 1. 문법"),
    ],
)
def test_labels_after_a_sentences_words_still_end_it(text, sentences, said):
    assert split_sentences(text) == sentences
    assert streamed(text, 3) == sentences
    assert spoken(text) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("§3.2절 참고", "3 점 이절 참고"),  # the sign and the word both written: it was 3 점 이절절
        ("§ 3.2절 참고", "3 점 이절 참고"),
        ("§ 3절에서", "3절에서"),
        ("§3.2 참고", "3 점 이절 참고"),  # either spacing, with the word or without: 3.2절 as it is written
        ("§ 3.2 참고", "3 점 이절 참고"),
        ("3.2절 참고", "3 점 이절 참고"),
    ],
)
def test_a_section_sign_reads_its_number_as_one_section_however_written(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("§ 3 절차", "3절 절차"),  # a word after a space is another word: its section is said
        ("§§ 3-5절", "§§ 3-5절"),  # a range is left as before
    ],
)
def test_a_section_signs_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("text", "sentences", "said"),
    [
        # "Q3" is read as its letter and English digit wherever it stands (a question's number on a slide, "Q1.
        # 무엇인가요?"); a quarter is written "3Q" (3분기) in Korean reports
        ("Q3 실적", ["Q3 실적"], "Q쓰리 실적"),
        ("Q3. 매출이 늘었다", ["Q3. 매출이 늘었다"], "Q쓰리, 매출이 늘었다"),
        ("올해 Q3. 매출이 늘었다", ["올해 Q3.", "매출이 늘었다"], "올해 Q쓰리. 매출이 늘었다"),
        ("3Q 실적", ["3Q 실적"], "3분기 실적"),
    ],
)
def test_q_and_a_digit_reads_alike_alone_and_as_a_label(text, sentences, said):
    assert split_sentences(text) == sentences
    assert spoken(text) == said
