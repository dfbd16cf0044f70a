"""Units, percent and degree signs and currency amounts written out as a Korean reader says them.

espeak-ng 1.52's Korean voice read units as English letter names ("50kW": "오십 kay double-u", "25°C":
"이십오 see", "℃" nothing), "%" as English "percent", a currency sign not at all ("$5": "오") and a unit
named with no number in English letters; a part of `korean_reading`, which applies these in its order.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, particle_after
from .korean_words import CURRENCY as _CURRENCY
from .korean_words import UNITS as _UNITS


def alternatives(words: dict[str, str]) -> str:
    """`words` as one pattern's alternatives, the longest first: "kWh" is no "kW" and an "h"."""
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


# ... and after a number's superscript power, "10⁻³ m", "10⁶ W" (espeak: 엠, 더블유): 10의 마이너스 3제곱 미터; not after a
# letter's, "x² m" (`unit_word` looks behind the superscripts for the number).
UNIT = re.compile(
    rf"(?<=[\d⁰¹²³⁴⁵⁶⁷⁸⁹]) ?({alternatives(_UNITS)})(?![A-Za-z0-9²³+])"
)  # "5m", not "5min", "3A+"
_NUMBERS_POWER = re.compile(r"\d⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}$")
# A unit to a negative power, "6.02×10²³ mol⁻¹", "5 s⁻¹", "10 m⁻²" (it was 몰⁻¹, the power unsaid; "s⁻¹" s의 마이너스
# 1제곱): per the unit, 퍼 몰, 퍼 초, 퍼 제곱미터; "3 ms⁻¹", as physics writes it, 3 미터 퍼 초.
# A particle after it in the form the unit's word takes, "5 s⁻¹이" 5 퍼 초가 (it was 퍼 초이: 이 for 일).
INVERSE_UNIT = re.compile(
    rf"(?<=[\d⁰¹²³⁴⁵⁶⁷⁸⁹]) ?({alternatives(_UNITS)}|s)⁻([¹²³])(?![⁰¹²³⁴⁵⁶⁷⁸⁹])(?:{PARTICLE})?"
)
_PER_POWERS = {"¹": "", "²": "제곱", "³": "세제곱"}
# "3A반", "2A동", "5A형", "모델 3A": a class's, a building's, a kind's or a model's name (삼 에이 반, as a
# Korean says it), not 3 암페어; "3A의", "3A용", "16A 콘센트" are a current.
_LABEL_AFTER = re.compile(r"반|동(?!안)|호(?!환)|조(?!건|절)|형|팀|석|층|구역|등급|타입|모델|게이트|라인")
# A hexadecimal number's letters are no unit: "0x1A" and "0x10h" were 0x1 암페어 and 0x열 시간.
_HEX_BEFORE = re.compile(r"(?:0[xX]|#)[0-9A-Fa-f]{0,16}$")
# An English sentence's operators are its words by then, "2h plus 1" (`english_reading`), its "=" held as U+FDD0.
_TERM_NEXT = re.compile(r" ?[-+=×*/^\ufdd0]| (?:plus|minus|times)(?![A-Za-z])")
# ... and after an operator or a function's bracket, "f(x+2h)", "/2h", "O(2h)" (두 시간), not after a range's
# hyphen ("1-2h"), a word's bracket ("충전(2h)") or a word's slash ("12h 명/12h 암").
_OPERAND_AFTER = re.compile(
    r"(?:[+×*^]|(?<![가-힣])/|(?<!\d)(?<!\d )-|(?<=[A-Za-z])\(|(?<![A-Za-z])(?:plus|minus|times)(?= )) ?\d+(?:\.\d+)?$"
)
_LABEL_BEFORE = re.compile(r"(?:모델|[Mm]odel|MODEL|타입|[Tt]ype|TYPE) ?\d{1,4}$")
SYMBOL = re.compile(r"(?<=\d) ?(%p(?![A-Za-z])|%|‰|°C|℃|°)")
# A unit named with no number ("단위는 kWh입니다", "kWh당"): espeak spelled it in English letters (kay
# double-u eitch). Only units of two or more characters that are no word or name: not "A", "m", "V", not
# the capitals "KB", "MB", "GB" (KB국민은행), nor "Ah", "Pa", "cc" (an e-mail's copy), "ha", "cal", "mol",
# "atm" or a time's ("min()"). The liter's "ℓ" alone is 리터 as "ℓ당" (per liter); any other is a length's
# letter, "길이 ℓ", "ℓ = 2m" (엘; espeak: "letter 2113", and 리터 was read for it).
BARE_UNITS = {
    unit: word
    for unit, word in _UNITS.items()
    if len(unit) > 1
    and not unit.isupper()
    and unit not in ("Ah", "Pa", "cc", "ha", "cal", "mol", "atm", "hr", "hrs", "min", "mins", "sec")
}
BARE_UNIT = re.compile(rf"(?<![A-Za-z\d.\-/])({alternatives(BARE_UNITS)})(?![A-Za-z\d²³/.\-])")
BARE_LITER = re.compile(r"ℓ(당)?")
# ... and after a superscript power, "3×10⁸ m/s", "10⁵ km/h" (it was 10의 8제곱 m/s, the unit English, "slash"):
# 10의 8제곱 미터 퍼 초, the power kept whole for `korean_formulas`.
_SUPERSCRIPT_POWER = "(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})?"
PER_HOUR = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?){_SUPERSCRIPT_POWER} ?km/h(?![A-Za-z])")
PER_SECOND = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?){_SUPERSCRIPT_POWER} ?m/s(?![A-Za-z²])")
# ... but after a power's exponent, "3 × 10^8 m/s", the unit after the number (it was 10^초속 8미터, the caret left
# unsaid): 10의 8제곱 미터 퍼 초.
_CARET_BEFORE = re.compile(r"\^ ?[-−]?$")
# An acceleration, "9.8m/s²": 미터 퍼 초 제곱 (it was 초속 구 점 팔 미터 and a stray 이, the "²").
PER_SECOND_SQUARED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?m/s²")
FAHRENHEIT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?(?:°F|℉)")
# ... with its Korean scale, "$100만", "$3억", "$5천만" (it was 100 달러만, "only 100 dollars", 3 달러억): 100만 달러, not
# "$100만큼" (as much as 100 달러) nor "$100조차" (not even 100 달러; not 100조 달러차); and the particle after it in
# the form the currency's word takes, "$100을" 100 달러를 (it was 달러을: 을 for 백).
# The word written after it too is said once, with what follows it: a particle or a copula, "$3억 달러로", "$100
# 달러까지", "$100 달러입니다" (it was 달러 달러로); a word it only opens, "달러화", "유로존", "원가", is another word.
_WRITTEN_WORD = re.compile(
    r" ?(달러|유로|파운드|엔|원)(?![가-힣](?<![을를이가은는과와으의에도만로까부보씩짜어대나면인입였라며고야랑쯤밖뿐조처마]))"
)
_AMOUNT = r"\d+(?:\.\d+)?(?:[십백천]?[만억조](?!큼|차)|[백천])?"
# ... and "$100+", "$100+ 예산" (espeak: 백 달러 "plus"): so much or more, 100 달러 이상; not a sum of amounts, "$1+$2".
CURRENCY_AMOUNT = re.compile(
    rf"([$€£¥₩]) ?({_AMOUNT})(\+(?![\w(+$€£¥₩])|\+(?=의|{PARTICLE}))?(?:{PARTICLE})?"
)
# A range of amounts, "$100-200", "$100-$200", "$100~200" (its "~" 에서 by then: espeak said 백 달러 이백, or 200 with
# no currency): 100에서 200 달러, the currency's word once, after the range. Not "$100에서 200명" (people, no amount),
# nor a difference, "$500 - 200 = $300", "$500-200" (it runs down).
# ... and a copula or a word of its size after it, "$100-200입니다", "$100-200 사이" (a counter, "명", is no money's).
_ENDINGS = "입니|이다|이고|이며|이었|였|인(?![가-힣])|의|에|까지|정도|사이|수준|선(?![가-힣])"
CURRENCY_RANGE = re.compile(
    rf"([$€£¥₩]) ?({_AMOUNT})(?: ?[-–] ?|에서 )\1? ?({_AMOUNT})(?![\d.,])(?:{PARTICLE})?(?![A-Za-z\d]|(?!달러|유로|파운드|엔|원|{_ENDINGS})[가-힣]| ?[-−+=×*/])"
)
# A shell script's positional parameters, "$(($1-$2))", "echo $1+$2" (it was 1에서 2 달러, a range of money): the
# parameters as a lecturer reads code, 달러 1 빼기 달러 2; only where the text says it is code, a shell's "$((", "echo",
# "expr" or "let" or the words 셸, 쉘, 스크립트, 인자, 인수 or 매개변수 in the 40 characters before. "$1-$2 사이" is money.
# ... and so is one with a word of money between that word and it or just after it, or a range's word after it, "셸
# 호스팅 비용은 $5-$9", "인수 가격은 $1-$2", "$5-$9 가격", "인자 값은 $1-$2 사이" (the k6 rule read 달러 5 빼기 달러
# 9: a price as a subtraction).
SHELL_PARAMETERS = re.compile(r"\$([0-9])([-+])\$([0-9])(?![\d.,]|[KMBT만억]| ?(?:달러|불))")
_SHELL_BEFORE = re.compile(
    r"\$\(\(|(?<![A-Za-z])(?:echo|expr|let)(?![A-Za-z])|셸|쉘|스크립트|인자|인수|매개변수"
)
_MONEY_WORD = re.compile(r"가격|비용|금액|요금|매출|예산|단가|수수료|급여|연봉|가치")
_RANGE_WORD_AFTER = re.compile(r" ?(?:사이|정도|가량|내외|수준|선(?![가-힣]))")


