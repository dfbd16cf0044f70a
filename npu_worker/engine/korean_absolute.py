"""Absolute values, "|x|", "|x - a| < δ", "|-3| = 3", read as a Korean lecturer says them: the value, then 의 절댓값,
x의 절댓값, x 빼기 a의 절댓값이 델타 미만, 마이너스 3의 절댓값은 3.

espeak-ng said nothing for the bars ("|x - a| < δ" was x 빼기 a < 델타, the sign unsaid too: a bound's patterns want a
variable before it). A part of `korean_reading`, applied after the chains (which read "0 < |x - a| < δ" whole,
`korean_chains`) and before the single bounds. Code's "a || b", "a | b", a norm's "||x||", a conditional probability's
"P(A|B)" and a Markdown table's "| a | b |" are no absolute value: the bars touch neither a word nor another bar, and
no space opens or closes the value. Nor are capitals alone, a set's or a graph's size, "O(|V| + |E|)", a determinant,
"|A|", a segment's length, "|AB|" (k8 read V의 절댓값 더하기 E의 절댓값): left as before, the bars unsaid.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, particle_after
from .korean_ranges import BOUND_WORDS, SIDE
from .korean_words import ENGLISH_DIGITS, SUBSCRIPT_SPANS

_VALUE = r"(?![A-Z]{1,4}\|)[-−]?[A-Za-zα-ω\d(][A-Za-zα-ω\d.+\-−*/^(), _]{0,38}?"  # not capitals alone, "|V|"
# ... a Korean particle or copula may follow its closing bar, "|a| + |b|가", "|a - b|입니다" (k8 took no value there:
# the right side was cut before it).
# Nor a quotient's term, "|y|/2", "1/|x|" (k8 said the bars and left the "/": x y의 절댓값 이하/2): left whole.
ABSOLUTE = rf"(?<![|\w/])\|(?=[^\s|]){_VALUE}(?<=[^\s|(])\|(?![|A-Za-zα-ω\d_/])"  # no group: a part of other patterns
# One absolute value in another pattern's match, its value grouped; not before a power, "|x|²", "|x|^2" (left whole).
_ONE = re.compile(rf"(?<![|\w/])\|(?=[^\s|])({_VALUE})(?<=[^\s|(])\|(?![|A-Za-z\d_^²³⁰-⁹/])")
_UNGROUPED = _ONE.pattern.replace(f"({_VALUE})", _VALUE)
# ... and its bound, "|x - a| < δ", "|x| ≤ 1이면": the value is the subject, as a formula's ("a - 3 > b": a 빼기 3이 b
# 초과), x 빼기 a의 절댓값이 델타 미만; a sum or a difference on either side, "|x| + 1 < 3", "|a - b| ≥ |a| - |b|" (it was
# x의 절댓값 더하기 1 < 3, the sign unsaid): x의 절댓값 더하기 1이 3 미만, … 절댓값 빼기 b의 절댓값 이상. Not a chain's,
# "|x| < 1 < y".
_TERM = rf"(?:{_UNGROUPED}|\d+(?:\.\d+)?(?![\w.])|[a-zα-ω]\d?(?![\w(]))"
# The right side whole or not at all: not before a term it would cut, "≥ kσ)" (k8: k 이상시그마), "< 2πr", "< |y|²", nor
# before a fifth term (k8: a의 절댓값 이하 플러스 b의 절댓값, the bound's word inside the side).
# ... or a capital, a bound's name, "|f(x)| ≤ M", "|a_n| ≤ K" (it was f(x)의 절댓값 ≤ M, the sign unsaid): … 절댓값이 M 이하.
# ... with its index, "|x| ≤ Mᵢ", "|x| ≤ M₁" (k9 left the first, x의 절댓값 ≤ Mᵢ, and read the second's digit in English
# with the sign unsaid, x의 절댓값 ≤ M원): x의 절댓값이 Mᵢ 이하, x의 절댓값이 M원 이하.
_BOUND_CAPITAL = (
    rf"[A-Z](?:{'|'.join(ENGLISH_DIGITS)}|[{SUBSCRIPT_SPANS}]{{1,2}})?(?![A-Za-z\d_({SUBSCRIPT_SPANS}])"
)
_RIGHT = (
    rf"(?:{ABSOLUTE}|{SIDE}|{_BOUND_CAPITAL})(?: [-+−] (?:{ABSOLUTE}|{SIDE})){{0,3}}"
    r"(?![A-Za-zα-ωπ\d_(^²³⁰-⁹|]|\.\d)(?! ?[-+−*/] ?[\w(|])"
    r"(?!(?![이입일인을를은는가과와의에로으랑])[가-힣])"  # nor a counter, "|x| ≤ 3명" (k8: 3 이하명)
)
ABSOLUTE_BOUND = re.compile(
    rf"(?=\|){_ONE.pattern}((?: [-+−] {_TERM}){{0,3}})"
    rf"(?: ?([<>≤≥]) ?({_RIGHT})(?! ?[<>≤≥]))?(?:{PARTICLE})?"
)


def said(value: str) -> str:
    """ "x - a" as x - a의 절댓값 (its operators read later)."""
    return f"{value}의 절댓값"


# A string's length, "|s|" where the text speaks of one, "len(s)는 |s|", "문자열 s의 길이 |s| ≤ 100" (it was s의 절댓값): s의
# 길이. Only a name alone, and only with such a word near it; elsewhere the absolute value, as before.
_LENGTH_WORD = re.compile(r"len\(|문자열|[Ss]tring|length")
# ... 길이 only just before the bars, "벡터 v의 길이 |v|": an interval's, "|x| ≤ 1인 구간의 길이는 2", is no string's (k9
# read x의 길이가 1 이하인 …).
_LENGTH_BEFORE = re.compile(r"길이[은는이가]? ?$")
_NAME = re.compile(r"[A-Za-z_]\w{0,8}")


def said_at(value: str, text: str, start: int, end: int) -> str:
    """`said(value)`, or value의 길이 where a length is spoken of near the bars at `start`…`end` of `text`."""
    if _NAME.fullmatch(value) and (
        _LENGTH_WORD.search(text, max(0, start - 40), min(len(text), end + 30))
        or _LENGTH_BEFORE.search(text, max(0, start - 4), start)
    ):
        return f"{value}의 길이"
    return said(value)


def _all_said(part: str, match: re.Match[str]) -> str:
    """Each absolute value of `part`, a piece of `match`, said (a length by the words around the match)."""
    return _ONE.sub(lambda m: said_at(m.group(1), match.string, match.start(), match.end()), part)


def absolute(match: re.Match[str]) -> str:
    """ "|x|가" as x의 절댓값이; "|x - a| < δ" as x - a의 절댓값이 δ 미만 (a particle in the form its last word
    takes)."""
    value, rest, sign, side, particle = match.groups()
    words = said_at(value, match.string, match.start(), match.end()) + _all_said(rest, match)
    if sign:
        words = f"{words}{particle_after(words, '이')} {_all_said(side, match)} {BOUND_WORDS[sign]}"
    return f"{words}{particle_after(words, particle) if particle else ''}"


# ... and a letter bounded by one, "x < |y|", "x ≤ |x|는" (k8 said the bound between the value and its 절댓값: x y 미만의
# 절댓값, the bars said first and "x < y" read after): x y의 절댓값 미만, as "x < y" is x y 미만. Not a chain's last
# side, "-|x| ≤ x ≤ |x|", nor a formula's, "a + x < |y|".
BOUNDED_BY_ABSOLUTE = re.compile(
    rf"(?<![\w|.)\]^/*+\-−])(?<![<>≤≥=+\-−*/] )([a-zα-ω]\d?) ?([<>≤≥]) ?{_ONE.pattern}(?! ?[<>≤≥])(?! ?[-+−*/] ?[\w(|])"
    rf"(?:{PARTICLE})?"
)


def bounded_by_absolute(match: re.Match[str]) -> str:
    """ "x < |y|이면" as x y의 절댓값 미만이면."""
    letter, sign, value, particle = match.groups()
    word = BOUND_WORDS[sign]
    return f"{letter} {said_at(value, match.string, match.start(), match.end())} {word}{particle_after(word, particle) if particle else ''}"
