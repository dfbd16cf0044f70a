"""Sentence assembly from LLM-like fragments: cut as soon as a sentence (or, failing that, a clause) is whole."""

from __future__ import annotations

import sys
import time
import unicodedata
from typing import Any

import pytest

from npu_worker.engine.zipvoice.segmenter import split_sentences
from npu_worker.openai_compat import sentences
from npu_worker.openai_compat.sentences import AssemblyRules, SentenceAssembler


def feed_in_fragments(
    text: str, size: int = 3, rules: AssemblyRules | None = None
) -> tuple[list[str], list[int]]:
    """Pieces and, for each, how many fragments had been fed when it came out."""
    assembler = SentenceAssembler(rules or AssemblyRules())
    pieces, when = [], []
    fragments = [text[i : i + size] for i in range(0, len(text), size)]
    for count, fragment in enumerate(fragments, start=1):
        for piece in assembler.feed(fragment):
            pieces.append(piece)
            when.append(count)
    for piece in assembler.flush():
        pieces.append(piece)
        when.append(len(fragments) + 1)
    return pieces, when


def test_korean_sentences_are_cut_at_their_full_stops_once_a_space_follows():
    pieces, _ = feed_in_fragments("안녕하세요. 오늘은 문장을 배웁니다! 질문 있나요? 네")
    assert pieces == ["안녕하세요.", "오늘은 문장을 배웁니다!", "질문 있나요?", "네"]


def test_a_korean_sentence_comes_out_on_the_fragment_after_its_full_stop():
    text = "첫 문장입니다. 둘째"
    pieces, when = feed_in_fragments(text, size=1)
    assert pieces[0] == "첫 문장입니다."
    assert when[0] == text.index(".") + 2  # the space after the full stop completes it


def test_a_latin_sentence_comes_out_on_the_fragment_after_its_full_stop():
    """Not with the next word: a voice agent's "Let me check." is spoken while it waits for a tool."""
    text = "Let me check. The weather"
    pieces, when = feed_in_fragments(text, size=1)
    assert pieces[0] == "Let me check."
    assert when[0] == text.index(".") + 2


@pytest.mark.parametrize("size", [1, 2, 3, 1000])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "회의는 2024. 12. 5. 오후에 열립니다. 다음 안건입니다.",
            ["회의는 2024. 12. 5.", "오후에 열립니다.", "다음 안건입니다."],
        ),
        ("The year was 2024. 12 people came.", ["The year was 2024.", "12 people came."]),
        ("Dr. Smith met Mrs. Kim. They spoke.", ["Dr. Smith met Mrs. Kim.", "They spoke."]),
        ("Tools e.g. Hammers work. Then stop.", ["Tools e.g. Hammers work.", "Then stop."]),
        ("He moved to the U.S. last year. Nice.", ["He moved to the U.S. last year.", "Nice."]),
        ("It costs approx. five. So do I. Bye", ["It costs approx. five.", "So do I.", "Bye"]),
        ("I agree. then again, no.", ["I agree.", "then again, no."]),
        ("배터리는 3.7V 입니다. 충전하세요.", ["배터리는 3.7V 입니다.", "충전하세요."]),
        ("Built at 2f7326f. Small one.", ["Built at 2f7326f.", "Small one."]),  # "f" is no initial
        ("잠깐만요... 생각해 볼게요… 네!", ["잠깐만요...", "생각해 볼게요…", "네!"]),
    ],
)
def test_points_that_end_no_sentence_are_not_cut(text, expected, size):
    """ "2024. 12. 5." was three sentences (이천이십사. 십이. 오.), "Dr." one on its own: each a falling tone
    and a pause inside a sentence. The assembler now cuts as the ZipVoice segmenter does."""
    assert feed_in_fragments(text, size=size)[0] == expected
    assert split_sentences(text) == expected


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Summary of work. I. Introduction", ["Summary of work.", "I. Introduction"]),  # was "I." alone
        ("Who was it? I. Then we left.", ["Who was it?", "I.", "Then we left."]),  # the pronoun answers
        ("레벨은 Lv. 3 달성입니다. 다음.", ["레벨은 Lv. 3 달성입니다.", "다음."]),  # was cut after "Lv."
        ("We reached lv. 5 today. Next.", ["We reached lv. 5 today.", "Next."]),
        ("Apple Inc. 발표에 따르면 그렇다. 끝.", ["Apple Inc. 발표에 따르면 그렇다.", "끝."]),  # was cut
        ("Acme Ltd. announced it. Then.", ["Acme Ltd. announced it.", "Then."]),  # was cut
        ("I work at Apple Inc. It is big.", ["I work at Apple Inc.", "It is big."]),
        ("Kim et al. (2020)에 따르면 그렇다. 끝", ["Kim et al. (2020)에 따르면 그렇다.", "끝"]),  # was cut
        ("as shown by Kim et al. The results hold.", ["as shown by Kim et al.", "The results hold."]),
        ("Jan. 2024 발표. Univ. of Seoul 강의.", ["Jan. 2024 발표.", "Univ. of Seoul 강의."]),  # both cut
        ("Ph.D. 과정을 밟았다. 끝.", ["Ph.D. 과정을 밟았다.", "끝."]),  # was cut
    ],
)
def test_a_level_a_company_and_a_heading_numeral_stay_in_their_sentence(text, expected, size):
    """ "Lv. 3", "Apple Inc. 발표", "et al. (2020)", "Jan. 2024", "Ph.D. 과정" and a heading's "I. Introduction"
    after a statement were cut at their point: a falling tone and a pause inside a sentence (the heading's
    "I." read as the pronoun, a sentence alone)."""
    assert split_sentences(text) == expected
    assert feed_in_fragments(text, size=size)[0] == expected


