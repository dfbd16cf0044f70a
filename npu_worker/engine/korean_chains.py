"""Chains of bounds, "a ≤ b ≤ c", "1 ≤ x ≤ 3", "0 < θ < π", read as a Korean lecturer says them: the middle term
first with its topic particle, then its two bounds, the lower one first: b는 a 이상 c 이하, x는 1 이상 3 이하; in a
condition, x가 1 이상 3 이하이면.

espeak-ng said nothing for the signs (a b c); the k6 reading said each bound where it stood, "a 이상 b c 이하",
which puts b's bound before b and its other bound after c, and "a < 1 < b" came out "a 1 미만 초과 b". A part of
`korean_reading`, which applies this before any single bound is read.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_absolute import ABSOLUTE, said_at
from .korean_functions import FUNCTION_NAMES
from .korean_particles import PARTICLE, final_sound, particle_after
from .korean_ranges import (
    BOUND_WORDS,
    COUNTERS,
    LONG_SIDE,
    LOWER_BOUND_WORDS,
    SIDE,
    SIDE_UNIT,
    SPACED_COUNTERS,
)
from .korean_units import alternatives
from .korean_words import MATH_NAMES, UNITS

# The first term: one term alone; π's multiple or fraction with its minus too, "-π/2 < θ < π/2" (it was -2분의 파이 <
# 세타 < 2분의 파이, the signs unsaid).
# ... or a short formula, "n - 1 < k < n" (k7 took its last term alone: n 빼기 k는 1 초과 n 미만): k는 n 빼기 1 초과 n
# 미만; a longer one too (`korean_ranges.LONG_SIDE`).
# ... and a glued minus before a letter's side, "-a ≤ x ≤ a", "-L/2 ≤ x ≤ L/2", "x ≤ -y ≤ z", "0 ≤ x ≤ -a" (korean62: left
# as written, espeak's sign unsaid; x 마이너스 y z 이하 이하): 마이너스 a, 마이너스 L/2, 마이너스 y (`_NEGATIVE_TERM`).
_LETTER_SIDE = r"[-−](?:[a-zα-ω]|[A-Z](?=/\d))(?:/\d{1,3})?(?![\w.(/^²³])"
_EDGE = (
    rf"[-−]?\d+(?:\.\d+)?(?:{SIDE_UNIT})?|[a-zα-ω](?:\d{{1,2}}|[₀-₉]{{1,2}})?|[-−]?\d{{0,2}}π(?:/\d{{1,2}})?|{_LETTER_SIDE}"
    rf"|{LONG_SIDE}"
)
_EDGE_AHEAD = (
    r"[-−]?[\w.π%‰℃°Ω/]{1,12}(?:(?: - | ?[+−*×·÷] ?)[\w.π/^²³⁰-⁹]{1,12}){0,11} ?[<>≤≥]"
    r"|\d[\d.]{0,12} [가-힣A-Za-z]{1,4} ?[<>≤≥]"  # a number and its spaced counter or unit, "10 명 < n"
    r"|\d{1,12} ?분의 \d[\d.]{0,12} ?[<>≤≥]"  # a fraction said in Korean, "3분의 1 < x"
    r"|[-−]?\|[^|\n]{1,40}\| ?[<>≤≥]"  # an absolute value, "-|x| ≤ x ≤ |x|"
)
_NEGATIVE_TERM = re.compile(r"^[-−](?=\d{0,2}π|[A-Za-zα-ω])")  # said 마이너스, as "-1" is
_CAPITAL_OVER = re.compile(r"(?<![A-Za-z])([A-Z])/(\d{1,3})(?= |$)")  # "L/2" said 2분의 L, as "a/2" is
# ... and as the last side, "π > x > -π", "π/2 ≥ θ ≥ -π/2" (it was 파이 > x > -파이, the signs unsaid): x는 마이너스 파이
# 초과 파이 미만.
_LAST_NEGATIVE_PI = r"[-−]\d{0,2}π(?:/\d{1,2})?(?![A-Za-z\d_/^²³(])"
# ... a function of one term, "-1 ≤ sin x ≤ 1", "-1 ≤ cos θ ≤ 1이므로" (it was 마이너스 1 ≤ sin x 1 이하: the first
# sign unsaid, the bound after the function), "0 ≤ f(x) ≤ 1", "0 ≤ P(A) ≤ 1" (`korean_functions` has named "cos θ"
# 코사인 θ by then); the last term too, "a < b < f(x)", "0 <= i < len(arr)" (left whole since k6's review, the signs
# unsaid: a b f(x)): b는 a 초과 f(x) 미만; of several arguments, "f(1, 2) < x < 3", "0 ≤ f(x, y) ≤ 1" (it was f(1, 2) x 3
# 미만 미만, 0 이상 f(x, y) 1 이하): x는 f(1, 2) 초과 3 미만, f(x, y)는 0 이상 1 이하; a conditional probability,
# "0 ≤ P(A|B) ≤ 1" (it was 0 이상 P(A|B) 1 이하): P(A|B)는 0 이상 1 이하.
_NAME = "|".join(sorted({*FUNCTION_NAMES, *FUNCTION_NAMES.values()}, key=len, reverse=True))
_FUNCTION = (
    rf"(?<![A-Za-z가-힣])(?:(?:아크)?(?:{_NAME})(?: 세?제곱)? ?|[A-Za-z])"
    r"(?:(?<= )[a-zα-ω]\d?|\([A-Za-zα-ω\d]\d?(?:(?:, ?|\|)[A-Za-zα-ω\d]\d?){0,3}\))(?![A-Za-z\d_(^²³])"
    r"|(?<![\w.])[a-z]{2,8}\([a-z_]\w{0,8}\)(?![A-Za-z\d_(^²³])"  # code's "len(arr)"
)
# The middle term: a number, a variable, or a short formula of them, "0 < x - 1 < 3" (it was 0 초과 x 빼기 1이 3 미만).
# ... or a word, "90 ≤ 점수 < 100", "18 ≤ 나이 ≤ 65" (it was 90 ≤ 점수 100 미만: the first sign unsaid): 점수는 90 이상 100
# 미만, between numbers only.
_WORD = r"[가-힣]{1,6}(?![\w.])"
# ... or a subscript written with "_", "1 ≤ a_i ≤ 10⁹" (a judge's constraints; it was 1 이상 a_i 10의 9제곱 이하, the
# first bound before the term), or two indices, "1 ≤ i, j ≤ n" (it was 1 이상 i, j n 이하): i, j는 1 이상 n 이하.
_INDEXED = r"[a-z]_[a-z\d]{1,2}(?![\w.])|[a-z], ?[a-z](?![\w.(])"
# ... or a limit's term, an absolute value, "0 < |x - a| < δ", a fraction over a letter, "0 < 1/n < ε", a power of a
# letter, "0 < e^(-x) < 1", "0 < e^x < 1" (it was 0 < |x 빼기 a| < 델타, 0 < 1/n < 엡실론, both signs unsaid, or 0 초과 e의
# 마이너스 x제곱 1 미만): x 빼기 a의 절댓값은 0 초과 델타 미만, n분의 1은 …, e의 마이너스 x제곱은 0 초과 1 미만.
_LIMIT_TERM = (
    rf"{ABSOLUTE}|\d{{1,3}}/[a-zα-ω]\d?(?![\w(/^.])|[A-Za-z\d]\^[-−]?[a-z]{{1,2}}(?![\w(^])"
    r"|[A-Za-z\d]{1,3}의 (?:마이너스 )?[A-Za-z\d]{1,3}제곱(?![\w])"  # "e^(-x)", said by `korean_functions` by now
)
# ... or a number's product with a bracket and terms after it, "y < 3(x + 2) - 1 < 10" (k12: y 3(x 더하기 2) 빼기 1 미만 10
# 미만, `korean_bracket_bounds` taking the first bound alone): 3(x 더하기 2) 빼기 1은 y 초과 10 미만.
_BRACKET_PRODUCT = (
    r"\d{1,6}\((?=[^)]{0,30}[A-Za-zα-ω])[A-Za-zα-ω\d+\-−*/^ .]{1,30}\)"
    r"(?:(?: - | ?[+−] ?)(?:\d{1,6}|[a-z])(?![A-Za-z\d(])){0,3}(?![\w(])"
)
_MIDDLE = (
    rf"[-−]?\d+(?:\.\d+)?(?![\w.(])|[A-Z]\d{{0,2}}(?![\w.])|{_FUNCTION}|{_LIMIT_TERM}|{_BRACKET_PRODUCT}|{SIDE}|{_WORD}"
    rf"|{_INDEXED}|{_LETTER_SIDE}"
)
_POWER_END = re.compile(r"(?:\^\d{1,3}|[⁰¹²³⁴⁵⁶⁷⁸⁹]|\^[-−]?[a-z]{1,2})$")  # said 제곱: a closed syllable
_FRACTION = re.compile(r"(\d{1,3})/([a-zα-ω]\d?)")  # "1/n" said n분의 1, as "1/2" is 2분의 1
# A count's capital as the last side, "1 ≤ i ≤ N", "0 ≤ k < K", "0 ≤ i ≤ N - 1" (it was 1 이상 i ≤ N: the second sign
# unsaid; 0 이상 i N 빼기 1 이하), of a variable after a number: "a < b < C" is left, as names ranked are.
# ... its minus unspaced too, "0 ≤ i ≤ N-1" (a code slide's; it was 0 이상 i ≤ N-1, the second sign unsaid): i는 0 이상 N
# 빼기 1 이하, the minus spaced out to be read as one.
_COUNT = r"[A-Z](?: ?[-−] ?\d{1,3}| ?\+ ?\d{1,3})?(?![A-Za-z\d_(]|\.\w)"
_COUNT_MINUS = re.compile(r"(?<=^[A-Z]) ?([-−]) ?(?=\d)")
# A number with its counter or unit as the last side, "10 < n < 20명", "0 ≤ t ≤ 10 초", "0 < x < 5 km" (it was 10 초과 n
# 스무 명 미만, t는 0 이상 10 이하 초: a bound's word before the counter, or both on either side of n): n은 10 초과 20명
# 미만, t는 0 이상 10 초 이하; not a copula, "0 < x < 1일 때" (x가 … 1 미만일 때). The first side too, "10명 < n < 20명",
# "0초 ≤ t ≤ 10초" (it was 열 명 초과 n 스무 명 미만): n은 열 명 초과 스무 명 미만.
# ... but a fraction said in Korean, "0 < x < 3분의 1" (k8: x가 0 초과 3분 미만의 1), whole: x는 0 초과 3분의 1 미만.
_COUNTED = (
    r"\d+ ?분의 \d+(?:\.\d+)?(?![\d.])|"
    rf"[-−]?\d+(?:\.\d+)?(?! ?일 ?(?:때|경우|수록)| ?일 (?:확률|가능성|조건|것|수 )| ?인(?![가-힣]))"
    rf"(?:{COUNTERS}| (?:{SPACED_COUNTERS})| ?(?:{alternatives(UNITS)})(?![A-Za-z0-9²³]))"
)
# A place or a range the chain names, "1 ≤ i ≤ n에 대해", "0 ≤ x ≤ 1의 범위", as "에서" (it was 1 이상 i n 이하에 대해, each
# bound where it stood): i가 1 이상 n 이하에 대해.
_PLACE = r"에(?:서)?(?![가-힣])|의(?![가-힣])"
# What may follow the last side: a particle (said in the form the bound's word takes), a copula's ending ("이면", "일
# 때", "인"; "일 확률", "-1.96 < Z < 1.96일 확률" was 1 점 구육일 미만 확률, the copula read into the number), or no word at
# all; a lecture's copula, "0 ≤ P(A|B) ≤ 1입니다" (it was 0 이상 P(A|B) 1 이하입니다, as before k8: the chain left to
# the single bounds), P(A|B)는 0 이상 1 이하입니다; "에서", "-π/2 < θ < π/2에서" (it was -2분의 파이 < 세타 < 2분의 파이에서, the signs unsaid): 세타가 … 미만에서.
# Not a unit or a counter, "3개", nor a longer chain, "a < b < c < d", nor a function, "f(x)", nor a fraction but
# π's, "x/2" (left to the single bounds).
_AFTER = rf"(?:{PARTICLE}|(?=이(?:[면다고며]|라면|므로)|입니[다까]|일 ?(?:때|경우|수록)|일 (?=확률|가능성|조건|것|수 )|인(?![가-힣])|{_PLACE}|[^\w.,/^(<>≤≥℃°%‰Ω]|[.,](?!\d)|$))"
# A function as the first term too, "f(a) < k < f(b)", "g(x) ≤ f(x) ≤ h(x)" (the intermediate value and the squeeze
# theorems' statements; left with both signs unsaid): k는 f(a) 초과 f(b) 미만, f(x)는 g(x) 이상 h(x) 이하.
CHAIN = re.compile(
    rf"(?={_EDGE_AHEAD}|(?:{_FUNCTION}) ?[<>≤≥])(?<![\w.)\]<>≤≥=+\-−*/^])(?<![<>≤≥] )(?<!분의 )(?<![-+−*/×÷^] )"
    rf"({_FUNCTION}|{_COUNTED}|{_EDGE}|[-−]?{ABSOLUTE}) ?(?:([<≤]) ?({_MIDDLE}) ?([<≤])"
    rf"|([>≥]) ?({_MIDDLE}) ?([>≥])) ?({_FUNCTION}|{_COUNTED}|{SIDE}|{_COUNT}|∞|{_LAST_NEGATIVE_PI}|{_LETTER_SIDE}|[A-Z]/\d{{1,3}}(?![A-Za-z\d./_])|{ABSOLUTE})(?! ?[<>≤≥])(?! ?[-+−*/] ?[\w(]){_AFTER}"
)
_LETTER = re.compile(r"[A-Za-zα-ωπ]")
# A condition's or a noun's clause after the chain, "1 ≤ x ≤ 3이면", "0 < x < 1일 때", "1 ≤ k ≤ n인 정수": its subject
# takes 이/가 there, x가 1 이상 3 이하이면 (x는 says a statement's topic).
_CLAUSE_AFTER = re.compile(
    rf"이면|이라면|이므로|일 ?(?:때|경우|수록)|일 (?=확률|가능성|조건|것|수 )|인(?![가-힣])|{_PLACE}"
)
# A topic just before the chain, "각도는 0 ≤ θ ≤ 2π", "상관계수는 -1 ≤ r ≤ 1" (it was 각도는 세타는 …, two topics in a
# row): the middle term is its subject, 각도는 세타가 0 이상 2파이 이하, as "코끼리는 코가 길다".
# Not "또는", "혹은" ("or"), "1 < x < 2 또는 3 < x < 4" (walk7 read the second x가, the first x는): x는 … 또는 x는 ….
_TOPIC_BEFORE = re.compile(r"[가-힣](?<![또혹])[은는] $")
# ... and a subject just before it, "가격이 1000원 < p < 5000원" (it was 가격이 p는 …, two subjects): the noun names the
# letter, 가격 p가 1000원 초과 5000원 미만. Its particle only where it is one, 이 after a closed syllable, 가 after an open
# one, and not a noun's own last syllable, "길이 0 ≤ l ≤ 10" (length), "주가 …" (a stock's price).
# Not a pronoun either, "우리가 0 < x < 1" (k9 read 우리 x가: the pronoun cut to a noun naming x), "제가", "여러분이".
_PRONOUNS = "우리|저희|너희|제|내|네|그|그녀|이것|그것|저것|이거|그거|자기|당신|여러분|누"
_SUBJECT_BEFORE = re.compile(
    rf"(?<![가-힣])(?!(?:길|높|넓|깊|주|시|대|{_PRONOUNS})[이가] )([가-힣]{{1,6}})([이가]) $"
)
# ... nor an adverb's 이, "다음과 같이 0 ≤ x ≤ 1로", "제한 없이", "많이" (k9 read 다음과 같 x가: the adverb cut).
_ADVERB_STEMS = "같없많굳끗낱샅겹틈곰"


def subject_before(before: str) -> re.Match[str] | None:
    subject = _SUBJECT_BEFORE.search(before)
    if not subject or particle_after(subject.group(1), "이") != subject.group(2):
        return None
    return None if subject.group(2) == "이" and subject.group(1)[-1] in _ADVERB_STEMS else subject


# A number's peak or trough between two letters, "x<5>y", "a ≤ 3 ≥ b", "x > 0 < y" (read59k: x 5 미만 미만 y, each sign a
# bound of its own): both letters bounded by the number, x와 y는 5 미만, a와 b는 3 이하, x와 y는 0 초과; a letter's, "a<b>c",
# as written as before (a generic type's brackets as often).
# ... and one with a copula glued to its last letter, as Korean is written, "x<5>y이면", "x > 0 < y일 때" (korean60: x 5 미만
# 미만 y이면, the peak's reading only before a space): x와 y는 5 미만이면, x와 y는 0 초과일 때.
PEAK = re.compile(
    r"(?<![\w.])([a-z]) ?([<≤>≥]) ?([-−]?\d+(?:\.\d+)?) ?([<≤>≥]) ?([a-z])"
    r"(?:(?![\w(.]|[<≤>≥=])|(?=이[면다고며므지라]|인|일))"
)
_PEAK_PAIRS = {("<", ">"): "미만", ("≤", "≥"): "이하", (">", "<"): "초과", ("≥", "≤"): "이상"}


def _peak(match: re.Match[str]) -> str:
    first, rising, middle, falling, last = match.groups()
    word = _PEAK_PAIRS.get((rising, falling))
    if word is None or first == last:
        return match.group()
    middle = middle.replace("−", "-").replace("-", "마이너스 ")
    return f"{first}{particle_after(first, '와')} {last}{particle_after(last, '는')} {middle} {word}"


def spoken(text: str) -> str:
    """`text` with its chains said (`chain`); a subject noun just before a chain said without its particle, the
    chain's letter taking it: "가격이 1000원 < p < 5000원" as 가격 p가 1000원 초과 5000원 미만."""
    text = PEAK.sub(_peak, text)
    pieces, end = [], 0
    for match in CHAIN.finditer(text):
        before, said = text[end : match.start()], chain(match)
        subject = subject_before(before) if said != match.group(0) else None
        if subject and said.startswith(match.group(3) or match.group(6)):
            before = before[: subject.start(2)] + " "
        pieces += [before, said]
        end = match.end()
    return "".join(pieces) + text[end:] if pieces else text


