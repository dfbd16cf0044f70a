"""Bounds of numbers written out as a Korean reader says them: "SOC < 20%" (20 퍼센트 미만), "x>0일 때" (x 0 초과일
때), "20 ≤ x ≤ 40" (20 이상 x 40 이하); the ranges themselves, "3~5개", "2020 - 2024", are `korean_number_ranges`'.

espeak-ng 1.52's Korean voice said nothing at all for a bound's sign; a part of `korean_reading`, which
applies these in its order.
"""

from __future__ import annotations

from . import korean_code_comparisons as code_comparisons
from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_number_ranges import RANGE_COUNTERS
from .korean_particles import PARTICLE, particle_after
from .korean_units import alternatives as _alternatives
from .korean_words import ENGLISH_DIGITS, MATH_NAMES, SPELLED_UNITS, SUBSCRIPT_SPANS
from .korean_words import UNITS as _UNITS

# A bound, which espeak said nothing for: "SOC < 20%" is 20 퍼센트 미만, "≥ 80%" 이상, "> 45℃" 초과, "≤" 이하;
# between a number and a variable the sign bounds the variable: "20 ≤ x ≤ 40" is 20 이상 x 40 이하. Not a
# bracket ("<그림 1>", "<1>"), an arrow ("->") or a comparison of two numbers ("3 < 5").
BOUND_WORDS = {"<": "미만", "≤": "이하", ">": "초과", "≥": "이상"}
LOWER_BOUND_WORDS = {"<": "초과", "≤": "이상", ">": "미만", "≥": "이하"}
# ... and a unit or a counter that only opens like a shorter one, "x > 3인치", "t > 3개월", "d ≥ 2일차" (it was x 3인
# 초과치, t 세 개 초과월: 인, 개 and 일 read as the counters and the bound said inside the word): the word whole,
# x 3인치 초과.
_BOUND_WORDS_FIRST = "인치|인분|개월|일차|주차|년차|회차|피트|야드|마일|온스|갤런|배럴|파운드"
# What a bound's amount takes after a space, "n ≥ 100 명", "t ≤ 10 초" (it was t 10 이하 초: the bound's word before the
# unit): a counter that is no particle nor a word of its own ("3 등" is "and so on", "5 도" "also"); nor the bound's
# own word, "x < 5 초과" (k8: x 5 초 미만과, 초 a second and 과 a particle).
SPACED_COUNTERS = (
    f"{_BOUND_WORDS_FIRST}|명|개|원|달러|건|회|번|대|곳|가구|세대|초(?!과)|분|시간|년|살|마리|권|쪽|페이지|층"
)
# ... unspaced, any counter of a range
COUNTERS = f"{_BOUND_WORDS_FIRST}|{RANGE_COUNTERS}"
# ... with a Korean scale and its counter or unit, "n ≥ 100만 명", "x > 1억 원" (it was n 100 이상만 명): n 100만 명 이상;
# after a power's exponent, "x^2 < 4이면" (it was left: a number before the sign is no variable); and not before the
# rest of a formula, "y ≥ 2x + 1" (it was y 2배 이상 플러스 1: `EXPRESSION_BOUND` says it whole).
# ... but not an English word after the amount, "x >= 0 and y >= 0" (it was x 0 and 이상: the word taken for a unit), nor
# "in" before a Korean word, "x < 5 in 범위" (korean20: x 5 in 미만 범위, taken for inches); before a particle or a copula, "x ≥ 3 in 이면", a unit as before.
# ... and before the word "이", "this", a space after it, "x < 5 in 이 구간" (rvk21: x 5 in 미만 이 구간, taken for a particle).
_ENGLISH_WORD = r"(?:and|or|but|for|is|are|was|then|than|the|to|of|at|as|if|so|with|when|in(?= (?:[a-z]|이 |(?![이인일을를은는의에으로과와])[가-힣])))(?![A-Za-z])"
# ... and π's multiple, "x < 2π", "0 < x < 2π" (it was x 2 미만파이: the bound's word inside the amount): x 2π 미만, said
# 2파이 미만; and its product with a letter, "x < 2πr" (it was left: x 2 미만파이r): x 2πr 미만.
# ... and its power, "x < 2πr²", "S < 4πr^2이면", "y > 2π²" (it was x 2 미만파이r의 2제곱, S < 4파이r의 2제곱이면: as
# before k7's "2πr"): x 2파이r의 2제곱 미만, S 4파이r의 2제곱 미만이면. A longer product, "2πr²h", is left.
# ... and a power written in superscripts, "n ≤ 10⁵", "x < 10⁻³이면" (it was n 10 이하⁵: the bound's word inside the
# amount): n 10⁵ 이하, said 10의 5제곱 이하.
# ... and π alone or its fraction, "θ < π이면", "x ≥ -π", "x ≤ π/2" (it was left, the sign unsaid: 세타 파이이면):
# 세타 파이 미만이면, x 마이너스 파이 이상, x 2분의 파이 이하.
# ... and a fraction said in Korean, "x < 3분의 1", "p > 2 분의 1이면" (it was x 3분 미만의 1: 분 read as minutes, the
# bound's word before 의): x 3분의 1 미만.
_MINUS_PI = re.compile(r"^[-−](?=\d{0,2}π)")
# A unit apart from its number, "x < 5 kg", "x < 10 dBm", "n > 3000 rpm": one of `_UNITS`, two letters at most, one with a
# capital or a rate's; a small word after it is the sentence's, "p < 0.05 here." (korean17: p 0 점 영오 here 미만, "here"
# taken for the amount's unit); one with a Korean particle glued to it, "x < 100 kbps이면", a unit still (korean18: x 100
# 미만 kbps이면); a unit written out in small letters, "x < 5 ohm.", "x < 5 bits 이면" (korean18: x 5 미만 ohm.), a unit too.
_SPACED_UNIT = (
    rf"(?:{_alternatives(_UNITS)}|[A-Za-zΩμµ]{{1,2}}|(?=[a-zμµ]{{0,3}}[A-ZΩ])[A-Za-zΩμµ]{{3,4}}|rpm|psi|bar|fps|ppm|ppb|lux"
    rf"|[A-Za-zΩμµ]{{3,4}}(?=[가-힣])|(?:{SPELLED_UNITS})(?![A-Za-z]))"
)
BOUND = re.compile(
    r"(?: (?=[<>≤≥]))?(?=[<>≤≥])(?<![<>=\-])([<>≤≥]) ?([-−]?(?:\d+|(?=\.\d))(?:[.,]\d+)*(?:⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}|[십백천]?[만억조])?"
    rf"(?: ?분의 \d+(?:\.\d+)?|π[a-z]?(?:\^\d{{1,2}}|[²³])?(?![A-Za-zα-ω²³^])| ?(?:%|‰|℃|°C?)|(?!{_ENGLISH_WORD})[A-Za-zΩμµ]{{1,4}}(?![A-Za-z])| (?!{_ENGLISH_WORD}){_SPACED_UNIT}(?![A-Za-z])|{_BOUND_WORDS_FIRST}|{RANGE_COUNTERS}"
    rf"| (?:{SPACED_COUNTERS})(?!(?![이인일을를은는의에으로과와])[가-힣]))?)"
    r"(?! ?[\d>]|[A-Za-zα-ω]| ?[-+−×*/^] ?[\w(]|[.,]\d)"  # not a decimal's whole part, "y > 0.5x + 3"
    rf"(?:{PARTICLE})?"
)
PI_BOUND = re.compile(
    r"(?: (?=[<>≤≥]))?(?=[<>≤≥])(?<![<>=\-])([<>≤≥]) ?([-−]?π(?:/\d{1,2})?)(?![A-Za-z\d_.^²³/(α-ω])"
    rf"(?! ?[\d>]| ?[-+−×*/^] ?[\w(])(?:{PARTICLE})?"
)  # (its own pattern: `BOUND` needs a digit, the digits' passes are skipped without one)
# A variable's bound with its copula, "x > 0일 때", "n ≥ 1인 정수" (it was x 0일 초과 때, n 1인 이상 정수: the copula read
# as a counter of days or people): x 0 초과일 때, n 1 이상인 정수; and its endings written on, "x > 0일때", "x > 0일수록",
# "x > 0일까", "x > 0인지", "x > 0인가를", "x > 0인데" (it was x 0인 초과지). A counter stays one there, "t > 3일 동안",
# "t > 3일까지", "n > 2인가구" (households of so many).
_VARIABLE_BEFORE = re.compile(r"(?<![A-Za-z])[A-Za-z] ?$")
# ... in code, a longer name, a member or a call, "if (score >= 90)", "while (count > 0 &&", "if (len(s) > 0)" (it was
# score 90 이상, beside count가 max보다 크다: one line in two voices): score가 90보다 크거나 같다.
_CODE_NAME_BEFORE = re.compile(
    r"(?<![\w.])[A-Za-z_][A-Za-z\d_]{0,30}(?:\.[A-Za-z_][A-Za-z\d_]{0,30})?(?:\([A-Za-z_\d.]{0,30}\))? ?$"
)
_COPULA_CONTEXT = {
    "일": re.compile(r" ?때| 경우|지|수록|까(?!지)|$"),
    "인": re.compile(r"\s|$|지|데|가(?!구)"),
}
# A bound between two variables, "x ≥ y이면", "a > b일 때" (espeak said nothing for the sign: x y이면): x y 이상이면, as
# "x > 0일 때" is x 0 초과일 때; a count's capital on the right, "i < N", "n ≥ N일 때": i N 미만 (it was i < N, the sign
# unsaid; not "N1", already 엔원). Not a tag, "<b>", nor a capitals' ranking, "A > B > C" (a lowercase left side only).
# ... a subscript's digits too, "x₁ < x₂이면", "0 < t < t₁" (it was x₁ < x₂이면, the sign unsaid, and 0 초과 t t 미만₁: the
# bound's word inside the term): x₁ x₂ 미만이면, 0 초과 t t₁ 미만.
# ... a member on the right, "i < v.size()", "while (i < s.length)" (it was i v 미만.size(): the bound's word inside it): i가
# v.size()보다 작다.
# ... a subscript's letter too, "x < yᵢ", "xᵢ < y" (k9: x y 미만ᵢ, the index after the bound's word; xᵢ < y, the sign
# unsaid): x yᵢ 미만; a capital's digit, "x ≤ M₁", said in English by then, M원 (k9: x ≤ M원, the sign unsaid): x M원 이하.
SUBSCRIPT_LETTERS = "ᵢⱼₖₗₘₙₐₑₒₓₕₚₛₜᵣᵤᵥ"
_INDEX = rf"[₀-₉{SUBSCRIPT_LETTERS}]{{0,2}}"
_CAPITAL_DIGIT = "|".join(ENGLISH_DIGITS)
VARIABLE_BOUND = re.compile(
    rf"(?=[a-z]{_INDEX} ?[<>≤≥])(?<![A-Za-z<>≤≥])(?<![<>≤≥] )([a-z]{_INDEX}) ?([<>≤≥]) ?"
    rf"([a-z]{_INDEX}(?:\.[A-Za-z_]\w{{0,15}}(?:\(\))?)?|[A-Z](?:{_CAPITAL_DIGIT})?"
    r"(?=$|\W|[은는이가을를과와의에로일인랑도만]|입니[다까]))"
    rf"(?![A-Za-zα-ω\d>(_²³^₀-₉{SUBSCRIPT_LETTERS}])(?! ?[<>≤≥])(?!의 절댓값)"  # nor an absolute value said, "x < |y| + 1" (k8: y 미만의 절댓값)
    rf"(?! ?[-+−*/×÷=] ?[\w(])(?:{PARTICLE})?"
)  # nor a chain, "a>b>c"; nor a formula's first term, "y > x^2", "y > x + 1" (`EXPRESSION_BOUND`'s)
# ... with a particle after it in the form the bound's word takes, "x ≥ y가 되면" x y 이상이 되면 (it was 이상가).
# The bound of a formula's value, "y ≥ 2x + 1", "x^2 + y^2 ≤ 1이면", read once its operators are words: the bound's word
# after the formula it bounds, y 2x 플러스 1 이상, as after a number. Only after a small letter, a bracket or a power:
# "3 < 5" compares two numbers, "A > B" ranks two names, left; and no chain, "a < b < c".
# A term is a number, a coefficient's product or one letter, "2", "2ab", "x": not an English word, "x > holds here"
# (it was x holds here. 초과, the bound's word after the sentence).
# ... or a fraction, "x < 1/2", "x ≥ -1/2이면" (it was x 1 미만/2: the bound's word inside the fraction): x 2분의 1 미만.
# ... over a letter too, "x < 1/n", "n > 1/ε" (it was n 1 초과/엡실론): n 1/엡실론 초과.
# ... an absolute value among them, said by now, "2x < |x - a|", "x^2 < |y| + 1" (k8: 2x x 빼기 a 미만의 절댓값, the
# bound's word between the value and its 절댓값): 2x x 빼기 a의 절댓값 미만.
_SAID_ABSOLUTE = "(?:의 절댓값)?"
_FORMULA_WORD = (
    r"(?:[A-Za-z\d]{1,3}의 [A-Za-z\d]{1,3}제곱|\d{1,3}/(?:\d{1,3}|[a-zα-ω](?:의 [A-Za-z\d]{1,3}제곱)?(?![A-Za-z_²³^⁰-⁹]))(?![\d/.])|[a-z]/\d{1,3}(?![\d/.])|\d[\d.]{0,11}(?:[a-z]{0,3}[α-ω]|[A-Za-z]{0,3})|[A-Za-z](?:\d{1,3}|[α-ω])?(?![A-Za-z])|더하기|빼기"
    r"|곱하기|나누기|플러스|마이너스|∞)"
)
# ... and after a formula's last number, "x + 1 ≤ 2x", "x + 1 ≤ 2yᵢ" (it was left, x 더하기 1 ≤ 2x: `BOUND` leaves a
# term to this rule, which wanted a letter before the sign): the number its subject, x 더하기 1이 2x 이하, as `BOUND`'s.
_SAID_FORMULA_BEFORE = re.compile(
    r"(?:[a-zα-ω)²³]|제곱) (?:더하기|빼기|플러스|마이너스) (\d{1,6}(?:\.\d{1,6})?) ?$"
)
# ... not one ending on an operator's word, "x > -b/a" (rvk62: korean62's x 마이너스 초과 b/a, the term after it unread).
_NOT_AN_OPERATOR = "".join(
    f"(?<!{word})" for word in ("더하기", "빼기", "곱하기", "나누기", "플러스", "마이너스")
)
EXPRESSION_BOUND = re.compile(
    rf"(?=[ <>≤≥])(?:(?<=[a-z)\d])|(?<=제곱))(?<![<>≤≥] [a-z])(?<![<>≤≥][a-z]) ?([<>≤≥]) ?"
    rf"({_FORMULA_WORD}{_SAID_ABSOLUTE}(?: {_FORMULA_WORD}{_SAID_ABSOLUTE}){{0,8}}){_NOT_AN_OPERATOR}(?!의 절댓값)"
    r"(?![A-Za-zα-ω\d(./])(?! ?[<>≤≥])"
    rf"(?:{PARTICLE})?"
)
# ... and a number that ends a formula's left side, "2x - 3 > 0이면", "x^2 < 4", "x² - 4 ≥ 0" (it was left, 2x 빼기 3 > 0이면:
# a number before the sign taken for a comparison of two numbers): 2x 빼기 3 0 초과이면. "3 < 5", "5 - 3 > 0" are left.
_NUMBER_BEFORE = re.compile(r"\d ?$")
_POWER_END = re.compile(r"\^\d$")
_FORMULA_BEFORE = re.compile(
    r"(?:\^\d|(?:(?<![A-Za-z])[a-z](?:\^\d{1,3}|[²³])?|\)) ?[-+−] ?\d+(?:\.\d+)?|(?<![\w/])[a-z]/\d{1,3}) ?$"
)
_LONE_LETTER = re.compile(r"[A-Za-z]\d{0,3}")
_TERM = re.compile(r"[-−]?[\d.,]+[a-z]")
# A coefficient's product before a bound, "2x ≤ 1", "3x < 5이면" (it was 2 곱하기 1 이하: "2x 1" read later as a product,
# 2 x 1, as "3x3" is): the term is the subject, as a formula's, 2x가 1 이하.
# Not a unit read later, "1.5m < 2", "3h < 5", "2g < 5" (k9: 1 점 오 미터이, 세 시간가: the letter's particle on the unit).
_COEFFICIENT_BEFORE = re.compile(r"(?<![\w.])(\d{1,6}(?:\.\d{1,6})?[a-z](?<![ghm])) ?$")
# A number's bound of a variable, "3 < x" 3 초과 x; with its unit or counter, "3인치 < x", "5V ≤ v", "3일 < t", "3 개 < n"
# (it was 3인치 < x, the sign unsaid): 3인치 초과 x.
BOUNDED_BY = re.compile(  # (its sign looked for first: the units' alternatives are tried only before one)
    r"(?=\d[\d.]{0,12} ?[^\s<>≤≥\d]{0,6} ?[<>≤≥])"
    rf"(?<![\d./^])(\d+(?:\.\d+)?(?:%|‰| ?℃| ?°C?|{_BOUND_WORDS_FIRST}|{RANGE_COUNTERS}"
    rf"| (?:{_BOUND_WORDS_FIRST}|{RANGE_COUNTERS})| ?(?:{_alternatives(_UNITS)})(?![A-Za-z0-9²³]))?)"
    r" ?([<>≤≥]) ?(?=[A-Za-z](?![A-Za-z]))"
)
# ... in code, "if (0 <= x && x < n)" (it was if (0 이상 x && x가 n보다 작다): one condition in two voices): the
# variable first, as code's comparisons are, if (x가 0보다 크거나 같다 && x가 n보다 작다).
CODE_BOUNDED_BY = re.compile(
    r"(?=\d[\d.]{0,12} ?[<>≤≥])(?<![\w.])(\d+(?:\.\d+)?) ?([<>≤≥]) ?([a-z][₀-₉]{0,2})(?![A-Za-z\d_(₀-₉])"
    r"(?! ?[<>≤≥])(?! ?[-+−*/] ?[\w(])"
)
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")  # "x₁" said 엑스 일: its particle 은
_TURNED = {"<": ">", "≤": "≥", ">": "<", "≥": "≤"}  # "0 < x" is "x > 0"


