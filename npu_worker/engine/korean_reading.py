"""Korean text with digits, units and symbols written out as a Korean reader says them (`lang=ko`).

espeak-ng 1.52's Korean voice reads integers well (만, 억 and 조 included), but it has no decimal point
("3.7V" was "삼 칠 V", three seven; "1,234.5" lost its ".5"), drops a minus ("-5.5도" was "오 오 도"),
reads "%" as English "percent", "~" as English "tilde", units as English letter names ("50kW": "오십
kay double-u", "25°C": "이십오 see", "℃" nothing), a currency sign not at all ("$5": "오") and a phone
number as one large number; and it said every number Sino-Korean ("3개": 삼 개, "3:30": 삼 삼십), where a
counter takes a native one (세 개, 세 시 삼십 분). A lecture's text has more: "3-5개" (삼 오 개), "16:9"
(십육 구), "10^3" (십 삼), "/", "+", "=" (English words); its list marks, acronyms and signs are read first
(`korean_marks`). The words written here are Hangul, which espeak reads with its Korean rules.
Every pattern is anchored on a digit, a letter or a single symbol, with bounded repeats and look-behinds:
the work is linear in the text (2 000 characters: the lecture 4.4 ms, every form here mixed 5.5 ms, best of 30;
3.4 and 4.4 ms before the readings of years, versions, AM/PM, Greek letters, phone numbers and the like).
"""

from __future__ import annotations

import re

from .base import language_code
from .korean_marks import ENGLISH_DIGITS as _ENGLISH_DIGITS
from .korean_marks import marks_spoken
from .korean_words import CURRENCY as _CURRENCY
from .korean_words import MATH_NAMES as _MATH_NAMES
from .korean_words import NATIVE_ONES as _NATIVE_ONES
from .korean_words import NATIVE_TENS as _NATIVE_TENS
from .korean_words import SYMBOLS as _SYMBOLS
from .korean_words import UNITS as _UNITS
from .text_form import readable

_DIGITS = "영일이삼사오육칠팔구"
_PHONE_DIGITS = "공일이삼사오육칠팔구"  # a phone number's 0 is 공


def _alternatives(words: dict[str, str]) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


_UNIT = re.compile(rf"(?<=\d) ?({_alternatives(_UNITS)})(?![A-Za-z0-9²³+])")  # "5m", not "5min", "3A+"
# "3A반", "2A동", "5A형", "모델 3A": a class's, a building's, a kind's or a model's name (삼 에이 반, as a
# Korean says it), not 3 암페어; "3A의", "3A용", "16A 콘센트" are a current.
_LABEL_AFTER = re.compile(r"반|동(?!안)|호(?!환)|조(?!건|절)|형|팀|석|층|구역|등급|타입|모델|게이트|라인")
# A hexadecimal number's letters are no unit: "0x1A" and "0x10h" were 0x1 암페어 and 0x열 시간.
_HEX_BEFORE = re.compile(r"(?:0[xX]|#)[0-9A-Fa-f]{0,16}$")
_TERM_NEXT = re.compile(r" ?[-+=×*/^]")
# ... and after an operator or a function's bracket, "f(x+2h)", "/2h", "O(2h)" (두 시간), not after a range's
# hyphen ("1-2h"), a word's bracket ("충전(2h)") or a word's slash ("12h 명/12h 암").
_OPERAND_AFTER = re.compile(r"(?:[+×*^]|(?<![가-힣])/|(?<!\d)(?<!\d )-|(?<=[A-Za-z])\() ?\d+(?:\.\d+)?$")
_LABEL_BEFORE = re.compile(r"(?:모델|[Mm]odel|MODEL|타입|[Tt]ype|TYPE) ?\d{1,4}$")
_SYMBOL = re.compile(r"(?<=\d) ?(%p(?![A-Za-z])|%|‰|°C|℃|°)")
# A unit named with no number ("단위는 kWh입니다", "kWh당"): espeak spelled it in English letters (kay
# double-u eitch). Only units of two or more characters that are no word or name: not "A", "m", "V", not
# the capitals "KB", "MB", "GB" (KB국민은행), nor "Ah", "Pa", "cc" (an e-mail's copy), "ha", "cal", "mol",
# "atm" or a time's ("min()"). The liter's "ℓ" alone is 리터 as "ℓ당" (per liter); any other is a length's
# letter, "길이 ℓ", "ℓ = 2m" (엘; espeak: "letter 2113", and 리터 was read for it).
_BARE_UNITS = {
    unit: word
    for unit, word in _UNITS.items()
    if len(unit) > 1
    and not unit.isupper()
    and unit not in ("Ah", "Pa", "cc", "ha", "cal", "mol", "atm", "hr", "hrs", "min", "mins", "sec")
}
_BARE_UNIT = re.compile(rf"(?<![A-Za-z\d.\-/])({_alternatives(_BARE_UNITS)})(?![A-Za-z\d²³/.\-])")
_BARE_LITER = re.compile(r"ℓ(당)?")

_GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?![\d,])")
_DATE = re.compile(r"(?<![\d.\-/])(\d{4})([.\-/]) ?(\d{1,2})\2 ?(\d{1,2})(?![\d\-/]|\.\d)")
# A date with a two-digit year, "24.12.05" (espeak: 이십사 점 십이 점 영오), and a year's month "2024.03"
# (이천이십사 점 영삼): every part two digits, as such dates are written; a version "v10.12.01" is left, and
# an amount with cents, "$2019.10" (it was 2019 달러년 시월).
_SHORT_DATE = re.compile(r"(?<![\w.\-/$€£¥₩])(\d{2})(\.)(\d{2})\.(\d{2})(?![\d\-/]|\.\d)")
_YEAR_MONTH = re.compile(r"(?<![\w.\-/$€£¥₩])((?:19|20)\d{2})\.(0[1-9]|1[0-2])(?![\d\-/]|\.\d)")
# A month and day with its weekday, as a slide writes a deadline: "12/25(수)" is 12월 25일 수요일 (espeak:
# 이십오분의 십이 수, a fraction); a weekday in brackets after a date's 일, "5일(목)", is 목요일 too.
_MONTH_DAY = re.compile(r"(?<![\d/.])(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])(?= ?\([월화수목금토일]\))")
_WEEKDAY = re.compile(r"(?<=\d일)\.? ?\(([월화수목금토일])\)")  # "2024. 12. 5.(목)": its point too
# Weekdays from one to another, "월~금", "월요일~금요일" (espeak: 월 금, the 에서 lost): 월요일에서 금요일; not a
# date's 일, "20일~목요일" (20일요일), nor days to months, "일~월 단위" (일요일에서 월요일 단위).
_WEEKDAY_RANGE = re.compile(
    r"(?<![가-힣\d])([월화수목금토일])(?:요일)? ?[~～〜–] ?([월화수목금토일])(?:요일|(?![가-힣])(?! ?(?:단위|별)))"
)
# A phone number: "010-1234-5678", and as business cards write it, "010.1234.5678", "010 1234 5678" (espeak:
# 영 십 점 천이백삼십사 …, large numbers) and "(02) 123-4567"; its separators alike.
_PHONE = re.compile(
    r"(?<![\d\-.])(?:(0\d{1,2})([-. ])|\((0\d{1,2})\) ?)(\d{3,4})([-. ])(\d{4})(?![\d\-]|\.\d)"
)
# ... a company's number, "1588-1234" (espeak: 천오백팔십팔 천이백삼십사), unless it runs up as years or a
# range do ("1592-1598", "1500-3000원": `_service_phone`); and an international one, "+82-10-1234-5678"
# (플러스 팔십이 십 천이백 …).
_SERVICE_PHONE = re.compile(r"(?<![\d\-.])(1[5-8]\d\d)-(\d{4})(?![\d\-]|\.\d)")
_INTERNATIONAL_PHONE = re.compile(r"(?<![\w+])\+(\d{1,3})([- ])(\d{1,4})\2(\d{3,4})\2(\d{4})(?![\d\-]|\.\d)")
# ... and after a date's weekday, "3일(월)~5일(수)" (its 에서 was lost: 3일 월요일 5일 수요일).
_RANGE = re.compile(r"(?:(?<=\d)([^\s\d~～〜–]{0,4}?)|(?<=요일)) ?[~～〜–] ?(?=[-−+$€£¥₩]?\d)")
# A hyphen between numbers, spaced or not, is a range when a counter, unit or symbol follows ("3-5개" and
# "15 - 20분": 삼에서 오 개, as "3~5개"; espeak said "삼 오 개", three five, and 빼기 a minus); bare ("3-5", a score or a figure's number) it is left, and
# so is a figure's or section's number before a word that only opens like a counter ("그림 2-1 시스템",
# "표 4-2 개요": a counter after a space ends its word) or a pair that runs down ("그림 5-2도", "2-1장").
_RANGE_COUNTERS = (
    "개|명|살|마리|가지|권|잔|번(?!지)|곳|군데|시간|시|분|초|차례|송이|그루|켤레|달|년|월|일|주|배|회|장|쪽"
    "|페이지|층|세|도|원|달러|점|학년|차|단계|위|등|인|퍼센트"
)
_HYPHEN_RANGE = re.compile(
    rf"(?<![A-Za-z\d.\-])(\d+(?:\.\d+)?)(?:-| - )(?=(\d+(?:\.\d+)?)(?:(?:{_RANGE_COUNTERS})"
    rf"| (?:{_RANGE_COUNTERS})(?![가-힣])| ?(?:[%‰℃°]|(?:{_alternatives(_UNITS)})(?![A-Za-z0-9²³]))))"
)
# ... what follows such a range's last number: a company's number never runs up to one ("1800-2200 kcal").
_RANGE_TAIL = re.compile(
    rf"(?:{_RANGE_COUNTERS})| (?:{_RANGE_COUNTERS})(?![가-힣])| ?(?:[%‰℃°]|(?:{_alternatives(_UNITS)})(?![A-Za-z0-9²³]))"
)
# Years, "2020 - 2024" and "2020-2024" (espeak: 빼기, or the two years said as one run): a range, as
# "2020~2024"; not a difference, "2024 - 2020 = 4", nor one that runs down.
_YEAR_RANGE = re.compile(r"(?<![\w.\-])(1\d{3}|20\d\d)(?:-| - )(?=(1\d{3}|20\d\d)(?!\d|[.,]\d| ?[-−+=×*/]))")
# A standard's number and its year's edition, "IEEE 1588-2008", "KS C 1000-2005", is none (1588에서 2008); its
# body's letters may be spelled with hyphens by then ("I-E-C").
_STANDARD_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:I-?E-?E-?E|I-?S-?O|I-?E-?C|A-?N-?S-?I|A-?S-?T-?M|J-?I-?S|K-?S|D-?I-?N|B-?S|E-?N)"
    r"(?: [A-Z])? ?(?:Std\.? ?)?$"
)
# Hours and minutes, "2h 30m", "1h30m": the "m" is minutes, not 미터.
_HOURS_MINUTES = re.compile(r"(?<![\w.])(\d{1,3}) ?h ?(\d{1,2}) ?m(?![A-Za-z\d²³/])")
# "09:00 - 18:00": a range of times (a spaced hyphen between numbers is otherwise a minus: 빼기).
_CLOCK_RANGE = re.compile(r"(?<=\d:\d\d) ?- ?(?=\d{1,2}:\d\d)")
_TILDE = re.compile(r"[~～〜]+")
_PER_HOUR = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?km/h(?![A-Za-z])")
_PER_SECOND = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?m/s(?![A-Za-z²])")
# An acceleration, "9.8m/s²": 미터 퍼 초 제곱 (it was 초속 구 점 팔 미터 and a stray 이, the "²").
_PER_SECOND_SQUARED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?m/s²")
_FAHRENHEIT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?(?:°F|℉)")
_CURRENCY_AMOUNT = re.compile(r"([$€£¥₩]) ?(\d+(?:\.\d+)?)")
# An amount with an English scale, "$1.5B" (espeak: 일 점 오 달러 비): in Korean units, 15억 달러.
_SCALED_AMOUNT = re.compile(r"([$€£¥₩]) ?(\d{1,6}(?:\.\d{1,3})?) ?([KMBT])(?![A-Za-z])")
_SCALES = {"K": 3, "M": 6, "B": 9, "T": 12}
_US_DOLLARS = re.compile(r"(?<![A-Za-z])US ?\$(?= ?\d)")  # "US$100": 미화 100 달러 (it was US100 달러)
_SIGN = re.compile(r"(?<![\w)\]%.])([-−+±])(?=\d)")
# A power, "10^3" or "10³" (십의 삼제곱; espeak said "십 삼", ten three), "10^-3" or "10⁻³" with 마이너스.
# A bound, which espeak said nothing for: "SOC < 20%" is 20 퍼센트 미만, "≥ 80%" 이상, "> 45℃" 초과, "≤" 이하;
# between a number and a variable the sign bounds the variable: "20 ≤ x ≤ 40" is 20 이상 x 40 이하. Not a
# bracket ("<그림 1>", "<1>"), an arrow ("->") or a comparison of two numbers ("3 < 5").
_BOUND_WORDS = {"<": "미만", "≤": "이하", ">": "초과", "≥": "이상"}
_LOWER_BOUND_WORDS = {"<": "초과", "≤": "이상", ">": "미만", "≥": "이하"}
_BOUND = re.compile(
    r"(?<![\d<>=\-])(?<!\d )([<>≤≥]) ?([-−]?\d+(?:[.,]\d+)*"
    rf"(?: ?(?:%|‰|℃|°C?|[A-Za-zΩμµ]{{1,4}}(?![A-Za-z]))|{_RANGE_COUNTERS})?)(?! ?[\d>])"
)
_BOUNDED_BY = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?%?) ?([<>≤≥]) ?(?=[A-Za-z](?![A-Za-z]))")
# A number in scientific notation, "1e-3", "3.0E+8" (espeak: 일 이 삼, 삼 점 영 이 "plus" 팔): 곱하기 10의 제곱;
# not inside a hexadecimal, a hash or a colour ("0x1e3", "5e3f", "#1e3").
_SCIENTIFIC = re.compile(r"(?<![\w.#])(\d+(?:\.\d+)?)[eE]([-−+]?)(\d{1,3})(?![A-Za-z\d_]|\.\d)")
# A time with its half of the day, "3:00 PM", "PM 3:00", "10am" (espeak: 세 시 "pee em"): 오후 세 시.
# Not a concentration, "10 pM", "5 aM" (pico-, attomolar: 오후 열 시): a small letter before a capital M; nor
# the fine dust "PM2.5", "PM10" after a number ("3 PM10": 오후 세 시10).
_MERIDIEM_AFTER = re.compile(
    r"([01]?\d)(:[0-5]\d)? ?([AaPp])[Mm](?<![ap]M)(?![A-Za-z\d])"
)  # the hour checked by `_meridiem`
_MERIDIEM_BEFORE = re.compile(r"(?<![A-Za-z])([AaPp])[Mm](?<![ap]M) ?(?=(?:1[0-2]|0?[1-9]):[0-5]\d(?![\d:]))")
# An event of Korean history named by its date, "6.25 전쟁", "3.1절", "5.18 민주화운동" (espeak: 육 점 이오, a
# decimal): as Koreans say them, the month a number and the day its digits, 육이오, 삼일절, 오일팔; a day of
# tens is a number (6.10 민주항쟁: 육십), and 12.12 is 십이십이. Only the dates of such events: a section's
# heading, "2.1 전쟁의 원인", "2.3 절연 저항", "3.1 운동 방정식", stays a decimal (이일 전쟁, 삼일 운동 방정식);
# and "N.M절" is a section ("2.5절", "3.2절"), "3.1절" too where it is referred to as one ("3.1절에서 설명한",
# "3.1절과 3.2절").
_DATED_EVENT = re.compile(
    r"(?<![\d.])(1[0-2]|[1-9])\.([1-9]|[12]\d|3[01])(?![\d.])"
    r"(?= ?(?:전쟁|사변|혁명|민주항쟁|항쟁|사태|선언|광복절|광복|(절)(?:[은는이을를의에과와도]|까지|부터)?(?![가-힣]| ?참[고조])|의거|군사정변"
    r"|정변|참사|테러(?!리)|(?:민주화|독립)?운동(?:[은는이을를의에과와도]|(?![가-힣]))(?!의? ?(?:방정식|법칙|에너지))))"
)
_EVENT_DATES = frozenset(
    "1.4 1.21 2.8 2.28 3.1 3.15 4.3 4.16 4.19 4.27 5.16 5.18 6.3 6.10 6.15 6.25 6.29 7.4 8.15 9.11 9.19 9.28 "
    "10.4 10.26 10.29 11.3 12.3 12.12".split()
)
_OTHER_SECTION = re.compile(r"(?<![\d.])(?!3\.1절)\d{1,2}\.\d{1,2}절")  # "3.1절과 3.2절": sections
# A version with one point, "v2.10", "버전 3.12", "3.10 버전" (espeak: 이 점 일영, a decimal's digits one by
# one): its parts are numbers, 이 점 십.
_VERSION = re.compile(
    r"(?:[Vv](?<![A-Za-z][Vv])(?:er(?:sion)?\.? ?)?|버전 ?)\d+\.\d+(?!\d|\.\d)|(?<![\d.])\d+\.\d+(?= ?버전)"
)
# "No. 1", "No.5" (espeak: the English "no", the point a pause): 넘버, a single digit in English as in a name.
_NUMBER_SIGN = re.compile(
    r"(?<![A-Za-z])N[Oo]\. ?(\d{1,4})(?!\d|\.\d|[번년])"
)  # not the answer of "No. 2번 문제"
# An English ordinal, "1st", "2nd", "21st" (espeak: 이 "en dee"), and a page, "p. 25", "pp. 10-20" (the
# letter and a pause): 첫 번째, 두 번째; 25페이지, 10에서 20페이지.
_ORDINAL = re.compile(r"(?<![\w.])(\d{1,3})(?:st|nd|rd|th)(?![A-Za-z])")
_PAGE = re.compile(r"(?<![A-Za-z])pp?\. ?(\d{1,4}(?:[-–~]\d{1,4})?)(?!\d|\.\d|[A-Za-z])")
# ... and a letter's power, "2^n", "2ⁿ", "e^x" (espeak: "이 엔", and nothing at all for "ⁿ": "2ⁿ개" was 이 개).
_POWER = re.compile(
    r"(?<=[\dA-Za-z])(?:\^ ?([-−]?\d+|[A-Za-z](?![A-Za-z\d]))|(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|[ⁿⁱ]))"
)  # "x²": x의 2제곱 too
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻ⁿⁱ", "0123456789-ni")
_OPERATOR = re.compile(r"(?<=\d) ?([×✕*÷]) ?(?=\d)|(?<=\S) ([×✕÷]) (?=\S)")  # "V × I" said no sign
# Arithmetic that espeak said in English or not at all: "2 + 3" ("plus"), "5 - 3" and "5-3=2" (the minus
# dropped), "3x3" and "5 x 3" ("ex"; not a hex "0x1F"), and "=" ("equals"), read 은/는 as a Korean does.
# A term of a formula: a number, a variable (one letter alone: "2x + 3", "a - b"), a power or a bracket.
_TERM_BEFORE = r"(?:(?<=\d)|(?<=(?<![A-Za-z])[A-Za-z])|(?<=제곱)|(?<=\)))"
_TERM_AFTER = r"(?=\d|[A-Za-z](?![A-Za-z])|\()"
_PLUS_MINUS = re.compile(rf"{_TERM_BEFORE} ([+−-]) {_TERM_AFTER}|(?<=\d)([−-])(?=\d+ ?=)")
_PLUS = re.compile(r"(?<=\S) \+ (?=\S)")  # between words, "A + B 세트": 플러스, not English "plus"
# "1.5× 빠르다", "속도 ×2": so many times, 배 (espeak said nothing for the sign).
# ... and "2x 빠르다", but not "2x는" nor the terms of "2x 더하기 3"
_TIMES_AFTER = re.compile(r"(?<=\d)(?:[×✕](?! ?[\dA-Za-z(])|[xX](?= (?!더하기|빼기|곱하기|나누기)[가-힣]))")
_TIMES_BEFORE = re.compile(r"(?<![\w)])[×✕](\d+(?:\.\d+)?)(?![\w.])")
_TIMES_X = re.compile(r"(?<=\d)(?<!(?<![\w.])0) ?[xX] ?(?=\d)")
_EQUALS = re.compile(r"(?<![=!<>+\-*/%&|^]) ?=(?![=>]) ?")  # not "x += 1", an operator's
_TRAILING_DIGITS = re.compile(r"[0-9]+$")
# "24/7" is around the clock, 이십사 칠 (not 7분의 24).
_AROUND_THE_CLOCK = re.compile(r"(?<![\d/.])24/7(?![\d/]|\.\d)")
_FRACTION = re.compile(r"(?<![\d/.])(\d{1,4})/(\d{1,4})(?![\d/]|\.\d| ?분기)")  # 3/4분기: 삼사분기
# espeak's Korean voice says the English word "slash" for every other "/": "3/4분기" (the third quarter,
# 삼 사분기), "250Wh/kg" (와트시 퍼 킬로그램); "입/출력" and "A/S" are `korean_marks`'.
_QUARTER = re.compile(r"(?<![\d/.])([1-4])/4(?= ?분기)")
_PER_UNIT = re.compile(rf"(?<=\d) ?({_alternatives(_UNITS)})/({_alternatives(_UNITS)})(?![A-Za-z0-9²³])")
# ... and per a unit after a word, "1,000원/kg", "회/s" (espeak: "slash kay gee").
# A letter alone before a word is none ("원/A4" is 원 A포 by then), nor one after a word with no number
# before it ("플랜/A", "등급/A", "시간/h": a label's or an axis' letter; 플랜 퍼 암페어, 시간 퍼 시간).
_COUNTED_BEFORE = re.compile(r"\d ?[가-힣]{1,3}$")
_WORD_PER_UNIT = re.compile(rf"(?<=[가-힣])/({_alternatives(_UNITS)})(?![A-Za-z0-9²³]|(?<=/[A-Za-z])[가-힣])")
_DOTTED = re.compile(r"(?<![\d.])(\d+)((?:\.\d+)+)(?!\.?\d)")
_MONTH = re.compile(r"(?<![\d.])(0?6|10)(?= ?월)")
# A time of day, "10:30" or "10:30:15" (열 시 삼십 분 십오 초), but not before a ratio's word ("1:10 축척").
_CLOCK = re.compile(
    r"(?<![\d:.])(2[0-4]|1\d|0?\d):([0-5]\d)(?::([0-5]\d))?(?![\d:])(?! ?(?:비율|비(?![가-힣])|축척))"
)
# Any other colon between numbers is a ratio or a score, read 대 ("16:9": 십육 대 구; espeak said 십육 구).
# Not after a dotted number, an address's port ("192.168.0.1:8080": 1 대 8080).
_RATIO = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?) ?: ?(?=\d)")
# Counters that take native numbers up to 99 (세 개, 스무 살, 열두 시; "09시" 아홉 시, not 영구 시), not "삼 개" as espeak said; 개월,
# 개국, 개년 and 달러 take Sino-Korean ones, and a number in a range ("3~5개": 삼에서 오 개) stays as well,
# unless its first number has the counter too ("9시~18시": 아홉 시에서 열여덟 시, not 십팔 시).
_COUNTED = re.compile(
    r"(?<![\d.,\-])(?<!제)(?<!\d에서 )0?([1-9]\d?) ?(?=(?:개(?![월국년])|명|살|마리|가지|권|잔|번째|곳|군데|시간"
    r"|차례|송이|그루|켤레|달(?!러)|시(?![리즌대])))"
)
# A web address's path and query ("/search?q=1&page=2", "/abs/2401.12345", "/R&D/A4") are no Korean text:
# read by the rules "q=1" was "q는 1", "R&D/A4" "R앤D-A4", an arXiv number a decimal. They are left to espeak
# as written; the host keeps its numbers' reading ("10.0.0.1": 십 점 영 점 영 점 일).
_ADDRESS = re.compile(r"(?:https?://|www\.)[A-Za-z\d.\-:]{1,253}(/[!-~]{0,2000}[\w/=#&%+\-])?")
_FIRST_PRIVATE_USE, _PRIVATE_USE_COUNT = 0xE000, 6400
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
# A letter of a Greek word ("λόγος") is left.
_MATH_NAME = re.compile(f"(?<![\u0370-\u03ff])[{''.join(_MATH_NAMES)}](?![\u0370-\u03ff])")
# The signs of a Korean IME's full-width mode, which espeak said nothing for ("50％" was 오십, "３．７" 삼칠),
# and the tilde operator of Korean word processors ("3∼5개" was 삼 다섯 개): as the ASCII signs read here.
# A full-width point, comma or colon only between digits: elsewhere it is a CJK mark, as the segmenters read it.
# Zero-width characters of text copied from web pages are taken out: espeak read "전압\u200b은" as two
# words, the particle cut off, and "3\u200b.7V" without its point (삼 칠 볼트).
_WIDE_SIGNS = str.maketrans("％＄￦＋－＝／＜＞＾＊＆（）∼", "%$₩+-=/<>^*&()~", "\u200b\u2060\ufeff")
_WIDE_SIGN = re.compile("[％＄￦＋－＝／＜＞＾＊＆（）∼\u200b\u2060\ufeff]")  # translated only where one is
_WIDE_BETWEEN_DIGITS = re.compile(r"(?<=\d)[．，：](?=\d)")
# Markdown emphasis, "**전압**을" or "__전압__을": no word "asterisk", and no pause between the word and its
# particle (a space there made espeak read "전압 을" as two words). Only a pair that opens a word is dropped
# whole; any other star is a space ("2**10" is no 210, "a*b" no word "ab"), as are other underscores' runs.
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{2,3})(?=[^\s*_])([^*_\n]{1,200}?)(?<=[^\s*_])\1(?![*_])")
_STARS = re.compile(r"\*+(?!=)|_{2,}")
_VULGAR = {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅛": (1, 8)}
_VULGAR_FRACTION = re.compile(rf"(?<!\d)(\d*)([{''.join(_VULGAR)}])")  # espeak: English "a half"


def _date(match: re.Match[str]) -> str:
    year, _, month, day = match.groups()
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31):
        return match.group(0)
    return f"{year}년 {int(month)}월 {int(day)}일"


