"""An ion's charge, "Ca²⁺", "Fe³⁺", "Cl⁻", "SO₄²⁻", said as a Korean chemistry lecturer says it (`korean_reading`).

The superscript digit after a chemical symbol is the charge's size, not a power: "Ca²⁺" was Ca의 2제곱⁺ (a square, the
sign to espeak, unsaid), "Na⁺" Na⁺. A lecturer says the size and the sign in English words, C-A 투 플러스, N-A 플러스,
O 투 마이너스, as for "Fe³⁺" 철 쓰리 플러스, its symbols spelled as a formula's are (F-E 쓰리 플러스). Only a formula of element symbols is an ion: a power "x²", "A²", a set's half
"ℤ⁺" and a variable's "x⁺" are left to their rules. A single capital with a plus, "C⁺", "V⁺", is an ion only in a text about
chemistry (`_CHEMISTRY`). An English sentence's, "The Ca²⁺ ion is small.", in English words
(Ca two plus: C-A 투 플러스 would be Korean words in it), `english_reading`'s.
"""

from __future__ import annotations

from functools import partial

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .english_numbers import english_number
from .korean_particles import PARTICLE, particle_after
from .korean_words import ENGLISH_DIGITS

ELEMENTS = frozenset(
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr Rb Sr Y Zr"
    " Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir"
    " Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr".split()
)
# A formula of up to four symbols, each with its subscript count ("SO₄", "NH₄", "HCO₃"), then the charge: a size of
# one superscript digit (none for one) and its sign, no letter, digit or superscript glued after it; a particle after it
# in the form 플러스 and 마이너스 take ("Ca²⁺은": 플러스는). A superscript letter after the sign is a power's, "B⁻ⁿ",
# "B⁻ᵀ" (korean16: B 마이너스ⁿ, the exponent's letter left over): as before.
_SUPERSCRIPT_LETTER = "ⁱⁿ\u02b0-\u02e4\u1d2c-\u1d6a\u1d9b-\u1dbf⁽⁼"
# ... and an electron's, "e⁻", "2e⁻" (korean16: left to espeak, which said e alone), e 마이너스, 2 e 마이너스; "e⁻ˣ", "e⁻¹"
# a power as before.
_CHARGE = re.compile(
    r"(?:(?<![A-Za-z\d₀-₉])|(?<=(?<![\w.])\d)(?=e[⁺⁻]))((?:[A-Z][a-z]?[₀-₉]{0,2}){1,4}|e(?=[⁺⁻]))([¹²³⁴⁵⁶⁷]?)([⁺⁻])"
    rf"(?![A-Za-z\d_⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^{_SUPERSCRIPT_LETTER}])(?:{PARTICLE})?"
)
_SYMBOL = re.compile(r"[A-Z][a-z]?")
_SIZES = str.maketrans("¹²³⁴⁵⁶⁷", "1234567")


# A single capital with a sign and no size, "C⁺", "V⁺", "S⁻", is a letter of math or computing as often (a closure, a
# space's half, a pseudo-inverse: k17 read them all as ions, C 플러스): an ion only in a text about chemistry, a word of
# it or another ion beside it ("H⁺ 이온", "Na⁺와 K⁺"); any other left to espeak as "x⁺" is (plus). Not a minus, "V⁻ 단자",
# "The F⁻ level": espeak says "⁻" left as a hyphen (korean18: V hyphen 단자), so it is a minus as before, V 마이너스.
# Its English words whole, a particle glued after one or not (korean20: "anatomy", "electronics" took "atom", "electron": C 플러스
# for a closure), with chemistry's own prefixes and endings, "hydroxide", "biochemistry", "acidity", "protonated" (korean21:
# whole words only, so "hydroxide와 H⁺" lost its ion, H⁺ for H 플러스).
_CHEMISTRY = re.compile(
    r"이온|전하|용액|전해|원자|분자|화학|산화|환원|양성자|농도|염기"
    r"|(?i:(?<![a-z])(?:(?:an|cat)?ions?|(?:dis)?charg(?:e[sd]?|ing)|electrolyt[a-z]{0,6}"
    r"|(?:photo)?electron(?:s|egativ[a-z]{0,5})?|(?:de)?proton(?:s|at(?:ed?|ion|ing))?|(?:ant)?acid[a-z]{0,9}"
    r"|[a-z]{0,6}oxid[a-z]{0,8}|(?:bio|macro|inter|intra)?molecul[a-z]{0,6}|(?:di|mono?|tri|poly|sub|inter)?atom(?:s|ic)?"
    r"|(?:bio|electro|photo|geo|thermo|astro|radio|immuno|petro|physico)?chemi[a-z]{0,8})(?![a-z]))"
    r"|[A-Z][a-z]?[₀-₉]{0,2}(?:[A-Z][a-z]?[₀-₉]{0,2}|[¹²³⁴⁵⁶⁷])[⁺⁻]"
    r"|[A-Z][a-z][⁺⁻]|e[⁺⁻]|(?<![A-Za-z\d₀-₉])[FHI]⁻(?![A-Za-z\d_⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^])"
)  # a halide's or a hydride's minus, "K⁺와 F⁻" (korean20: K⁺, espeak's English plus; "V⁻ 단자, C⁺" no chemistry)


