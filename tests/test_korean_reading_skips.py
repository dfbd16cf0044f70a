"""The Korean reading's rules skipped where they cannot apply: a text of Hangul words and sentence marks alone
(`korean_reading.PLAIN`) skips all but a Korean outline's list mark, and a text without a digit the four groups of
passes that each need one. Pinned here by reading every rule's pattern (its parse tree: a pattern that must
consume, or look at, a character outside an alphabet cannot match a text of it), so a new rule that could match
such a text fails this test instead of going unread."""

from __future__ import annotations

import ast
import bisect
import inspect
import json
import re
import textwrap
import unicodedata
from collections.abc import Callable
from importlib import resources
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from types import ModuleType

import pytest

from npu_worker.engine import (
    korean_absolute,
    korean_arrows,
    korean_bracket_bounds,
    korean_chains,
    korean_code,
    korean_code_comparisons,
    korean_dates,
    korean_formulas,
    korean_functions,
    korean_held,
    korean_marks,
    korean_number_ranges,
    korean_numerals,
    korean_particles,
    korean_phone_numbers,
    korean_ranges,
    korean_reading,
    korean_sets,
    korean_subscripts,
    korean_units,
    korean_words,
    text_form,
)
from npu_worker.engine.korean_reading import PLAIN, spoken
from npu_worker.engine.lazy_re import LazyPattern