def code_bounded_by(match: re.Match[str]) -> str:
    """ "if (0 <= x)" as if (x가 0보다 크거나 같다); outside code left to `BOUNDED_BY`."""
    amount, sign, variable = match.groups()
    if not (
        code_comparisons.CODE_AFTER.match(match.string, match.end())
        and code_comparisons.in_code(match.string, match.start())
    ):
        return match.group(0)
    return f"{variable}{particle_after(variable, '가')} {amount}보다 {code_comparisons.CODE_WORDS[_TURNED[sign]]}"


# ... and π's, "-π < x", "π/2 ≥ θ이면" (it was -파이 < x, the sign unsaid): 마이너스 파이 초과 x, as "3 < x".
PI_BOUNDED_BY = re.compile(
    r"(?<![\w.)/^])([-−]?\d{0,2}π(?:/\d{1,2})?) ?([<>≤≥]) ?(?=[A-Za-zα-ω](?![A-Za-z\d_(]))"
)


def pi_bounded_by(match: re.Match[str]) -> str:
    """ "-π < x" as 마이너스 파이 초과 x."""
    return f"{_MINUS_PI.sub('마이너스 ', match.group(1))} {LOWER_BOUND_WORDS[match.group(2)]} "


# A side of a comparison: a number, a multiple of π ("2π"), a coefficient's product ("2x"), a variable with its index
# ("v1"), a Greek letter or π's fraction ("π/2"), or a short formula of those, "n - 1", "c^2", "b + 1" (its operators
# read later).
# ... with a unit after a number, "40℃", "4.2V" (read later), as `BOUND` reads one.
SIDE_UNIT = r"(?:%|‰|℃|°C?|[kmMGμµ]?(?:Wh|Ah|Hz|V|A|W|Ω))"
_SIDE_TERM = (
    rf"(?:\d{{0,2}}π/\d{{1,2}}|\d{{1,3}}/\d{{1,3}}(?![\d/])|[a-z]/\d{{1,3}}(?![\d/])"
    rf"|\d+(?:\.\d+)?(?:π|[a-z]{{0,3}}[α-ω]|[a-z]{{1,3}}|{SIDE_UNIT})?|π|[a-zα-ω](?:\d{{1,2}}|[₀-₉]{{1,2}}|[α-ω])?)"
    r"(?![A-Za-z\d_(₀-₉α-ω])"
    r"(?:\^\d{1,3}|⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})?"
)
# ... a product in "×" or "·" and a superscript power too, "1 ≤ n ≤ 2×10⁵", "0 ≤ x ≤ 10⁻³" (k7 cut the side at the "2":
# n은 1 이상 2 이하×10의 5제곱, and "10⁵" was 10 이하⁵): n은 1 이상 2×10⁵ 이하, said 2 곱하기 10의 5제곱 이하; a quotient
# in "÷", "0 < x < 6 ÷ 2" (it was x는 0 초과 6 미만 나누기 2): x는 0 초과 6 나누기 2 미만.
# ... a fraction, "0 < x < 1/2" (it was 0 초과 x 1 미만/2: the bound's word inside it): x는 0 초과 2분의 1 미만.
SIDE = rf"{_SIDE_TERM}(?:(?: - | ?[+−*×·÷] ?){_SIDE_TERM}){{0,3}}"  # "n-1" no minus: a name's hyphen
# ... a chain's first side, up to twelve terms, "a + b + c + d + e < x < 1" (it was a 더하기 … 더하기 e x 미만 1 미만: the
# single bounds, e's sign said after x): x는 a 더하기 … 더하기 e 초과 1 미만.
LONG_SIDE = rf"{_SIDE_TERM}(?:(?: - | ?[+−*×·÷] ?){_SIDE_TERM}){{0,11}}"
# ... but the number that ends a formula's left side, "a - 3 > b" (it was a 빼기 3 미만 b: the formula's 3 taken for b's
# bound), is the subject, as in "2x - 3 > 0": a 빼기 3이 b 초과; a formula on the right too, "a - 3 > b + 1".
_SIDE_SAID = rf"{_SIDE_TERM}{_SAID_ABSOLUTE}(?:(?: - | ?[+−*×·÷] ?){_SIDE_TERM}{_SAID_ABSOLUTE}){{0,3}}"
# ... a coefficient's product on the right too, "x + 1 ≤ 2y" (it was left, the sign unsaid): x 더하기 1이 2y 이하; not "2x",
# which "10x 이상" would read as so many times (10배 이상), left.
FORMULA_BOUNDED_BY = re.compile(
    r"(?=\d{1,12} ?[<>≤≥])(?<![\d.])(\d{1,12}) ?([<>≤≥]) ?"
    rf"(?=[a-z]|\d{{1,6}}[a-wyz](?![a-z{SUBSCRIPT_SPANS}]))({_SIDE_SAID})(?!의 절댓값)(?![.,]\d|\^)(?! ?[<>≤≥])(?! ?[-+−*/] ?[\w(])(?:{PARTICLE})?"
)  # ... an absolute value said by now, "x - 1 < |y|" (k8: 1이 y 미만의 절댓값): x 빼기 1이 y의 절댓값 미만