def shell_parameters(match: re.Match[str]) -> str:
    text, start = match.string, match.start()
    cue = max(_SHELL_BEFORE.finditer(text, max(0, start - 40), start), key=lambda m: m.start(), default=None)
    end = match.end()
    money = cue and (_MONEY_WORD.search(text, cue.end(), start) or _MONEY_WORD.search(text, end, end + 8))
    if not cue or money or _RANGE_WORD_AFTER.match(text, end):
        return match.group(0)
    first, sign, last = match.groups()
    return f"달러 {first} {'빼기' if sign == '-' else '더하기'} 달러 {last}"


# An amount with an English scale, "$1.5B" (espeak: 일 점 오 달러 비): in Korean units, 15억 달러.
SCALED_AMOUNT = re.compile(
    rf"([$€£¥₩]) ?(\d{{1,6}}(?:\.\d{{1,3}})?) ?([KMBT])(?![A-Za-z])(\+(?![\w(+$€£¥₩])|\+(?=의|{PARTICLE}))?"
    rf"(?:{PARTICLE})?"
)  # "$1.5M+" 이상; a particle in the form 달러 takes, "$2M이" 200만 달러가 (it was 달러이)
_SCALES = {"K": 3, "M": 6, "B": 9, "T": 12}
# A range of them, "$1M-$2M", "$5K-10K", "$1-2B" (it was 100만 달러-200만 달러, 5000 달러-10K): 100만에서 200만 달러; its
# "~" is 에서 by then ("$1M~2M").
SCALED_RANGE = re.compile(
    r"([$€£¥₩]) ?(\d{1,6}(?:\.\d{1,3})?) ?([KMBT])?(?: ?[-–] ?|에서 )\1? ?(\d{1,6}(?:\.\d{1,3})?) ?([KMBT])(?![A-Za-z])"
    rf"(?:{PARTICLE})?"
)
# A dollar sign after its amount, "100$", "5.99$" (espeak said nothing for it): 100 달러.
DOLLARS_AFTER = re.compile(
    rf"(?<![\w.$])(\d+(?:\.\d+)?)\$(?![A-Za-z\d_$])(?:{PARTICLE})?"
)  # "100$은": 100 달러는
US_DOLLARS = re.compile(r"(?<![A-Za-z])US ?\$(?= ?\d)")  # "US$100": 미화 100 달러 (it was US100 달러)
# espeak's Korean voice says the English word "slash" for "/": "250Wh/kg" is 와트시 퍼 킬로그램.
PER_UNIT = re.compile(rf"(?<=\d) ?({alternatives(_UNITS)})/({alternatives(_UNITS)})(?![A-Za-z0-9²³])")
# ... and per a unit after a word, "1,000원/kg", "회/s" (espeak: "slash kay gee").
# A letter alone before a word is none ("원/A4" is 원 A포 by then), nor one after a word with no number
# before it ("플랜/A", "등급/A", "시간/h": a label's or an axis' letter; 플랜 퍼 암페어, 시간 퍼 시간).
_COUNTED_BEFORE = re.compile(r"\d ?[가-힣]{1,3}$")
WORD_PER_UNIT = re.compile(rf"(?<=[가-힣])/({alternatives(_UNITS)})(?![A-Za-z0-9²³]|(?<=/[A-Za-z])[가-힣])")


