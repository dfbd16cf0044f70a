"""A formula's functions as a Korean lecturer says them: "sin²x" 사인 제곱 x, "sin⁻¹x" 아크사인 x,
"∂f/∂x" x에 대한 f의 편미분, a power whose exponent is a sum, "x^{n+1}" x의 n 플러스 1제곱, and an integral's
limits, "∫_0^1" 적분 0부터 1까지.

espeak-ng 1.52's Korean voice said "sin" before Hangul as the English word and "sin²x" as sin의 2제곱x (the square
read on the name, as on a number), "∂f/∂x" as 편미분 f "slash" 편미분 x, and "x^{n+1}" with its braces, the power
unsaid; a part of `korean_reading`, which applies these before its marks and numbers.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, particle_after
from .korean_templates import template

_NAMES = {
    "sinh": "하이퍼볼릭 사인",
    "cosh": "하이퍼볼릭 코사인",
    "tanh": "하이퍼볼릭 탄젠트",
    "sin": "사인",
    "cos": "코사인",
    "tan": "탄젠트",
    "sec": "시컨트",
    "csc": "코시컨트",
    "cot": "코탄젠트",
    "log": "로그",
    "ln": "엘엔",
}
_NAME = "|".join(_NAMES)
FUNCTION_NAMES = _NAMES  # a chain's middle term, "-1 ≤ sin x ≤ 1" (`korean_chains`)
_SHORT_NAMES = ("sin", "cos", "tan", "sec", "csc", "cot", "log", "ln")  # "sinh" holds "sin"
_INVERTIBLE = ("sin", "cos", "tan")
_POWERS = {"2": "제곱", "3": "세제곱"}
_SUPERSCRIPT = str.maketrans("¹²³⁴⁵⁶⁷⁸⁹⁻ⁿ", "123456789-n")
# A function's power, "sin²x", "cos^2 θ", "log²n", "sin^{2}x" (its braces gone by then), and its inverse, "sin⁻¹x",
# "tan^-1 x" (아크탄젠트). Not a word's letters, "basin²", "Lincoln".
FUNCTION_POWER = re.compile(
    rf"(?<![A-Za-z])({_NAME})(?:\^ ?([-−]?[1-9]|[a-z](?![A-Za-z]))|(⁻?[¹²³⁴⁵⁶⁷⁸⁹]|ⁿ))(?![\d⁰¹²³⁴⁵⁶⁷⁸⁹])"
)
# ... and the function before a Greek letter, a number or a subscript, "sinθ", "sin 30°", "cos60°", "sin(π/6)",
# "log₁₀100" (espeak: the English words "sin", "cos", "tan", "log" there): 사인 세타, 사인 30 도. Before a Latin letter,
# "sin x", "sin(x)", "log n", espeak says it well.
FUNCTION = re.compile(
    rf"(?<![A-Za-z])({_NAME})(?= ?(?:\d|\(?[α-ωΑ-Ω])|[₀-₉])(?!\d*\.[A-Za-z])"
)  # not "log5.txt"
# A partial derivative, "∂f/∂x", "∂²f/∂x²", "∂/∂t" (espeak: 편미분 f "slash" 편미분 x): x에 대한 f의 편미분, with a
# particle after it in the form 편미분 takes ("∂f/∂x는": 편미분은); a mixed one, "∂²f/∂x∂y", x, y에 대한 f의 이계 편미분.
PARTIAL = re.compile(
    rf"∂(²?) ?([A-Za-z])?/∂([A-Za-z])(?:(²?)|(?<=[A-Za-z]) ?∂([A-Za-z]))(?![A-Za-z\d∂²])(?:{PARTICLE})?"
)
# A power whose exponent is a sum or a product, "x^{n+1}", "2^{n-1}", "e^{2x}", "x^(n+1)" (espeak: 엑스 엔 플러스 일, the
# power unsaid): x의 n 플러스 1제곱. A bracket's single term, "f^(n)", is a derivative's order: left.
# ... and a fraction or a Greek letter in the braces, "x^{1/2}", "e^{iπ}": x의 2분의 1제곱, e의 i파이제곱.
# ... and a letter's fraction, "x^{n/2}", "e^{x/2}" (it was left, braces and all): x의 2분의 n제곱.
_TERM = r"(?:\d{1,3}/\d{1,3}|[a-z]/\d{1,3}|[A-Za-z\dα-ω]{1,3})"
_LETTER_FRACTION = re.compile(r"([a-z])/(\d{1,3})")
COMPOUND_EXPONENT = re.compile(
    rf"\^ ?(?:\{{ ?([-−]?{_TERM}(?: ?[-+−] ?{_TERM}){{0,2}}) ?\}}"
    rf"|\( ?((?:[-−] ?)?{_TERM}(?: ?[-+−] ?{_TERM}){{1,2}}|[-−] ?{_TERM}) ?\))"
    rf"(?:{PARTICLE})?"
)
_SIGN = re.compile(r" ?([-+−]) ?")
# A second derivative, "d²y/dx²", "d^2y/dx^2" (espeak: d의 2제곱y "slash" dx의 2제곱): d 제곱 y d-x 제곱, as a lecturer
# says it (the first derivative "dy/dx" is `korean_marks`').
SECOND_DERIVATIVE = re.compile(r"(?<![A-Za-z\d])d(?:²|\^2) ?([A-Za-z])/d([A-Za-z])(?:²|\^2)(?![A-Za-z\d])")


# A logarithm's base, "log₂8", "log_2 8", "log_{10} x" (espeak: log 이 팔, the English "log"): 로그 2의 8, as a Korean
# lecturer says it.
LOG_BASE = re.compile(
    r"(?<![A-Za-z])log(?:([₀-₉]{1,3})|_ ?\{?(\d{1,3}|[a-z])\}?) ?(\d{1,6}|[A-Za-zα-ω](?![A-Za-z])|(?=\())?"
)  # ... before a capital or a bracket too, "log₂N", "log₂(n)" (it was 로그₂N, the base unsaid)
_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
# A natural logarithm's argument written as a subscript, "ln₂" (it was 엘엔₂, the digit left to espeak): 엘엔 2.
LN_SUBSCRIPT = re.compile(r"(?<![A-Za-z])ln([₀-₉]{1,3})(?![₀-₉A-Za-z\d])")
# An inverse written out, "arcsin x", "arctan(1)" (espeak: the English "arcsine"): 아크사인 x.
ARC = re.compile(r"(?<![A-Za-z])arc(sin|cos|tan)(?![A-Za-z])")
# The Laplacian and the gradient, "∇²u", "∇f" (espeak said nothing for "∇"): 라플라시안 u, 델 f.
# ... and the divergence and the curl, "∇·E", "∇×B" (it was 델 ·E, 델 ×B: the dot unsaid, the cross a product's
# 곱하기): 델 닷 E, 델 크로스 B, as Korean physics lectures say them.
NABLA = re.compile("∇(²)? ?(?:([·⋅∙×]) ?)?")
# An integral's or a sum's limits, "∫_0^1 x dx", "Σ_{i=1}^{n} i" (it was 적분 _0의 1제곱: the upper limit read as a power
# of the lower): 적분 0부터 1까지 x dx, 시그마 i=1부터 n까지 i (its "=" 는 later).
LIMITS = re.compile(
    r"([∫∑Σ]) ?_ ?(?:\{([^{}\s^]{1,8})\}|(\d{1,3}|[^{}\s^_\d]))\^ ?(?:\{([^{}\s]{1,8})\}|(\d{1,3}|[^{}\s^_\d])) ?"
)  # a limit without braces one number or one sign: "∫_0^1x dx" is 1까지 x
_OPERATOR_NAMES = {"∫": "적분", "∑": "시그마", "Σ": "시그마"}


# What the rules of a compound exponent, a second and a partial derivative need: a caret, "²" or "∂"; those of a
# function, its name (a search for each name: a pattern of them all scanned the lecture's first 2 000 characters in
# 93 µs, these searches in 19 µs). A text without one skips them.
_ANY = re.compile("[\\^∂²∇]")


def spoken(text: str) -> str:
    """`text` with its compound exponents, functions' powers and partial derivatives in words."""
    if _ANY.search(text):
        text = LIMITS.sub(
            lambda m: (
                f"{_OPERATOR_NAMES[m.group(1)]} {m.group(2) or m.group(3)}부터 {m.group(4) or m.group(5)}까지 "
            ),
            text,
        )
        text = SECOND_DERIVATIVE.sub(template(r"d 제곱 \1 d-\2 제곱"), text)
        text = COMPOUND_EXPONENT.sub(compound_exponent, text)  # "x^{n+1}"
        text = PARTIAL.sub(partial, text)  # "∂f/∂x" before "/" and "∂" are read
        text = NABLA.sub(nabla, text)
    if any(name in text for name in _SHORT_NAMES):
        text = LOG_BASE.sub(log_base, text)
        text = LN_SUBSCRIPT.sub(lambda m: "엘엔 " + m.group(1).translate(_SUBSCRIPT), text)
        text = ARC.sub(lambda m: "아크" + _NAMES[m.group(1)], text)
        text = FUNCTION_POWER.sub(function_power, text)  # "sin²x" before "²" is a power
        text = FUNCTION.sub(function, text)
    return text