def formula_bounded_by(match: re.Match[str]) -> str:
    """ "a - 3 > b" as a - 3이 b 초과; "3 > b" alone (no formula before it) left to `BOUNDED_BY`."""
    amount, sign, side, particle = match.groups()
    text, start = match.string, match.start()
    formula = _FORMULA_BEFORE.search(text, max(0, start - 24), match.end(1))
    if not formula:
        return match.group(0)
    subject = f"{amount}{particle_after(amount, '이')}"
    if (
        not particle
        and code_comparisons.CODE_AFTER.match(text, match.end())
        and code_comparisons.in_code(text, formula.start())
    ):
        return f"{subject} {side}보다 {code_comparisons.CODE_WORDS[sign]}"  # "if (a - 3 > b)": code's voice, as "if (a > b)"
    word = BOUND_WORDS[sign]
    ending = particle_after(word, particle) if particle else ""
    return f"{subject} {side} {word}{ending}"


def bound(match: re.Match[str]) -> str:
    """ "< 20%" as 20 퍼센트 미만; a variable's "x>0일 때" as x 0 초과일 때 (the copula after the bound's word), "x ≤ 3이
    되면" as x 3 이하가 되면 (the particle in the form the bound's word takes)."""
    sign, amount, particle = match.groups()
    text, start = match.string, match.start(1)  # the sign's (the match holds the space before it)
    formula_before = _NUMBER_BEFORE.search(text, max(0, start - 2), start)
    if formula_before and not _FORMULA_BEFORE.search(text, max(0, start - 24), start):
        return match.group(0)  # "3 < 5": two numbers compared, left
    # "2x - 3 > 0": the formula's last number its subject, 2x 빼기 3이 0 초과 (the k6 reading, 3 0 초과, said two
    # numbers in a row); a power's, "x^2 < 4", is said 제곱 and needs none: x의 2제곱 4 미만
    left = text[max(0, start - 24) : start].rstrip()
    subject = bool(formula_before and not _POWER_END.search(left))
    # "y > 2x": a formula's term, `EXPRESSION_BOUND`'s (it was y 2배 초과, 2x 초과 read 배)
    if _TERM.fullmatch(amount) and amount[-1] not in _UNITS:
        return match.group(0)
    # "p < .05": 0 점 영오 미만 (it was left, "p<.05", the bound unsaid)
    if amount.lstrip("-−").startswith("."):
        amount = amount.replace(".", "0.", 1)
    compared = _code_comparison(match, amount, bool(particle) or subject)
    if compared:
        return compared
    amount = _MINUS_PI.sub("마이너스 ", amount)  # "-π": espeak says no minus before it
    last, number = amount[-1], amount[:-1].rstrip()
    before = _before_the_amount(match, left, subject, bool(formula_before))
    if (
        last in _COPULA_CONTEXT
        and number[-1:].isdigit()
        and (formula_before or _VARIABLE_BEFORE.search(text, max(0, start - 2), start))
        and _COPULA_CONTEXT[last].match(text, match.end(2))
    ):  # "x > 0인가?": the copula's ending is no particle of the bound's word
        return f"{before}{number} {BOUND_WORDS[sign]}{last}{particle or ''}"
    word = BOUND_WORDS[sign]
    return f"{before}{amount} {word}{particle_after(word, particle) if particle else ''}"


