"""A subscript's count or index as a Korean lecturer says it, for `korean_marks` and `korean_reading`: a
chemical formula's counts in English words, "H₂SO₄" H투S-O포, "Fe₂O₃" F-E투O쓰리, a decimal count "CO₀.₅" C-O 제로
포인트 파이브 (`formulas_spoken`), and a letter's index, "xₙ" x n (`subscript_index_said`, read last).

espeak-ng's Korean voice named a subscript digit by its code point or said nothing for it: a formula's counts
and an index were lost. Every pattern is anchored on a capital, a letter or a subscript, with bounded
repeats: linear in the text.
"""

from __future__ import annotations

import unicodedata

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_charges import ELEMENTS
from .korean_particles import PARTICLE, particle_after
from .korean_words import ENGLISH_DIGITS, ENGLISH_TEENS_HANGUL, ENGLISH_TENS_HANGUL

# A formula with a subscript after more than one of its parts, "H₂SO₄", "H₃PO₄", "H₂O₂" (k17: H₂S-O포, its first
# part left to espeak's code-point names, as `korean_marks`' name of capitals took only "SO₄"): each part so, H투S-O포, H쓰리P-O포, H투O투.
_SUBSCRIPTED_FORMULA = re.compile(
    r"(?<![A-Za-z\d.\-₀-₉])(?:[A-Z]{1,4}[₀-₉]){2,4}[A-Z]{0,3}(?![A-Za-z\d₀-₉]|\.\d)"
)
_FORMULA_PART = re.compile(r"([A-Z]{1,4})([₀-₉]?)")
# ... and one with a coefficient, an element of two letters or a count of two digits, "2H₂SO₄", "Fe₂O₃", "CaCO₃", "C₆H₁₂O₆"
# (korean18: 2H₂S-O포, Fe₂O쓰리, CaCO₃, C₆H₁₂O식스: the rules above took its last part or none): each element spelled in
# capitals, its count in English words, the coefficient a number apart: 2 H투S-O포, F-E투O쓰리, C-A-C-O쓰리, C식스H트웰브O식스.
# Only symbols of elements (`korean_charges.ELEMENTS`) with a count after one of them; not one with a decimal count, a
# cathode's "LiNi₀.₈Co₀.₁Mn₀.₁O₂", "Ni₀.₈" (korean19: L-I-N-I제로.₈Co₀.₁…, its first count half read), as written.
_ELEMENT_FORMULA = re.compile(
    r"(?<![A-Za-z\d.\-₀-₉])(\d{1,2}(?=[A-Z]))?((?:[A-Z][a-z]?[₀-₉]{0,2}){1,8})(?![A-Za-z\d₀-₉]|\.[\d₀-₉])"
)
# ... and one with a decimal count, "CO₀.₅", "LiNi₀.₈Co₀.₁Mn₀.₁O₂" (korean20: C-O제로.₅, and espeak said no subscript: the
# counts lost, "Li Ni Co Mn O투"): each element spelled with its count, a decimal's "포인트" between its digits' English words,
# C-O 제로 포인트 파이브, L-I N-I 제로 포인트 에잇 C-O 제로 포인트 원 M-N 제로 포인트 원 O투.
_DECIMAL_COUNT_FORMULA = re.compile(
    r"(?<![A-Za-z\d.\-₀-₉])(?=(?:[A-Z][a-z]?[₀-₉]{0,2}){0,7}[A-Z][a-z]?[₀-₉]{1,2}\.[₀-₉])"
    rf"((?:[A-Z][a-z]?(?:[₀-₉]{{1,2}}(?:\.[₀-₉]{{1,3}})?)?){{1,8}})(?![A-Za-z\d₀-₉]|\.[\d₀-₉])(?:{PARTICLE})?"
)
_DECIMAL_COUNT_PART = re.compile(r"([A-Z][a-z]?)([₀-₉]{0,2}(?:\.[₀-₉]{1,3})?)")
# ... and a small letter's decimal index, "x₀.₅", "α₀.₂₅" (read59k: as written; espeak said x, the index unsaid): x 제로
# 포인트 파이브, as the capital's "T₀.₅" is said.
# A particle the writer chose for the index's Korean sound, "x₀.₃을", "x₀.₉를" (삼: 을, 구: 를), said as the English word
# takes it (rvk60: 쓰리을, 나인를): x 제로 포인트 쓰리를, x 제로 포인트 나인을; "T₀.₃을" and "NCM₀.₉를" too.
_LETTER_DECIMAL_INDEX = re.compile(
    r"(?<![A-Za-z\d_.\-₀-₉\u03b1-\u03c9])([a-z\u03b1-\u03c9])([₀-₉]{1,2}\.[₀-₉]{1,3})(?![A-Za-z\d₀-₉]|\.[\d₀-₉])"
    rf"(?:{PARTICLE})?"
)


