"""A number itself as a Korean reader says it: a decimal ("3.14": 삼 점 일사), a grouped one ("1,234"), a
native numeral before a counter ("3개": 세 개, "20살": 스무 살), an ordinal ("1st": 첫 번째), a page
("pp. 10-20"), a version ("v2.10": 이 점 십) and "No. 1" (넘버 원).

espeak-ng 1.52's Korean voice had no decimal point ("3.7V" was "삼 칠 V"; "1,234.5" lost its ".5") and said
every number Sino-Korean ("3개": 삼 개); a part of `korean_reading`, which applies these in its order.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_words import DIGITS as _DIGITS
from .korean_words import ENGLISH_DIGITS as _ENGLISH_DIGITS
from .korean_words import ENGLISH_ORDINALS as _ENGLISH_ORDINALS
from .korean_words import ENGLISH_TENS as _ENGLISH_TENS
from .korean_words import NATIVE_ONES as _NATIVE_ONES
from .korean_words import NATIVE_TENS as _NATIVE_TENS

GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?![\d,])")
# A version with one point, "v2.10", "버전 3.12", "3.10 버전" (espeak: 이 점 일영, a decimal's digits one by
# one): its parts are numbers, 이 점 십.
# ... and after a language's or a platform's name, "Python 3.11", "파이썬 3.11로", "CUDA 12.1" (korean62: 3 점 일일): 삼 점 십일.
VERSION = re.compile(
    r"(?:[Vv](?<![A-Za-z][Vv])(?:er(?:sion)?\.? ?)?|버전 ?|(?<![A-Za-z])(?:Python|파이썬|Java|Node(?:\.js)?|Ubuntu|Android"
    r"|iOS|macOS|CUDA|PyTorch|TensorFlow) )\d+\.\d+(?!\d|\.\d)|(?<![\d.])\d+\.\d+(?= ?버전)"
)
# "No. 1", "No.5" (espeak: the English "no", the point a pause): 넘버, a single digit in English as in a name.
# ... and the numero sign, "№ 5" (espeak said nothing for it): 넘버 파이브 as "No. 5".
NUMBER_SIGN = re.compile(
    r"(?:(?<![A-Za-z])N[Oo]\.|№) ?(\d{1,4})(?!\d|\.\d|[번년])"
)  # not the answer of "No. 2번 문제"
# An English ordinal, "1st", "2nd", "21st" (espeak: 이 "en dee"), and a page, "p. 25", "pp. 10-20" (the
# letter and a pause): 첫 번째, 두 번째; 25페이지, 10에서 20페이지.
ORDINAL = re.compile(r"(?<![\w.])(\d{1,3})(?:st|nd|rd|th)(?![A-Za-z])")
# ... but in an English compound, "2nd-order", "3rd-party", "21st-century" (두 번째-order), the English word.
ENGLISH_COMPOUND_ORDINAL = re.compile(r"(?<![\w.])([1-9]\d?)(?:st|nd|rd|th)(?=-[A-Za-z])")
PAGE = re.compile(r"(?<![A-Za-z])pp?\. ?(\d{1,4}(?:[-–~]\d{1,4})?)(?!\d|\.\d|[A-Za-z])")
DOTTED = re.compile(r"(?<![\d.])(\d+)((?:\.\d+)+)(?!\.?\d)")
# Counters that take native numbers up to 99 (세 개, 스무 살, 열두 시; "09시" 아홉 시, not 영구 시), not "삼 개" as espeak said; 개월,
# 개국, 개년 and 달러 take Sino-Korean ones, and a number in a range ("3~5개": 삼에서 오 개) stays as well,
# unless its first number has the counter too ("9시~18시": 아홉 시에서 열여덟 시, not 십팔 시).
# With a space between, the counter is a word of its own, or one with its particles ("3 명이", "3 시간동안"): a
# word that only opens like one is none ("레벨 3 달성", "버전 2 개발", "모듈 3 시스템" were 세 달성, 두 개발, 세 시스템).
_COUNTERS = (
    r"개(?![월국년])|명|살|마리|가지|권|잔|번째|곳|군데|시간|차례|송이|그루|켤레|달(?!러)|시(?![리즌대])"
)
_PARTICLES = (
    r"이|가|을|를|은|는|의|에|에서|에게|도|만|과|와|씩|까지|부터|으로|로|이나|나|쯤|째|동안|마다|밖에|뿐"
    r"|이다|입니다|이고|이며|인|이면|이상|이하|정도|가량|만큼|보다|이내|내|간|당"
    # ... and the rest a lecturer's sentence puts there: "3 명한테", "3 살짜리", "3 시경", "3 명이서", "3 개예요"
    # (each was 삼: the counter's native number lost with the spaced counter's branch)
    r"|한테서|한테|에게서|께서|께|하고|이랑|랑|처럼|라도|이라도|조차|마저|짜리|경|이서|인데|인지|이지만"
    r"|이라|이었다|였다|이에요|예요|이요|이야|후|전|뒤"
)
COUNTED = re.compile(
    rf"(?<![\d.,\-])(?<!제)(?<!\d에서 )0?([1-9]\d?)(?:(?={_COUNTERS})| (?=(?:{_COUNTERS})(?:{_PARTICLES}){{0,2}}(?![가-힣])))"
)


def number_sign(match: re.Match[str]) -> str:
    number = match.group(1)
    return f"넘버 {_ENGLISH_DIGITS[int(number)] if len(number) == 1 else number}"


def dotted(match: re.Match[str]) -> str:
    """A decimal ("3.14": 삼 점 일사, the digits after the point one by one) or a dotted chain (a
    version or an address: "2.10.1", each part a number)."""
    whole, rest = match.groups()
    parts = rest[1:].split(".")
    if len(parts) == 1:
        return f"{whole} 점 {''.join(_DIGITS[int(d)] for d in parts[0])}"
    return " 점 ".join([whole, *parts])


def native(match: re.Match[str]) -> str:
    """1-99 as a native numeral before a counter: 한, 스무 (20 alone), 스물한, 열두; 1 before 번째 is 첫."""
    number = int(match.group(1))
    if number == 1 and match.string.startswith("번째", match.end()):
        return "첫 "
    tens, ones = divmod(number, 10)
    return ("스무" if number == 20 else _NATIVE_TENS[tens] + _NATIVE_ONES[ones]) + " "


def english_ordinal(match: re.Match[str]) -> str:
    """1-99 as an English ordinal word: second, twentieth, twenty-first."""
    number = int(match.group(1))
    if number < 20:
        return _ENGLISH_ORDINALS[number]
    tens, ones = divmod(number, 10)
    return (
        _ENGLISH_TENS[tens][:-1] + "ieth" if not ones else f"{_ENGLISH_TENS[tens]}-{_ENGLISH_ORDINALS[ones]}"
    )
