"""Formulas written out as a Korean reader says them: signs, arithmetic ("2 + 3 = 5": 이 더하기 삼은 오),
powers ("10^3", "x²": 십의 삼제곱), scientific notation, times ("3x3", "1.5×"), fractions ("3/4": 4분의 3,
"½"), ratios ("16:9": 십육 대 구) and the names of formula signs and Greek letters (루트, 세타).

espeak-ng 1.52's Korean voice dropped a minus ("-5.5도" was "오 오 도"), said "+", "=", "/" and "½" as English
words, "10^3" as "십 삼" (ten three) and "16:9" as "십육 구"; a part of `korean_reading`, which applies these
in its order.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, final_sound, particle_after
from .korean_words import ENGLISH_DIGITS as _ENGLISH_DIGITS
from .korean_words import MATH_NAMES as _MATH_NAMES

# ... and the signs of Korean reports before a number, "▲3.5%", "▼2%" (증가, 감소) and an account's "△5억"
# (마이너스), which espeak said nothing for; a tolerance's "±", "3.7±0.1V", "x±1", "± 5%" after a term or spaced
# too (espeak: English "plus or minus").
# ... and glued to the word it changes, "매출▲3%", "영업이익▼2억" (espeak: 매출 and nothing for the sign): apart, 매출 증가.
SIGN = re.compile(
    r"(?=[ \-−+±△▲▼])(?:(?<![\w)\]%.])([-−+±△▲▼])(?=\d)|(?<=[\dA-Za-z)])(±)(?=\d)| ?(±) (?=\d)|(?<=[가-힣])([△▲▼])(?=\d))"
)  # (the look-ahead first: the look-behinds are tried only before a sign or a space)
# ... but a report's sign changes an amount: a percentage or points, money, a scale, or a bare number
# ("(▲30)"). Before a number joined to another word, "▲3대 전략 ▲5개 과제", "▲1위 삼성전자", "△1단계", it is a
# Korean news list's bullet (it was 증가 3대 전략): left unsaid, as espeak leaves it.
_CHANGED_AMOUNT = re.compile(
    r"[\d.,]*\d(?!\d)(?: ?(?:퍼센트|포인트|bp|pt?(?![A-Za-z])|원|억|만|조|천|백|달러|엔|위안|유로)|(?![^\W\d_]))"
)
# A number in scientific notation, "1e-3", "3.0E+8" (espeak: 일 이 삼, 삼 점 영 이 "plus" 팔): 곱하기 10의 제곱;
# not inside a hexadecimal, a hash or a colour ("0x1e3", "5e3f", "#1e3").
# A particle after it as 제곱 takes it, "1e-4로" (korean61: 4제곱로): 제곱으로.
SCIENTIFIC = re.compile(
    rf"(?<![\w.#])(\d+(?:\.\d+)?)[eE]([-−+]?)(\d{{1,3}})(?![A-Za-z\d_]|\.\d)(?:{PARTICLE})?"
)
# ... and a Greek letter's, "σ²", "λ^2" (it was 시그마², the square unsaid): σ의 2제곱, 시그마의 2제곱 once named.
# A power, "10^3" or "10³" (십의 삼제곱; espeak said "십 삼", ten three), "10^-3" or "10⁻³" with 마이너스.
# ... and a letter's power, "2^n", "2ⁿ", "e^x" (espeak: "이 엔", and nothing at all for "ⁿ": "2ⁿ개" was 이 개).
# ... and a bracket's, "(AB)^T", "f(x)^2" (espeak: 에이 비 티, the caret unsaid), with a caret only: a superscript
# after a bracket is a footnote's ("(2020)¹"); a superscript transpose "Aᵀ" (espeak spelled its code point).
# ... with the particle after it in the form 제곱 takes, "x^2를" x의 2제곱을.
# An exponent in LaTeX's braces, "x^{2}", "10^{-3}", "f^{-1}", "a^{T}" (espeak: 엑스 이, 십 마이너스 삼, the power
# lost): unwrapped first, read as "x^2", "10^-3" are. A longer one, "x^{n+1}", is left.
# A power in Python's "**", "y = x**2", "2**10" (k10: y는 x 2, 2 10: the stars a space, the power unsaid): as "^", x의 2제곱,
# 2의 10제곱. Only glued to a term and before a number or one letter: Markdown's "**전압**", "a **b**" are emphasis.
PYTHON_POWER = re.compile(r"(?<=[A-Za-z\d)])\*\*(?=[-−]?\d{1,3}(?![\d.*])|[A-Za-z](?![A-Za-z\d*]))")
# ... nor the "**" that closes an emphasis a "**" opened, "**2**x 빠릅니다", "**F**1 점수" (k11 read 2의 x제곱, F의
# 1제곱: the closing stars a power): the line's pairs are taken in order, a power never opening one.
_STARS_PAIR = re.compile(r"\*\*")


def python_powers(text: str) -> str:
    """`text` with Python's powers as "^": `PYTHON_POWER`'s stars that no emphasis's "**" before them opened."""
    pieces, end, opened = [], 0, False
    for stars in _STARS_PAIR.finditer(text):
        if "\n" in text[end : stars.start()]:
            opened = False  # an emphasis closes on its line
        if opened:
            opened = False
        elif PYTHON_POWER.match(text, stars.start()):
            pieces.append(text[end : stars.start()] + "^")
            end = stars.end()
        else:
            opened = not text[stars.end() : stars.end() + 1].isspace()
    return "".join(pieces) + text[end:] if pieces else text