def _code_comparison(match: re.Match[str], amount: str, worded: bool) -> str | None:
    """ "if (x > 0)" as the code's comparison, x가 0보다 크다, as "if (a > b)" (it was x 0 초과: one condition,
    "if (x>0 && y<z)", in two voices); None for a sentence's bound, "if (x > 0이면", or one with a particle."""
    text, start = match.string, match.start(1)
    variable = _VARIABLE_BEFORE.search(text, max(0, start - 2), start)
    # not "if (x > 0이면", "if (n ≥ 1인 정수": a sentence's
    code_after = code_comparisons.CODE_AFTER.match(text, match.end())
    if code_after and not variable:
        variable = _CODE_NAME_BEFORE.search(text, max(0, start - 80), start)
    if not (variable and code_after and not worded and code_comparisons.in_code(text, variable.start())):
        return None
    letter = variable.group().strip()
    return f"{particle_after(letter, '가')} {amount}보다 {code_comparisons.CODE_WORDS[match.group(1)]}"


def _before_the_amount(match: re.Match[str], left: str, subject: bool, formula_before: bool) -> str:
    """What goes before a bound's amount: the formula's last number with its subject particle, a statement's topic,
    a coefficient's subject, or the text before the sign with a space after a glued variable."""
    text, start, particle = match.string, match.start(1), match.group(3)
    before = particle_after(left, "이") + " " if subject else text[match.start() : start]
    # "x>0이면" glued to its variable: x 0 초과이면, apart (it was x0 초과이면, one word)
    apart = " " if text[start - 1 : start].isalnum() and not subject else ""
    stated = "" if subject or particle else _stated(text, start, match.end())
    if formula_before and not (subject or particle) and _STATEMENT_AFTER.match(text, match.end()):
        stated = "은 "  # "x^2 < 4입니다": a power's, said 제곱, x의 2제곱은 4 미만입니다
    if stated:
        before, apart = stated, ""
    coefficient = None if subject else _COEFFICIENT_BEFORE.search(text, max(0, start - 16), start)
    if coefficient:  # "2x ≤ 1": 2x가 1 이하
        before, apart = particle_after(coefficient.group(1), "이") + " ", ""
    return before + apart


