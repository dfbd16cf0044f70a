"""A line of code's assignment, read in the voice of its comparisons: "for (int i = 0; i < n; i++)" as for (int i에 0을
대입; i가 n보다 작다; i++), "int x = 5;" as int x에 5를 대입;.

It was int i는 0 (the "=" a formula's, said as the topic particle), beside i가 n보다 작다 (`korean_ranges`' code
voice): one line in two voices. Only where a line is code beyond doubt: a variable declared with its type ("int i =",
"let i =", "const n =") or a "for (" statement's first part; "x = 0" alone stays a formula's, x는 0. A part of
`korean_reading`, applied before "=" is read. An English sentence's, "Use let x = 3; here.", is left as written
(`english_sentences`), its "=" too.
"""

from __future__ import annotations

import bisect

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .english_numbers import STEP_VERBS
from .korean_particles import particle_after
from .korean_ranges import BOUND_WORDS

_TYPES = (
    r"int|long|short|unsigned|size_t|float|double|char|bool|auto|var|let|const|uint\d{0,2}_t|int\d{0,2}_t"
)
# The name assigned with what opens it, its value (a number, minus said by now, a name, its member or call) and what
# closes it (";", ",", ")"): "int i = 0;", "for (i = 0;", "let n = len;", "int n = a.size();".
# ... and the next one after a comma, "for (int i = 1, j = n;", "let x = 3, y = 4;" (it was j는 n): j에 n을 대입.
# ... a decimal, said by now, "float pi = 3.14;" (3 점 일사: k8 took none, float pi는 3 점 일사), and a short formula
# of them, "int j = i + 1;", "int x = 5, y = x + 1;" (k8: int x에 5를 대입, y는 x 더하기 1, two voices): j에 i 더하기 1을 대입.
_OPERAND = r"(?:마이너스 )?(?:\d+(?: 점 [영일이삼사오육칠팔구]{1,12})?|[A-Za-z_]\w{0,30}(?:\.[A-Za-z_]\w{0,30})?(?:\(\))?)"
ASSIGNMENT = re.compile(
    rf"(?<!\w)((?:{_TYPES}) [A-Za-z_]\w{{0,30}}|for ?\((?:(?:{_TYPES}) )?[A-Za-z_]\w{{0,30}}|(?<=, )[A-Za-z_]\w{{0,30}})"
    rf" ?= ?({_OPERAND}(?: (?:더하기|빼기|곱하기|나누기) {_OPERAND}){{0,3}})(?= ?[;,)])"
)
_STATEMENT_OPENS = re.compile(rf"for ?\(|(?<!\w)(?:{_TYPES}) ")


# An English sentence in a Korean lecture, "Use let x = 3; here.", "In JavaScript, let x = 3; declares x." (it was let x에
# 3을 대입, let x는 3: Korean words in an English sentence): its "=" left to espeak, which says the English "equals". One
# with no Hangul and two of English's small words; a line of code alone, "let x = 3;", "for x in xs: total = 0", has not.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_HANGUL = re.compile("[가-힣]")
# Not "a" alone nor a word after a digit: a formula's letter, "a = 3, b = 2a", "a = 1 in R" (k9 left them to espeak's
# English, "a equals 3"): a는 3, b는 2a. "is", and "for" after a word, "x + 1 for the interval" (not code's "for x in xs:").
# ... and a sentence's "It", "They", capitalized, "It weighs 2.5 kg." (korean15: none of them, a Korean text's 2 점 오
# 킬로그램): It weighs two point five kilograms.; an iterator's "it" in code is no small word.
_ENGLISH_WORDS = re.compile(
    r"(?<![A-Za-z_.\d])(?:[Tt]he|[Aa]n|[Aa]re|[Ww]as|[Ww]ere|[Bb]e|[Oo]f|[Tt]o|[Ii]n|[Oo]n|[Aa]t|[Bb]y|[Ww]ith|[Tt]his"
    r"|[Tt]hat|[Hh]ere|[Tt]here|[Ww]here|[Ww]hich|[Ww]e|[Yy]ou|[Uu]se|[Uu]sing|[Ww]rite|[Mm]eans|[Dd]eclares?|[Ss]ets?"
    r"|[Ff]irst|[Nn]ow|is|(?<=[\w)] )for|It|They)(?![\w(.])"
)


def english_sentences(text: str) -> list[tuple[int, int]]:
    """The spans of `text`'s English sentences, not Korean ones nor a line of code alone (one pass over the text)."""
    spans, begin = [], 0
    for stop in [*_SENTENCE_END.finditer(text), None]:
        end = stop.start() if stop else len(text)
        sentence = text[begin:end]
        if not _HANGUL.search(sentence) and _is_english(sentence, stop):
            spans.append((begin, end))
        begin = stop.end() if stop else end
    return spans