def formulas_spoken(text: str) -> str:
    """`text` with its chemical formulas' counts and a letter's decimal index said (`korean_marks.marks_spoken`,
    after a name's range and a quarter, before a letters-and-digit name)."""
    if "." in text:
        text = _DECIMAL_COUNT_FORMULA.sub(_decimal_count_formula, text)
        text = _LETTER_DECIMAL_INDEX.sub(
            lambda m: _with_particle(f"{m.group(1)} {_decimal_count_said(m.group(2))}", m.group(3)), text
        )
    text = _ELEMENT_FORMULA.sub(_element_formula, text)
    return _SUBSCRIPTED_FORMULA.sub(_subscripted_formula, text)


def _subscripted_formula(match: re.Match[str]) -> str:
    """ "H₂SO₄" as H투S-O포: each part as `korean_marks._letters_digit` says one."""
    return "".join(
        "-".join(letters) + (ENGLISH_DIGITS[unicodedata.digit(digit)] if digit else "")
        for letters, digit in _FORMULA_PART.findall(match.group())
    )


def _element_formula(match: re.Match[str]) -> str:
    """ "Fe₂O₃" as F-E투O쓰리; one of capitals and single counts alone, "H₂SO₄", as `_subscripted_formula` says it."""
    coefficient, formula = match.groups()
    parts = _element_parts(formula)
    if not any(count for _, count in parts) or not all(symbol in ELEMENTS for symbol, _ in parts):
        return match.group()
    if not (coefficient or any(len(symbol) == 2 or len(count) == 2 for symbol, count in parts)):
        return match.group()
    if not coefficient and len(parts) == 1 and len(parts[0][0]) == 1:
        return match.group()  # a single capital's index, "S₂₁", "V₁₂", "B₁₂": no count (korean19: S트웬티원)
    said, counted = "", True
    for symbol, count in parts:
        said += ("" if counted else "-") + "-".join(symbol.upper()) + _count_said(count)
        counted = bool(count)
    return f"{coefficient} {said}" if coefficient else said


def _decimal_count_formula(match: re.Match[str]) -> str:
    """ "CO₀.₅" as C-O 제로 포인트 파이브: its elements spelled, a decimal count said digit by digit; a symbol of no element
    as written, but a capitals' subscript alone, a half-life's "T₀.₅" (rvk21: T제로.₅, its ".₅" unsaid), T 제로 포인트 파이브,
    as "V₀.₅" is said, and an acronym's, "NCM₀.₈" (read59k: N-C-M제로.₈), N-C-M 제로 포인트 에잇."""
    parts = _DECIMAL_COUNT_PART.findall(match.group(1))
    one_name = all(len(symbol) == 1 for symbol, _ in parts) and not any(count for _, count in parts[:-1])
    if not one_name and not all(symbol in ELEMENTS for symbol, _ in parts):
        return match.group()
    said = []
    for symbol, count in parts:
        whole, point, fraction = count.partition(".")
        spelled = "-".join(symbol.upper())
        if not point:  # "O₂" O투, and a symbol without one joined to the next, "CO₀.₅" C-O
            said.append(spelled + _count_said(whole) + ("" if whole else "-"))
            continue
        said.append(f"{spelled} {_decimal_count_said(count)} ")
    said_whole = "".join(part if part.endswith("-") else part.rstrip() + " " for part in said).rstrip(" -")
    return _with_particle(said_whole, match.group(2))


