"""Korean text with digits, units and symbols written out as a Korean reader says them (`lang=ko`).

espeak-ng 1.52's Korean voice reads integers well (만, 억 and 조 included), but it has no decimal point
("3.7V" was "삼 칠 V", three seven; "1,234.5" lost its ".5"), drops a minus ("-5.5도" was "오 오 도"),
reads "%" as English "percent", "~" as English "tilde", units as English letter names ("50kW": "오십
kay double-u", "25°C": "이십오 see", "℃" nothing), a currency sign not at all ("$5": "오") and a phone
number as one large number; and it said every number Sino-Korean ("3개": 삼 개, "3:30": 삼 삼십), where a
counter takes a native one (세 개, 세 시 삼십 분). A lecture's text has more: "3-5개" (삼 오 개), "16:9"
(십육 구), "10^3" (십 삼), "/", "+", "=" (English words); its list marks, acronyms and signs are read first
(`korean_marks`). The words written here are Hangul, which espeak reads with its Korean rules.

Each part has its module: `korean_numerals` (decimals, native numbers before counters, ordinals, versions),
`korean_dates` (dates, weekdays, times of day), `korean_phone_numbers`, `korean_number_ranges` (ranges), `korean_ranges` (bounds), `korean_code_comparisons` (a comparison in code), `korean_chains` (chains of bounds),
`korean_bracket_bounds` (a bound by a bracket's product),
`korean_absolute` (absolute values), `korean_code` (code's assignments),
`korean_units` (units, signs, currency amounts), `korean_formulas` (arithmetic, powers, fractions, ratios),
`korean_charges` (an ion's charge), `korean_accents` (a formula letter's accent),
`korean_functions` (a function's power, derivatives, a compound exponent, an integral's limits), `korean_arrows`
(arrows, "≠", "©"), `korean_sets` (set and logic signs), `korean_subscripts` (a formula's counts, a letter's index),
`korean_particles` (a particle's form after the word a rule says), their copulas' forms `korean_copulas`, their vocabulary `korean_words`, the passes' templates
`korean_templates`. Here: the order they apply in (a date before a decimal, a range before a
minus, units before Greek letters), what no rule may read held out of them (`korean_held`: a web address's
path, an English sentence's signs), a Korean IME's full-width signs
and Markdown emphasis.

Every pattern is anchored on a digit, a letter or a single symbol, with bounded repeats and look-behinds:
the work is linear in the text (2 000 characters: the lecture 4.4 ms, every form here mixed 5.5 ms, best of 30;
3.4 and 4.4 ms before the readings of years, versions, AM/PM, Greek letters, phone numbers and the like; with
arrows, Hanja, "≠" and the rest of `korean_arrows` and `korean_marks`, the lecture's 2 000 and 20 000 characters
5.1 and 52.6 ms, 4.5 and 41.5 ms before, best of 7, both on this 2-core VM in one run).
"""

from __future__ import annotations

from . import english_reading
from . import korean_absolute as absolute
from . import korean_accents as accents
from . import korean_arrows as arrows
from . import korean_bracket_bounds as bracket_bounds
from . import korean_chains as chains
from . import korean_charges as charges
from . import korean_code as code
from . import korean_code_comparisons as code_comparisons
from . import korean_dates as dates
from . import korean_formulas as formulas
from . import korean_functions as functions
from . import korean_held as held
from . import korean_number_ranges as number_ranges
from . import korean_numerals as numerals
from . import korean_particles as particles
from . import korean_phone_numbers as phones
from . import korean_ranges as ranges
from . import korean_sets as sets
from . import korean_units as units
from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .base import language_code
from .korean_marks import list_marks_spoken, marks_spoken
from .korean_subscripts import subscript_index_said
from .korean_templates import template
from .korean_words import MATH_NAMES as _MATH_NAMES
from .korean_words import SYMBOLS as _SYMBOLS
from .korean_words import UNITS as _UNITS
from .text_form import readable