# A statement's copula after a single bound, "x ≤ 1입니다", "θ < π입니까?", "x ≥ y이다" (it was x 1 이하입니다: no particle
# on the variable, where the chain "0 ≤ x ≤ 1입니다" says x는): the letter takes its topic particle, x는 1 이하입니다; a
# condition's, "x ≤ 1이면", stays as it was read, x 1 이하이면.
# ... and with a space before it, "x ≤ 1 입니다" (k9: x 1 이하 입니다), or as a list's first, "x ≥ 0, y ≥ 0입니다" (k9
# gave y alone its particle: x 0 이상, y는 0 이상입니다): x는 0 이상, y는 0 이상입니다.
_STATEMENT_AFTER = re.compile(
    r"(?:, ?[A-Za-zα-ω][₀-₉]{0,2} ?[<>≤≥] ?[-−]?[\dA-Za-zα-ωπ.]{1,12}){0,3} ?(?:입니[다까]|이다)(?![가-힣])"
)
_LETTER_BEFORE = re.compile(
    rf"(?:(?<![A-Za-zα-ω\d_.)])([A-Za-zα-ω]{_INDEX})|(?<![\w.])[A-Za-z]{{1,4}}\([A-Za-zα-ω\d, |]{{0,11}}([A-Za-zα-ω\d])\)) ?$"
)  # ... or a function's value, "P(A) ≤ 1입니다", "f(x) > 0입니다": P(A)는, f(x)는 (its last argument's sound)