# ... or one small word and a longer English word, in a sentence closed by its mark, "x^2 is positive." (k13: x의 2제곱 is
# positive.): a formula's note without one, "a = 1 is true", "x = 3 for all x", stays Korean (k10), and so does a
# function's name, "sin x is odd".
_LONGER_WORD = re.compile(
    r"(?<![A-Za-z_.\d])(?!(?:sin|cos|tan|sec|csc|cot|log|exp|max|min|mod|det|lim|sup|inf|gcd|lcm|arg|abs)(?![a-z]))"
    r"[a-z]{3,20}(?![\w(])"
)


# ... but not a line of code a period closes, "for x in xs: total = 0." (korean15: English, its "=" espeak's "equals",
# while without the period it is code's, total는 0): a block's keyword, its ":" and a statement after it on the line.
_CODE_BLOCK_LINE = re.compile(
    r"\s*(?:for|if|elif|while|with|def|else|try|except)(?![\w])[^\n:]{0,80}:[ \t]*\S"
)


# ... or none, in a short sentence closed by its mark that opens with a capitalised word, a recipe's or a manual's step,
# "Add 1/2 cup.", "Stir for 3 minutes." (korean20: Add 2분의 1 cup., the Korean rules' words): Add one half cup.; a longer
# English word or a small one after it too, "Wait 10 ms here.", so a name and a formula, "Tesla Model 3.", "Let x = 3.", stay Korean; and so does one with a
# Korean report's period, "Revenue grew 5% YoY." (5 퍼센트 전년 대비, not five percent 전년 대비: `korean_marks` says it).
# A slide's bullet before the word too, "- Add 1/2 cup.", "• Heat 2.5 liters." (korean21: Add 2분의 1 cup., 2 점 오 liters:
# only a bare line's step was English). A numbered step's too, "1) Add 1/2 cup.", "(2) Heat 2.5 liters." (rvk21: 첫 번째, Add
# 2분의 1 cup., where "1. Add 1/2 cup." was English).
_CAPITALISED_OPENING = re.compile(r"\s{0,4}(?:(?:[-•·*▪◦‣–]|\(?\d{1,2}\))\s{1,4})?[A-Z][a-z]{2,20}(?![\w(.])")
# ... and one small word after a formula's relation, "x ‹ π here.", "x = 3 here." (korean20: x 파이 미만 here., Korean words
# before an English one): x less than pi here.
_RELATION_SIGN = re.compile("[<>≤≥‹›=≠]")
# ... and one with a Korean report's sign, "Revenue rose ▲5%.", "Sales fell ▼3.5%.", "Users grew 10%↑." (korean21: ▲five
# percent, 감소 3 점 오 percent, ten percent 증가: the sign's Korean word or none beside English words): the Korean rules'.
# ... and a step of a verb and its number alone, "Call 911.", "Press 1." (korean61: the Korean rules', 구백십일, 일).
_VERB_AND_NUMBER = re.compile(
    rf"\s{{0,4}}(?:[-•·*▪◦‣–]\s{{1,4}})?{STEP_VERBS} [-−]?\d{{1,12}}(?:[.,]\d{{1,12}})?\s{{0,4}}"
)
_REPORT_PERIOD = re.compile(r"(?<![A-Za-z\d_])(?:YoY|QoQ|MoM)(?![A-Za-z\d_])|[▲▼△▽↑↓≈≒∴∵]")


def _is_english(sentence: str, stop: re.Match[str] | None) -> bool:
    small = len(_ENGLISH_WORDS.findall(sentence, 0, 4000))
    closed = stop is not None and stop.group() != "\n"
    if small >= 2 or not closed or _CODE_BLOCK_LINE.match(sentence):
        return small >= 2
    if _VERB_AND_NUMBER.fullmatch(sentence):
        return True
    longer = [word for word in _LONGER_WORD.findall(sentence, 0, 4000) if not _ENGLISH_WORDS.fullmatch(word)]
    if small == 1 and (longer or _RELATION_SIGN.search(sentence)):
        return True
    return bool((longer or small) and _CAPITALISED_OPENING.match(sentence)) and not _REPORT_PERIOD.search(
        sentence
    )


def inside(spans: list[tuple[int, int]], position: int) -> bool:
    """Whether `position` falls in one of `spans` (sorted, apart)."""
    at = bisect.bisect_right(spans, position, key=lambda span: span[0]) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


def assignments_said(text: str) -> str:
    """`text` with its code's assignments said (`assignment`), but in an English sentence."""
    english = english_sentences(text)
    return ASSIGNMENT.sub(lambda m: m.group() if inside(english, m.start()) else assignment(m), text)