# The signs of a Korean IME's full-width mode, which espeak said nothing for ("50％" was 오십, "３．７" 삼칠),
# and the tilde operator of Korean word processors ("3∼5개" was 삼 다섯 개): as the ASCII signs read here.
# A full-width point, comma or colon only between digits: elsewhere it is a CJK mark, as the segmenters read it.
# Zero-width characters of text copied from web pages are taken out: espeak read "전압\u200b은" as two
# words, the particle cut off, and "3\u200b.7V" without its point (삼 칠 볼트).
_WIDE_SIGNS = str.maketrans("％＄￦＋－＝／＜＞＾＊＆（）∼", "%$₩+-=/<>^*&()~", "\u200b\u2060\ufeff")
_WIDE_SIGN = re.compile("[％＄￦＋－＝／＜＞＾＊＆（）∼\u200b\u2060\ufeff]")  # translated only where one is
_WIDE_BETWEEN_DIGITS = re.compile(r"(?<=\d)[．，：](?=\d)")
# A relation typed in ASCII, "n>=3이면", "x <= 5", "x != 0" (espeak: English "greater or equal", "not equals"): as its
# sign, read as a bound or "≠" is; not an arrow's "<=>", "<==", "=>" nor code's "!==".
_ASCII_RELATION = re.compile(
    r"(?=[<>!]=)(?<=[\w)\s])(?:(>=)|(<=)|(!=))(?=[\s\w(\-−.])"
)  # the sign looked for first
_RELATION_SIGNS = {">=": "≥", "<=": "≤", "!=": "≠"}
# The other forms of "≤" and "≥", "0 ≦ x ≦ 1" (JIS's, as Japanese and some Korean input methods give them), "a ⩽ b"
# (the slanted ones of math fonts): espeak said nothing for them and no rule read them (0 x 1): as the signs.
_OTHER_BOUND_SIGNS = str.maketrans({"≦": "≤", "≧": "≥", "⩽": "≤", "⩾": "≥"})
# Markdown emphasis, "**전압**을" or "__전압__을": no word "asterisk", and no pause between the word and its
# particle (a space there made espeak read "전압 을" as two words). Only a pair that opens a word is dropped
# whole; any other star is a space ("2**10" is no 210, "a*b" no word "ab"), as are other underscores' runs.
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{2,3})(?=[^\s*_])([^*_\n]{1,200}?)(?<=[^\s*_])\1(?![*_])")
_STARS = re.compile(r"\*+(?!=)|_{2,}")
# Most of a lecture's sentences are Hangul words and sentence marks alone ("배터리는 화학 에너지를 …"): no rule
# here can match one but a Korean outline's list mark ("가. 전압을 …"), and the other passes are skipped (31 of
# the lecture's 39 previews: 107 → 1.8 µs, the median of the 39; `benchmarks/reading_cost.py`). Each rule's
# pattern is checked against this class by `tests/test_korean_reading_skips.py`: a character any rule reads does
# not belong in it.
PLAIN = re.compile(r"""[가-힣\s.,?!'"():;·“”‘’…]*""")


def spoken(text: str) -> str:
    """`text` with its numbers, units and symbols in the words a Korean reader says for them; a web
    address's path and query as written."""
    if PLAIN.fullmatch(text):
        return list_marks_spoken(text)
    text, paths = held.paths_held(text)
    if "<3" in text:
        text = english_reading.HEART.sub(english_reading.heart, text)
    if "**" in text:  # "x**2" as "x^2", an English sentence's too
        text = formulas.python_powers(text)
    # "‹" and "›" as "<" and ">" before an English sentence's bounds are said (korean18: x 2파이 미만)
    text = english_reading.angle_relations(text)
    text = held.english_equals_given_back(_numbers_spoken(held.english_held(text)))
    text = subscript_index_said(text)  # "αₙ" 알파 n, last: the bounds' rules place an index first
    return held.paths_given_back(text, paths)


# The passes of each of the four groups below all need a digit (`tests/test_korean_reading_skips.py` checks each
# pattern): a text without one skips the group, a search for one in place of its passes' (`_numbers_spoken`).
_DIGIT = re.compile(r"\d")
_BOUND_SIGN = re.compile("[<>≤≥]")  # what the bounds between variables need
_SET_SIGN = re.compile("[∈∉⊂⊆⊊⊄⊈⊃⊇∪∩∖∧∨∀∃ℝℕℤℚℂ∅]")  # what `korean_sets` reads


