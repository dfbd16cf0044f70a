"""Phone numbers said digit by digit, as a Korean reads them: "010-1234-5678" (공일공 일이삼사 오육칠팔),
"(02) 123-4567", "1588-1234", "+82-10-1234-5678".

espeak-ng 1.52's Korean voice read a phone number as large numbers ("010.1234.5678": 영 십 점 천이백삼십사
…); a part of `korean_reading`, which applies these in its order.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_number_ranges import RANGE_TAIL as _RANGE_TAIL

_PHONE_DIGITS = "공일이삼사오육칠팔구"  # a phone number's 0 is 공
# A phone number: "010-1234-5678", and as business cards write it, "010.1234.5678", "010 1234 5678" (espeak:
# 영 십 점 천이백삼십사 …, large numbers) and "(02) 123-4567"; its separators alike.
PHONE = re.compile(
    r"(?<![\d\-.])(?:(0\d{1,2})([-. ])|\((0\d{1,2})\) ?)(\d{3,4})([-. ])(\d{4})(?![\d\-]|\.\d)"
)
# ... a company's number, "1588-1234" (espeak: 천오백팔십팔 천이백삼십사), unless it runs up as years or a
# range do ("1592-1598", "1500-3000원": `service_phone`); and an international one, "+82-10-1234-5678"
# (플러스 팔십이 십 천이백 …).
SERVICE_PHONE = re.compile(r"(?<![\d\-.])(1[5-8]\d\d)-(\d{4})(?![\d\-]|\.\d)")
INTERNATIONAL_PHONE = re.compile(r"(?<![\w+])\+(\d{1,3})([- ])(\d{1,4})\2(\d{3,4})\2(\d{4})(?![\d\-]|\.\d)")


def phone(match: re.Match[str]) -> str:
    area, first_separator, bracketed, middle, separator, last = match.groups()
    if first_separator and first_separator != separator:
        return match.group(0)
    return phone_digits((area or bracketed, middle, last))


def service_phone(match: re.Match[str]) -> str:
    """A company's number digit by digit; numbers that run up are a range left for `korean_ranges`'
    `HYPHEN_RANGE` and `YEAR_RANGE`: years ("1592-1598"), before a counter or unit ("1500-3000원",
    "1800-2200 kcal"), or round hundreds ("1500-2500")."""
    first, last = match.groups()
    text, end = match.string, match.end()
    counted = _RANGE_TAIL.match(text, end) and not text.startswith(
        ("번", " 번"), end
    )  # "1644-8282번으로" is one
    if int(first) < int(last) and (int(last) <= 2099 or counted or first[2:] == last[2:] == "00"):
        return match.group(0)
    return phone_digits((first, last))


def phone_digits(groups: tuple[str, ...]) -> str:
    return " ".join("".join(_PHONE_DIGITS[int(d)] for d in group) for group in groups)
