"""A text of Hangul words and sentence marks alone skips the Korean reading's rules (`korean_reading.PLAIN`):
only a Korean outline's list mark can be read in one. Pinned here by reading every rule's pattern (its parse
tree: a pattern that must consume, or look at, a character outside the class cannot match such a text), so a
new rule that could match plain text fails this test instead of going unread on the fast path."""

from __future__ import annotations

import json
import re
import unicodedata
from importlib import resources
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from types import ModuleType

import pytest

from npu_worker.engine import (
    korean_arrows,
    korean_dates,
    korean_formulas,
    korean_marks,
    korean_numerals,
    korean_phone_numbers,
    korean_ranges,
    korean_reading,
    korean_units,
    korean_words,
    text_form,
)
from npu_worker.engine.korean_reading import PLAIN, spoken

MODULES: list[ModuleType] = [
    korean_arrows,
    korean_dates,
    korean_formulas,
    korean_marks,
    korean_numerals,
    korean_phone_numbers,
    korean_ranges,
    korean_reading,
    korean_units,
    korean_words,
]
# Patterns that can match plain text, and why the fast path may skip them all the same.
MAY_MATCH_PLAIN = {
    "korean_marks._LIST_MARK": "the one rule the fast path runs (list_marks_spoken)",
    "korean_marks._OPENS_WITH_D_OR_J": "matched against a Hanja's syllable, inside a Hanja run's reading",
    "korean_arrows._LIMIT": "matched against an arrow's term, after an arrow",
    "korean_ranges.RANGE_TAIL": "matched after a range's digits",
    "korean_phone_numbers._RANGE_TAIL": "the same, after a number's",
    "korean_units._LABEL_AFTER": "matched after a unit's digits",
    "korean_reading.PLAIN": "the class itself",
}
ALPHABET = [chr(code) for code in range(0x10000) if PLAIN.fullmatch(chr(code))]
_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d",
    sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_WORD: r"\w",
    sre.CATEGORY_NOT_WORD: r"\W",
}


def in_class(items: list[tuple[object, object]], char: str) -> bool:
    negated, hit = False, False
    for op, value in items:
        if op is sre.NEGATE:
            negated = True
        elif op is sre.LITERAL:
            hit |= ord(char) == value
        elif op is sre.RANGE:
            low, high = value  # type: ignore[misc]
            hit |= low <= ord(char) <= high
        elif op is sre.CATEGORY:
            hit |= re.fullmatch(_CATEGORIES[value], char) is not None  # type: ignore[index]
        else:
            raise AssertionError(f"class item {op} not read by this test")
    return hit != negated


def can_match(sequence: list[tuple[object, object]], alphabet: list[str]) -> bool:
    """False when every match of `sequence` must consume or look at a character outside `alphabet`."""
    for op, value in sequence:
        if op is sre.LITERAL:
            if chr(value) not in alphabet:  # type: ignore[arg-type]
                return False
        elif op is sre.NOT_LITERAL or op is sre.ANY:
            continue
        elif op is sre.IN:
            if not any(in_class(value, char) for char in alphabet):  # type: ignore[arg-type]
                return False
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            least, _, inner = value  # type: ignore[misc]
            if least and not can_match(inner, alphabet):
                return False
        elif op is sre.SUBPATTERN:
            if not can_match(value[3], alphabet):  # type: ignore[index]
                return False
        elif op is sre.ATOMIC_GROUP:
            if not can_match(value, alphabet):  # type: ignore[arg-type]
                return False
        elif op is sre.BRANCH:
            if not any(can_match(branch, alphabet) for branch in value[1]):  # type: ignore[index]
                return False
        elif op is sre.ASSERT:  # a look-ahead or look-behind that must hold, over the same text
            if not can_match(value[1], alphabet):  # type: ignore[index]
                return False
        elif op not in (sre.ASSERT_NOT, sre.AT, sre.GROUPREF, sre.GROUPREF_EXISTS):
            raise AssertionError(f"pattern node {op} not read by this test")
    return True