def per_hour(match: re.Match[str]) -> str:
    """ "300km/h" as 시속 300킬로미터; after a caret, "10^5 km/h", 5 킬로미터 퍼 시간 (the power's exponent kept)."""
    return _speed(match, "시속 {}킬로미터", "{} 킬로미터 퍼 시간")


def per_second(match: re.Match[str]) -> str:
    """ "5 m/s" as 초속 5미터; after a caret, "10^8 m/s", 8 미터 퍼 초."""
    return _speed(match, "초속 {}미터", "{} 미터 퍼 초")


def _speed(match: re.Match[str], alone: str, exponent: str) -> str:
    start = match.start()
    after_caret = _CARET_BEFORE.search(match.string, max(0, start - 3), start)
    if match.group(2):
        return exponent.format(match.group(1) + match.group(2))
    return (exponent if after_caret else alone).format(match.group(1))


def currency_amount(match: re.Match[str]) -> str:
    """ "$100을" as 100 달러를: the number, its currency's word, the particle in the word's form; the word once
    where it is written too, "$3억 달러" (3억 달러; it was 3 달러억 달러)."""
    (sign, number, or_more), particle = (
        match.group(1, 2, 3),
        match.groups()[-1],
    )  # the look-ahead's group between
    if or_more:  # "$100+를": 100 달러 이상을
        return f"{number} {_CURRENCY[sign]} 이상{particle_after('이상', particle) if particle else ''}"
    return _amount_said(match, number, _CURRENCY[sign], particle)