def _numbers_spoken(text: str) -> str:
    """Each group of passes in the order their patterns need: signs, marks and bounds, numerals, units, formulas."""
    # "x̄ = 3" x 바는 3, after an English sentence's x bar and before "=" takes the accent's particle
    text = _signs_plain(accents.accents_said(text))
    written = text  # as the writer put its signs, for `chains.subject_of_statement`
    text = _marks_and_bounds(text)
    text = _numerals_and_dates(text)
    if _BOUND_SIGN.search(text):
        text = code_comparisons.CODE_COMPARISON.sub(
            code_comparisons.code_comparison, text
        )  # "while (lo <= hi)"
        text = ranges.VARIABLE_BOUND.sub(ranges.variable_bound, text)
    text = dates.WEEKDAY_RANGE.sub(template(r"\1요일에서 \2요일"), text)
    text = _phones_and_ranges(text)
    text = number_ranges.TILDE.sub(" ", text)  # "감사합니다~": a drawn-out ending, not the word "tilde"
    text = _amounts(text)
    text = _units_said(text)
    if "!" in text:
        text = _factorials_said(text)
    text = _operators_said(text)
    text = chains.subject_of_statement(text, written)  # "값이 x ≤ 1입니다": 값 x가, once every bound is said
    text = code.formula_joins_said(text)  # "0 <= x && x < n": 그리고, once every bound is said
    text = _fractions_said(text)
    text = _clocks_and_counters(text)
    return _relations_said(text)


def _signs_plain(text: str) -> str:
    """Wide, ASCII and braced signs in the one form the rules after read, an ion's charge before it is a power."""
    if _WIDE_SIGN.search(text):
        text = text.translate(_WIDE_SIGNS)
    # "x^{2}" as "x^2", before any rule reads the exponent's "-" or letter
    text = formulas.BRACED_EXPONENT.sub(template(r"^\1"), text)
    text = sets.dimensions_held(text)  # "ℝ^{nm}", "ℝⁿ₊" before a power reads the dimension
    text = functions.spoken(text)  # "x^{n+1}", "sin²x", "∂f/∂x" before the powers, "/" and "∂" are read
    text = _WIDE_BETWEEN_DIGITS.sub(lambda m: chr(ord(m.group()) - 0xFEE0), text)
    text = _ASCII_RELATION.sub(lambda m: _RELATION_SIGNS[m.group()], text)
    text = formulas.LEADING_POINT.sub("0", text.translate(_OTHER_BOUND_SIGNS))  # "p = .048": 0 점 영사팔
    return charges.charges_spoken(text)  # "Ca²⁺" before its "²" is a power


def _marks_and_bounds(text: str) -> str:
    """List marks and letters, then chains and bounds, before a bound's number is read as a numeral."""
    text = marks_spoken(text)  # list marks, Roman numerals, acronyms, "A4", "/", "&" and signs
    text = arrows.ascii_arrows(text)  # "A -> B" before its ">" is a bound; "™", "®" and "©"
    if _BOUND_SIGN.search(text):
        text = chains.spoken(text)  # "a ≤ b ≤ c" before "b ≤ c" is a bound
        if "π" in text:
            text = ranges.PI_BOUND.sub(ranges.bound, text)  # "θ < π이면"
            text = ranges.PI_BOUNDED_BY.sub(ranges.pi_bounded_by, text)  # "-π < x"
    if "|" in text:
        text = absolute.BOUNDED_BY_ABSOLUTE.sub(absolute.bounded_by_absolute, text)  # "x < |y|"
        text = absolute.ABSOLUTE_BOUND.sub(absolute.absolute, text)  # "|x - a| < δ", after the chains'
    return text