def _dated_event(match: re.Match[str]) -> str:
    """ "6.25" as 육이오, "6.10" as 육십, "12.12" as 십이십이: one word, as the event's name is said."""
    month, day, section = match.groups()
    date = f"{month}.{day}"
    if date not in _EVENT_DATES or (section and (date != "3.1" or _OTHER_SECTION.search(match.string))):
        return match.group(0)
    as_number = day.endswith("0") or month == day == "12"
    return _sino(int(month)) + (_sino(int(day)) if as_number else "".join(_DIGITS[int(d)] for d in day))


def _sino(number: int) -> str:
    """1-39 in Sino-Korean words: 일, 십, 십이, 이십, 삼십일."""
    tens, ones = divmod(number, 10)
    return (_DIGITS[tens] if tens > 1 else "") + ("십" if tens else "") + (_DIGITS[ones] if ones else "")


def _meridiem(match: re.Match[str]) -> str:
    """ "3:00 PM" as 오후 3:00, "10am" as 오전 10시; "오후 3PM" keeps its one 오후; "13 PM", "123 PM" and
    "1.5 PM" are left."""
    hour, minutes, half = match.groups()
    start = match.start()
    if not 1 <= int(hour) <= 12 or (start and match.string[start - 1] in "0123456789:."):
        return match.group(0)
    said = match.string[max(0, match.start() - 3) : match.start()].rstrip().endswith(("오전", "오후"))
    return ("" if said else "오전 " if half in "Aa" else "오후 ") + f"{hour}{minutes or '시'}"


