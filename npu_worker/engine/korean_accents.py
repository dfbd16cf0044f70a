"""A formula letter's accent as a lecturer names it, for `korean_reading` (after an English sentence's words, before "="
is read): a sample mean's bar, an estimate's hat, a tilde, a time derivative's dots, a vector's arrow, "x̄", "p̂", "x̃", "ẋ",
"ẍ", "a⃗" (korean61: left to espeak, which said the letter alone, x, p: a mean heard as its variable): x 바, p 햇, x 틸드, x 닷,
x 더블 닷, a 벡터; in an English sentence of a Korean text, x bar, p hat, a vector (`in_english`). Only a letter standing alone, Latin or Greek, not one of a
word ("Māori", "naïve", "tōkyō"). A language's own letter, "ü", "Ä", pinyin's "ā", "Ō사카" (korean62: u 더블 닷, A 더블 닷,
a 바, O 바사카: a lesson's letter read as a formula's), only beside a formula's operator, "ā = 3" (`_LANGUAGE_LETTERS`).
A minus beside one and a bracket's power around one, "x̄ - μ", "(x̄ - μ)²", are read before the accent is named (the
operators' rules see no term in 바). Each pattern anchored on a letter, a sign or a bracket: linear in the text.
"""

from __future__ import annotations

import unicodedata

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, particle_after

# each mark's name: (Korean, English)
_NAMES = {
    "\u0304": ("바", "bar"),  # a macron
    "\u0305": ("바", "bar"),  # an overline
    "\u0302": ("햇", "hat"),
    "\u0303": ("틸드", "tilde"),
    "\u0307": ("닷", "dot"),
    "\u0308": ("더블 닷", "double dot"),
    "\u20d7": ("벡터", "vector"),  # a vector's arrow, "a⃗ = F⃗/m" (korean61: a, F: the arrow unsaid)
    "\u20d1": ("벡터", "vector"),  # its harpoon
}
_LETTER = "A-Za-z\u0391-\u03a9\u03b1-\u03c9"
# A letter and its accent, decomposed ("x" and U+0304) or one character ("ȳ", "ā", "ẋ"): the precomposed letters whose NFD
# is a Latin or Greek letter and one of these marks (listed, not worked out at import from 7 700 characters' NFD).
_PRECOMPOSED = (
    "ÂÃÄÊËÎÏÑÔÕÖÛÜâãäêëîïñôõöûüÿĀāĈĉĊċĒēĖėĜĝĠġĤĥĨĩĪīİĴĵŌōŜŝŨũŪūŴŵŶŷŸŻżȦȧȮȯȲȳΪΫϊϋḂḃḊḋḞḟḠḡḢḣḦḧṀṁṄṅṖṗṘṙṠṡṪṫṼṽẄẅẆẇẊẋẌẍẎẏ"
    "ẐẑẗẼẽỸỹ"
)
# The precomposed letters a language writes (vowels with a diaeresis, macron, circumflex or tilde, "ñ", Esperanto's "ĉ",
# Polish "ż", Greek "ϊ"): espeak's as before korean62 unless an operator stands beside them. A mean's "ȳ", a derivative's
# "ẋ", "ȧ", "ṁ" and every letter with a combining mark NFC keeps apart ("x̄", "p̂", "a⃗") stay a formula's.
_LANGUAGE_LETTERS = frozenset("ÂÃÄÊËÎÏÑÔÕÖÛÜâãäêëîïñôõöûüÿĀāĈĉĊċĒēĖėĜĝĠġĤĥĨĩĪīİĴĵŌōŜŝŨũŪūŴŵŶŷŸŻżΪΫϊϋṄṅẄẅẼẽỸỹ")
_OPERATORS = frozenset("=≠≈≡<>≤≥+−±×·*/^₀₁₂₃₄₅₆₇₈₉")
_MARKS = "\u0302-\u0308\u20d1\u20d7"
_FORMULA_LETTER = "".join(
    sorted(set(_PRECOMPOSED) - _LANGUAGE_LETTERS)
)  # "ȳ", "ẋ": a formula's wherever it stands
# ... and its power, "x̄²", "σ̂² = 4" (rvk62: x 바, 시그마 햇은 4: after the accent's Korean name the power was taken for a
# word's footnote and dropped): x 바의 2제곱, in English x bar squared; its index, "x̄₁ = 3" (korean62: x 바₁는, the
# particle after the name's 바): x 바 1은 3, in English x bar 1.
ACCENTED = re.compile(
    rf"(?<![{_LETTER}\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff])(?P<letter>[{_LETTER}][{_MARKS}]|[{_PRECOMPOSED}])"
    r"(?P<index>[₀₁₂₃₄₅₆₇₈₉]{1,2})?(?:(?P<superscript>[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,2})|\^(?P<caret>\d{1,2}))?"
    rf"(?![{_LETTER}\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff⁰¹²³⁴⁵⁶⁷⁸⁹₀-₉\d])(?P<particle>{PARTICLE})?"
)
# A formula's minus beside an accented letter, "x̄ - μ", "p̂(1-p̂)" (korean62: x 바 - 뮤, p 햇(1-p 햇): the sign unsaid, the
# operators' rules seeing no term in 바): 빼기, as "x - μ" is; found before the accent is named.
_FORMULA_ACCENT_AHEAD = rf"(?=[{_LETTER}][{_MARKS}]|[{_FORMULA_LETTER}])"
_MINUS_BESIDE = re.compile(
    rf"(?<=[\w)]) ?[-−] ?{_FORMULA_ACCENT_AHEAD}"
    rf"|(?:(?<=[{_MARKS}{_FORMULA_LETTER}])|(?<=[{_MARKS}{_FORMULA_LETTER}][₀-₉²³])) ?[-−] ?(?=[\w(])"
)
# ... and a bracket's power around one, "(x̄ - μ)²" (korean62: (x 바 - 뮤)², the power unsaid): (x 바 빼기 뮤)의 2제곱.
_ANY_ACCENT = re.compile(f"[{_MARKS}{_PRECOMPOSED}]")
_BRACKET_POWER = re.compile(rf"\(([^()\n]{{1,24}})\)([¹²³⁴⁵⁶⁷⁸⁹])(?![⁰¹²³⁴⁵⁶⁷⁸⁹])(?P<particle>{PARTICLE})?")
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_ENGLISH_POWERS = {"2": "squared", "3": "cubed"}