def currency_range(match: re.Match[str]) -> str:
    """ "$100-200" as 100에서 200 달러: the currency's word once, after the range's last amount."""
    sign, first, last, particle = match.groups()
    if first.replace(".", "").isdigit() and last.replace(".", "").isdigit() and float(first) >= float(last):
        return match.group(0)  # "$500-200": runs down, a difference (read as before)
    return f"{first}에서 {_amount_said(match, last, _CURRENCY[sign], particle)}"


def _amount_said(match: re.Match[str], number: str, word: str, particle: str | None) -> str:
    written = _WRITTEN_WORD.match(match.string, match.end())
    if not particle and written and written.group(1) == word:
        return number
    return f"{number} {word}{particle_after(word, particle) if particle else ''}"


def scaled_amount(match: re.Match[str]) -> str:
    """ "$1.5B" as 15억 달러: the amount in 조, 억 and 만 (espeak reads "15억" as 십오억)."""
    sign, number, scale, or_more, *_, particle = match.groups()  # the middle one the "+"'s look-ahead
    word = "이상" if or_more else _CURRENCY[sign]
    said = f"{_in_korean_units(number, scale)} {_CURRENCY[sign]}{' 이상' if or_more else ''}"
    return said + (particle_after(word, particle) if particle else "")


def scaled_range(match: re.Match[str]) -> str:
    """ "$1M-$2M", "$5-10M" as 100만에서 200만 달러, 500만에서 1000만 달러: the first takes the last's scale where it
    has none."""
    sign, first, first_scale, last, last_scale, particle = match.groups()
    if _scaled(first, first_scale or last_scale) >= _scaled(last, last_scale):
        return match.group(0)  # "$5M-$2M" runs down: a difference, each amount read alone
    start, word = _in_korean_units(first, first_scale or last_scale), _CURRENCY[sign]
    return f"{start}에서 {_in_korean_units(last, last_scale)} {word}{particle_after(word, particle) if particle else ''}"