# A single capital's minus is said (above), one of no element too, "A⁻" (korean19: A hyphen): A 마이너스. The same capital's
# plus is said with it, "V⁺ 단자와 V⁻ 단자": V 플러스 (korean18: V⁺, espeak's English "plus", beside V 마이너스); another
# capital's as before, "V⁻ 단자, C⁺" (korean19: any minus made the text chemistry's, C 플러스 for a closure).
# A blood group's sign in a text about blood, "혈액형은 A⁺, B⁺, O⁻" (korean20: A⁺, B⁺, espeak's English plus beside O
# 마이너스; korean19 said B's only, B an element): A 플러스, B 플러스, AB 플러스.
_BLOOD_TEXT = re.compile(r"혈액|수혈|(?i:\bblood\b)")
_BLOOD_GROUPS = frozenset({"A", "B", "O", "AB"})
_SINGLE_CAPITALS_MINUS = re.compile(r"(?<![A-Za-z\d₀-₉])([A-Z])⁻(?![A-Za-z\d_⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^])")
# A one-sided limit's sign on a number or a letter alone, "x→0⁻", "a⁻" (no ion's, no power's: nothing after it): espeak
# says "⁻" as "hyphen"; said minus, as "0⁺" is said plus by espeak (korean18: 0 hyphen). In a Korean sentence both in
# Korean words, 0 마이너스, 0 플러스 (korean19: 0 minus, and espeak's English "plus": two voices in one sentence).
# A letter's plus only where it is a limit's, after the arrow or its words, "x→a⁺", "x에서 a⁺": "x⁺" alone is a variable's
# positive part, left to espeak as before.
ONE_SIDED = re.compile(
    r"(?:(?<=\d)|(?<=(?<![A-Za-z])[a-z])(?=⁻)|(?<=→[a-z])|(?<=→ [a-z])|(?<=에서 [a-z]))"
    rf"([⁺⁻])(?![A-Za-z\d_⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^{_SUPERSCRIPT_LETTER}])(?:{PARTICLE})?"
)
ENGLISH_MINUS = {"⁻": " minus"}  # `lang=en`: "0⁺" left to espeak's "plus"
# an English sentence of a Korean text: no Korean rule is left to say its "⁺"
IN_ENGLISH = {"⁻": " minus", "⁺": " plus"}
IN_KOREAN = {"⁻": " 마이너스", "⁺": " 플러스"}


# A letter's plus beside the same letter's minus, "f(a⁺)와 f(a⁻)" (korean20: f(a⁺), espeak's English plus, beside a
# 마이너스): the two sides of one limit, said alike; "x⁺" with no "x⁻" a positive part as before.
_LETTER_SIGN = re.compile(
    rf"(?<![A-Za-z])([a-z])([⁺⁻])(?![A-Za-z\d_⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^{_SUPERSCRIPT_LETTER}])(?:{PARTICLE})?"
)


def one_sided_said(text: str, words: dict[str, str] = ENGLISH_MINUS) -> str:
    """`text` with a one-sided limit's sign in `words`, "0⁻" 0 minus (once the ions and powers are read)."""
    if "⁻" not in text and "⁺" not in text:
        return text
    minus_letters = (
        {m.group(1) for m in _LETTER_SIGN.finditer(text) if m.group(2) == "⁻"} if "⁺" in text else set()
    )
    text = ONE_SIDED.sub(lambda m: _sign_said(m.group(1), m.group(2), words), text)
    if not minus_letters:
        return text
    return _LETTER_SIGN.sub(
        lambda m: (
            m.group(1) + _sign_said(m.group(2), m.group(3), words)
            if m.group(1) in minus_letters
            else m.group()
        ),
        text,
    )