def _number_sign(match: re.Match[str]) -> str:
    number = match.group(1)
    return f"넘버 {_ENGLISH_DIGITS[int(number)] if len(number) == 1 else number}"


def _phone(match: re.Match[str]) -> str:
    area, first_separator, bracketed, middle, separator, last = match.groups()
    if first_separator and first_separator != separator:
        return match.group(0)
    return _phone_digits((area or bracketed, middle, last))


def _service_phone(match: re.Match[str]) -> str:
    """A company's number digit by digit; numbers that run up are a range left for `_HYPHEN_RANGE` and
    `_YEAR_RANGE`: years ("1592-1598"), before a counter or unit ("1500-3000원", "1800-2200 kcal"), or
    round hundreds ("1500-2500")."""
    first, last = match.groups()
    text, end = match.string, match.end()
    counted = _RANGE_TAIL.match(text, end) and not text.startswith(
        ("번", " 번"), end
    )  # "1644-8282번으로" is one
    if int(first) < int(last) and (int(last) <= 2099 or counted or first[2:] == last[2:] == "00"):
        return match.group(0)
    return _phone_digits((first, last))


def _phone_digits(groups: tuple[str, ...]) -> str:
    return " ".join("".join(_PHONE_DIGITS[int(d)] for d in group) for group in groups)


