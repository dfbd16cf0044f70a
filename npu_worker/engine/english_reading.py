"""English text's powers and relation signs written out as an English reader says them (`lang=en`).

espeak-ng 1.52's English voice read a power as a bare number ("E = mc²": "E equals m c two"; "10⁻³" and
"10^-3": "ten three", the minus lost; "x^2": "x two"), "≠" without its verb ("a not equal to b") and "⇒"
and "⟹" not at all. Its numbers, units and other signs it reads well, and are left. Each pattern is
anchored on a single sign, with bounded repeats: linear in the text.
"""

from __future__ import annotations

from . import english_arrows as arrows
from . import english_numbers as numbers
from . import english_words as words
from . import korean_charges as charges
from . import korean_number_ranges as number_ranges
from . import korean_units as units
from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_words import SPELLED_UNITS, UNITS

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿⁱ⁺", "0123456789-ni+")
# A power on a number, a bracket or a symbol of one or two letters ("10³", "(a+b)²", "x²", "mc²", "m²"); a
# superscript after a longer word is a footnote's mark ("energy¹"), left as it was. Two letters are said
# apart: "mc squared" was the name "Mc". A Greek letter's too, "σ²" (read59k: 시그마의 2제곱 in an English sentence of a
# Korean text, σ² for lang=en): σ squared.
POWER = re.compile(
    r"(?:(?<=[\d)])|(?<![A-Za-z])([A-Za-z]{1,2}|(?<![\u0391-\u03a9\u03b1-\u03c9])[\u0391-\u03a9\u03b1-\u03c9]))"
    r"(?:(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}|[ⁿⁱ])(?![⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻])|\^ ?([-−]?\d{1,3}|[A-Za-z](?![A-Za-z\d])))"
)  # an ion's charge, "O²⁻", "Ca²⁺", is no power: left (it was "O squared dash")
# ... but a unit of length after a number is an area or a volume, "5 km²", "3 cm³", "100 m^2": square
# kilometers, cubic centimeters (espeak said "square kilometres" for "km²" itself; "k m squared" split it).
UNIT_POWER = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)*) ?(km|cm|mm|dm|µm|μm|nm|m|ft|in|mi|yd)(?:([²³])|\^([23]))(?![\w⁰¹²³⁴⁵⁶⁷⁸⁹^])"
)
_LENGTHS = {
    "km": ("kilometer", "kilometers"),
    "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"),
    "dm": ("decimeter", "decimeters"),
    "µm": ("micrometer", "micrometers"),
    "μm": ("micrometer", "micrometers"),
    "nm": ("nanometer", "nanometers"),
    "m": ("meter", "meters"),
    "ft": ("foot", "feet"),
    "in": ("inch", "inches"),
    "mi": ("mile", "miles"),
    "yd": ("yard", "yards"),
}
# Two letters that are a word or a name, "it²", "Li²" (a citation's "Li² and Wu³"), carry a footnote's mark,
# left: they were spelled, "i t squared", "L i squared".
_WORDS = frozenset("am an as at be by do go he if in is it me my no of oh ok on or so to up us we".split())
_RELATIONS = {"≠": " is not equal to "} | arrows.IMPLICATIONS
RELATION = re.compile(r" ?([≠⇒⟹⇔]) ?")
# JIS's "≦", "≧" and the slanted "⩽", "⩾" of math fonts, which espeak said nothing for ("x ≦ 1": "x one"): as "≤"
# and "≥", which it reads ("less than or equal to").
_BOUND_FORMS = str.maketrans({"≦": "≤", "≧": "≥", "⩽": "≤", "⩾": "≥"})