_ABSOLUTE_SIDE = re.compile(r"^([-−]?)\|(.+)\|")


def _absolute_side(side: re.Match[str], chain: re.Match[str]) -> str:
    return ("마이너스 " if side.group(1) else "") + said_at(
        side.group(2), chain.string, chain.start(), chain.end()
    )


def chain(match: re.Match[str]) -> str:
    """ "a ≤ b ≤ c" as b는 a 이상 c 이하, "a > b > c" as b는 c 초과 a 미만 (the lower bound first); a chain of numbers
    alone, "1 < 2 < 3", or of capitals, "A > B > C" (a ranking of names), left."""
    first, rising, middle_up, rising_2, falling, middle_down, falling_2, last, particle = match.groups()
    middle = middle_up or middle_down
    absolute = middle.startswith("|")
    worded = re.fullmatch(_WORD, middle)
    if worded and not (first.lstrip("-−")[:1].isdigit() and last[:1].isdigit()):
        return match.group(0)  # a word between numbers only
    if not (worded or _LETTER.search(first + middle + last)):
        return match.group(0)
    counted = re.fullmatch(_COUNT, last)
    if counted and not (first.lstrip("-−")[:1].isdigit() and (middle[:1].islower() or absolute)):
        return match.group(0)  # "a < b < C", "1 < 2 < N": a count bounds a variable from a number
    if counted:
        last = _COUNT_MINUS.sub(lambda m: f" {m.group(1)} ", last)  # "N-1": N - 1
    if middle[0].isupper() and not (first.lstrip("-−")[:1].isdigit() or last[:1].isdigit()):
        return match.group(0)  # "A > B > C", "X < Y < Z": names ranked; "0 ≤ N ≤ 100" a variable's
    if rising:
        lower = f"{first} {LOWER_BOUND_WORDS[rising]}"
        upper, word = last, BOUND_WORDS[rising_2]
    else:
        lower = f"{last} {BOUND_WORDS[falling_2]}"
        upper, word = first, LOWER_BOUND_WORDS[falling]
    lower, upper = (
        _CAPITAL_OVER.sub(_over, _NEGATIVE_TERM.sub("마이너스 ", term)) for term in (lower, upper)
    )
    # "0 < |x| ≤ |y|" (k8 left it to the single bounds: 0 초과 x의 절댓값이 y의 절댓값 이하); "-|x| ≤ x ≤ |x|" (it was
    # left whole, both signs unsaid): x는 마이너스 x의 절댓값 이상 x의 절댓값 이하.
    lower, upper = (
        _ABSOLUTE_SIDE.sub(lambda side: _absolute_side(side, match), term) for term in (lower, upper)
    )
    ending = particle_after(word, particle) if particle else ""
    before = match.string[max(0, match.start() - 24) : match.start()]
    if re.search(rf"(?<![\w.]){re.escape(middle)}[은는이가] $", before):
        return f"{lower} {upper} {word}{ending}"  # "속도 v는 0 ≤ v ≤ c": v는 said once (it was v는 v는)
    return f"{_middle_said(middle, match, before, particle)} {lower} {upper} {word}{ending}"