def _dotted(match: re.Match[str]) -> str:
    """A decimal ("3.14": 삼 점 일사, the digits after the point one by one) or a dotted chain (a
    version or an address: "2.10.1", each part a number)."""
    whole, rest = match.groups()
    parts = rest[1:].split(".")
    if len(parts) == 1:
        return f"{whole} 점 {''.join(_DIGITS[int(d)] for d in parts[0])}"
    return " 점 ".join([whole, *parts])


def _year_range(match: re.Match[str]) -> str:
    start = match.start()
    return (
        match.group(0)
        if _STANDARD_BEFORE.search(match.string, max(0, start - 16), start)
        else _hyphen_range(match)
    )


def _hyphen_range(match: re.Match[str]) -> str:
    """ "3-5개" as the range "3~5개"; "5-2도" runs down: a figure's number, left."""
    first, last = match.groups()
    return f"{first}~" if float(first) < float(last) else match.group(0)


def _scaled_amount(match: re.Match[str]) -> str:
    """ "$1.5B" as 15억 달러: the amount in 조, 억 and 만 (espeak reads "15억" as 십오억)."""
    sign, number, scale = match.groups()
    whole, _, fraction = number.partition(".")
    amount = int(whole + fraction.ljust(_SCALES[scale], "0"))  # at most 3 decimals, the scale at least 3
    parts = []
    for unit, size in (("조", 12), ("억", 8), ("만", 4), ("", 0)):
        count, amount = divmod(amount, 10**size)
        if count:
            parts.append(f"{count}{unit}")
    return f"{' '.join(parts) or '0'} {_CURRENCY[sign]}"