# A number set, an element's sign and a complement, which espeak's English voice said nothing for ("x ∈ ℝⁿ": "x",
# "Aᶜ": "A"): as a lecturer says them, x in R n, A complement. The set's dimension is no power (R n, not R to the n).
# ... and the other set and logic signs it left unsaid, "A ∪ B", "∀x": A union B, for all x.
_NUMBER_SETS = {"ℝ": "R", "ℕ": "N", "ℤ": "Z", "ℚ": "Q", "ℂ": "C"}
# ... a dimension in braces and a sign's half, "ℝ^{n}", "ℝ^n_+", "ℤ⁺", "ℝ₊" (korean14: R^{n}, R to the power of n_+, Z⁺):
# R n, R n plus, Z plus, R plus; two letters in braces, "ℝ^{nm}" (korean15: as written), R n m.
_SIGNED_HALF = r"([⁺₊]|_\{?\+\}?(?![\w{]))?"
# ... and one more or less, "ℝ^{n+1}", "ℝ^{n-1}", "ℝⁿ⁺¹" (korean17: R^{n+1}, R n plus¹): R n plus 1, R n minus 1.
NUMBER_SET = re.compile(
    r"([ℝℕℤℚℂ])(?:(ⁿ[⁺⁻][¹²³⁴⁵⁶⁷⁸⁹]|[⁰¹²³⁴⁵⁶⁷⁸⁹ⁿ]{1,3})|\^\{([a-z]{1,2}|\d{1,3}|[a-z] ?[+\-−] ?\d{1,2})\}|\^([a-z]|\d{1,3})(?:(?=_\{?\+)|(?![\w^{])))?"
    + _SIGNED_HALF
)
# ... and "⊃", "⊇", "⊊", "∅", which korean14 still left unsaid ("A ⊃ B": A B, "x ∉ ∅": x not in); each word spaced
# from a letter it touches, "∀x∃y" (korean14: for all xthere exists y, one word for espeak).
_SET_WORDS = {
    "∈": "in", "∉": "not in", "∪": "union", "∩": "intersection", "⊂": "subset of", "⊆": "subset of",
    "⊊": "proper subset of", "⊃": "superset of", "⊇": "superset of", "∅": "the empty set",
    "∀": "for all", "∃": "there exists",
}  # fmt: skip
SET_SIGN = re.compile("[∈∉∪∩⊂⊆⊊⊃⊇∅∀∃]")
_ONE_MORE = re.compile(r"([a-z]) ?([+\-−]) ?(\d{1,2})")
_OPENS, _CLOSES = "([{", ")]}.,;:!?"
COMPLEMENT = re.compile(r"(?<=[\w)′'])ᶜ")


# A heart's "<3" after a pronoun and before a word, "I <3 you", "We <3 Python." (korean18: I 3 미만 you, less than three; for
# lang=en espeak said "I three you"): heart, no comparison. Not before a unit or a conjunction: "I <3 mA", "I <3 and J > 5"
# bound a current I (korean19 read I heart 밀리암페어).
HEART = re.compile(
    r"(?<![\w<])((?:I|[Ww]e|[Tt]hey|[Yy]ou) )<3"
    rf"(?= (?!(?:{units.alternatives(UNITS)}|{SPELLED_UNITS}|and|or|then)(?![A-Za-z]))[A-Za-z]{{2,}}(?![A-Za-z\d]))"
)


def heart(match: re.Match[str]) -> str:
    """ "I <3 you" as I heart you."""
    return match.group(1) + "heart"


# The single angle quotes typed for "<" and ">" between a lone letter or number and a term, "x ‹ 2πr" (espeak said
# nothing for it: x 2파이r; korean19 made them signs in a Korean text only, lang=en x two pi): as the signs; a French
# quotation, "le ‹ mot ›", has a word before it, left; so is a breadcrumb's, "Chapter 1 › Section 2", "Step 2 › Done":
# a label's number before it, a capitalised word after it (korean20: 1 > Section 2, greater than); "x › Tmax" a bound.
_ANGLE_RELATION = re.compile(
    r"(?=[‹›])(?:(?<=(?<![A-Za-z])[A-Za-z\d] )|(?<=(?<![A-Za-z])[A-Za-z\d]))[‹›](?= ?[-−]?[\dA-Za-zα-ωπ(])"
    r"(?!(?:(?<=\d[‹›])|(?<=\d [‹›])) ?[A-Z][a-z])"
)


