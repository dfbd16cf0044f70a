"""Set and logic signs of a lecture's slides read as a Korean lecturer says them: "A ∪ B" (A 합집합 B), "A ∩ B"
(A 교집합 B), "A ∖ B" (A 차집합 B), "x ∈ A" (x는 A의 원소; "x ∈ A이면": x가 A의 원소이면), "x ∉ A" (x는 A의 원소가
아님), "A ⊂ B" (A는 B의 부분집합), "A ⊃ B" (A는 B를 포함), "x ∈ [0, 1]" (x는 0 이상 1 이하), "∀x" (모든 x에
대해), "∃x ∈ A" (A의 어떤 x에 대해), "¬p" (낫 p), and the number sets "ℝ", "ℕ", "ℤ", "ℚ", "ℂ" (실수 집합, …), "∅" (공집합).

No rule read them before: they reached espeak as written ("x ∈ A이면 x ∈ B입니다." as it is here). A part of `korean_reading`: the quantifiers and signs
between sets are read with the Greek letters' names, "¬" after the arrows (whose "¬q → ¬p" is a conditional).
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_copulas import DOING_COPULAS, NEGATED_COPULAS, STATEMENT_COPULAS
from .korean_particles import PARTICLE, final_sound, particle_after
from .korean_words import ENGLISH_DIGITS, MATH_NAMES

# A set or an element: one letter (not a word's), a number set, with a subscript digit, a prime or a complement.
# A number set's dimension, held as superscripts by `dimensions_held` ("ℝ^{nm}": ℝⁿᵐ), and its positive half.
_PLAIN = "0123456789abdeghjklmnoprstuvwxyz"
_RAISED = "⁰¹²³⁴⁵⁶⁷⁸⁹ᵃᵇᵈᵉᵍʰʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"  # `_PLAIN` as superscripts
_DIMENSION = f"(?:[{_RAISED[10:]}][⁺⁻][{_RAISED[1:10]}]|[{_RAISED}]{{1,3}})"
_WRITTEN_SET = f"[ℝℕℤℚℂ](?:{_DIMENSION})?[⁺₊]?"
_ONE = rf"(?:[A-Za-z](?![A-Za-z])|{_WRITTEN_SET})(?:[₀-₉ᶜ′']|(?<=[A-Z])(?:{'|'.join(ENGLISH_DIGITS)}))?"
_NUMBER_SETS = {
    "ℝ": "실수 집합",
    "ℕ": "자연수 집합",
    "ℤ": "정수 집합",
    "ℚ": "유리수 집합",
    "ℂ": "복소수 집합",
    "∅": "공집합",
}
# "ℝⁿ", "ℝ^2" (spaces), "∅10" (a diameter): left. The particle after it in its name's form, "ℝ로", "∅는" (k12 read
# 실수 집합로, 공집합는: the particle written for the sign).
# ... its positive half, "ℤ⁺", "ℝ₊" (korean14: 정수 집합⁺, the sign to espeak): 양의 정수 집합, 양의 실수 집합.
# ... and a space of its dimension, "ℝⁿ", "ℝ²", "ℝ^{nm}", "x ∈ ℝ^n", "ℝⁿ₊" (korean15: as written, espeak spelled the
# sign's code point, "letter 211D n"; 실수 집합의 나노미터제곱, x는 실수 집합의 원소^n): n차원 실수 공간, 2차원 실수 공간,
# nm차원 실수 공간, x는 n차원 실수 공간의 원소, n차원 양의 실수 공간, as a lecturer names it. Held before the powers read
# its exponent (`dimensions_held`): a letter or two (not "c", a complement's), up to three digits, in braces or not,
# and a positive half after it, "ℝ^n_+"; a letter one more or less, "ℝ^{n+1}" (korean16: 실수 집합의 n 플러스 1제곱),
# n 플러스 1차원 실수 공간; "ℝ^{m×n}", "ℝ^n_x" left as before.
DIMENSION = re.compile(
    r"([ℝℕℤℚℂ])(?:([⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ]{1,3})|\^\{([abd-z]{1,2}|\d{1,3}|[abd-z][+-][1-9])\}|\^([abd-z]|\d{1,3}))"
    r"([⁺₊]|_\{?\+\}?)?(?![A-Za-z\d_^{⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ⁺₊])"
)
_HELD_DIMENSION = str.maketrans(_PLAIN + "+-", _RAISED + "⁺⁻")
_SAID_DIMENSION = str.maketrans(
    dict(zip(_RAISED, _PLAIN, strict=True)) | {"⁺": " 플러스 ", "⁻": " 마이너스 "}
)  # "ℝ^{n+1}" (held ℝⁿ⁺¹): n 플러스 1차원
_NUMBER_SET = re.compile(f"({_WRITTEN_SET}(?![²³ⁿ^])|∅(?! ?\\d)){PARTICLE}?")
_SET_AT_END = re.compile(f"{_WRITTEN_SET}$")
_OPERATIONS = {"∪": "합집합", "∩": "교집합", "∖": "차집합", "∧": "그리고", "∨": "또는"}
# "A ∪ B", "A∩B", "(A ∪ B)ᶜ", "p ∧ q": between two sets, propositions or brackets.
_OPERATION = re.compile(r"(?<=[\w)′'ᶜ]) ?([∪∩∖∧∨]) ?(?=[\w(¬])")
# An interval's bounds, "[0, 1]", "(0, 무한대)" (∞ said by now).
_BOUNDS = r"([^,\[\]()]{1,24}), ?([^,\[\]()]{1,24})"
# "∀x", "∃y ∈ A", "∀ε > 0" (its bound said by the chains by now, 엡실론 0 초과): the quantifier, its variable, a bound.
# Of Hangul only a Greek letter's name (said by now) is a variable: "∀ 기호는" names the sign (k12: 모든 기호는에 대해).
_GREEK_NAMES = "|".join(
    sorted({name for sign, name in MATH_NAMES.items() if "Α" <= sign <= "ω"}, key=len, reverse=True)
)
# An edge's pair after its word, "∀ edge (u, v) ∈ E" (k12: 모든 edge에 대해 (u, v) ∈ E에 대해), and a list of variables,
# "∀i, j에 대해", "∀x, y ∈ A" (k12: 모든 i에 대해, j에 대해): one variable, 모든 i, j에 대해, A의 모든 x, y에 대해.
_QUANTIFIER = re.compile(
    rf"([∀∃]) ?((?:[A-Za-z]{{1,4}}(?![A-Za-z])|(?:{_GREEK_NAMES})(?![가-힣])|{_ONE})"
    r"(?: ?\([A-Za-z](?:, ?[A-Za-z]){1,3}\)|(?:, ?[A-Za-z](?![A-Za-z(]|(?!에 ?대)[가-힣])){1,6})?)"
    r"(?: ((?:마이너스 )?[^\s,.:;]{1,12}) (초과|미만|이상|이하))?"
    rf"(?: ?∈ ?({_ONE}|[\[(]{_BOUNDS}[\])]))?(?=(.?))"
)
_QUANTIFIERS = {"∀": "모든", "∃": "어떤"}
# A quantified element a copula ends, "∀x ∈ A이면", "∃x ∈ A이므로" (korean14: A의 모든 x에 대해 이면): the copula is the
# element's, 모든 x가 A의 원소이면, 어떤 x가 A의 원소이므로.
_QUANTIFIED_ELEMENT = re.compile(
    rf"([∀∃]) ?([A-Za-z](?![A-Za-z])|(?:{_GREEK_NAMES})(?![가-힣])) ?∈ ?({_ONE}) ?({'|'.join(NEGATED_COPULAS)})(?![가-힣])"
)
_ABOUT = ("에 대해", "에 대하여", "에 대한", "에대해")  # (words, no pattern: `korean_reading.PLAIN` has them)
# "x ∈ A", "x ∉ A ∪ B이면", "A ⊆ B입니다": an element's or a subset's statement, its set (sets joined by an
# operation, already said) and the copula after it.
_SET_TERM = rf"{_ONE}(?: (?:합집합|교집합|차집합) {_ONE}){{0,8}}"
_COPULA = rf"(?: ?({'|'.join(NEGATED_COPULAS)})(?![가-힣]))?"  # the copulas `korean_copulas` says negated
# Not a set read on, "f ∈ C[0, 1]" (a function space), "x ∈ ℝ \ {0}" (k12: f는 C의 원소[0, 1], x는 실수 집합의 원소 \ {0}).
# A relation a particle makes a noun of, "A ⊂ B가 성립하면", "x ∈ A를 만족하는" (korean14: the signs unsaid): a clause
# ending 임, A가 B의 부분집합임이 성립하면, x가 A의 원소임을 만족하는, as a lecturer says it.
_NOUN_PARTICLE = "(?:([가이를을는은])(?![가-힣]))?"
MEMBERSHIP = re.compile(rf" ?([∈∉⊂⊆⊊⊄⊈⊃⊇]) ?({_SET_TERM}){_COPULA}{_NOUN_PARTICLE}(?![\w(\[]| ?\\)")
_WORDS = {
    "∈": "원소",
    "∉": "원소",
    "⊂": "부분집합",
    "⊆": "부분집합",
    "⊊": "진부분집합",
    "⊄": "부분집합",
    "⊈": "부분집합",
}
# "x ∈ [0, 1]", "t ∈ (0, ∞)이면": an interval's element as its bounds, x는 0 이상 1 이하, t가 0 초과이면 (it was left, the
# sign unsaid); the bracket says which bound is closed.
_INTERVAL = re.compile(rf" ?∈ ?([\[(]){_BOUNDS}([\])]){_COPULA}(?![\w(])")
_LOWER = {"[": "이상", "(": "초과"}
_UPPER = {"]": "이하", ")": "미만"}
_INFINITY = re.compile("(?:마이너스 |[-−])?무한대")
_TOPIC_COPULAS = (None, *STATEMENT_COPULAS)
_NEXT_SIGN = re.compile(" ?[∈∉⊂⊆⊊⊄⊈⊃⊇]")
# The links after a chain's first, "A ⊂ B ⊂ C이면": the last one's copula says whether the chain is a clause, each
# link's element a subject (k13: A는 B의 부분집합이고 B가 C의 부분집합이면, a topic opening a clause).
# ... a noun clause's too, "A ⊂ B ⊂ C가 성립하면" (korean15's first: A는 … B가 …임이, a topic opening it): A가 … B가 …임이.
_CHAIN_REST = re.compile(rf"(?: ?[∈∉⊂⊆⊊⊄⊈⊃⊇] ?{_SET_TERM}){{1,8}}{_COPULA}{_NOUN_PARTICLE}")
_LOOK_BACK = 24
# A statement before an equivalence, "x ∈ S ⇔ x > 0" (k12: x는 S의 원소와 x 0 초과, the arrow's "와" after a topic):
# the arrows join terms, not statements; the sign left as written, as before korean12.
_EQUIVALENCE_NEXT = re.compile(" ?[⇔⟺↔⟷]")
_EQUIVALENCE_BEFORE = re.compile(r"[⇔⟺↔⟷] ?[\w′']{1,12}$")
# A code line's element, "if x ∈ S:", "`while k ∈ seen:`" (k12: if x는 S의 원소:): code, its sign left as written.
# ... the line's code on after its keyword, no Korean word between, "if (x ∈ S && y ∈ T) {", "return x ∈ S and y ∉ T".
_CODE_KEYWORD_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:if|elif|while|until|for|assert|return)[ (][^가-힣\n]{0,70}$"
)
_CODE_LOOK_BACK = 80
_NEGATION = re.compile(r"¬ ?(?=[\w(])")
_SUBSCRIPT_DIGIT = re.compile("[₀-₉]$")


def spoken(text: str) -> str:
    """`text` with its quantifiers, set operations, elements, subsets and number sets as words."""
    text = _QUANTIFIED_ELEMENT.sub(_quantified_element, text)
    text = _QUANTIFIER.sub(_quantifier, text)
    text = _OPERATION.sub(_operation, text)
    text = _INTERVAL.sub(_interval, text)
    text = MEMBERSHIP.sub(_membership, text)
    return _NUMBER_SET.sub(_number_set, text)


def _operation(match: re.Match[str]) -> str:
    """A set operation in words; on a code line, "if x ∈ A ∪ B:", as written (k12: if x ∈ A 합집합 B:)."""
    return match.group() if _on_a_code_line(match) else f" {_OPERATIONS[match.group(1)]} "


def _on_a_code_line(match: re.Match[str]) -> bool:
    """A code keyword before the sign on its line, no Korean word between: "if x ∈ S:", "if (x ∈ S && y ∈ T) {"."""
    return bool(
        _CODE_KEYWORD_BEFORE.search(match.string, max(0, match.start() - _CODE_LOOK_BACK), match.start())
    )


def dimensions_held(text: str) -> str:
    """`text` with a number set's dimension as superscripts, "ℝ^{nm}" ℝⁿᵐ, "ℝ^n_+" ℝⁿ₊: no power's rule reads them."""
    return DIMENSION.sub(_dimension_held, text)


def _dimension_held(match: re.Match[str]) -> str:
    letter, superscript, braced, caret, half = match.groups()
    return letter + (superscript or braced or caret).translate(_HELD_DIMENSION) + ("₊" if half else "")


def _number_set(match: re.Match[str]) -> str:
    name = _set_name(match.group(1))
    particle = match.group(2)
    return name + particle_after(name, particle) if particle else name


def _set_name(written: str) -> str:
    """ "ℝ" 실수 집합, "ℝ₊" 양의 실수 집합, "ℝⁿ" n차원 실수 공간, "ℝⁿ₊" n차원 양의 실수 공간."""
    positive = "양의 " if written[-1] in "⁺₊" else ""
    dimension = (written[1:-1] if positive else written[1:]).translate(_SAID_DIMENSION)
    if not dimension:
        return positive + _NUMBER_SETS[written[0]]
    return f"{dimension}차원 {positive}{_NUMBER_SETS[written[0]].removesuffix('집합')}공간"


def negations_spoken(text: str) -> str:
    """`text` with "¬p" said 낫 p, as a Korean lecturer reads a negation (after the arrows read "¬q → ¬p")."""
    return _NEGATION.sub("낫 ", text)


def _quantifier(match: re.Match[str]) -> str:
    sign, variable, bound, word, over, lower, upper, following = match.groups()
    among = f"{over}의 " if over else f"{bound} {word}인 " if bound else ""
    # "∀i ∈ [1, n]" (k12: 모든 i에 대해는 1 이상 n 이하): 1 이상 n 이하인 모든 i에 대해
    if over and over[0] in "[(":
        said = _bounds_said(over[0], lower, upper, over[-1])
        among = f"{said}인 " if said else "실수 집합의 "
    # "∀ε > 0에 대해": the writer's own words (k12 read 모든 엡실론에 대해 에 대해)
    if match.string.startswith(_ABOUT, match.end()):
        return f"{among}{_QUANTIFIERS[sign]} {variable}"
    space = "" if not following or following in " ,.:;)" else " "  # "∀x∃y": two quantifiers, apart
    return f"{among}{_QUANTIFIERS[sign]} {variable}에 대해{space}"


def _quantified_element(match: re.Match[str]) -> str:
    sign, variable, over, copula = match.groups()
    final = _final(variable)
    if copula in STATEMENT_COPULAS:
        particle = "은" if final else "는"
    else:
        particle = "이" if final else "가"
    return f"{_QUANTIFIERS[sign]} {variable}{particle} {over}의 원소{_said_copula('원소', copula)}"


def _interval(match: re.Match[str]) -> str:
    opening, lower, upper, closing, copula = match.groups()
    particle = _element_particle(match, copula)
    if particle is None or _EQUIVALENCE_NEXT.match(match.string, match.end()):
        return match.group()
    said = _bounds_said(opening, lower, upper, closing) or "실수 집합의 원소"  # "(-∞, ∞)": every number, ℝ
    return f"{particle} {said}{_said_copula(said, copula)}"


def _bounds_said(opening: str, lower: str, upper: str, closing: str) -> str:
    """An interval's finite bounds, the bracket saying which is closed: 0 이상 1 미만; "" for (-∞, ∞)."""
    bounds = [f"{lower} {_LOWER[opening]}"] if not _INFINITY.fullmatch(lower) else []
    bounds += [f"{upper} {_UPPER[closing]}"] if not _INFINITY.fullmatch(upper) else []
    return " ".join(bounds)