def log_base(match: re.Match[str]) -> str:
    """ "log₂8" as 로그 2의 8, "log₂" alone as 로그 2; "log_file" (no argument after "log_f") left."""
    subscript, base, argument = match.groups()
    if argument is None:
        return f"로그 {subscript.translate(_SUBSCRIPT)}" if subscript else match.group(0)
    return f"로그 {(subscript or '').translate(_SUBSCRIPT) or base}의 {argument}"


def nabla(match: re.Match[str]) -> str:
    start = match.start()
    before = " " if start and not match.string[start - 1].isspace() else ""  # "c²∇²u": c의 2제곱 라플라시안 u
    product = match.group(2)
    said = "라플라시안 " if match.group(1) else "델 "
    return before + said + ("" if not product else "크로스 " if product == "×" else "닷 ")


def function_power(match: re.Match[str]) -> str:
    """ "sin²x" as 사인 제곱 x, "sin⁻¹x" as 아크사인 x; a logarithm's inverse, "log⁻¹", is left to the powers."""
    name, caret, superscript = match.groups()
    exponent = (caret or superscript.translate(_SUPERSCRIPT)).replace("−", "-")
    if exponent == "-1":
        if name not in _INVERTIBLE:
            return match.group(0)
        said = "아크" + _NAMES[name]
    else:
        said = f"{_NAMES[name]} {_POWERS.get(exponent, exponent + '제곱')}"
    return said + _apart(match)