# ... and a page's, "Page 1 › 2 › 3" (korean20: Page 1 > 2 > 3, greater than): a label's number before the quote, or a
# number or a capitalised word between two of them, is a step of a breadcrumb, left; a chain's, "0 ‹ x ‹ 1", a bound.
_LABELS_NUMBER = re.compile(r"(?<![A-Za-z])[A-Z][a-z]{1,15} \d{1,4} ?$")
_CRUMB = r"(?:\d{1,4}|[A-Z][a-z]{1,20})"
_CRUMB_BEFORE = re.compile(rf"[‹›] ?{_CRUMB} ?$")
_CRUMB_AFTER = re.compile(rf" ?{_CRUMB} ?[‹›]")
# ... the label's only before a step's number or word, "Step 1 › 2", "Step 1 › Done": a sentence's bound after a
# capitalised word's number, "Let 0 ‹ x", "If 5 › x then", is a bound (korean21: left, espeak said nothing for it).
_CRUMB_NEXT = re.compile(rf" ?{_CRUMB}(?![\w(]|\.\d)")


def angle_relations(text: str) -> str:
    """`text` with an angle quote typed for a bound, "x ‹ 2π", as the sign, "x < 2π"."""
    if "‹" not in text and "›" not in text:
        return text
    return _ANGLE_RELATION.sub(_angle_sign, text)


def _angle_sign(match: re.Match[str]) -> str:
    text, start = match.string, match.start()
    before = text[max(0, start - 24) : start]
    labelled = _LABELS_NUMBER.search(before) and _CRUMB_NEXT.match(text, match.end())
    if labelled or _CRUMB_BEFORE.search(before) or _CRUMB_AFTER.match(text, match.end()):
        return match.group()  # a breadcrumb's step
    return "<" if match.group() == "‹" else ">"


def spoken(text: str) -> str:
    """`text` with its powers, relation and set signs in English words."""
    text = angle_relations(text)  # "x ‹ 2π" (korean19: x two pi, espeak says nothing for "‹")
    if "<3" in text:
        text = HEART.sub(heart, text)
    text = SET_SIGN.sub(_set_word, text)
    if "ᶜ" in text:
        text = COMPLEMENT.sub(" complement", text)
    text = NUMBER_SET.sub(_number_set, text)
    text = charges.charges_in_english(text)  # an ion's charge, "Ca²⁺" (korean15: unsaid): Ca two plus
    text = words.accents_in_english(text)  # "x̄" x bar (korean61: espeak's x, the bar unsaid)
    text = RELATION.sub(_relation, powers_spoken(text.translate(_BOUND_FORMS)))
    return charges.one_sided_said(text)  # "x→0⁻": 0 minus (korean18: 0 hyphen)


def _set_word(match: re.Match[str]) -> str:
    before, after = (
        match.string[match.start() - 1 : match.start()],
        match.string[match.end() : match.end() + 1],
    )
    if match.group() == "∅" and (
        after.isdigit() or after == " " and match.string[match.end() + 1 : match.end() + 2].isdigit()
    ):
        return "∅"  # a diameter, "∅10 mm", as the Korean rules leave it
    space_before = " " if before and not before.isspace() and before not in _OPENS else ""
    space_after = " " if after and not after.isspace() and after not in _CLOSES else ""
    return f"{space_before}{_SET_WORDS[match.group()]}{space_after}"


def _number_set(match: re.Match[str]) -> str:
    letter, superscript, braced, caret, signed = match.groups()
    dimension = (superscript or "").translate(_SUPERSCRIPT) or braced or caret
    if dimension and dimension.isalpha():
        dimension = " ".join(dimension)  # "ℝ^{nm}" R n m (korean15: R^{nm}, as written)
    elif dimension and (more := _ONE_MORE.fullmatch(dimension)):  # "ℝ^{n+1}": R n plus 1
        dimension = f"{more.group(1)} {'plus' if more.group(2) == '+' else 'minus'} {more.group(3)}"
    said = f"{_NUMBER_SETS[letter]} {dimension}" if dimension else _NUMBER_SETS[letter]
    return f"{said} plus" if signed else said


def powers_spoken(text: str) -> str:
    """`text` with its powers in English words: also an English sentence's in a Korean text (`korean_reading`)."""
    return POWER.sub(_power, UNIT_POWER.sub(_unit_power, text))