def _power(match: re.Match[str]) -> str:
    exponent = match.group(1) or match.group(2).translate(_SUPERSCRIPT)
    return f"의 {exponent}제곱"


def _word_per_unit(match: re.Match[str]) -> str:
    unit, start = match.group(1), match.start()
    if len(unit) == 1 and not _COUNTED_BEFORE.search(match.string, max(0, start - 5), start):
        return match.group(0)
    return f" 퍼 {_UNITS[unit]}"


def _unit(match: re.Match[str]) -> str:
    """A unit's word; an "A" or "J" apart from its number ("2 A와 B") or naming a class or a model
    ("3A반", "모델 3A") is the letter, not 암페어 or 줄."""
    unit, text, start = match.group(1), match.string, match.start()
    if _HEX_BEFORE.search(text, max(0, start - 20), start) or (
        unit == "h"
        and (_TERM_NEXT.match(text, match.end()) or _OPERAND_AFTER.search(text, max(0, start - 20), start))
    ):
        return match.group(0)  # "0x1A"; the variable of "2h + 1", "f(x+2h)"
    if unit in ("A", "J") and (
        match.group(0)[0] == " "
        or _LABEL_AFTER.match(text, match.end())
        or _LABEL_BEFORE.search(text[max(0, start - 12) : start])
    ):
        return match.group(0)
    return " " + _UNITS[unit]