def _units_said(text: str) -> str:
    """Units and symbols after a number, and a bare "%", as words."""
    text = units.WORD_PER_UNIT.sub(units.word_per_unit, text)
    if "⁻" in text:  # "mol⁻¹"; its pattern scanned the lecture's first 2 000 characters in 50 µs
        text = units.INVERSE_UNIT.sub(units.inverse_unit, text)
    text = units.UNIT.sub(units.unit_word, text)
    text = units.BARE_UNIT.sub(lambda m: units.BARE_UNITS[m.group(1)], text)
    text = units.SYMBOL.sub(lambda m: " " + _SYMBOLS[m.group(1)], text)
    text = units.BARE_LITER.sub(lambda m: "리터당" if m.group(1) else "엘", text)
    return text.replace("%", " 퍼센트")  # "몇 %": no number before it, still not the English word


def _factorials_said(text: str) -> str:
    """ "n!" and the products and quotients of factorials, before "!" could be read as anything else."""
    text = formulas.FACTORIAL.sub(" 팩토리얼", text)
    text = formulas.FACTORIAL_AFTER.sub(template(r"\1 팩토리얼"), text)
    text = formulas.FACTORIAL_PARTICLE.sub(
        lambda m: " 팩토리얼" + (particles.particle_after("팩토리얼", m.group(1)) if m.group(1) else ""),
        text,
    )
    text = formulas.BRACKET_FACTORIAL.sub(formulas.bracket_factorial, text)
    text = formulas.DIVIDED_FACTORIAL.sub(" 나누기 ", text)
    return formulas.FACTORIAL_PRODUCT.sub(" 곱하기 ", text)


def _operators_said(text: str) -> str:
    """Powers, signs and a formula's operators as words, then the bounds on whole expressions."""
    text = code.code_steps_said(text)  # "x -= 1", "i--" (korean61: x equals 1, i: the minus lost)
    text = formulas.UNARY_MINUS.sub("마이너스 ", text)  # "F = -kx" (korean61: F는 -kx, the sign unsaid)
    text = formulas.CHI_SQUARE.sub("카이제곱", text)  # "χ² 검정", before a power reads 카이의 2제곱
    text = formulas.POWER.sub(formulas.power, text)
    text = formulas.BRACKET_POWER.sub(formulas.bracket_power, text)
    text = formulas.SIGN.sub(formulas.sign, text)
    text = formulas.TIMES_AFTER.sub("배", text)
    text = formulas.TIMES_BEFORE.sub(template(r"\1배"), text)
    text = formulas.OPERATOR.sub(lambda m: " 나누기 " if "÷" in m.group(0) else " 곱하기 ", text)
    text = formulas.PLUS_MINUS.sub(lambda m: " 더하기 " if "+" in m.group(0) else " 빼기 ", text)
    text = formulas.PLUS.sub(" 플러스 ", text)
    text = formulas.MINUS_AFTER_POWER.sub(" 마이너스 ", text)
    if "(" in text:
        text = formulas.BRACKET_MINUS.sub(formulas.bracket_minus, text)
    text = formulas.TIMES_X.sub(" 곱하기 ", text)
    text = ranges.EXPRESSION_BOUND.sub(ranges.expression_bound, text)
    return ranges.MISPLACED_INDEX.sub(ranges.index_on_its_term, text)  # "x ≤ 2σᵢ"


def _fractions_said(text: str) -> str:
    """Markdown emphasis dropped, "24/7" and fractions read, a power's denominator before a plain one."""
    text = _EMPHASIS.sub(template(r"\2"), text)
    text = _STARS.sub(" ", text)
    text = formulas.QUARTER.sub(template(r"\1 4"), text)
    text = formulas.AROUND_THE_CLOCK.sub("24 7", text)
    if "제곱" in text:
        text = formulas.POWER_DENOMINATOR.sub(formulas.power_denominator, text)  # "x/2²" before "x/2"
    text = formulas.FRACTION.sub(template(r"\2분의 \1"), text)
    if "/" in text:
        text = formulas.PI_FRACTION.sub(template(r"\2분의 \1"), text)
        text = formulas.LETTER_FRACTION.sub(formulas.letter_fraction, text)
        text = formulas.GREEK_FRACTION.sub(formulas.greek_fraction, text)
    return formulas.VULGAR_FRACTION.sub(formulas.vulgar, text)