BRACED_EXPONENT = re.compile(r"\^ ?\{ ?([-−]?\d+|[A-Za-z]) ?\}")
POWER = re.compile(
    r"(?:(?<=[\dA-Za-zα-ω])(?:\^ ?([-−]?\d+|[A-Za-z](?![A-Za-z\d]))|(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|[ⁿⁱᵀ]))"
    rf"|(?<=\))\^ ?([-−]?\d+|[A-Za-z](?![A-Za-z\d])))(?:{PARTICLE})?"
)  # "x²": x의 2제곱 too
# ... and a superscript square or cube after a bracket that holds a formula, "(x+1)²", "(a-b)³" (it was (x 플러스 1)²,
# the power unsaid): (x+1)의 2제곱. A bracket of a year or a name, "(2020)²", "(GPT-4)²", is a footnote's, left.
# ... and any other digit, "(1-a)¹", "(1-a)⁴", "(x+1)¹⁰" (korean16: ²³ only, (1 빼기 a)⁴ went to espeak as written).
BRACKET_POWER = re.compile(rf"(?<=\))([¹²³⁴⁵⁶⁷⁸⁹][⁰¹²³⁴⁵⁶⁷⁸⁹]?)(?![⁰¹²³⁴⁵⁶⁷⁸⁹])(?:{PARTICLE})?")
_FORMULA_IN_BRACKET = re.compile(r"\(([^()]{1,24})\)$")
_FORMULA = re.compile(r"[A-Za-z\dα-ω] ?[-+−*/] ?[A-Za-z\dα-ω]")  # "(x - μ)²" too (korean61: left)
_NAME_IN_BRACKET = re.compile(r"[A-Za-z]{2}")  # "(GPT-4)²", "(Kim, 2020)²": a name's footnote
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿⁱᵀ", "0123456789-niT")
OPERATOR = re.compile(
    r"(?=[ ×✕*÷])(?:(?<=\d) ?([×✕*÷]) ?(?=\d)|(?<=\S) ([×✕÷]) (?=\S)"
    r"|(?:(?<=(?<![A-Za-z])[A-Za-z])|(?<=\d)|(?<=\)))(?<!(?<![\w*])\*[A-Za-z\d]) ?(\*) ?"
    r"(?![A-Za-z\d]\*(?![A-Za-z\d(]))(?=[A-Za-z](?![A-Za-z])|\d|\())"
)  # "V × I" said no sign
# ... and a star between a formula's terms, "a * 2", "x*y", "2 * (a+b)" (it was a 2, x y: the star a space, as
# Markdown's): 곱하기. Not emphasis, "*중요*", nor a word's, "Note * 2" (a letter alone is a term), nor a letter's
# own, "*n* 3개", "3 *x*" (the k6 rule read n 곱하기 세 개, 3 곱하기 x: Markdown's italic variable).
# Arithmetic that espeak said in English or not at all: "2 + 3" ("plus"), "5 - 3" and "5-3=2" (the minus
# dropped), "3x3" and "5 x 3" ("ex"; not a hex "0x1F"), and "=" ("equals"), read 은/는 as a Korean does.
# A term of a formula: a number, a variable (one letter alone: "2x + 3", "a - b"), a power or a bracket.
# ... and a product of letters after its coefficient, "2ab+b^2", "3xy - 1" (it was 2ab+b, the English "plus"): a
# key's "Ctrl+C" has none.
# ... and a Greek letter or a function named by `korean_functions`, "cos²θ - sin²θ" (the minus was dropped).
_TERM_BEFORE = (
    r"(?:(?<=\d)|(?<=(?<![A-Za-z])[A-Za-z])|(?<=(?<![A-Za-z])\d[a-z]{2})|(?<=(?<![A-Za-z])\d[a-z]{3})"
    r"|(?<=제곱)|(?<=\))|(?<=[α-ω])|(?<=절댓값)|(?<=의 길이))"
)  # ... and an absolute value said, "|a| + |b|" (it was a의 절댓값 플러스 b의 절댓값, `korean_absolute`'s): 더하기; a length too
_TERM_AFTER = r"(?=\d|[A-Za-z](?![A-Za-z])|\(|[α-ω]|(?:코|아크)?사인 |(?:코|아크)?탄젠트 |로그 )"
# (Each looks ahead for its sign before it looks behind for a term: the look-behinds are tried only there.)
PLUS_MINUS = re.compile(rf"(?= [+−-] ){_TERM_BEFORE} ([+−-]) {_TERM_AFTER}|(?<=\d)([−-])(?=\d+ ?=)")
# Between words, "A + B 세트": 플러스, not English "plus"; and unspaced between a formula's terms, "a+b", "x+1",
# "N+1", "1+1 행사" (espeak said the English word): 플러스, as a Korean says either. Not a key's "Ctrl+C", "C++",
# an ion's "Li+" (no term after it) nor a code point's "U+223C".
# ... and an unspaced minus after a power, "x^2-1", "x²-y²", "2^n-1" (espeak dropped it: x의 2제곱 일): 마이너스, as the
# unspaced "+" is 플러스. A hyphen elsewhere, "T-1", "D-1", "3-5", is no formula's.
# ... and an unspaced minus between a bracket's two terms, "(n-k)", "(n-1)!", "(2n-1)" (espeak: the hyphen unsaid, n k):
# 빼기, as the spaced "n - k" is. Not a figure's panels, "그림 3(a-c)", "Fig. 2 (a-d)" (two letters after a figure's
# number), nor capitals' "(T-1)"; a coefficient's "2(n-1)" is a formula's.
# ... and a Greek letter's, a deviation's "(x-μ)²", "(1-α)" (korean61: (x-뮤)², the minus and the power unsaid): (x 빼기 뮤).
BRACKET_MINUS = re.compile(
    r"(?<=\()(?=\d{0,3}[a-zα-ω][-−]|\d{1,3}[-−]\d{0,3}[a-zα-ω]\))"
    r"(\d{0,3}[a-zα-ω]|\d{1,3})[-−](\d{0,3}[a-zα-ω]|\d{1,3})(?=\))"
)
_PANELS_BEFORE = re.compile(r"(?:(?:그림|표|[Ff]ig(?:ure)?\.?) ?\d{0,3} ?|\d ?)\($")
# ... nor a sub-question's label, "(2-b) 다음 극한을 구하시오", "(1-a), (1-b)에 답하시오" (korean7 read them 2 빼기 b): a
# number, then a-d, the bracket standing alone; "p(1-p)", "(1-a)^2", "(1-a)(1-b)", "= (2-a)" stay formulas.
_LABEL = re.compile(r"\d{1,2}[a-d]")
_LABEL_BEFORE = re.compile(r"(?:^|[\s,])\($")
_OPERATOR_WORD = "곱하기|더하기|빼기|나누기|플러스|마이너스|팩토리얼"  # the signs read by then
_LABEL_AFTER = re.compile(
    rf"\)(?![A-Za-z\d_(^¹²³⁰-⁹!/]|의 \S*제곱)(?! ?(?:[-+−×*/÷=<>≤≥·]|{_OPERATOR_WORD}))"
)
MINUS_AFTER_POWER = re.compile(r"(?<=제곱)[-−](?=[\dA-Za-z(])")
# The chi-square statistic, "χ² 검정", "χ²(2) = 6.5" (korean61: 카이의 2제곱, a power's words): 카이제곱, as it is named.
CHI_SQUARE = re.compile(r"(?<![\u0370-\u03ff])χ(?:²|\^2)(?![\d⁰¹²³⁴⁵⁶⁷⁸⁹])")
# A decimal without its leading zero after "=", a report's "p = .048", "r = .82" (korean61: p는 .048, which espeak said
# 영사팔, the point lost): its zero, 0 점 영사팔, as a bound's "p < .05" is read.
LEADING_POINT = re.compile(r"(?:(?<==)|(?<== ))(?=\.\d)")
# A minus glued before a term, not a number, "F = -kx", "f(-x)", "x ≥ -y", "-x² + 1 = 0" (korean61: F는 -kx, which espeak
# said F는 kx, the sign lost): 마이너스, after "=" or a relation, an opening bracket before a letter's term, a Greek letter
# or ∞ ("(-∞, 0)"; rvk62: -무한대), or opening a line before one letter and its power or an operator; not an option, "ls -l",
# "-p 8080", nor R's "x<-y". A bracket not a call's nor a sign's, "[-h]", "(-v 옵션)", "옵션(-v)을" (rvk62: korean62's
# 마이너스 h), only before an operator or a comma; a line's only before a power or an operator and a term, not a bullet's
# "-X-ray", "-C++ 언어", "-A+ 학점"; nor a rule's "=-=-=-", nor after a tag, "<br>-둘째" (rvk62: 마이너스 X-ray, 마이너스는).
UNARY_MINUS = re.compile(
    r"(?:(?<=[=≥≤>≠])|(?<=[=≥≤<>≠] ))(?<![A-Za-z<][A-Za-z]>)(?<![A-Za-z<][A-Za-z]> )[-−](?=[^\s\d.,;:)\]}>=-])"
    r"|(?:(?<=[A-Za-z\d)\]=+\-−*/^×÷][(\[])|(?<=[=+*/^×÷≤≥<>] [(\[]))"
    r"[-−](?=(?:[A-Za-z]{1,3}|[∞α-ω])(?![A-Za-zα-ω])|[(√])"
    r"|(?<=[(\[])[-−](?=(?:[A-Za-z]{1,3}|[∞α-ω]) ?(?:[-+−*/^=,²³]|\) ?[-+−*/^=(²³])|[(√])"
    r"|(?m:^)[-−](?=[A-Za-z](?:[²³^]| ?[-+−] ?(?:\d|[A-Za-z](?![A-Za-z]))| ?= ?[-−]?[A-Za-z\d(√]))"
)
PLUS = re.compile(rf"(?<=\S) \+ (?=\S)|(?=\+){_TERM_BEFORE}(?!(?<=U)\+[0-9A-Fa-f]{{4}})\+{_TERM_AFTER}")
# A factorial inside a formula, "3! = 6", "n!/(k!(n-k)!)" (espeak: the sign unsaid, or a sentence's end): 팩토리얼. Not
# an exclamation, "정답은 3!", "Hello!": only after a number, one letter or a bracket, before "=", an operator or a bracket.
FACTORIAL = re.compile(
    r"(?=!)(?:(?:(?<=\d)|(?<=(?<![A-Za-z])[a-z]))!(?= ?[=×*/+\-)(])|(?<=\))!(?= ?[=×*/+\-]))"
)  # a bracket's, "(n-1)! =", only before an operator: "(가)!(" is no formula
# ... and the last of a formula's, "n! / k!", "1 + 3!" (it was n 팩토리얼 / k!: the second unsaid), or one with a
# particle written on, "5!은 120", "3!로 나눕니다" (5 팩토리얼은): an exclamation has no particle after it.
FACTORIAL_AFTER = re.compile(
    r"(?:(?<=[=×*/+(])|(?<=[=×*/+] ))(\d{1,3}|[a-z])!(?:(?![=!\w])|(?=이(?:면|다|고)|일 ?때|인(?![가-힣])))"
)  # ... and before a copula, "n!/k!이면", "n! / k!일 때" (it was k!이면, the sign unsaid)
# ... and a bracket's that holds a formula, "(n-1)!" ending the text or a sentence, "(k!(n-k)!)" closing a bracket (it
# was left: the sign unsaid), with a particle, "(n+1)!은"; "(가)!", "(2020)!" are no formula's.
BRACKET_FACTORIAL = re.compile(
    r"(?<=[A-Za-z\d]\))!(?:(은|는|이|가|을|를|으로|로|의|과|와)(?![가-힣])|(?![=!\w(]))"
)
_FACTORIAL_TERM = re.compile(r"\d{1,3}[a-z]")  # "(2n)!"; "정답은 (a)!" an answer exclaimed
# ... and a division after one, "n!/(k!(n-k)!)" (it was n 팩토리얼/(…), the slash said as espeak's English word):
# 나누기.
DIVIDED_FACTORIAL = re.compile(r"(?<=팩토리얼) ?/ ?(?=[\w(])")
# ... and a product written without a sign, "k!(n-k)!" (it was k 팩토리얼(n-k) 팩토리얼: the brackets are silent, the
# product unsaid): k 팩토리얼 곱하기 (n-k) 팩토리얼, only before a bracket whose own factorial was read.
FACTORIAL_PRODUCT = re.compile(r"(?<=팩토리얼)(?=\((?=[^()]{0,23}[A-Za-z\d])[^()]{1,24}\) 팩토리얼)")
# ... and a letter's, "n!은 n 곱하기 …" (it was left): n 팩토리얼은.
FACTORIAL_PARTICLE = re.compile(
    r"(?:(?<=\d)|(?<=(?<![A-Za-z])[a-z]))!(?:(은|는|이|가|을|를|으로|로|의|과|와)(?![가-힣])"
    r"|(?=이(?:면|다|고|므로)|일 ?때|인(?![가-힣])))"
)  # ... and before a copula, "n!이다", "3!이면" (it was n!이다: the sign unsaid): n 팩토리얼이다
# "1.5× 빠르다", "속도 ×2": so many times, 배 (espeak said nothing for the sign).
# ... and "2x 빠르다", but not "2x는" nor the terms of "2x 더하기 3"
TIMES_AFTER = re.compile(r"(?<=\d)(?:[×✕](?! ?[\dA-Za-z(])|[xX](?= (?!더하기|빼기|곱하기|나누기)[가-힣]))")
TIMES_BEFORE = re.compile(r"(?<![\w)])[×✕](\d+(?:\.\d+)?)(?![\w.])")
TIMES_X = re.compile(r"(?<=\d)(?<!(?<![\w.])0) ?[xX] ?(?=\d)")
# Not "x += 1", "a |= b", an operator's; but the space after a capital's bars, "|A| = 3" (k13: |A| 는 3, the particle a
# word apart), is taken: the bars of a capital alone are left unsaid (`korean_absolute`), its letter picks the particle;
# and a norm's double bars, "||v|| = 1" (korean14: ||v|| 는 1).
EQUALS = re.compile(r"(?:(?<=[A-Z]\|) |(?<=\w\|\|) |(?<![=!<>+\-*/%&|^]) ?)=(?![=>]) ?")
# "24/7" is around the clock, 이십사 칠 (not 7분의 24).
AROUND_THE_CLOCK = re.compile(r"(?<![\d/.])24/7(?![\d/]|\.\d)")
FRACTION = re.compile(r"(?<![\d/.])(\d{1,4})/(\d{1,4})(?![\d/]|\.\d| ?분기)")  # 3/4분기: 삼사분기
# espeak's Korean voice says the English word "slash" for "/": "3/4분기" is the third quarter, 삼 사분기;
# "입/출력" and "A/S" are `korean_marks`'.
# π's fraction, "π/2", "2π/3", "sin(π/2)" (espeak: 파이 "slash" 이): 2분의 파이, 3분의 2파이, as a lecturer says it.
PI_FRACTION = re.compile(r"(?=\d{0,2}π/)(?<![\w.)/^])(\d{0,2}π)/(\d{1,2})(?![\d./^A-Za-z(_])")
# A Greek letter's quotient, "ρ/ε₀", "q/ε₀", "Δx/Δt" aside (espeak: 로 "slash" 엡실론, the subscript unsaid): as a fraction,
# 엡실론 제로분의 로, its subscript's digit said in English as "V₀" is (V제로).
# Not over "Ω", the ohm's sign: "V/Ω" is a unit, volt per ohm (k7 read it 오메가분의 V).
# A letter over a number, "n/2", "x/2 ≤ y" (espeak: 엔 "slash" 이): 2분의 n, as "1/2" is 2분의 1; a particle after it takes the
# letter's form, "x/3이" 3분의 x가. Not a word's or a unit's, "km/2", "w/2x", "a/2/3".
LETTER_FRACTION = re.compile(
    rf"(?<![\w\u0370-\u03ff/.])([a-z])/(\d{{1,3}})(?![\d./^A-Za-z(_²³])(?:{PARTICLE})?"
)