# Code's compound assignment and step down by one, "x -= 1", "i--" (korean61: espeak said x equals 1 and i, the minus lost):
# minus equals, minus minus, in the English words espeak says for "+=" and "++" (plus equals, plus plus), which are left; a
# step after a name's letter, a bracket or a digit, not before a letter or a digit (an option's "--version", a dash's
# "word--word", a range's "3--5", "2020--2024" as before: rvk62, korean62 read 3 minus minus5), nor a rule's "-=-=-" (rvk62:
# korean62's minus equals). "C++17" apart, C++ 17
# (korean61: C+플러스 17, the second plus a sum's). The languages C# and F#, "C#으로 작성" (korean61: espeak's C hash): C 샵,
# as a Korean programmer says them.
CODE_STEP = re.compile(
    r"(?<=[\w)\]]) ?-[=\ufdd0] ?(?=[\w(]|-[\w(])"  # an English sentence's "=" held as U+FDD0 by then
    r"|(?<=[A-Za-z_)\]\d])--(?![A-Za-z_\d+\-])|(?<![\w+])(C\+\+)(?=\d)|(?<![\w#])([CF])#(?![A-Za-z\d_#])"
)


def code_steps_said(text: str) -> str:
    """`text` with code's "-=" and "--" said, "C++17" apart and "C#" C 샵 (but in an English sentence)."""
    if "-" not in text and "#" not in text and "C++" not in text:
        return text
    english = english_sentences(text) if "#" in text else []
    return CODE_STEP.sub(lambda m: _code_step(m, english), text)


def _code_step(match: re.Match[str], english: list[tuple[int, int]]) -> str:
    cplusplus, sharp = match.groups()
    if cplusplus:
        return "C++ "
    if sharp:  # an English sentence's left to espeak's English
        return match.group() if inside(english, match.start()) else f"{sharp} 샵"
    return " minus minus" if "=" not in match.group() and "\ufdd0" not in match.group() else " minus equals "


def assignment(match: re.Match[str]) -> str:
    """ "int i = 0" as int i에 0을 대입; "x = 3, y = 4" (no type, no "for") left to the formulas."""
    head, value = match.groups()
    if "," in match.string[match.start() - 2 : match.start()]:  # the next assignment of the statement
        statement = re.split(r"[;{}]", match.string[max(0, match.start() - 80) : match.start()])[-1]
        if not _STATEMENT_OPENS.search(statement):
            return match.group(0)
    return f"{head}에 {value}{particle_after(value, '을')} 대입"


# Code's "&&" and "||" between two bounds of a formula, "0 <= x && x < n", "x>y||y>z" (k10: 0 이상 x && x n 미만, the
# join unsaid): the words a lecturer says, 0 이상 x 그리고 x n 미만, x y 초과 또는 y z 초과. Only with a bound's word on each
# side; a statement a keyword opens, "if (0 <= x && x < n)", keeps its code voice (`korean_ranges`), its "&&" too.
_JOIN = re.compile(r"(?<=[\w)]) ?(&&|\|\|) ?(?=[\w(])")
_BOUND_WORD = re.compile("|".join(BOUND_WORDS.values()))
# ... each side's bound its own, up to the next join: "x >= 0 && x < width && y >= 0" keeps its "&&" (k11 read 그리고
# beside "x < width", the sign unsaid, by the word of the bound before it).
_ANY_JOIN = re.compile(r"&&|\|\|")
_KEYWORD = re.compile(r"(?<![A-Za-z])(?:if|elif|while|until|for|assert|return)(?![A-Za-z])")
_KEYWORD_REACH = 80  # how far back a statement's keyword is looked for


def formula_joins_said(text: str) -> str:
    """`text` with a formula's "&&" and "||" between two bounds said 그리고 and 또는."""
    if "&&" not in text and "||" not in text:
        return text
    return _JOIN.sub(_join_said, text)


def _join_said(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    # The line's start looked for only as far back as the keyword is: a whole line's rfind for each join made a
    # hostile line of joins quadratic (100 000 characters of "a&&b": 0.26 s, 200 000: 0.73 s).
    reach = max(0, start - _KEYWORD_REACH)
    line_start = text.rfind("\n", reach, start) + 1 or reach
    before = _ANY_JOIN.split(text[max(line_start, start - 24) : start])[-1]
    after = _ANY_JOIN.split(text[end : end + 24].split("\n", 1)[0], maxsplit=1)[0]
    if not (_BOUND_WORD.search(before) and _BOUND_WORD.search(after)):
        return match.group()
    if _KEYWORD.search(text, line_start, start):
        return match.group()
    return " 그리고 " if match.group(1) == "&&" else " 또는 "