def _over(match: re.Match[str]) -> str:
    return f"{match.group(2)}분의 {match.group(1)}"


def _middle_said(middle: str, match: re.Match[str], before: str, particle: str | None) -> str:
    """A chain's middle term as its subject or topic, "|x|" as its absolute value and "1/n" as n분의 1, with the
    particle its last sound takes."""
    if middle.startswith("|"):
        middle = said_at(middle[1:-1], match.string, match.start(), match.end())
    fraction = _FRACTION.fullmatch(middle)
    if fraction:
        middle = f"{fraction.group(2)}분의 {fraction.group(1)}"
    middle = _NEGATIVE_TERM.sub("마이너스 ", middle)  # "x ≤ -y ≤ z": 마이너스 y는
    sound = middle.rstrip(")")  # "f(n)": n's sound
    said_middle = sound[:-1] + MATH_NAMES.get(sound[-1], sound[-1])
    closed = bool(_POWER_END.search(middle) or final_sound(said_middle))
    # ... and a topic's particle after the chain, "-1 < |x| < 1은 …", "0 ≤ x ≤ 1은 닫힌 구간이다" (it was x의 절댓값은 … 1 미만은,
    # the topic twice): the middle term is the clause's subject, x가 0 이상 1 이하는.
    if (
        _CLAUSE_AFTER.match(match.string, match.end())
        or _TOPIC_BEFORE.search(before)
        or particle in ("은", "는")
        or subject_before(before)
    ):
        return middle + ("이" if closed else "가")
    return middle + ("은" if closed else "는")