def accents_said(text: str) -> str:
    """`text` with each formula letter's accent named in Korean after the letter, "x̄는" x 바는."""
    if not _ANY_ACCENT.search(text):  # most texts: one scan for a character class, not the three patterns
        return text
    if "(" in text:
        text = _BRACKET_POWER.sub(_bracket_power, text)
    if "-" in text or "−" in text:
        text = _MINUS_BESIDE.sub(" 빼기 ", text)
    return ACCENTED.sub(_korean, text)


def _bracket_power(match: re.Match[str]) -> str:
    inner, power, particle = match.group(1), match.group(2), match.group("particle")
    if not any(_korean(accented) != accented.group() for accented in ACCENTED.finditer(inner)):
        return match.group()
    said = f"({inner})의 {power.translate(_SUPERSCRIPT_DIGITS)}제곱"
    return said + (particle_after(said, particle) if particle else "")


def in_english(sentence: str) -> str:
    """An English sentence's accented letters, "The mean x̄ is 3." The mean x bar is 3."""
    return ACCENTED.sub(_english, sentence)


def _korean(match: re.Match[str]) -> str:
    letter, mark = _parts(match.group(1))
    if mark not in _NAMES or _a_language_s_letter(match):
        return match.group()
    said = f"{letter} {_NAMES[mark][0]}" + _index(match)
    if exponent := _exponent(match):
        said += f"의 {exponent}제곱"
    particle = match.group("particle")
    # a coefficient's "2x̄" (korean62: 2배 바, the x before a Korean word read as times): 2 x 바
    apart = " " if letter in "xX" and match.string[match.start() - 1 : match.start()].isdigit() else ""
    return apart + said + (particle_after(said, particle) if particle else "")


def _english(match: re.Match[str]) -> str:
    letter, mark = _parts(match.group(1))
    if mark not in _NAMES or _a_language_s_letter(match):
        return match.group()
    said = f"{letter} {_NAMES[mark][1]}" + _index(match)
    if exponent := _exponent(match):
        said += " " + _ENGLISH_POWERS.get(exponent, f"to the power of {exponent}")
    return said + (match.group("particle") or "")


def _a_language_s_letter(match: re.Match[str]) -> bool:
    """Whether the letter is one a language writes ("ü", "ā") with no operator beside it: a lesson's, not a formula's."""
    if unicodedata.normalize("NFC", match.group(1)) not in _LANGUAGE_LETTERS or _exponent(match):
        return False
    text = match.string
    before = text[max(0, match.start() - 4) : match.start()].rstrip()
    after = "" if match.group("particle") else text[match.end() : match.end() + 4].lstrip()
    return not (
        (before[-1:] and (before[-1] in _OPERATORS or before.endswith(" -")))
        or (after[:1] and (after[0] in _OPERATORS or after.startswith("- ")))
    )


def _index(match: re.Match[str]) -> str:
    """The index after the accented letter, "₁", as " 1" ("" for none)."""
    index = match.group("index")
    return " " + index.translate(_SUBSCRIPT_DIGITS) if index else ""


def _exponent(match: re.Match[str]) -> str:
    """The power after the accented letter, "²" or "^2", as digits ("" for none)."""
    superscript, caret = match.group("superscript"), match.group("caret")
    return str(int(superscript.translate(_SUPERSCRIPT_DIGITS))) if superscript else caret or ""


def _parts(accented: str) -> tuple[str, str]:
    decomposed = unicodedata.normalize("NFD", accented)
    return decomposed[0], decomposed[1:]