# ... and its denominator's power, "x/2²", "1/2²", "a/n²" (k9: 2분의 x의 2제곱, 2분의 1의 2제곱, which say (x/2)²; a/n의
# 2제곱, the slash unsaid): the power is the denominator's, as it binds first, 2의 2제곱분의 x. POWER has said it by now.
POWER_DENOMINATOR = re.compile(
    r"(?<![\w\u0370-\u03ff/.])([a-z]|\d{1,4})/(\d{1,3}|[a-z])의 ((?:마이너스 )?[A-Za-z\d]{1,3}제곱)"
    rf"(?:{PARTICLE}(?![가-힣])|(?=입니|이[다면고며]|일 |인 |의(?![가-힣])|[^가-힣]|$))"
)


def power_denominator(match: re.Match[str]) -> str:
    """ "x/2의 2제곱이" as 2의 2제곱분의 x가."""
    numerator, denominator, power, particle = match.groups()
    ending = particle_after(numerator, particle) if particle else ""
    return f"{denominator}의 {power}분의 {numerator}{ending}"


def letter_fraction(match: re.Match[str]) -> str:
    """ "x/3이" as 3분의 x가."""
    letter, denominator, particle = match.groups()
    return f"{denominator}분의 {letter}{particle_after(letter, particle) if particle else ''}"


