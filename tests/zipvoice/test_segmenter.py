"""Segmentation of Korean text: sentences at punctuation, a short first segment, packed later ones."""

from npu_worker.engine.zipvoice.segmenter import plan_segments, split_clauses, split_sentences

LECTURE_0 = "안녕하세요. 오늘은 전기차 배터리가 어떻게 작동하는지 함께 살펴보겠습니다."
LECTURE_3 = (
    "리튬 이온 배터리는 양극, 음극, 분리막, 그리고 전해질, 이렇게 네 가지 핵심 요소로 이루어져 있습니다. "
    "각 요소는 서로 다른 역할을 맡고 있으며, 어느 하나라도 문제가 생기면 배터리 전체의 성능이 떨어집니다."
)
LECTURE_6 = (
    "셀 하나의 전압은 보통 3.7V 정도입니다. 그래서 수백 개의 셀을 직렬과 병렬로 묶어 400V 또는 800V "
    "시스템을 만듭니다."
)


def letters(text: str) -> int:
    return len(text.replace(" ", ""))


def test_korean_sentences_split_at_final_punctuation_but_not_inside_numbers():
    assert split_sentences(LECTURE_6) == [
        "셀 하나의 전압은 보통 3.7V 정도입니다.",
        "그래서 수백 개의 셀을 직렬과 병렬로 묶어 400V 또는 800V 시스템을 만듭니다.",
    ]
    assert split_sentences("정말요? 네! 좋습니다…\n다음") == ["정말요?", "네!", "좋습니다…", "다음"]


def test_korean_clauses_split_after_commas():
    assert split_clauses("양극, 음극, 분리막, 그리고 전해질.") == [
        "양극,",
        "음극,",
        "분리막,",
        "그리고 전해질.",
    ]


def test_first_segment_is_the_first_sentence_and_the_rest_is_packed():
    text = "안녕하세요. 오늘은 배터리를 봅니다. 먼저 구조입니다. 다음은 원리입니다."
    assert plan_segments(text, letters, first_max=20, later_max=100) == [
        "안녕하세요.",
        "오늘은 배터리를 봅니다. 먼저 구조입니다. 다음은 원리입니다.",
    ]


def test_long_first_sentence_is_cut_at_clauses_to_keep_the_first_segment_short():
    segments = plan_segments(LECTURE_3, letters, first_max=12, later_max=200)
    assert segments[0] == "리튬 이온 배터리는 양극,"
    assert letters(segments[0]) <= 12
    assert len(segments) == 2
    assert " ".join(segments).split() == LECTURE_3.split()


def test_a_very_short_first_sentence_takes_the_next_one_along_when_both_fit():
    text = "네. 좋습니다. 시작하겠습니다."
    assert plan_segments(text, letters, first_max=10, later_max=50, first_min=4)[0] == "네. 좋습니다."


def test_later_segments_respect_their_bound_and_keep_every_word_in_order():
    text = " ".join([LECTURE_0, LECTURE_3, LECTURE_6])
    segments = plan_segments(text, letters, first_max=10, later_max=40)
    assert segments[0] == "안녕하세요."
    assert all(letters(s) <= 40 for s in segments[1:])
    assert " ".join(segments).split() == text.split()
    assert len(segments) < len(split_sentences(text)) + 6  # packed, not one per clause


def test_text_without_punctuation_is_one_segment():
    assert plan_segments("마침표 없는 문장", letters, 100, 100) == ["마침표 없는 문장"]
    assert plan_segments("   ", letters, 100, 100) == []