def test_korean_sentences_without_points_are_cut_at_their_endings():
    """Text with no punctuation (speech recognition's) waited for 240 characters before a first piece."""
    text = "오늘은 날씨가 좋습니다 내일은 비가 온다고 해요 그래서 우산을 챙기세요 "
    pieces, when = feed_in_fragments(text, size=2)
    assert pieces[0] == "오늘은 날씨가 좋습니다"
    assert when[0] < len(text) // 2
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")


def test_cjk_full_stops_cut_at_once():
    pieces, _ = feed_in_fragments("今天天气很好。我们去公园吧！好")
    assert pieces == ["今天天气很好。", "我们去公园吧！", "好"]


def test_decimal_points_and_a_trailing_dot_do_not_cut():
    assembler = SentenceAssembler()
    assert assembler.feed("The value is 3.14 today") == []
    assert assembler.feed(" and the end.") == []
    assert assembler.flush() == ["The value is 3.14 today and the end."]


def test_closing_quotes_stay_with_their_sentence():
    pieces, _ = feed_in_fragments('He said "stop." Then left.')
    assert pieces == ['He said "stop."', "Then left."]


def test_a_long_clause_is_cut_at_its_comma_once_enough_text_waits():
    rules = AssemblyRules(first_clause_chars=16, clause_chars=40)
    pieces, _ = feed_in_fragments(
        "우리가 오늘 함께 배울 내용은, 문장을 나누는 방법과 그 이유입니다", rules=rules
    )
    assert pieces[0] == "우리가 오늘 함께 배울 내용은,"
    assert "".join(pieces).replace(" ", "") == "우리가오늘함께배울내용은,문장을나누는방법과그이유입니다"


def test_text_without_any_mark_is_cut_at_a_space_before_the_bound():
    rules = AssemblyRules(max_chars=20)
    pieces, _ = feed_in_fragments("word " * 12, rules=rules)
    assert all(len(piece) <= 20 for piece in pieces)
    assert " ".join(pieces).split() == ["word"] * 12


@pytest.mark.parametrize("space", ["\t", "\u3000", "\u00a0"])
@pytest.mark.parametrize("size", [1, 1000])
def test_a_run_without_marks_is_cut_at_any_space_not_inside_a_word(space, size):
    """Words apart by a tab, an ideographic space (a Korean IME's full-width space) or a no-break space
    (text copied from a web page): the cut looked for " " only, so it split an eojeol ("전압을측정한" |
    "다고") at the bound while a space lay a few characters before it."""
    word = "전압을측정한다고"
    pieces, _ = feed_in_fragments(space.join([word] * 60), size=size)
    assert all(len(piece) <= AssemblyRules().max_chars for piece in pieces)
    assert [part for piece in pieces for part in piece.split(space)] == [word] * 60


def test_a_no_break_space_is_cut_at_only_where_no_other_space_is():
    """`10\u00a0km` stays whole where a plain space lies before the bound."""
    text = ("거리 10\u00a0km " * 40)[:300]
    pieces, _ = feed_in_fragments(text, size=len(text))
    assert pieces[0].endswith(("km", "거리")), pieces[0][-8:]


def test_newlines_end_a_piece_and_blank_input_makes_none():
    pieces, _ = feed_in_fragments("제목\n본문입니다\n\n   ")
    assert pieces == ["제목", "본문입니다"]
    assert SentenceAssembler().flush() == []


