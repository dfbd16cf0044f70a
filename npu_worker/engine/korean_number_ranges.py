"""Ranges of numbers written out as a Korean reader says them: "3~5개" and "3-5개" (삼에서 오 개), "2020 - 2024",
"09:00 - 18:00" (a range, 에서: not a minus), for `korean_reading`, which applies these in its order; the counters
a range takes before its last number (`RANGE_COUNTERS`), which a bound's amount takes too (`korean_ranges`).

espeak-ng 1.52's Korean voice read "~" as English "tilde", lost a range's 에서 ("3-5개": 삼 오 개, three five) and
said a spaced hyphen as the minus 빼기.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_units import alternatives as _alternatives
from .korean_words import UNITS as _UNITS

# A range with a tilde, "3~5개", after a number's counter too, "3개~5개"; and after a date's weekday,
# "3일(월)~5일(수)" (its 에서 was lost: 3일 월요일 5일 수요일).
RANGE = re.compile(r"(?:(?<=\d)([^\s\d~～〜–]{0,4}?)|(?<=요일)) ?[~～〜–] ?(?=[-−+$€£¥₩]?\d)")
# A hyphen between numbers, spaced or not, is a range when a counter, unit or symbol follows ("3-5개" and
# "15 - 20분": 삼에서 오 개, as "3~5개"; espeak said "삼 오 개", three five, and 빼기 a minus); bare ("3-5", a score or a figure's number) it is left, and
# so is a figure's or section's number before a word that only opens like a counter ("그림 2-1 시스템",
# "표 4-2 개요": a counter after a space ends its word) or a pair that runs down ("그림 5-2도", "2-1장").
RANGE_COUNTERS = (
    "개|명|살|마리|가지|권|잔|번(?!지)|곳|군데|시간|시|분|초|차례|송이|그루|켤레|달|년|월|일|주|배|회|장|쪽"
    "|페이지|층|세|도|원|달러|점|학년|차|단계|위|등|인|퍼센트"
)
HYPHEN_RANGE = re.compile(
    rf"(?<![A-Za-z\d.\-])(\d+(?:\.\d+)?)(?:-| - )(?=(\d+(?:\.\d+)?)(?:(?:{RANGE_COUNTERS})"
    rf"| (?:{RANGE_COUNTERS})(?![가-힣])| ?(?:[%‰℃°]|(?:{_alternatives(_UNITS)})(?![A-Za-z0-9²³]))))"
)
# ... what follows such a range's last number: a company's number never runs up to one ("1800-2200 kcal").
RANGE_TAIL = re.compile(
    rf"(?:{RANGE_COUNTERS})| (?:{RANGE_COUNTERS})(?![가-힣])| ?(?:[%‰℃°]|(?:{_alternatives(_UNITS)})(?![A-Za-z0-9²³]))"
)
# Years, "2020 - 2024" and "2020-2024" (espeak: 빼기, or the two years said as one run): a range, as
# "2020~2024"; not a difference, "2024 - 2020 = 4", nor one that runs down.
YEAR_RANGE = re.compile(r"(?<![\w.\-])(1\d{3}|20\d\d)(?:-| - )(?=(1\d{3}|20\d\d)(?!\d|[.,]\d| ?[-−+=×*/]))")
# A standard's number and its year's edition, "IEEE 1588-2008", "KS C 1000-2005", is none (1588에서 2008); its
# body's letters may be spelled with hyphens by then ("I-E-C").
_STANDARD_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:I-?E-?E-?E|I-?S-?O|I-?E-?C|A-?N-?S-?I|A-?S-?T-?M|J-?I-?S|K-?S|D-?I-?N|B-?S|E-?N)"
    r"(?: [A-Z])? ?(?:Std\.? ?)?$"
)
# "09:00 - 18:00": a range of times (a spaced hyphen between numbers is otherwise a minus: 빼기).
CLOCK_RANGE = re.compile(r"(?<=\d:\d\d) ?- ?(?=\d{1,2}:\d\d)")
TILDE = re.compile(r"[~～〜]+")


def year_range(match: re.Match[str]) -> str:
    start = match.start()
    return (
        match.group(0)
        if _STANDARD_BEFORE.search(match.string, max(0, start - 16), start)
        else hyphen_range(match)
    )


def hyphen_range(match: re.Match[str]) -> str:
    """ "3-5개" as the range "3~5개"; "5-2도" runs down: a figure's number, left."""
    first, last = match.groups()
    return f"{first}~" if float(first) < float(last) else match.group(0)