GREEK_FRACTION = re.compile(
    r"(?=[^\s/]{1,2}/[α-ωΔΣΦ])(?<![\w\u0370-\u03ff/.])([α-ωΔΣΦΩ]|[A-Za-z])([₀-₉])?/([α-ωΔΣΦ])([₀-₉])?"
    r"(?![A-Za-z\d_₀-₉\u0370-\u03ff/^(])"  # a particle or a copula after it, "ρ/ε₀이다", is said after it
)
QUARTER = re.compile(r"(?<![\d/.])([1-4])/4(?= ?분기)")
# A colon between numbers that is no time of day (`korean_dates.CLOCK`, read before) is a ratio or a score,
# read 대 ("16:9": 십육 대 구; espeak said 십육 구).
# Not after a dotted number, an address's port ("192.168.0.1:8080": 1 대 8080).
RATIO = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?: ?(?=\d)")
# ... nor a container's port mapping, "docker run -p 8080:80", "--publish 127.0.0.1:8080:80" (read59k: 8080 대 80, a score's
# word; "-p 22:22" a clock's 스물두 시): the colon said, 8080 콜론 80, before a clock or a ratio reads it.
PORT_MAPPING = re.compile(
    r"(?<![\w-])(-p|--publish)([ =])((?:\d{1,3}(?:\.\d{1,3}){3}:)?)(\d{1,5}):(\d{1,5})(?![\d:])"
)
# A letter of a Greek word ("λόγος") is left.
# ... but a sign after a Greek letter is no letter of a Greek word, "2π√(L/g)" (korean61: 2파이√, which espeak said nothing for).
_GREEK_NAMES = "".join(name for name in _MATH_NAMES if "\u0370" <= name <= "\u03ff")
_SIGN_NAMES = "".join(name for name in _MATH_NAMES if not "\u0370" <= name <= "\u03ff")
MATH_NAME = re.compile(f"(?<![\u0370-\u03ff])[{_GREEK_NAMES}](?![\u0370-\u03ff])|[{_SIGN_NAMES}]")
_VULGAR = {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅛": (1, 8)}
VULGAR_FRACTION = re.compile(rf"(?<!\d)(\d*)([{''.join(_VULGAR)}])")  # espeak: English "a half"


# A letter whose "^T" is its transpose: not Euler's number, a lone "e" ("e^T", e의 T제곱, was e의 전치).
_TRANSPOSED = re.compile(r"(?!(?<![A-Za-z\d])e(?![A-Za-z\d]))[A-Za-z]")
# ... nor a number's in brackets, "(1)^T", "(1.05)^T", "(1+r)^T" (a growth over T periods; it was (1+r)의 전치), which
# is a power as "2^T" is; "(AB)^T", "(2A)^T" and a function's "f(1)^T" stay transposes.
_NUMBER_BRACKET = re.compile(
    r"(?<![\w)\]])\((?:[-−] ?)?\d+(?:\.\d+)?(?: ?[-+−] ?(?:\d+(?:\.\d+)?|[a-z]))?\)$"
)
# ... nor a T the text says is a quantity right after it, "x^T 에서 T는 온도", "a^T (T: 시간)": x의 T제곱; a T said
# to be one further on, "W^T x에서 … T는 시간", is not looked for (a transpose and a time T on one slide).
_T_DEFINED = re.compile(
    r" ?(?:에서|이고|이며)?,? ?(?:여기서 |단 ?)?\(?T ?(?:는|은|:|=|가) ?(?:절대 ?)?(?:온도|시간|기간|주기|횟수|연수|년수|일수)"
)


def power(match: re.Match[str]) -> str:
    exponent = match.group(1) or match.group(3) or match.group(2).translate(_SUPERSCRIPT)
    text, start = match.string, match.start()
    base_transposed = (
        not _NUMBER_BRACKET.search(text, max(0, start - 24), start)
        if match.group(3)
        else _TRANSPOSED.match(text, start - 1)
    )
    if exponent == "T" and base_transposed and not _T_DEFINED.match(text, match.end()):
        said = "의 전치"  # a matrix's or a vector's "A^T", "x^T", "(AB)^T" (it was A의 T제곱); "2^T" stays a power
    else:
        said = f"의 {exponent}제곱"
    return said + particle_after(said, match.group(4)) if match.group(4) else said


def bracket_power(match: re.Match[str]) -> str:
    start = match.start()
    inside = _FORMULA_IN_BRACKET.search(match.string, max(0, start - 26), start)
    if not inside or not _FORMULA.search(inside.group(1)) or _NAME_IN_BRACKET.search(inside.group(1)):
        return match.group(0)
    said = f"의 {match.group(1).translate(_SUPERSCRIPT)}제곱"
    return said + particle_after(said, match.group(2)) if match.group(2) else said


def bracket_factorial(match: re.Match[str]) -> str:
    start = match.start()
    inside = _FORMULA_IN_BRACKET.search(match.string, max(0, start - 26), start)
    if not inside or _NAME_IN_BRACKET.search(inside.group(1)):
        return match.group(0)
    formula = inside.group(1)
    if not _FORMULA.search(formula) and not _FACTORIAL_TERM.fullmatch(formula):
        return match.group(0)
    particle = match.group(1)
    return " 팩토리얼" + (particle_after("팩토리얼", particle) if particle else "")


def bracket_minus(match: re.Match[str]) -> str:
    """ "(n-k)" as (n 빼기 k); a figure's panels, "그림 3(a-c)", and a sub-question's label, "(2-b)", left."""
    start = match.start()
    letters = match.group(1).isalpha() and match.group(2).isalpha()
    if letters and _PANELS_BEFORE.search(match.string, max(0, start - 12), start):
        return match.group(0)
    text, end = match.string, match.end()
    label = _LABEL.fullmatch(match.group(1) + match.group(2))
    if label and _LABEL_BEFORE.search(text, max(0, start - 2), start) and _LABEL_AFTER.match(text, end):
        if not re.search(rf"(?:[=+×*/÷<>≤≥·-]|{_OPERATOR_WORD}) ?$", text[max(0, start - 8) : start - 1]):
            return match.group(0)  # "(2-b) 다음 함수의": a sub-question's label
    return f"{match.group(1)} 빼기 {match.group(2)}"


def greek_fraction(match: re.Match[str]) -> str:
    """ "ρ/ε₀" as ε 제로분의 ρ (the letters named later)."""
    numerator, numerator_index, denominator, denominator_index = match.groups()
    return f"{denominator}{_index(denominator_index)}분의 {numerator}{_index(numerator_index)}"


def _index(subscript: str | None) -> str:
    return f" {_ENGLISH_DIGITS[ord(subscript) - ord('₀')]}" if subscript else ""


def equals(match: re.Match[str]) -> str:
    """ "=" as the topic particle after what it follows: 은 after a closed syllable, 는 after an open one; the subject
    particle after a term a topic opens ("전력은 P = VI입니다": 전력은 P가 VI입니다, as "코끼리는 코가 길다")."""
    start = match.start()
    before = match.string[max(0, start - 24) : start]  # a bounded look back
    if _CHAINED_EQUALS.search(before):
        return "이고 "  # "P = VI = I²R": P는 VI이고 I의 2제곱R
    term = before.rstrip(" )]|")  # "|M| = 3": 엠's particle, |M|은
    if _TOPIC_THEN_TERM.search(before) or _TOPIC_THEN_TERMS.search(match.string, max(0, start - 120), start):
        return particle_after(term, "이") + " "
    return _topic(term) + " "


# A term an "=" follows and another "=" opens, "전력은 P = VI = I²R입니다", "a = b = c" (k13: P가 VI는 I의 2제곱R, a는 b는 c:
# the middle term a second topic): the next link is said to be the same, P가 VI이고 I의 2제곱R, a는 b이고 c. Not a
# query's or a tag's pairs, "?async=1&async=0", "title='owned'" (korean14: async이고 0): no term holds "&", "?", a quote.
# A term's power and operators, said by now, are its own, "E = mc² = 9 × 10¹⁶ J", "y = 2x + 1 = 5" (korean14: E는 mc의
# 2제곱은 9 …, y는 2x 더하기 1은 5): E는 mc의 2제곱이고 9 …, y는 2x 더하기 1이고 5.
_LINK = r"[^\s=가-힣,;:&?'\"<>]{1,16}(?:의 (?:마이너스 )?[^\s=가-힣]{1,6}제곱[^\s=가-힣,;:&?'\"<>]{0,8})?"
_CHAINED_EQUALS = re.compile(
    rf"(?<![=!<>+\-*/%&|^])= ?{_LINK}(?: (?:더하기|빼기|곱하기|나누기) {_LINK}){{0,3}} ?$"
)
# A topic just before the left term, "전력은 P = VI입니다" (k11: 전력은 P는 VI입니다, two topics in a row); not "또는",
# "혹은" ("or"), as before a chain (`korean_chains`).
_TOPIC_THEN_TERM = re.compile(r"[가-힣](?<![또혹])[은는] [^\s가-힣=]{1,12} ?$")
# ... and the next terms of its list, "해는 x = 2 또는 x = 3", "값은 x = 3, y = 4" (k12: x가 2 또는 x는 3, the list's
# particles mixed): x가 2 또는 x가 3.
_TOPIC_THEN_TERMS = re.compile(
    r"[가-힣](?<![또혹])[은는](?: [^\s가-힣=]{1,12} ?= ?[^=\n.]{1,16}?(?: 또는| 혹은|,)){1,4} [^\s가-힣=]{1,12} ?$"
)


def _topic(before: str) -> str:
    final = final_sound(before)
    return "" if final is None else "은" if final else "는"  # "= 5" opening the text: no topic


def sign(match: re.Match[str]) -> str:
    glued = match.group(4)
    if glued:  # "매출▲3%": a change of the word's amount; "시즌▲3대" no amount, left as before
        return " " + _SIGN_WORDS[glued] if _CHANGED_AMOUNT.match(match.string, match.end()) else glued
    if match.group(1) in ("▲", "▼", "△") and not _CHANGED_AMOUNT.match(match.string, match.end()):
        return match.group(1)  # a bullet
    if match.group(1) is None:  # "3.7±0.1", "± 5%": apart from what is before it
        return " 플러스마이너스 "
    return _SIGN_WORDS.get(match.group(1), "마이너스 ")


_SIGN_WORDS = {"+": "플러스 ", "±": "플러스마이너스 ", "▲": "증가 ", "▼": "감소 ", "△": "마이너스 "}


def vulgar(match: re.Match[str]) -> str:
    numerator, denominator = _VULGAR[match.group(2)]
    whole = match.group(1)
    joined = f"{whole}{'와' if whole[-1:] in '2459' else '과'} " if whole else ""  # 이와, 삼과
    return f"{joined}{denominator}분의 {numerator}"
