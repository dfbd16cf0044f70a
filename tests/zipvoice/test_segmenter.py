"""Segmentation of Korean text: sentences at punctuation, a short first segment, packed later ones."""

import pytest

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


def test_the_points_of_a_korean_date_end_no_sentence():
    """ "2024. 12. 5." was three sentences, so a first segment "2024." was read 이천이십사, and the date
    never reached the tokenizer whole (년 월 일)."""
    assert split_sentences("발표일은 2024. 12. 5. 입니다. 1. 첫째.") == [
        "발표일은 2024. 12. 5.",
        "입니다.",
        "1. 첫째.",  # a list item's number opens it (`sentence_ends.opens_list_item`)
    ]


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


def test_the_first_segment_never_ends_inside_a_word_that_fits_the_later_bound():
    """At speed 0.5 the first bound holds fewer tokens than "안녕하세요." has: the lecture's first slide
    began with a segment "안녕하세" and the next said "요. ...", joined by a cross-fade mid-word."""
    segments = plan_segments(LECTURE_0, letters, first_max=4, later_max=40)
    assert segments[0] == "안녕하세요."
    assert " ".join(segments).split() == LECTURE_0.split()
    long_word = "가" * 50  # over the later bound too: cut between characters as before
    assert len(plan_segments(long_word, letters, first_max=4, later_max=40)[0]) == 4
    no_spaces = "가" * 30  # a run without spaces over 4 first bounds: first audio would wait for all of it
    assert len(plan_segments(no_spaces, letters, first_max=4, later_max=40)[0]) == 4
    assert plan_segments("가" * 15 + ".", letters, first_max=4, later_max=40) == ["가" * 15 + "."]
    chinese = "今天我们一起来看看。"  # no spaces to keep words by: the first bound still cuts it
    assert plan_segments(chinese, letters, first_max=4, later_max=40)[0] == "今天我们"


def test_a_very_short_first_sentence_takes_the_opening_words_of_a_long_next_one():
    """ "네." alone was the first segment when the next sentence did not fit the first bound whole: at
    speed 2 its 0.1 s of audio lay nearly all inside the 100 ms cross-fade into the next segment."""
    text = "네. 오늘은 전기차 배터리가 어떻게 작동하는지 함께 살펴보겠습니다."
    segments = plan_segments(text, letters, first_max=8, later_max=100, first_min=4)
    assert segments == ["네. 오늘은 전기차", "배터리가 어떻게 작동하는지 함께 살펴보겠습니다."]
    no_space = (
        "네. 오늘은전기차배터리가어떻게작동하는지."  # its opening word does not fit: never cut inside it
    )
    assert plan_segments(no_space, letters, first_max=8, later_max=100, first_min=4)[0] == "네."


def test_a_packed_plan_still_cuts_only_at_sentence_ends():
    """Files-only work plans with first_min = first_max (the first segment packed like the rest): it
    takes whole sentences along, never the opening words of one."""
    text = "안녕하세요. 오늘은 배터리를 봅니다. 먼저 구조입니다."
    assert plan_segments(text, letters, 12, 12, 12) == [
        "안녕하세요.",
        "오늘은 배터리를 봅니다.",
        "먼저 구조입니다.",
    ]


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


def test_a_run_without_spaces_is_cut_between_characters_within_the_bound():
    """`_split_words` cut only at spaces: "가" * 1999 was one 71 s segment."""
    text = "가" * 1999
    segments = plan_segments(text, letters, first_max=10, later_max=40)
    assert len(segments[0]) == 10 and all(letters(s) <= 40 for s in segments)
    assert "".join(segments) == text  # no space put inside the word


def test_chinese_is_split_at_its_full_stops_and_between_characters_and_joined_without_spaces():
    text = "你好世界。" * 3 + "今天我们一起来看看电动汽车的电池是怎么工作的" * 4
    segments = plan_segments(text, letters, first_max=8, later_max=20)
    assert segments[0] == "你好世界。"
    assert all(letters(s) <= 20 for s in segments)
    assert "".join(segments) == text and not any(" " in s for s in segments)


def test_a_hard_cut_never_separates_a_combining_mark_from_its_letter():
    text = "e\u0301" * 30
    segments = plan_segments(text, letters, first_max=4, later_max=4)
    assert all(not s.startswith("\u0301") and letters(s) <= 4 for s in segments)
    assert "".join(segments) == text


def test_the_rest_of_a_long_first_sentence_keeps_the_later_bound_when_the_first_is_larger():
    """The first bound may be the larger one (the later one comes from the decoder's cost curve): the
    rest of the first sentence was cut for the first bound and packed as it was, over the later one."""
    text = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk. 끝."
    segments = plan_segments(text, len, first_max=20, later_max=6)
    assert all(len(s) <= 6 for s in segments[1:]), segments
    assert "".join(segments).replace(" ", "") == text.replace(" ", "")


def characters_counted(text: str, tokens_per_character: int, first_min: int = 0) -> tuple[int, list[str]]:
    """How many characters `plan_segments` hands its count in all (each character `tokens_per_character`
    tokens; 0: the tokenizer says nothing but the final mark, as espeak for emoji or "..." runs)."""
    counted = [0]

    def count(piece: str) -> int:
        counted[0] += len(piece)
        return max(1, tokens_per_character * len(piece))

    segments = plan_segments(text, count, first_max=60, later_max=150, first_min=first_min)
    return counted[0], segments


@pytest.mark.parametrize(
    ("unit", "tokens_per_character", "first_min"),
    [("中", 12, 0), ("😀. ", 0, 30), ("😀. ", 0, 0)],
    ids=["han-in-korean", "empty-sentences-first-min", "empty-sentences"],
)
def test_planning_work_grows_linearly_with_the_text(unit, tokens_per_character, first_min):
    """2 000 Han characters in a Korean request (a dozen tokens each) cost 10 s of planning on the tiny
    model: each cut counted the whole rest of the run again; sentences the tokenizer says nothing for
    were each counted again whole as the first segment (or a packed one) grew over them."""
    small, segments = characters_counted(unit * 400, tokens_per_character, first_min)
    large, _ = characters_counted(unit * 800, tokens_per_character, first_min)
    assert large < 2.5 * small, (small, large)
    assert "".join(segments).replace(" ", "") == (unit * 400).replace(" ", "")