def _relations_said(text: str) -> str:
    """Math names, set signs, arrows, "≠" and "=" last: the words before each sign are said by now."""
    text = formulas.MATH_NAME.sub(lambda m: _MATH_NAMES[m.group()], text)
    if _SET_SIGN.search(text):
        text = sets.spoken(text)  # "x ∈ A", "A ∪ B", "∀x": before the arrows' particles
    text = arrows.LIMIT.sub(arrows.limit, text)
    text = arrows.ARROW.sub(arrows.arrow, text)  # last but "=": the words before a sign are said by now
    text = charges.one_sided_said(text, charges.IN_KOREAN)  # "x에서 0⁻": 0 마이너스, after the arrow's words
    if "≠" in text:
        text = arrows.SUBJECT_NOT_EQUAL.sub(arrows.subject_not_equal, text)  # "값이 0 ≠ 1입니다"
    text = arrows.NOT_EQUAL_CLAUSE.sub(arrows.not_equal_clause, text)
    text = arrows.NOT_EQUAL.sub(arrows.not_equal, text)
    if "¬" in text:
        text = sets.negations_spoken(text)  # "¬q → ¬p" a conditional by now
    if "=" in text:
        text = code.assignments_said(text)  # "int i = 0;": code's, before "=" is a formula's
        # "Use let x = 3; here.": an English sentence's "=" left to espeak's English "equals"
        english = code.english_sentences(text)
        return formulas.EQUALS.sub(
            lambda m: m.group() if code.inside(english, m.start()) else formulas.equals(m), text
        )
    return text


def _numerals_and_dates(text: str) -> str:
    """Bounds, grouped thousands, ordinals, pages, versions, times of day and dates."""
    if not _DIGIT.search(text):
        return text
    text = dates.VERSE.sub(dates.verse, text)  # "시편 23:1~6" before a range or a clock reads it
    text = ranges.FORMULA_BOUNDED_BY.sub(ranges.formula_bounded_by, text)
    text = ranges.CODE_BOUNDED_BY.sub(ranges.code_bounded_by, text)  # "if (0 <= x &&"
    text = ranges.BOUNDED_BY.sub(lambda m: f"{m.group(1)} {ranges.LOWER_BOUND_WORDS[m.group(2)]} ", text)
    text = bracket_bounds.BRACKET_BOUND.sub(ranges.bound, text)  # "x ≥ 2(x - 1)" before BOUND
    text = ranges.BOUND.sub(ranges.bound, text)
    text = numerals.GROUPED.sub(lambda m: m.group(0).replace(",", ""), text)
    text = formulas.SCIENTIFIC.sub(  # "1.8e+03": 10의 3제곱 (korean16: 03제곱, a zero said)
        lambda m: (
            f"{m.group(1)} 곱하기 10의 {m.group(2).strip('+')}{m.group(3).lstrip('0') or '0'}제곱"
            + (particles.particle_after("제곱", m.group(4)) if m.group(4) else "")
        ),
        text,
    )
    text = numerals.ENGLISH_COMPOUND_ORDINAL.sub(numerals.english_ordinal, text)
    text = numerals.ORDINAL.sub(template(r"\1번째"), text)
    text = numerals.PAGE.sub(template(r"\1페이지"), text)
    text = dates.DATED_EVENT.sub(dates.dated_event, text)
    text = numerals.VERSION.sub(lambda m: m.group().replace(".", " 점 "), text)
    text = numerals.NUMBER_SIGN.sub(numerals.number_sign, text)
    text = dates.MERIDIEM_HOURS.sub(dates.meridiem_hours, text)
    text = dates.MERIDIEM_AFTER.sub(dates.meridiem, text)
    text = dates.MERIDIEM_BEFORE.sub(lambda m: "오전 " if m.group(1) in "Aa" else "오후 ", text)
    text = dates.MERIDIEM_RANGE.sub("에서 ", text)
    text = dates.DATE.sub(dates.year_month_day, text)
    text = dates.SHORT_DATE.sub(dates.year_month_day, text)
    text = dates.YEAR_MONTH.sub(lambda m: f"{m.group(1)}년 {int(m.group(2))}월", text)
    text = dates.MONTH_DAY.sub(lambda m: f"{int(m.group(1))}월 {int(m.group(2))}일", text)
    text = dates.WEEKDAY.sub(template(r" \1요일"), text)
    return text