def _equals(match: re.Match[str]) -> str:
    """ "=" as the topic particle after what it follows: 은 after a closed syllable, 는 after an open one."""
    start = match.start()
    return _topic(match.string[max(0, start - 24) : start].rstrip(" )]")) + " "  # a bounded look back


def _topic(before: str) -> str:
    last = before[-1:]
    if not last:
        return ""  # "= 5" opens the text: nothing to be the topic of
    if "가" <= last <= "힣":
        return "은" if (ord(last) - ord("가")) % 28 else "는"
    trailing = _TRAILING_DIGITS.search(before)  # ASCII digits only: "x₂" is a digit to isdigit(), not here
    if trailing:
        number = trailing.group()
        zeros = len(number) - len(number.rstrip("0"))
        if zeros == 0:
            return "는" if last in "2459" else "은"  # 이, 사, 오, 구 open; 일, 삼, 육, 칠, 팔 closed
        return "는" if zeros == 12 < len(number) else "은"  # 영, 십, 백, 천, 만, 억 closed; 조 open
    if last.isascii() and last.isalpha() and not before[-2:-1].isalpha():
        return "은" if last.upper() in "LMNR" else "는"  # 엘 엠 엔 알; 에이, 비, 씨 …
    return "는"


def _sign(match: re.Match[str]) -> str:
    return {"+": "플러스 ", "±": "플러스마이너스 "}.get(match.group(1), "마이너스 ")


def _clock(match: re.Match[str]) -> str:
    hour, minute, second = match.groups()
    return (
        f"{int(hour)}시"
        + (f" {int(minute)}분" if int(minute) else "")
        + (f" {int(second)}초" if second and int(second) else "")
    )


def _native(match: re.Match[str]) -> str:
    """1-99 as a native numeral before a counter: 한, 스무 (20 alone), 스물한, 열두; 1 before 번째 is 첫."""
    number = int(match.group(1))
    if number == 1 and match.string.startswith("번째", match.end()):
        return "첫 "
    tens, ones = divmod(number, 10)
    return ("스무" if number == 20 else _NATIVE_TENS[tens] + _NATIVE_ONES[ones]) + " "


def _vulgar(match: re.Match[str]) -> str:
    numerator, denominator = _VULGAR[match.group(2)]
    whole = match.group(1)
    joined = f"{whole}{'와' if whole[-1:] in '2459' else '과'} " if whole else ""  # 이와, 삼과
    return f"{joined}{denominator}분의 {numerator}"


def _month(match: re.Match[str]) -> str:
    return "시" if match.group(1) == "10" else "유"  # 유월 and 시월, not 육월 and 십월


def spoken(text: str) -> str:
    """`text` with its numbers, units and symbols in the words a Korean reader says for them; a web
    address's path and query as written."""
    paths: list[str] = []
    if not _PRIVATE_USE.search(text):  # each path is one such character while the rules run
        text = _ADDRESS.sub(lambda m: _held(m, paths), text)
    text = _numbers_spoken(text)
    return _PRIVATE_USE.sub(lambda m: paths[ord(m.group()) - _FIRST_PRIVATE_USE], text) if paths else text


def _held(match: re.Match[str], paths: list[str]) -> str:
    if not match.group(1) or len(paths) >= _PRIVATE_USE_COUNT:
        return match.group(0)
    paths.append(match.group(1))
    return match.group(0)[: match.start(1) - match.start()] + chr(_FIRST_PRIVATE_USE + len(paths) - 1)