def _relation(match: re.Match[str]) -> str:
    """A sign between two terms in words; an arrow opening or ending a line is a bullet, unsaid (it was
    "implies Faster charging")."""
    text, start, end = match.string, match.start(), match.end()
    if match.group(1) != "≠" and (text[start - 1 : start] in ("", "\n") or text[end : end + 1] in ("", "\n")):
        return " " if start and text[start - 1] != "\n" else ""
    return _RELATIONS[match.group(1)]


def _unit_power(match: re.Match[str]) -> str:
    number, unit, superscript, caret = match.groups()
    one, many = _LENGTHS[unit]
    return (
        f"{number} {'square' if (superscript or caret) in '²2' else 'cubic'} {one if number == '1' else many}"
    )


def _power(match: re.Match[str]) -> str:
    letters, superscript, caret = match.groups()
    if letters and len(letters) == 2 and (letters.lower() in _WORDS or letters.istitle()):
        return match.group()
    if superscript == "¹":  # no power is written to the first: a footnote's, "(GPT-4)¹", "Table 2¹"
        return match.group()
    exponent = (superscript or "").translate(_SUPERSCRIPT) or caret.replace("−", "-")
    if exponent == "T" and (letters or match.string[match.start() - 1] == ")"):
        said = "transpose"  # a matrix's or a vector's "A^T", "x^T y", "(AB)^T": no power of T
    elif exponent == "2":
        said = "squared"
    elif exponent == "3":
        said = "cubed"
    else:
        said = "to the power of " + (f"minus {exponent[1:]}" if exponent.startswith("-") else exponent)
    apart = " " if match.string[match.end() : match.end() + 1].isalnum() else ""  # "x^2y"
    return f"{' '.join(letters or '')} {said}{apart}"


# An English sentence inside a Korean text (`korean_reading`), "This is 3 + 4 cm.", "The speed is 5 km/h.": its signs
# and units were read by the Korean rules, This is 3 더하기 4 센티미터., 시속 5킬로미터, Korean words in an English
# sentence. Here in English words, before those rules run (they read no English word); its numbers in these English
# forms in English words too (`english_numbers`, which holds the units' names), others still theirs.
_UNIT_AFTER_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,15}(?:[.,]\d{1,15})*) ?("
    + "|".join(re.escape(unit) for unit in sorted(numbers.UNIT_NAMES, key=len, reverse=True))
    + r")(?![\w/²³^])"
)
# A spaced minus only between a formula's terms, a number, a letter alone or a bracket: a title's dash, "Part 1 -
# Introduction", "Week 2 - Linear regression", is no minus (k12: Part 1 minus Introduction).
_PLUS_MINUS = re.compile(
    r"(?<=[\w)]) \+ ?(?=[\w(])|(?<=[\w)])(?!(?<=\d[eE])\+\d)\+ ?(?=[\w(])"
    r"|(?:(?<=[\d)])|(?<=(?<![A-Za-z])[A-Za-z])) [-−] (?=\d|[A-Za-z](?![A-Za-z])|\()"
)

# ... and a decimal's point, "The battery is 3.7V." (k13: 3 점 칠 volts, the Korean rules' 점 and digits in an English
# sentence): 3 point 7 volts, the digits after it one by one as English says them; a dotted chain, "10.0.0.1", "2.10.1",
# left to the Korean rules; and so is an amount or a section, "$3.50", "$1.5M", "5.99$", "§14.2" (korean14: 3 달러 point
# 5 0, 1 달러 point 5M, 14절 point 2: the currency's and the section's rules took the whole number only).
# ... and a bound, "p < 0.05 is significant." (korean14: p 0 미만 point 0 5, the Korean bound's rule took the 0), a ratio,
# a fraction, a factor, a range, a sign before it, "0.5/1.0", "×1.5", "0.1~0.9", "-0.5", "v2.0" (korean14: 0 point 1분의
# 5 point 0, 1배 point 5): a decimal of its own only, after a space, a bracket, a quote or a name's "/", "(0.5)", "HTTP/1.1",
# not before one of those signs.
# ... nor a mantissa, "1.5e-3" (korean14: 1 point 5 곱하기 10의 마이너스 3제곱, two voices in one number): the Korean
# rules' whole, 1 점 오 곱하기 10의 마이너스 3제곱, as a sign's decimal ("-0.5": 마이너스 0 점 오); and "1.8e+03" (korean16:
# 1 point 8e plus 03), its "+" no sum's: 1 점 팔 곱하기 10의 3제곱.
_DECIMAL = re.compile(
    r"(?:(?<![^\s(\['\"‘“`])|(?<=[A-Za-z]/))(?<![$€£¥₩§<>≤≥≠~/×±] )(\d{1,15})\.(\d{1,15})(?!\d|\.\d| ?[$€£¥₩<>≤≥≠~/×±]|[-:]\d|[eE][-−+]?\d)"
)