def _stated(text: str, start: int, end: int) -> str:
    """The topic particle for the letter a bound ending at `end` follows (" 는 " after "x"), where a statement's
    copula ends its amount; "" elsewhere."""
    letter = _LETTER_BEFORE.search(text, max(0, start - 20), start)
    if not (letter and _STATEMENT_AFTER.match(text, end)):
        return ""
    # "x₁ ≥ 0입니다": x₁은, said 엑스 일 (k9: x₁ 0 이상입니다, no particle)
    last = letter.group(1) or letter.group(2)
    said = MATH_NAMES.get(last[0], last[0]) + last[1:].translate(_SUBSCRIPT_DIGITS)
    return particle_after(said, "는") + " "


def variable_bound(match: re.Match[str]) -> str:
    """ "x ≥ y이면" as x y 이상이면; in code, "if (a>b)", as if (a가 b보다 크다)."""
    left, sign, right, particle = match.groups()
    start = match.start()
    text = match.string
    code_after = code_comparisons.CODE_AFTER.match(
        text, match.end()
    )  # not "if a > b이면": a sentence's (k6: 크다이면)
    if (
        code_after and not particle and code_comparisons.in_code(text, start)
    ):  # "if (a ≤ b를": a formula's keeps the particle
        return f"{left}{particle_after(left, '가')} {right}보다 {code_comparisons.CODE_WORDS[sign]}"
    word = BOUND_WORDS[sign]
    if not particle and _STATEMENT_AFTER.match(text, match.end()):  # "x ≥ y입니다": x는 y 이상입니다
        left += particle_after(left.translate(_SUBSCRIPT_DIGITS), "는")
    return f"{left} {right} {word}{particle_after(word, particle) if particle else ''}"