# A noun and its subject particle, a word on its own, "값이 ": the group `subject_before` then weighs (here and
# `korean_arrows.SUBJECT_NOT_EQUAL`).
SUBJECT_NOUN = r"(?<![가-힣])([가-힣]{1,6}[이가] )"

# A subject noun before a single bound's statement, "값이 x ≤ 1입니다", "함수가 f(x) > 0입니다" (k10: 값이 x는 1 이하입니다, a
# subject and a topic in a row): the noun names the letter, as before a chain, 값 x가 1 이하입니다. Run once the bounds
# are said: the letter's topic particle (은 or 는, by its sound) becomes the subject's (이 or 가).
_SUBJECT_THEN_TOPIC = re.compile(
    SUBJECT_NOUN + r"([A-Za-zα-ω][₀-₉]{0,2}|[A-Za-z]{1,4}\([^()\n]{0,11}\))([은는]) "
    r"(?=[^\n]{1,40}?(?:미만|이하|초과|이상) ?(?:입니[다까]|이다)(?![가-힣]))"
)
# ... only where the writer put a sign after the letter (the topic the bound's reading gave): "성적이 A는 90점
# 이상입니다", the writer's own words, is kept (k11 read 성적 A가, another sentence). Keyed by the noun and the
# letter's first character, as the rest of the letter may be read by then, "f(x+1)" as f(x 플러스 1).
_SUBJECT_BEFORE_SIGN = re.compile(SUBJECT_NOUN + r"([A-Za-zα-ω])[^\n<>≤≥]{0,14}?[<>≤≥]")


def subject_of_statement(text: str, written: str) -> str:
    """`text` with a subject noun before a bounded letter's topic said as the chain's is: 값 x가 1 이하입니다;
    `written` is the text before its bounds were said."""
    if not any(word in text for word in BOUND_WORDS.values()):
        return text
    signed = {(match.group(1), match.group(2)) for match in _SUBJECT_BEFORE_SIGN.finditer(written)}
    if not signed:
        return text
    return _SUBJECT_THEN_TOPIC.sub(lambda match: _subject_named(match, signed), text)


def _subject_named(match: re.Match[str], signed: set[tuple[str, str]]) -> str:
    noun, letter, topic = match.groups()
    if (noun, letter[0]) not in signed:  # the writer's own topic, "성적이 A는 90점 이상입니다"
        return match.group()
    subject = subject_before(noun)
    if not subject:  # a pronoun's, "그것이 x는 …": kept, as before a chain
        return match.group()
    return f"{noun[: subject.start(2)]} {letter}{'이' if topic == '은' else '가'} "