def dollars_after(match: re.Match[str]) -> str:
    """ "100$" as 100 달러, "100$은" 100 달러는."""
    number, particle = match.groups()
    return f"{number} 달러{particle_after('달러', particle) if particle else ''}"


def _scaled(number: str, scale: str) -> int:
    whole, _, fraction = number.partition(".")
    return int(whole + fraction.ljust(_SCALES[scale], "0"))  # at most 3 decimals, the scale at least 3


def _in_korean_units(number: str, scale: str) -> str:
    amount = _scaled(number, scale)
    parts = []
    for unit, size in (("조", 12), ("억", 8), ("만", 4), ("", 0)):
        count, amount = divmod(amount, 10**size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts) or "0"


def word_per_unit(match: re.Match[str]) -> str:
    unit, start = match.group(1), match.start()
    if len(unit) == 1 and not _COUNTED_BEFORE.search(match.string, max(0, start - 5), start):
        return match.group(0)
    return f" 퍼 {_UNITS[unit]}"


def inverse_unit(match: re.Match[str]) -> str:
    """ "mol⁻¹" after a number as 퍼 몰; after a letter's power, "x² s⁻¹", left."""
    unit, power, particle = match.groups()
    if not _after_a_number(match.string, match.start()):
        return match.group(0)
    if unit == "ms":  # a physicist's "3 ms⁻¹" is meters per second, "ms⁻²" an acceleration
        if power not in "¹²":
            return match.group(0)
        said = " 미터 퍼 초" + (" 제곱" if power == "²" else "")
    else:
        said = f" 퍼 {_PER_POWERS[power]}{_UNITS.get(unit, '초')}"
    return said + (particle_after(said, particle) if particle else "")


def _after_a_number(text: str, start: int) -> bool:
    """A digit right before `start`, or a number's superscript power ("10³"), not a letter's ("x²")."""
    return "0" <= text[start - 1] <= "9" or bool(_NUMBERS_POWER.search(text, max(0, start - 5), start))


def hours_letter_is_a_variable(text: str, number_end: int, unit_end: int) -> bool:
    """An "h" after a number between a formula's operators or in a function's bracket, "2h + 1", "f(x+2h)": a
    variable, not hours (also for an English sentence's units, `english_reading`)."""
    return bool(
        _TERM_NEXT.match(text, unit_end) or _OPERAND_AFTER.search(text, max(0, number_end - 20), number_end)
    )


def unit_word(match: re.Match[str]) -> str:
    """A unit's word; an "A" or "J" apart from its number ("2 A와 B") or naming a class or a model
    ("3A반", "모델 3A") is the letter, not 암페어 or 줄."""
    unit, text, start = match.group(1), match.string, match.start()
    if not _after_a_number(text, start):
        return match.group(0)  # a letter's power, "x² m"
    if _HEX_BEFORE.search(text, max(0, start - 20), start) or (
        unit == "h" and hours_letter_is_a_variable(text, start, match.end())
    ):
        return match.group(0)  # "0x1A"; the variable of "2h + 1", "f(x+2h)"
    if unit in ("A", "J") and (
        match.group(0)[0] == " "
        or _LABEL_AFTER.match(text, match.end())
        or _LABEL_BEFORE.search(text[max(0, start - 12) : start])
    ):
        return match.group(0)
    return " " + _UNITS[unit]