def patterns() -> list[tuple[str, re.Pattern[str]]]:
    return [
        (f"{module.__name__.rsplit('.', 1)[1]}.{name}", value)
        for module in MODULES
        for name, value in vars(module).items()
        if isinstance(value, re.Pattern)
    ]


def test_the_analysis_tells_a_pattern_that_can_match_plain_text_from_one_that_cannot():
    plain = ALPHABET
    assert can_match(_parser.parse(r"(?<![\w.])[가나]\.(?=\s)"), plain)
    assert not can_match(_parser.parse(r"(?<=\d)가"), plain)  # a look-behind that must see a digit
    assert not can_match(_parser.parse(r"(?:개|명)?\d"), plain)
    assert not can_match(_parser.parse(r"[^\s가-힣.,?!'\"():;·“”‘’…]"), plain)


def test_no_rule_but_the_list_mark_can_match_a_plain_text():
    matching = {name for name, pattern in patterns() if can_match(_parser.parse(pattern.pattern), ALPHABET)}
    assert matching <= set(MAY_MATCH_PLAIN), sorted(matching - set(MAY_MATCH_PLAIN))
    assert len(patterns()) > 90  # the modules' rules were found


def test_no_translated_or_replaced_sign_is_plain():
    """The rules that are no pattern: the tables of signs translated, and "%" and "©" replaced."""
    tables = [korean_marks._ROMAN_NUMERALS, korean_marks._SIGNS, korean_reading._WIDE_SIGNS]
    signs = {chr(code) for table in tables for code in table} | {"%", "©"}
    assert not [sign for sign in signs if PLAIN.fullmatch(sign)]


def lecture_sentences() -> list[str]:
    raw = resources.files("npu_worker.bench").joinpath("lecture_ko_39.json").read_text(encoding="utf-8")
    sections = [section["text"] for section in json.loads(raw)["sections"]]
    return [sentence for text in sections for sentence in re.split(r"(?<=[.?!])\s+", text)]


OUTLINES = [
    "가. 전압을 측정한다. 나. 저항을 계산한다.",  # read 가, and a pause
    "개요\n가. 목적\n나. 범위",
    "그런가. 아니다.",  # no mark: a question's ending
    "정답은 가. 다음으로",
]


@pytest.mark.parametrize("text", [*OUTLINES, *(s for s in lecture_sentences() if PLAIN.fullmatch(s))][:60])
def test_a_plain_text_reads_as_every_rule_reads_it(text):
    assert spoken(text) == korean_reading._numbers_spoken(text)


def test_a_plain_text_skips_the_rules(monkeypatch):
    def every_rule(text: str) -> str:
        raise AssertionError("the rules ran on a plain text")

    monkeypatch.setattr(korean_reading, "_numbers_spoken", every_rule)
    assert spoken("가. 배터리는 화학 에너지를 전기 에너지로 바꾸는 장치입니다.") == (
        "가, 배터리는 화학 에너지를 전기 에너지로 바꾸는 장치입니다."
    )
    with pytest.raises(AssertionError, match="the rules ran"):
        spoken("전압은 3.7V입니다.")


def test_a_text_without_a_character_to_change_is_only_composed():
    assert all(text_form._FORMED.match(chr(code)) for code in text_form._FORM)
    decomposed = unicodedata.normalize("NFD", "입니다 café")
    assert text_form.readable(decomposed) == "입니다 café"


@pytest.mark.parametrize(
    "text",
    ["", "   ", "  앞의 공백", "가" * 100, "가" * 101, "가" * 60 + " 끝", "x" * 49, " " + "가나다 " * 25],
)
def test_a_short_text_is_one_piece_without_its_leading_space(text):
    pieces = text_form.espeak_pieces(text)
    joined = text_form._LONG_WORD.sub(r"\1 ", text)
    if len(joined) <= text_form.MOST_CLAUSE_CHARS:
        assert pieces == [joined.lstrip()]
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")