def _decimal(match: re.Match[str]) -> str:
    whole, fraction = match.groups()
    return f"{whole} point {' '.join(fraction)}"


# ... and a bound on a number, "p < 0.05 here.", "n >= 10 is enough." (korean17: p 0 점 영오 미만, the Korean bound's words in
# an English sentence): p less than zero point zero five; not an arrow's "<=>", "->", nor a bound on a term, "x < y".
# A bare π is a number, "x >= π", "x > -π" (korean19: x 파이 이상, x > -파이): greater than or equal to pi; "π/2" as before.
_BARE_PI = r"π(?![\w/^²³⁰¹⁴⁵⁶⁷⁸⁹(_])"
COMPARISON = re.compile(
    rf"(?<=[\w)])(?<![<>=!\-]) ?(<=|>=|[<>≤≥])(?![<>=]) ?([-−](?=\.?\d|{_BARE_PI}))?(?=\.?\d|{_BARE_PI})"
)
_COMPARISONS = {
    "<": "less than", ">": "greater than", "≤": "less than or equal to", "<=": "less than or equal to",
    "≥": "greater than or equal to", ">=": "greater than or equal to",
}  # fmt: skip
_BOUND_SIGN = re.compile("[<>≤≥]")
# a bound's said amount, after "less than" and "less than or equal to", "x ≤ 2π" (korean19: equal to 2파이)
_PI_AMOUNT = re.compile(
    rf"(?:(?<=than )|(?<=equal to )|(?<=than minus )|(?<=to minus ))(?:(\d{{1,2}}) ?)?{_BARE_PI}"
)
# ... and a fraction of π, "x < π/2.", "The angle is 2π/3." (korean20: x < 파이/2, 3분의 2파이: the Korean rules' words): pi
# over two, two pi over three; first as "π over two", which `COMPARISON` takes for a bare π, then in words.
_PI_FRACTION = re.compile(r"(?<![\w./])(\d{1,2})? ?π/(\d{1,2})(?![\w./^(]|[.,]\d)")
_PI_OVER = re.compile(r"(?<![\w./])(\d{1,2})? ?π(?= over )")
_CLAUSE_BREAK = re.compile(
    r"[\",;()]|\b(?:and|or|but|then|if|when|while)\b"
)  # "n >= 3 and m < 5": two bounds


def _comparison(match: re.Match[str]) -> str:
    """One bound in words, ".05" with its 0; a chain's, "-1 ≤ sin x ≤ 1", left to the Korean rules as before."""
    text, start, end = match.string, match.start(), match.end()
    before = _CLAUSE_BREAK.split(text[max(0, start - 30) : start])[-1]
    after = _CLAUSE_BREAK.split(text[end : end + 30])[0]
    if _BOUND_SIGN.search(before) or _BOUND_SIGN.search(after):
        return match.group()
    return f" {_COMPARISONS[match.group(1)]} {'minus ' if match.group(2) else ''}{'0' if after[:1] == '.' else ''}"


def _pi_fraction(match: re.Match[str]) -> str:
    return f"{match.group(1) or ''}π over {numbers.english_number(match.group(2))}"


def _pi_over(match: re.Match[str]) -> str:
    return f"{numbers.english_number(match.group(1)) + ' ' if match.group(1) else ''}pi"


# "1,000", and before a list's comma, "1,000, 2,000"
_GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?!\d|,\d)")


