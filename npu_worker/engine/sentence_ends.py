"""Which full stops end a sentence: shared by the ZipVoice segmenter (a whole text) and the stream
socket's sentence assembler (text still arriving, where a point may not be decidable yet).

A single "." followed by whitespace ends no sentence when it is a point inside a Korean date
("2024. 12. 5.": read as three sentences, 이천이십사. 십이. 오.), closes a title or a run of single
letters ("Dr. Kim", "e.g. this", "the U.S. economy", "approx. five": each was cut, a falling tone and
a pause inside a sentence), or closes a list item's mark at the start of a line or after a sentence
("1. 전압을 측정한다. 2. 저항을 …", a section's "2.3.1.", a heading's "Ⅱ. 본론" or "II. 본론", a Korean
outline's "가. 전압을 …": "1." was a sentence of its own). Only a point after a digit or a list mark
needs what follows it (a date's next part, a list item's word); every other is judged by the word
before it, so a sentence that ends a Latin word is cut as soon as the space after it comes, not with
the next word: a voice agent's "Let me check." before a pause for a tool call is spoken during the
pause. Pure; each decision looks at a bounded window around the point.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use

# Words that, with a point, lead into the rest of their sentence (a title before a name, a Latin "see").
LEADING_ABBREVIATIONS = frozenset(
    "mr mrs ms mx dr prof rev hon st mt gen col capt lt sgt gov sen rep vs cf viz approx incl excl esp"
    " fig figs eq eqs vol pp".split()
)
_WORD_BEFORE = re.compile(r"[A-Za-z]+(?:\.[A-Za-z]+)*$")
# the month or day after a point, then a break or a weekday's bracket ("2024. 12. 5.(목)")
_DATE_PART_NEXT = re.compile(r"\s+\d{1,2}\.(?:\s|$|\()")
_DATE_PART_SO_FAR = re.compile(r"\s+(?:\d{1,2}\.?)?")  # ... as far as it has arrived
# A list item's mark: a number or a section's ("2.3.1. 세부 내용"), a Roman numeral (Ⅱ or II, to XXXIX)
# or a Korean outline letter (가, 나, …; ㄱ, ㄴ, …), at the start of the text or a line (after a Markdown heading's
# "### " too), or after a sentence that ends in no digit; a word after it, or Markdown's "**" before one.
_LIST_MARK = (
    r"(?:\d{1,2}(?:\.\d{1,2}){0,3}|[\u2160-\u217f]|[가나다라마바사아자차카타파하ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ]"
    r"|X{1,3}(?:IX|IV|VI{0,3}|I{1,3})?|IX|IV|VI{0,3}|I{1,3})"
)
# ... and a step's, a part's, a chapter's or a question's number with its label, "Step 1. 준비", "Part 2. 실습",
# "Chapter 3. 결론", "Q1. 무엇인가요?" (each was cut after the label, a falling tone and a pause before its title), a
# Markdown bullet's "- Step 1. 준비" too; labels chained, "Lesson 5. Unit 3. 문법", are one run of them (it was cut
# after "Unit 3.", which its spoken form read as a label with its pause), as far as `LOOK_BACK` reaches.
LIST_LABEL = r"(?:(?:Step|STEP|Part|PART|Chapter|CHAPTER|Lesson|Unit|Week|Day|Stage|Phase) ?|Q)"
_LIST_NUMBER_BEFORE = re.compile(
    rf"(?:^|\n|[^\d\s][.!?…][\"'”’)\]]*\s)[ \t]*(?:#{{1,6}}[ \t]+)?"
    rf"(?:{_LIST_MARK}|(?:[-*+•▪◦][ \t]+)?(?:{LIST_LABEL}\d{{1,2}}\.[ \t]+){{0,2}}{LIST_LABEL}\d{{1,2}})$"
)
_WORD_NEXT = re.compile(r"\s+[*_]{0,3}(?:[^\W_]|[\"'“‘(\[「『])")  # a letter or digit, a quote or bracket
_WORD_NEXT_SO_FAR = re.compile(r"\s+[*_]{0,3}")  # ... as far as it has arrived
# "Who was it? I. Then we left.": inside a line, between an English question or exclamation and a Latin
# word, an "I." is the pronoun answering it, not a Roman numeral's list mark (one opens its line, "I.
# Introduction", follows a statement, "Summary of work. I. Introduction" (it was cut "I." alone), follows a
# Korean sentence or comes before a Hangul word: "… 끝. I. Intro", "… it? I. 서론").
_PRONOUN_I = re.compile(r"[A-Za-z][!?][\"'”’)\]]*[ \t]+I$")
_LATIN_WORD_NEXT = re.compile(r"\s+[*_]{0,3}[\"'“‘(\[]?[A-Za-z]")
# "No. 1", "No. 5 in the list", "Sec. 2", "Ch. 3", "Ref. 5", "Ver. 2": a number sign's or a part's
# abbreviation, with the number after it, ends no sentence; a Korean question's number does not follow one
# ("정답은 No. 2번 문제는 …": the answer "No." ends its sentence).
# "Lv. 3" (a game's or a course's level) as well: it was cut after "Lv.".
_NUMBER_SIGN = re.compile(
    r"(?<![A-Za-z.])(?:N[Oo]|[Ss]ec|[Cc]h(?:ap)?|[Rr]ef|[Vv]er|[Rr]ev|[Aa]rt|[Ee]x|L[Vv]|lv)$"
)
# ... and that number with a point, "Lv. 3.", "No. 3.", "Jan. 5." at a sentence's end, is no list item's mark
# after a sentence (it was 레벨 세 번째 and no end: "현재 등급은 Lv. 3. 다음 목표는" one sentence).
_SIGNS_NUMBER = re.compile(
    r"(?<![A-Za-z.])(?:N[Oo]|[Ss]ec|[Cc]h(?:ap)?|[Rr]ef|[Vv]er|[Rr]ev|[Aa]rt|[Ee]x|L[Vv]|lv|Jan|Feb|Mar|Apr|Jun"
    r"|Jul|Aug|Sept?|Oct|Nov|Dec)\.[ \t]+\d{1,2}$"
)
_NUMBER_NEXT = re.compile(r"[ \t]+\d+(?![\d번년])")
_NUMBER_NEXT_SO_FAR = re.compile(r"[ \t]+\d*")
# "Apple Inc. announced", "Apple Inc. 발표", "Kim et al. (2020)에", "Jan. 2024", "Univ. of Seoul", "Ph.D. 과정":
# a company's "Inc.", a citation's "et al.", a month's, a school's, a degree's abbreviation with a word in small
# letters, a Hangul word, a digit or a bracket after it ends no sentence (each was cut there); before a
# capital it may ("… at Apple Inc. It was …", "… by Kim et al. The results").
_ENDS_ONLY_BEFORE_A_CAPITAL = re.compile(
    r"(?<![A-Za-z.])(?:Inc|Ltd|Corp|Co|Bros|al|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec|Dept|Univ|Inst"
    r"|Ph\.D|[Ee]x)$"
)
_SENTENCE_GOES_ON = re.compile(r"\s+[*_]{0,3}[\"'“‘(\[]?(?:[a-z\d]|[가-힣ㄱ-ㅎ])")
_SENTENCE_GOES_ON_SO_FAR = re.compile(r"\s+[*_]{0,3}[\"'“‘(\[]?")  # ... as far as it has arrived
LOOK_BACK = 24  # characters before the point searched for its word (the longest abbreviation fits)


def ends_sentence(text: str, point: int, after: int, complete: bool = True) -> bool | None:
    """Whether the sentence mark at text[point:after] (a run of . ! ? … and any closing quotes, with
    whitespace or the end of the text after it) ends a sentence. None: not yet known, the text stops
    too soon after it (`complete` False: more may arrive)."""
    if after >= len(text):
        return True if complete else None
    if not text.startswith(".", point) or text.startswith(".", point + 1) or point == 0:
        return True  # ! ? … and ellipses always end one; only a single point may be something else
    before = text[point - 1]
    if before.isdigit() and after == point + 1:  # a point inside a Korean date: its next part follows
        if _DATE_PART_NEXT.match(text, after):
            return False
        if not complete and (
            _DATE_PART_SO_FAR.fullmatch(text, after) or _WORD_NEXT_SO_FAR.fullmatch(text, after)
        ):
            return None
        return not opens_list_item(text, point)
    if after == point + 1 and _after_list_mark(text, point):  # "Ⅱ. 본론", "가. 전압을": the next word decides
        if not complete and _WORD_NEXT_SO_FAR.fullmatch(text, after):
            return None
        if _WORD_NEXT.match(text, after) and not _pronoun_i(text, point, after):
            return False
    if after == point + 1 and _NUMBER_SIGN.search(text, max(0, point - 5), point):  # "No. 1"
        if not complete and _NUMBER_NEXT_SO_FAR.fullmatch(text, after):
            return None
        if _NUMBER_NEXT.match(text, after):
            return False
    if after == point + 1 and _ENDS_ONLY_BEFORE_A_CAPITAL.search(text, max(0, point - 6), point):
        if not complete and _SENTENCE_GOES_ON_SO_FAR.fullmatch(text, after):
            return None
        return not _SENTENCE_GOES_ON.match(text, after)
    if not ("a" <= before.lower() <= "z"):
        return True
    word = _WORD_BEFORE.search(text, max(0, point - LOOK_BACK), point)
    return word is None or not (_whole_word(text, word.start()) and _leads_on(word.group()))


def opens_list_item(text: str, point: int) -> bool:
    """The single point at text[point] closes a list item's number ("1. 전압을 …", at a line's start or
    after a sentence that ends in no digit, and a word after it): it opens the item, it ends nothing."""
    return bool(
        point + 1 < len(text)
        and _WORD_NEXT.match(text, point + 1)
        and _after_list_mark(text, point)
        and not _pronoun_i(text, point, point + 1)
    )


def _after_list_mark(text: str, point: int) -> bool:
    start = max(0, point - LOOK_BACK)
    return bool(
        _LIST_NUMBER_BEFORE.search(text, start, point) and not _SIGNS_NUMBER.search(text, start, point)
    )


def _pronoun_i(text: str, point: int, after: int) -> bool:
    """The "I" before the point at text[point] is the pronoun: inside a line after a sentence, a Latin
    word after it."""
    return bool(
        _PRONOUN_I.search(text, max(0, point - LOOK_BACK), point) and _LATIN_WORD_NEXT.match(text, after)
    )


def _whole_word(text: str, start: int) -> bool:
    """The letters found start a word ("f" of "2f7326f" does not; nor a word longer than the window)."""
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == ".")


def _leads_on(word: str) -> bool:
    """A title or Latin abbreviation ("Dr", "vs"), or single letters with points ("U.S", "e.g", "J"; not
    the pronoun "I", which often ends a sentence)."""
    if word.lower() in LEADING_ABBREVIATIONS:
        return True
    letters = word.split(".")
    return all(len(letter) == 1 for letter in letters) and word != "I"