def _numbers_spoken(text: str) -> str:
    if _WIDE_SIGN.search(text):
        text = text.translate(_WIDE_SIGNS)
    text = _WIDE_BETWEEN_DIGITS.sub(lambda m: chr(ord(m.group()) - 0xFEE0), text)
    text = marks_spoken(text)  # list marks, Roman numerals, acronyms, "A4", "/", "&" and signs
    text = _BOUNDED_BY.sub(lambda m: f"{m.group(1)} {_LOWER_BOUND_WORDS[m.group(2)]} ", text)
    text = _BOUND.sub(lambda m: f"{m.group(2)} {_BOUND_WORDS[m.group(1)]}", text)
    text = _GROUPED.sub(lambda m: m.group(0).replace(",", ""), text)
    text = _SCIENTIFIC.sub(
        lambda m: f"{m.group(1)} 곱하기 10의 {m.group(2).strip('+')}{m.group(3)}제곱", text
    )
    text = _ORDINAL.sub(r"\1번째", text)
    text = _PAGE.sub(r"\1페이지", text)
    text = _DATED_EVENT.sub(_dated_event, text)
    text = _VERSION.sub(lambda m: m.group().replace(".", " 점 "), text)
    text = _NUMBER_SIGN.sub(_number_sign, text)
    text = _MERIDIEM_AFTER.sub(_meridiem, text)
    text = _MERIDIEM_BEFORE.sub(lambda m: "오전 " if m.group(1) in "Aa" else "오후 ", text)
    text = _DATE.sub(_date, text)
    text = _SHORT_DATE.sub(_date, text)
    text = _YEAR_MONTH.sub(lambda m: f"{m.group(1)}년 {int(m.group(2))}월", text)
    text = _MONTH_DAY.sub(lambda m: f"{int(m.group(1))}월 {int(m.group(2))}일", text)
    text = _WEEKDAY.sub(r" \1요일", text)
    text = _WEEKDAY_RANGE.sub(r"\1요일에서 \2요일", text)
    text = _PHONE.sub(_phone, text)
    text = _SERVICE_PHONE.sub(_service_phone, text)
    text = _INTERNATIONAL_PHONE.sub(lambda m: "플러스 " + _phone_digits(m.group(1, 3, 4, 5)), text)
    text = _HYPHEN_RANGE.sub(_hyphen_range, text)
    text = _YEAR_RANGE.sub(_year_range, text)
    text = _CLOCK_RANGE.sub("~", text)
    text = _RANGE.sub(r"\1에서 ", text)
    text = _TILDE.sub(" ", text)  # "감사합니다~": a drawn-out ending, not the word "tilde"
    text = _HOURS_MINUTES.sub(r"\1시간 \2분", text)
    text = _PER_HOUR.sub(r"시속 \1킬로미터", text)
    text = _PER_SECOND_SQUARED.sub(r"\1 미터 퍼 초 제곱", text)
    text = _PER_SECOND.sub(r"초속 \1미터", text)
    text = _FAHRENHEIT.sub(r"화씨 \1도", text)
    text = _US_DOLLARS.sub("미화 $", text)
    text = _SCALED_AMOUNT.sub(_scaled_amount, text)
    text = _CURRENCY_AMOUNT.sub(lambda m: f"{m.group(2)} {_CURRENCY[m.group(1)]}", text)
    text = _PER_UNIT.sub(lambda m: f" {_UNITS[m.group(1)]} 퍼 {_UNITS[m.group(2)]}", text)
    text = _WORD_PER_UNIT.sub(_word_per_unit, text)
    text = _UNIT.sub(_unit, text)
    text = _BARE_UNIT.sub(lambda m: _BARE_UNITS[m.group(1)], text)
    text = _SYMBOL.sub(lambda m: " " + _SYMBOLS[m.group(1)], text)
    text = _BARE_LITER.sub(lambda m: "리터당" if m.group(1) else "엘", text)
    text = text.replace("%", " 퍼센트")  # "몇 %": no number before it, still not the English word
    text = _POWER.sub(_power, text)
    text = _SIGN.sub(_sign, text)
    text = _TIMES_AFTER.sub("배", text)
    text = _TIMES_BEFORE.sub(r"\1배", text)
    text = _OPERATOR.sub(lambda m: " 나누기 " if "÷" in m.group(0) else " 곱하기 ", text)
    text = _PLUS_MINUS.sub(lambda m: " 더하기 " if "+" in m.group(0) else " 빼기 ", text)
    text = _PLUS.sub(" 플러스 ", text)
    text = _TIMES_X.sub(" 곱하기 ", text)
    text = _EMPHASIS.sub(r"\2", text)
    text = _STARS.sub(" ", text)
    text = _QUARTER.sub(r"\1 4", text)
    text = _AROUND_THE_CLOCK.sub("24 7", text)
    text = _FRACTION.sub(r"\2분의 \1", text)
    text = _VULGAR_FRACTION.sub(_vulgar, text)
    text = _MONTH.sub(_month, text)
    text = _CLOCK.sub(_clock, text)
    text = _RATIO.sub(r"\1 대 ", text)
    text = _COUNTED.sub(_native, text)
    text = _DOTTED.sub(_dotted, text)
    text = _MATH_NAME.sub(lambda m: _MATH_NAMES[m.group()], text)
    return _EQUALS.sub(_equals, text)


def is_korean(lang: str) -> bool:
    """`lang` names Korean: ko, ko-KR, kor, korean, in any case."""
    return language_code(lang).split("-", 1)[0] in ("ko", "kor", "korean")


def spoken_form(text: str, lang: str) -> str:
    """The text espeak-ng is given: in Korean, composed and with its numbers, units and symbols written
    out as words; in any other language unchanged."""
    return spoken(readable(text)) if is_korean(lang) else text