def test_blank_fragments_never_grow_the_buffer_past_the_bound():
    """Whitespace-only fragments (an LLM's padding, or a caller's attack) once piled up without bound,
    each feed searching all of it: thousands of them stalled the event loop for every client."""
    assembler = SentenceAssembler()
    assembler.feed("a")
    for _ in range(2000):
        assert assembler.feed(" " * 2000) in ([], ["a"])
        assert len(assembler.pending) <= AssemblyRules().max_chars + 2000
    assert assembler.feed("안녕. ") == ["안녕."]


@pytest.mark.parametrize("mark", [".", ",", "…"])
def test_a_long_run_of_marks_without_a_space_is_searched_in_linear_time(mark):
    """A fragment of 2 000 "." took 0.3 s of the event loop (/health waited as long): the search for
    a sentence end tried every mark of the run as a start and each scanned the rest of it."""
    assembler, run = SentenceAssembler(AssemblyRules(max_chars=16_000)), mark * (8000 // len(mark))
    started = time.perf_counter()
    assert assembler.feed(run) == []
    assert time.perf_counter() - started < 0.2  # 1.9 s before, 1 ms after
    assert assembler.feed(" 끝. ")[-1].endswith("끝.")  # cut as before (a run alone says nothing: dropped)


def test_a_long_fragment_is_searched_for_sentence_ends_within_the_bound_only(monkeypatch):
    """A fragment with no sentence end was searched to its end at every cut: with --max-text-chars
    raised, one of 100 000 characters held the event loop 0.76 s (13 ms after). The search's span is
    recorded, not timed."""
    spans: list[int] = []
    pattern = sentences.SENTENCE_END

    class Recorded:
        def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
            spans.append(min(endpos, len(text)) - pos)
            return pattern.finditer(text, pos, endpos)

    monkeypatch.setattr(sentences, "SENTENCE_END", Recorded())
    text = "전압을측정한다" * 3000
    whole, _ = feed_in_fragments(text, size=len(text))
    assert max(spans) <= AssemblyRules().max_chars + 1, max(spans)
    assert whole == feed_in_fragments(text, size=1000)[0] and "".join(whole) == text


def test_a_piece_with_nothing_to_say_goes_before_the_next_one():
    """ "...", an emoji or a markdown bullet on its own was a sentence: an EmptyText error event each
    (espeak and ZipVoice say nothing for it) and an engine call for nothing."""
    pieces, _ = feed_in_fragments("안녕하세요. ... 네! 😀\n- 끝. * ", size=2)
    assert pieces == ["안녕하세요.", "... 네!", "😀 - 끝."]
    first, last = SentenceAssembler().feed("가. " + "… " * 2000 + "끝. ")  # what waits stays bounded
    assert first == "가." and last.endswith("끝.") and len(last) < 40


def test_a_piece_with_nothing_to_say_at_the_end_is_dropped():
    assembler = SentenceAssembler()
    assert assembler.feed("끝. ") == ["끝."]
    assert assembler.feed("** 😀") == []
    assert assembler.flush() == []
    alone = SentenceAssembler()  # an utterance of nothing else is the engine's EmptyText, as on every route
    assert alone.feed("😀 ... ") == [] and alone.flush() == ["😀 ..."]


@pytest.mark.parametrize("text", [unicodedata.normalize("NFD", "각난닫라" * 60), "x" + "e\u0301" * 300])
def test_a_run_without_spaces_is_cut_between_whole_characters(text):
    """A run with no space is cut at `max_chars`: that split a decomposed syllable ("닫" as "다" and
    "ᆮ", read as jamo) or a letter from its accent."""
    pieces, _ = feed_in_fragments(text, size=7)
    assert "".join(pieces) == text
    for piece in pieces:
        assert not unicodedata.combining(piece[0]) and not "\u1160" <= piece[0] <= "\u11ff"


@pytest.mark.parametrize(
    "text",
    [
        "오늘은 전압을 측정하는 방법을 배웁니다 " * 30,  # Korean endings, no point: clause marks only
        "first we measure the voltage, " * 20,
        "word " * 100 + "end. after",  # a sentence end past the bound
    ],
)
def test_a_fragment_longer_than_the_bound_is_cut_within_it(text):
    """The last clause mark (or sentence end) of what waits was cut wherever it was: a paragraph sent as
    one fragment became one piece of 659 characters (bound: 240), its first audio waiting for all of it,
    and past `--max-text-chars` (pieces join a fragment to what waited) a TextTooLong error."""
    for size in (len(text), 97):
        pieces, _ = feed_in_fragments(text, size=size)
        assert all(len(piece) <= AssemblyRules().max_chars for piece in pieces), [len(p) for p in pieces]
        assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