def _element_particle(match: re.Match[str], copula: str | None) -> str | None:
    """The particle of the element before the sign: a topic's before a statement, a subject's in a clause; None where
    no element is before it."""
    before = match.string[max(0, match.start() - _LOOK_BACK) : match.start()].rpartition("\n")[2]
    if not before[-1:].isalnum() and before[-1:] not in "′'ᶜ)₀₁₂₃₄₅₆₇₈₉":
        return None
    if _on_a_code_line(match) or _EQUIVALENCE_BEFORE.search(before):
        return None  # "if x ∈ S:" code; "x ∈ A ⇔ x ∈ B" both sides as written
    final = _final(before.rstrip(")′'ᶜ"))
    if copula in _TOPIC_COPULAS:
        return "은" if final else "는"
    return "이" if final else "가"


def _membership(match: re.Match[str]) -> str:
    sign, term, copula, noun_particle = match.groups()
    if noun_particle:
        return _noun_clause(match, noun_particle)
    chained = copula is None and _NEXT_SIGN.match(match.string, match.end())
    rest = _CHAIN_REST.match(match.string, match.end()) if chained else None
    last = (
        (rest.group(1) or ("이면" if rest.group(2) else None)) if rest else copula
    )  # a noun clause's: a clause
    particle = _element_particle(match, last)
    if particle is None or _EQUIVALENCE_NEXT.match(match.string, match.end()):
        return match.group()  # no element before it: a sign alone, left
    again = f" {term}" if chained else ""
    if sign in "⊃⊇":
        return f"{particle} {term}{'을' if _final(term) else '를'} 포함{_doing('이고' if chained else copula)}{again}"
    word = _WORDS[sign]
    # "A ⊂ B ⊂ C": the next sign's left term is this one's set, said again (it was A는 B의 부분집합는 C의 부분집합)
    if sign in "∉⊄⊈":
        copula = "이고" if chained else copula
        said_not = NEGATED_COPULAS[copula] if copula else "아님"  # none after it: 아님
        return f"{particle} {term}의 {word}{'이' if final_sound(word) else '가'} {said_not}{again}"
    return f"{particle} {term}의 {word}{'이고' if chained else _said_copula(word, copula)}{again}"