def function(match: re.Match[str]) -> str:
    """The function's Korean name, apart from a coefficient or a term before it ("2sinθcosθ": 2 사인 세타 코사인 세타)."""
    start = match.start()
    before = (
        " "
        if start and (match.string[start - 1].isalnum() or match.string[start - 1] in "αβγδεθλμπσφω")
        else ""
    )
    return before + _NAMES[match.group(1)] + _apart(match)


def _apart(match: re.Match[str]) -> str:
    """A space after the function's words where its argument is written on: "sinθ" 사인 θ."""
    after = match.string[match.end() : match.end() + 1]
    return " " if after and not after.isspace() and after not in "(₀₁₂₃₄₅₆₇₈₉" else ""


def partial(match: re.Match[str]) -> str:
    second, function_name, variable, second_again, other, particle = match.groups()
    if other:
        if not second:
            return match.group(0)
        variable, second_again = f"{variable}, {other}", second
    if second != second_again:
        return match.group(0)
    of = f"{function_name}의 " if function_name else ""
    start = match.start()
    apart = " " if start and match.string[start - 1].isalnum() else ""  # "α∂²u/∂x²": 알파 x에 대한
    said = f"{variable}에 대한 {of}{'이계 ' if second else ''}편미분"
    return apart + (said + particle_after(said, particle) if particle else said)


def compound_exponent(match: re.Match[str]) -> str:
    exponent = _SIGN.sub(
        lambda m: " 플러스 " if m.group(1) == "+" else " 마이너스 ", match.group(1) or match.group(2)
    )
    exponent = _LETTER_FRACTION.sub(template(r"\2분의 \1"), exponent)
    said = f"의 {exponent.strip()}제곱"
    return said + particle_after(said, match.group(3)) if match.group(3) else said