def expression_bound(match: re.Match[str]) -> str:
    """ "y ≥ 2x + 1" as y 2x 더하기 1 이상; a lone letter after a word's sign is a type's bracket, "vector<int> v;"
    (it was vector<int v 초과;), left."""
    sign, formula, particle = match.groups()
    if _LONE_LETTER.fullmatch(formula):
        return match.group(0)
    word = BOUND_WORDS[sign]
    text, start = match.string, match.start()
    if text[start - 1 : start].isdigit():  # the match holds the space before the sign
        number = _SAID_FORMULA_BEFORE.search(text, max(0, start - 24), start)
        if not number:  # "3 < 2x": two sides with no formula before, left
            return match.group(0)
        ending = particle_after(word, particle) if particle else ""
        return f"{particle_after(number.group(1), '이')} {formula} {word}{ending}"
    stated = "" if particle else _stated(match.string, match.start(), match.end())  # "x ≤ y/2입니다": x는
    return f"{stated or ' '}{formula} {word}{particle_after(word, particle) if particle else ''}"


# A subscript left after the bound's word by a side that ends in a letter's name, "x ≤ 2σᵢ" (k9: x 2시그마 이하ᵢ, the
# index after the word): x 2시그마ᵢ 이하, back on its term.
MISPLACED_INDEX = re.compile(rf" (미만|이하|초과|이상)([₀-₉{SUBSCRIPT_LETTERS}]{{1,2}})(?:{PARTICLE})?")


def index_on_its_term(match: re.Match[str]) -> str:
    """ "2시그마 이하ᵢ" as 2시그마ᵢ 이하, a particle after the index in the form the bound's word takes."""
    word, index, particle = match.groups()
    return f"{index} {word}{particle_after(word, particle) if particle else ''}"