def _with_particle(said: str, particle: str | None) -> str:
    """`said` with the writer's particle in the form its last word takes (쓰리를, not 쓰리을)."""
    return said + (particle_after(said, particle) if particle else "")


def _decimal_count_said(count: str) -> str:
    """A decimal subscript, "₀.₂₅", in English words with 포인트 between: 제로 포인트 투 파이브."""
    whole, _, fraction = count.partition(".")
    digits = " ".join(ENGLISH_DIGITS[unicodedata.digit(digit)] for digit in fraction)
    return f"{_count_said(whole)} 포인트 {digits}"


def _element_parts(formula: str) -> list[tuple[str, str]]:
    """ "Fe₂O₃" as [("Fe", "₂"), ("O", "₃")] (no pattern of its own: one the engine's warm-up does not compile)."""
    parts: list[list[str]] = []
    for char in formula:
        if char.isupper():
            parts.append([char, ""])
        else:
            parts[-1][0 if char.islower() else 1] += char
    return [(symbol, count) for symbol, count in parts]


def _count_said(count: str) -> str:
    """A formula's subscript count in English words, ₂ 투, ₁₂ 트웰브."""
    if not count:
        return ""
    number = int("".join(str(unicodedata.digit(digit)) for digit in count))
    if number < 10:
        return ENGLISH_DIGITS[number]
    if number < 20:
        return ENGLISH_TEENS_HANGUL[number - 10]
    return ENGLISH_TENS_HANGUL[number // 10] + (ENGLISH_DIGITS[number % 10] if number % 10 else "")


# A letter's index written as a subscript letter, "αₙ", "xₙ을", "aᵢⱼ" (rvk60: 알파ₙ, which espeak garbled, 알피으파 엔, and
# x을, the index unsaid): the index's letters after a space, 알파 n, x n을, a i j, as a lecturer names an index. Read last,
# once the bounds' rules have placed an index by its term ("x ≤ 2σᵢ"); a Greek subscript, "xᵦ", is left. A particle after
# it takes the index's last letter's form, "xₙ를", "aᵢ을" x n을, a i를 (korean61: x n를, a i을, the term's letter's form).
# One more or less, "xₙ₊₁", "aₙ₋₁을" (korean61: x n₊₁, the sign and its digit unsaid): x n 플러스 1, a n 마이너스 1을, as ℝ^{n+1}'s;
# an index and a digit, "xᵢ₁", "aᵢ₂를", x i₁ as before (rvk62: korean62 left xᵢ₁ whole, the index unsaid).
SUBSCRIPT_INDEX = re.compile(
    rf"(?<=[A-Za-z가-힣\u0370-\u03ff)])([ₐₑₒₓₕ-ₜᵢᵣᵤᵥⱼ]{{1,8}})(?:([₊₋])([₀-₉]{{1,3}})(?![₀-₉]))?(?![ₐₑₒₓₕ-ₜᵢᵣᵤᵥⱼ])"
    rf"(?:{PARTICLE})?"
)


def subscript_index_said(text: str) -> str:
    """`text` with each subscript letter index as its letters after a space, "xₙ" x n."""
    return SUBSCRIPT_INDEX.sub(_index_said, text)


def _index_said(match: re.Match[str]) -> str:
    index, sign, digits, particle = match.groups()
    said = " " + " ".join(unicodedata.normalize("NFKC", index))
    if sign:
        said += f" {'플러스' if sign == '₊' else '마이너스'} {int(unicodedata.normalize('NFKC', digits))}"
    return _with_particle(said, particle)