def _sign_said(sign: str, particle: str | None, words: dict[str, str]) -> str:
    """A sign in `words`, a particle after a Korean word in its form, "0⁻으로": 0 마이너스로 (not 마이너스으로)."""
    word = words.get(sign)
    if word is None:
        return sign + (particle or "")
    if particle and words is IN_KOREAN:
        return word + particle_after(word, particle)
    return word + (particle or "")


def _is_ion(match: re.Match[str], about_chemistry: bool, said_capitals: frozenset[str] = frozenset()) -> bool:
    formula, size, sign = match.group(1, 2, 3)
    if not size and ((len(formula) == 1 and formula.isupper() and sign == "⁻") or formula in said_capitals):
        return True  # "V⁻", "A⁻", and "V⁺" beside "V⁻", a blood group's "AB⁺": a capital's sign said (above)
    if not all(symbol in ELEMENTS for symbol in _SYMBOL.findall(formula)):
        return False
    return len(formula) > 1 or bool(size) or formula == "e" or sign == "⁻" or about_chemistry


# A Greek letter alone with a sign, a particle's "Σ⁻", "π⁺" (korean20: 시그마⁻, the sign left to espeak's English hyphen):
# its sign said, 시그마 마이너스, 파이 플러스; Sigma minus in English. Not a power's nor a word's letter, "σ²", "Σ⁻¹". A pair
# of them, a state's "α⁺β⁻", a meson pair's "π⁺π⁻", each so (read59k: 알파⁺베타 마이너스, the first sign unsaid).
# ... and a pair whose second letter has no sign, "α⁺β" (rvk60: 알파⁺베타, the sign unsaid): 알파 플러스 베타; not before a
# word's or a power's letter, "α⁺βx", "α⁺β²".
_GREEK = "\u0391-\u03a9\u03b1-\u03c9"
_GREEK_SIGN = re.compile(
    rf"(?<!\w)([{_GREEK}])([⁺⁻])"
    rf"(?:(?=[{_GREEK}](?:[⁺⁻]|(?![A-Za-z\d_\u0370-\u03ff⁰¹²³⁴⁵⁶⁷⁸⁹^{_SUPERSCRIPT_LETTER}])))"
    rf"|(?![A-Za-z\d_\u0370-\u03ff⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^{_SUPERSCRIPT_LETTER}])(?:{PARTICLE})?)"
)


def _greek_sign(match: re.Match[str], words: dict[str, str]) -> str:
    """ "Σ⁻" 시그마 마이너스, a space after the sign's word where the pair's next letter follows, "α⁺β⁻"."""
    following = match.string[match.end() : match.end() + 1]
    paired = match.group(3) is None and bool(following) and ("\u0391" <= following <= "\u03c9")
    return match.group(1) + _sign_said(match.group(2), match.group(3), words) + (" " if paired else "")


def charges_spoken(text: str) -> str:
    """`text` with its ions' charges said, "Ca²⁺" C-A 투 플러스 (before a power reads its "²")."""
    if "⁺" not in text and "⁻" not in text:
        return text
    # the text searched for chemistry once, not once for each "V⁺" (a text of them took 25 times as long: 0.5 s)
    about_chemistry = bool(_CHEMISTRY.search(text))
    said_capitals = frozenset(_SINGLE_CAPITALS_MINUS.findall(text)) if "⁻" in text else frozenset()
    if _BLOOD_TEXT.search(text):
        said_capitals |= _BLOOD_GROUPS
    spelled: set[str] = set()
    charge = partial(_charge, about_chemistry=about_chemistry, said_capitals=said_capitals, spelled=spelled)
    text = _CHARGE.sub(charge, text)
    if spelled:
        text = _BARE_FORMULA.sub(partial(_bare_formula, spelled=spelled), text)
    return _GREEK_SIGN.sub(partial(_greek_sign, words=IN_KOREAN), text)


# The same symbols bare in a text that spelled their ion, "Fe³⁺ 이온과 Fe 원자", "Cu²⁺ + 2e⁻ → Cu" (rvk21: F-E 쓰리 플러스
# beside Fe, which espeak says as a word, "fee": one element said two ways): spelled alike, F-E 원자; a symbol that is an
# English word, "He", "In", only before a Korean word, "He 원자" (not "In 2024"); one with a count or a sign, "Fe₂O₃",
# "Fe³⁺", the rules' own; a name's part, "config.Na", "Na.cfg", "/Na/", as written.
_WORD_SYMBOLS = frozenset({"In", "As", "Be", "He", "No", "At", "Am"})
_BARE_FORMULA = re.compile(
    r"(?<![A-Za-z\d₀-₉\-./_])(?:[A-Z][a-z]?){1,4}(?![A-Za-z\d_₀-₉⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻^(\-/]|\.\w)( ?[가-힣])?"
)