def _noun_clause(match: re.Match[str], noun_particle: str) -> str:
    """ "A ⊂ B가", "x ∉ A를": the relation as a clause ending 임, its subject's particle 가 (A가 B의 부분집합임이)."""
    sign, term = match.group(1), match.group(2)
    particle = _element_particle(match, "이면")
    if particle is None or _EQUIVALENCE_NEXT.match(match.string, match.end()):
        return match.group()
    ending = "임" + particle_after("임", noun_particle)
    if sign in "⊃⊇":
        return (
            f"{particle} {term}{'을' if _final(term) else '를'} 포함함{particle_after('함', noun_particle)}"
        )
    word = _WORDS[sign]
    if sign in "∉⊄⊈":
        return f"{particle} {term}의 {word}{'이' if final_sound(word) else '가'} 아님{particle_after('임', noun_particle)}"
    return f"{particle} {term}의 {word}{ending}"


def _said_copula(word: str, copula: str | None) -> str:
    """`copula` in the form `word`'s last sound takes: "x ∈ A라고" 원소라고, "A ⊂ B라고" 부분집합이라고; "면" 이면."""
    if copula in ("라고", "라면", "이라고", "이라면"):
        return ("이" if final_sound(word) else "") + copula.removeprefix("이")
    return "이면" if copula == "면" else copula or ""


def _doing(copula: str | None) -> str:
    """ "A ⊃ B", "A ⊇ B이면": the superset's verb, A는 B를 포함, A가 B를 포함하면."""
    return DOING_COPULAS[copula] if copula else ""


def _final(before: str) -> str | None:
    """The final sound of `before`, a subscript digit said in English as the other rules say it ("x₁" 엑스 원)."""
    digit = _SUBSCRIPT_DIGIT.search(before)
    if digit:
        return final_sound(ENGLISH_DIGITS[ord(digit.group()) - ord("₀")])
    number_set = _SET_AT_END.search(before)
    return final_sound(_set_name(number_set.group()) if number_set else before)  # "ℝ" 실수 집합