def _phones_and_ranges(text: str) -> str:
    """Phone numbers and ranges."""
    if not _DIGIT.search(text):
        return text
    text = phones.PHONE.sub(phones.phone, text)
    text = phones.SERVICE_PHONE.sub(phones.service_phone, text)
    text = phones.INTERNATIONAL_PHONE.sub(
        lambda m: "플러스 " + phones.phone_digits(m.group(1, 3, 4, 5)), text
    )
    text = number_ranges.HYPHEN_RANGE.sub(number_ranges.hyphen_range, text)
    text = number_ranges.YEAR_RANGE.sub(number_ranges.year_range, text)
    text = number_ranges.CLOCK_RANGE.sub("~", text)
    text = number_ranges.RANGE.sub(template(r"\1에서 "), text)
    return text


def _amounts(text: str) -> str:
    """Durations, speeds, temperatures, amounts of money and rates per unit."""
    if not _DIGIT.search(text):
        return text
    text = dates.HOURS_MINUTES.sub(template(r"\1시간 \2분"), text)
    text = units.PER_HOUR.sub(units.per_hour, text)
    text = units.PER_SECOND_SQUARED.sub(template(r"\1 미터 퍼 초 제곱"), text)
    text = units.PER_SECOND.sub(units.per_second, text)
    text = units.FAHRENHEIT.sub(template(r"화씨 \1도"), text)
    text = units.US_DOLLARS.sub("미화 $", text)
    text = units.SHELL_PARAMETERS.sub(units.shell_parameters, text)
    text = units.SCALED_RANGE.sub(units.scaled_range, text)
    text = units.SCALED_AMOUNT.sub(units.scaled_amount, text)
    text = units.DOLLARS_AFTER.sub(units.dollars_after, text)
    text = units.CURRENCY_RANGE.sub(units.currency_range, text)
    text = units.CURRENCY_AMOUNT.sub(units.currency_amount, text)
    text = units.PER_UNIT.sub(lambda m: f" {_UNITS[m.group(1)]} 퍼 {_UNITS[m.group(2)]}", text)
    return text


def _clocks_and_counters(text: str) -> str:
    """June and October, clock times, ratios, native numbers before counters, decimals."""
    if not _DIGIT.search(text):
        return text
    text = dates.MONTH.sub(dates.june_or_october, text)
    text = formulas.PORT_MAPPING.sub(template(r"\1\2\3\4 콜론 \5"), text)
    text = dates.SCORE.sub(dates.score, text)  # "3:16로 이겼다" before a clock reads 세 시 16분
    text = dates.CLOCK.sub(dates.clock, text)
    text = formulas.RATIO.sub(template(r"\1 대 "), text)
    text = numerals.COUNTED.sub(numerals.native, text)
    text = numerals.DOTTED.sub(numerals.dotted, text)
    return text


def is_korean(lang: str) -> bool:
    """`lang` names Korean: ko, ko-KR, kor, korean, in any case."""
    return language_code(lang).split("-", 1)[0] in ("ko", "kor", "korean")


def is_english(lang: str) -> bool:
    """`lang` names English: en, en-US, en-gb, eng, english, in any case."""
    return language_code(lang).split("-", 1)[0] in ("en", "eng", "english")


def spoken_form(text: str, lang: str) -> str:
    """The text espeak-ng is given: in Korean, composed and with its numbers, units and symbols written
    out as words; in English with its powers and relation signs as words (`english_reading`); in any
    other language unchanged."""
    if is_korean(lang):
        return spoken(readable(text))
    return english_reading.spoken(readable(text)) if is_english(lang) else text