# ... nor an author's name, a citation's, "(Li et al., 2020)", "Li 등(2020)", "(Li, 2020)", "Li and Wang (2020)" (rvk22:
# L-I et al., a surname spelled beside a battery lecture's Li⁺).
_CITATION_AFTER = re.compile(
    r" et al\b|(?: 등| and [A-Z][a-z]{1,20})? ?\(?(?:19|20)\d\d[a-z]?\)|, (?:19|20)\d\d[a-z]?\)"
)


# ... nor one in an English sentence, "Fe³⁺ 이온. The Fe atom loses electrons." (read59k: The F-E atom, where the sentence's own
# "The Fe³⁺ ion" is English, Fe three plus): as written; the sentence is the text from the last sentence mark before it to the
# next, no Hangul in it, each side looked at up to 200 characters.
_SENTENCE_BEFORE = re.compile(r"[^.!?\n]{0,200}$")
_SENTENCE_AFTER = re.compile(r"[^.!?\n]{0,200}")
_HANGUL = re.compile("[가-힣]")
_ENGLISH_WORD = re.compile(r"[a-z]{3,}")


def _bare_formula(match: re.Match[str], spelled: set[str]) -> str:
    symbols = match.group().removesuffix(match.group(1) or "")
    if symbols not in spelled or (symbols in _WORD_SYMBOLS and not match.group(1)):
        return match.group()
    text, start, end = match.string, match.start(), match.end()
    if _CITATION_AFTER.match(text, start + len(symbols)):
        return match.group()
    before = _SENTENCE_BEFORE.search(text, max(0, start - 200), start)
    after = _SENTENCE_AFTER.match(text, end)
    sentence = (before.group() if before else "") + match.group() + (after.group() if after else "")
    if not _HANGUL.search(sentence) and _ENGLISH_WORD.search(sentence):
        return match.group()
    return _spelled(symbols) + (match.group(1) or "")


def charges_in_english(text: str) -> str:
    """`text` with its ions' charges in English words, "Ca²⁺" Ca two plus (korean15: unsaid)."""
    if "⁺" not in text and "⁻" not in text:
        return text
    text = _CHARGE.sub(partial(_charge_in_english, about_chemistry=bool(_CHEMISTRY.search(text))), text)
    return _GREEK_SIGN.sub(partial(_greek_sign, words=IN_ENGLISH), text)


def _charge(
    match: re.Match[str], about_chemistry: bool, said_capitals: frozenset[str], spelled: set[str]
) -> str:
    """ "Ca²⁺" as C-A 투 플러스 (its "Ca" put in `spelled`); a formula with a symbol of no element, "A²⁺", as written."""
    formula, size, sign, particle = match.groups()
    if not _is_ion(match, about_chemistry, said_capitals):
        return match.group()
    said = f"{ENGLISH_DIGITS[int(size.translate(_SIZES))]} " if size else ""
    word = "플러스" if sign == "⁺" else "마이너스"
    letters = _spelled(formula)
    if letters != formula:
        spelled.add(formula)
    return f"{_apart(match)}{letters} {said}{word}{particle_after(word, particle) if particle else ''}"


def _spelled(formula: str) -> str:
    """An ion's symbols spelled as `korean_subscripts` spells a formula's, "Fe³⁺" F-E 쓰리 플러스 beside "Fe₂O₃" F-E투O쓰리
    (korean20: Fe, which espeak read as a word, "OH⁻" the English "oh"); one with a count is spelled there, "SO₄²⁻"."""
    if len(formula) == 1 or any("₀" <= char <= "₉" for char in formula):
        return formula
    if not all(symbol in ELEMENTS for symbol in _SYMBOL.findall(formula)):
        return formula  # a blood group's "AB⁺" as before
    return "-".join(formula.upper())


def _charge_in_english(match: re.Match[str], about_chemistry: bool) -> str:
    """ "Ca²⁺" as Ca two plus, in an English sentence; a particle, none there, as written."""
    formula, size, sign, particle = match.groups()
    if not _is_ion(match, about_chemistry) or particle:
        return match.group()
    said = f"{english_number(size.translate(_SIZES))} " if size else ""
    return f"{_apart(match)}{formula} {said}{'plus' if sign == '⁺' else 'minus'}"


def _apart(match: re.Match[str]) -> str:
    """A space between an electron and its count, "2e⁻": 2 e 마이너스, not a number glued to a letter."""
    return " " if match.start() and match.string[match.start() - 1].isdigit() else ""