MODULES: list[ModuleType] = [
    korean_absolute,
    korean_arrows,
    korean_bracket_bounds,
    korean_chains,
    korean_code,
    korean_code_comparisons,
    korean_dates,
    korean_formulas,
    korean_functions,
    korean_held,
    korean_marks,
    korean_number_ranges,
    korean_numerals,
    korean_particles,
    korean_phone_numbers,
    korean_ranges,
    korean_reading,
    korean_sets,
    korean_subscripts,
    korean_units,
    korean_words,
]
# Patterns that can match plain text, and why the fast path may skip them all the same.
MAY_MATCH_PLAIN = {
    "korean_marks._LIST_MARK": "the one rule the fast path runs (list_marks_spoken)",
    "korean_marks._OPENS_WITH_D_OR_J": "matched against a Hanja's syllable, inside a Hanja run's reading",
    "korean_arrows._LIMIT": "matched against an arrow's term, after an arrow",
    "korean_number_ranges.RANGE_TAIL": "matched after a range's digits",
    "korean_phone_numbers._RANGE_TAIL": "the same, after a number's",
    "korean_units._LABEL_AFTER": "matched after a unit's digits",
    "korean_units._WRITTEN_WORD": "matched after a currency's amount",
    "korean_formulas._FORMULA_IN_BRACKET": "matched before a bracket's superscript power",
    "korean_code_comparisons._CODE_BEFORE": 'searched before a bound between two variables, "a>b"',
    "korean_code_comparisons._CODE_JOIN": 'matched on what `_CODE_BEFORE` found, "&&", "||", ";"',
    "korean_code_comparisons.CODE_AFTER": 'matched after a bound in code, "if (x > 0)"',
    "korean_units._SHELL_BEFORE": 'searched before a shell\'s positional parameters, "$1-$2"',
    "korean_units._MONEY_WORD": 'searched around a shell\'s positional parameters, "$1-$2"',
    "korean_units._RANGE_WORD_AFTER": 'matched after a shell\'s positional parameters, "$1-$2"',
    "korean_formulas._PANELS_BEFORE": 'searched before a bracket\'s minus, "(a-c)"',
    "korean_formulas._LABEL_BEFORE": 'searched before a bracket\'s minus, "(2-b)"',
    "korean_formulas._LABEL_AFTER": 'matched after a bracket\'s minus, "(2-b)"',
    "korean_chains._CLAUSE_AFTER": "matched after a chain of bounds",
    "korean_arrows._VALUE_WITH_PARTICLE": 'matched after a left arrow, "x ← 3을"',
    "korean_chains._TOPIC_BEFORE": "searched before a chain of bounds",
    "korean_formulas._TOPIC_THEN_TERM": 'searched before an "=", "전력은 P = VI"',
    "korean_sets._INFINITY": 'matched against an interval\'s bound, after "∈"',
    "korean_ranges._STATEMENT_AFTER": 'matched after a single bound, "x ≤ 1입니다"',
    "korean_chains._SUBJECT_BEFORE": 'searched before a chain of bounds, "가격이 1 < p < 2"',
    "korean_code._BOUND_WORD": 'searched around a formula\'s "&&" or "||"',
    "korean_absolute._LENGTH_WORD": 'searched around an absolute value, "len(s)는 |s|"',
    "korean_dates._RATIO_WORD_BEFORE": 'searched before a clock\'s digits, "비율은 1:10"',
    "korean_dates._TIME_AFTER": 'matched after a verse\'s digits, "요나 10:30에"',
    "korean_absolute._LENGTH_BEFORE": 'searched just before an absolute value, "길이 |v|"',
    "korean_code._SENTENCE_END": 'splits a text with "=" into sentences, "Use let x = 3; here."',
    "korean_code._HANGUL": 'searched in a sentence of a text with "=": an English one has none',
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


class Alphabet:
    """The characters of a text: `has` one, `meets` a class (some character of it is in the alphabet)."""

    def __init__(self, has: Callable[[str], bool], meets: Callable[[list[tuple[object, object]]], bool]):
        self.has, self.meets = has, meets


def listed(chars: list[str]) -> Alphabet:
    """`chars` as an Alphabet. A class without NEGATE meets it when one of its items does: each item
    looked up once (a literal in a set, a range by bisection, a category over the characters once),
    where `in_class` for every character was ≈ 2.7 million calls (4-5 s of CPU) for the rules' classes
    that meet no plain character; a negated class is still read character by character."""
    members, codes, categories = frozenset(chars), sorted({ord(char) for char in chars}), {}

    def item_meets(op: object, value: object) -> bool:
        if op is sre.LITERAL:
            return chr(value) in members  # type: ignore[arg-type]
        if op is sre.RANGE:
            low, high = value  # type: ignore[misc]
            at = bisect.bisect_left(codes, low)
            return at < len(codes) and codes[at] <= high
        if value not in categories:  # sre.CATEGORY (in_class refuses any other item)
            categories[value] = any(re.fullmatch(_CATEGORIES[value], char) for char in chars)  # type: ignore[index]
        return categories[value]

    def meets(items: list[tuple[object, object]]) -> bool:
        for op, _ in items:
            if op not in (sre.NEGATE, sre.LITERAL, sre.RANGE, sre.CATEGORY):
                raise AssertionError(f"class item {op} not read by this test")
        if any(op is sre.NEGATE for op, _ in items):
            return any(in_class(items, char) for char in chars)
        return any(item_meets(op, value) for op, value in items)

    return Alphabet(members.__contains__, meets)


def _digit(char: str) -> bool:
    return re.fullmatch(r"\d", char) is not None


def _meets_a_non_digit(items: list[tuple[object, object]]) -> bool:
    """Some character other than a digit is in the class (when unsure, yes: the pattern may then match)."""
    if any(op is sre.NEGATE for op, _ in items):
        return not any(op is sre.CATEGORY and value is sre.CATEGORY_NOT_DIGIT for op, value in items)
    for op, value in items:
        if op is sre.LITERAL and not _digit(chr(value)):  # type: ignore[arg-type]
            return True
        if op is sre.RANGE:
            low, high = value  # type: ignore[misc]
            if high - low > 64 or not all(_digit(chr(code)) for code in range(low, high + 1)):
                return True
        if op is sre.CATEGORY and value is not sre.CATEGORY_DIGIT:
            return True
    return False


NO_DIGIT = Alphabet(lambda char: not _digit(char), _meets_a_non_digit)


def can_match(sequence: list[tuple[object, object]], alphabet: list[str] | Alphabet) -> bool:
    """False when every match of `sequence` must consume or look at a character outside `alphabet`."""
    if isinstance(alphabet, list):
        alphabet = listed(alphabet)
    for op, value in sequence:
        if op is sre.LITERAL:
            if not alphabet.has(chr(value)):  # type: ignore[arg-type]
                return False
        elif op is sre.NOT_LITERAL or op is sre.ANY:
            continue
        elif op is sre.IN:
            if not alphabet.meets(value):  # type: ignore[arg-type]
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


def patterns() -> list[tuple[str, re.Pattern[str] | LazyPattern]]:
    return [
        (f"{module.__name__.rsplit('.', 1)[1]}.{name}", value)
        for module in MODULES
        for name, value in vars(module).items()
        if isinstance(value, re.Pattern | LazyPattern)
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


@pytest.mark.parametrize(
    "group",
    [
        korean_reading._numerals_and_dates,
        korean_reading._phones_and_ranges,
        korean_reading._amounts,
        korean_reading._clocks_and_counters,
    ],
)
def test_every_pass_of_a_digit_group_needs_a_digit(group):
    body = ast.parse(textwrap.dedent(inspect.getsource(group))).body[0].body  # type: ignore[attr-defined]
    guard, *passes, end = body[1:]  # the docstring first
    assert ast.unparse(guard) == "if not _DIGIT.search(text):\n    return text"
    assert ast.unparse(end) == "return text"
    for statement in passes:
        source = ast.unparse(statement)
        named = re.fullmatch(r"text = ([\w.]+)\.sub\(.*", source, re.DOTALL)
        assert named, f"not a pattern's pass: {source}"
        pattern = eval(named.group(1), vars(korean_reading))  # noqa: S307 (a name of the module)
        assert not can_match(_parser.parse(pattern.pattern), NO_DIGIT), source


def test_the_digit_analysis_tells_a_pattern_that_needs_a_digit():
    assert not can_match(_parser.parse(r"(?<![\d.])(\d+) ?km/h"), NO_DIGIT)
    assert not can_match(_parser.parse(r"24/7"), NO_DIGIT)
    assert can_match(_parser.parse(r"(\d+)?km"), NO_DIGIT)
    assert can_match(_parser.parse(r"[~〜～]"), NO_DIGIT)
    assert can_match(_parser.parse(r"[²³]"), NO_DIGIT)  # a superscript is no digit to \d


def test_a_text_without_a_digit_skips_the_digit_groups(monkeypatch):
    class APassThatMustNotRun:
        def sub(self, replacement: object, text: str) -> str:
            raise AssertionError("a digit's pass ran")

    monkeypatch.setattr(korean_reading.numerals, "GROUPED", APassThatMustNotRun())
    assert spoken("EV 배터리는 니켈을 씁니다.") == "E-V 배터리는 니켈을 씁니다."
    with pytest.raises(AssertionError, match="a digit's pass ran"):
        spoken("EV 배터리는 3.7V입니다.")


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


def test_no_pass_gives_sub_a_template_to_parse_on_every_call():
    """Python 3.11's `sub` parses a template string with a group reference ("\\1분기") on every call, match or none
    (about 2 µs a pass): the passes give it `korean_templates.template`'s callable, which expands only at a match."""
    templates = [
        f"{module.__name__}:{node.lineno}"
        for module in MODULES
        for node in ast.walk(ast.parse(inspect.getsource(module)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "sub"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and "\\" in node.args[0].value
    ]
    assert not templates