def signs_in_korean_text(sentence: str) -> str:
    """An English `sentence` of a Korean text with its units after a number, "+" and a spaced minus in English words."""
    # A spaced hyphen the Korean rules read as a range, years or before a unit, "In 2024 - 2025", "10 - 20 mm" (k12:
    # 2024 minus 2025; before it 2024에서 2025): "to", before the units are names.
    sentence = number_ranges.HYPHEN_RANGE.sub(_range_to, number_ranges.YEAR_RANGE.sub(_range_to, sentence))
    # Thousands grouped, "x < 1,000", "1,000 volts" (korean18: 1000, said 천 by the Korean voice): as one number, read
    # by the rules below, less than one thousand, one thousand volts.
    sentence = _GROUPED.sub(lambda m: m.group().replace(",", ""), sentence)
    sentence = charges.charges_in_english(sentence)  # an ion's charge, "Ca²⁺" (korean16): Ca two plus
    sentence = charges.one_sided_said(sentence, charges.IN_ENGLISH)  # "x→0⁺" (korean20): 0 plus, not 0 플러스
    # "as x→0⁻ is" (korean20: as x가 0으로 minus is): as x approaches 0 minus is
    sentence = arrows.arrows_said(sentence)
    if "π/" in sentence:  # "x < π/2." (korean20: x < 파이/2): less than pi over two
        sentence = _PI_FRACTION.sub(_pi_fraction, sentence)
    sentence = numbers.amounts_said(
        COMPARISON.sub(_comparison, sentence)
    )  # "$3.50", "3:30", "1/2", "p < 0.05"
    if "π" in sentence:  # "x < 2π here." (korean18: less than 2파이, the Korean rules' π): less than two pi
        sentence = _PI_OVER.sub(_pi_over, sentence)
        sentence = _PI_AMOUNT.sub(lambda m: f"{m.group(1) + ' ' if m.group(1) else ''}pi", sentence)
    sentence = _DECIMAL.sub(_decimal, _UNIT_AFTER_NUMBER.sub(_unit_name, sentence))
    sentence = _PLUS_MINUS.sub(_plus_minus, sentence)
    # "3 point 7 volts" three point seven volts (korean15: 삼 point 칠)
    sentence = numbers.numbers_said(sentence)
    return words.words_said(sentence)  # "α" alpha, "YoY" year over year (read59k: 알파, 전년 대비)


def _plus_minus(match: re.Match[str]) -> str:
    """ "+" or a spaced minus in words; one in a braced exponent, "ℝ^{n+1}", "x^{n+1}", left to the Korean rules, which
    read the exponent whole (korean17: ℝ^{n plus one}, the set and its braces unread)."""
    opened = match.string.rfind("^{", max(0, match.start() - 12), match.start())
    if opened >= 0 and "}" not in match.string[opened : match.start()]:
        return match.group()
    return " plus " if "+" in match.group() else " minus "


def _range_to(match: re.Match[str]) -> str:
    """A spaced hyphen's range that runs up said "to"; one that runs down ("5 - 3 dB") is a minus, an unspaced one
    ("2020-2024") left to the Korean rules, as before."""
    runs_up = float(match.group(1)) < float(match.group(2))
    return match.group(1) + " to " if runs_up and match.group().endswith(" - ") else match.group()


def _unit_name(match: re.Match[str]) -> str:
    number, unit = match.groups()
    if unit in ("A", "J") and match.end(1) < match.start(2):
        return match.group()  # "Figure 3 A": a label (k12: 3 amperes), as in Korean
    if unit == "h" and units.hours_letter_is_a_variable(match.string, match.end(1), match.end()):
        return match.group()  # "2h + 1", "f(x + 2h)": a variable (k12: 2 hours plus 1), as in Korean
    first, space, rest = numbers.UNIT_NAMES[unit].partition(" ")
    # "1 km/h" one kilometer per hour (k12: 1 kilometers per hour), "1%p" one percentage point
    if number == "1":
        first, rest = (first[:-1], rest) if first.endswith("s") else (first, rest.removesuffix("s"))
    return f"{number} {first}{space}{rest}"
