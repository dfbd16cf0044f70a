"""Dates, weekdays and times of day written out as a Korean reader says them: "2024.12.05" (2024년 12월
5일), "12/25(수)", "월~금", "3:00 PM" (오후 세 시), "10:30:15", "2h 30m", "6.25 전쟁" (육이오), 유월 and 시월.

espeak-ng 1.52's Korean voice read a date's parts as decimals and fractions ("24.12.05": 이십사 점 십이 점
영오; "12/25(수)": 이십오분의 십이 수), a time's as one Sino-Korean run ("3:30": 삼 삼십) and "PM" in English;
a part of `korean_reading`, which applies these in its order.
"""

from __future__ import annotations

import functools

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, particle_after
from .korean_words import DIGITS as _DIGITS

# A date's closing point before a particle, "2026.12.07.까지", "26.12.07.에" (korean61: 2026년 12월 7일.까지, a pause before the
# particle): taken with the date, 2026년 12월 7일까지.
_POINT_BEFORE_A_PARTICLE = r"(?:(?<=\d)\.(?=[가-힣]))?"
DATE = re.compile(
    rf"(?<![\d.\-/])(\d{{4}})([.\-/]) ?(\d{{1,2}})\2 ?(\d{{1,2}})(?![\d\-/]|\.\d){_POINT_BEFORE_A_PARTICLE}"
)
# A date with a two-digit year, "24.12.05" (espeak: 이십사 점 십이 점 영오), and a year's month "2024.03"
# (이천이십사 점 영삼): every part two digits, as such dates are written; a version "v10.12.01" is left, and
# an amount with cents, "$2019.10" (it was 2019 달러년 시월).
SHORT_DATE = re.compile(
    rf"(?<![\w.\-/$€£¥₩])(\d{{2}})(\.)(\d{{2}})\.(\d{{2}})(?![\d\-/]|\.\d){_POINT_BEFORE_A_PARTICLE}"
)
YEAR_MONTH = re.compile(r"(?<![\w.\-/$€£¥₩])((?:19|20)\d{2})\.(0[1-9]|1[0-2])(?![\d\-/]|\.\d)")
# A month and day with its weekday, as a slide writes a deadline: "12/25(수)" is 12월 25일 수요일 (espeak:
# 이십오분의 십이 수, a fraction); a weekday in brackets after a date's 일, "5일(목)", is 목요일 too.
MONTH_DAY = re.compile(r"(?<![\d/.])(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])(?= ?\([월화수목금토일]\))")
WEEKDAY = re.compile(r"(?<=\d일)\.? ?\(([월화수목금토일])\)")  # "2024. 12. 5.(목)": its point too
# A Bible verse's chapter and verse after its book, "요한복음 3:16", "마태복음 10:3", "시편 23:1-6" (read59k: 세 시 16분, 10 대 3,
# a clock's and a ratio's words): 요한복음 3장 16절, 시편 23장 1절에서 6절, as a Korean reader cites them. Only after a book's full
# name, the 66 of the Korean Bible, not an abbreviation ("요 3:16", "마 5:3": a word as often).
# A particle the writer chose for the verse number's sound, "3:16으로", "23:5를" (육: 으로, 오: 를), said after 절 as 절
# takes it (rvk60: 16절으로, 5절를): 16절로, 5절을. No chapter or verse opens with 0: "아가 3:00에 깼다", "다니엘 10:05에"
# are a clock's (korean60: 3장 00절, 10장 05절).
_BOOKS = (
    "창세기 출애굽기 레위기 민수기 신명기 여호수아 사사기 룻기 사무엘상 사무엘하 열왕기상 열왕기하 역대상 역대하 에스라 느헤미야"
    " 에스더 욥기 시편 잠언 전도서 아가 이사야 예레미야애가 예레미야 에스겔 다니엘 호세아 요엘 아모스 오바댜 요나 미가 나훔 하박국"
    " 스바냐 학개 스가랴 말라기 마태복음 마가복음 누가복음 요한복음 사도행전 로마서 고린도전서 고린도후서 갈라디아서 에베소서"
    " 빌립보서 골로새서 데살로니가전서 데살로니가후서 디모데전서 디모데후서 디도서 빌레몬서 히브리서 야고보서 베드로전서"
    " 베드로후서 요한일서 요한이서 요한삼서 유다서 요한계시록"
).split()
# A range to another chapter's verse, "요한복음 3:16~4:2" (korean60: 16절에서 4 대 2, a ratio): 16절에서 4장 2절.
VERSE = re.compile(
    rf"(?<![가-힣])((?:{'|'.join(_BOOKS)}) ?)([1-9]\d{{0,2}}):([1-9]\d{{0,2}})"
    r"(?:절? ?[-–~] ?(?:([1-9]\d{0,2}):)?([1-9]\d{0,2})(?![\d:]))?"
    r"(절)?(?![\d:]|\.\d)"
    rf"(?:{PARTICLE})?"
)
# A book's name that is a person's or a word as well, "요나 10:30에 왔다", "요엘 9:15부터", "아가 3:20까지" (rvk60: 10장 30절에,
# 9장 15절부터): a clock's where it can be one, a minute of two digits under 60 and an hour to 24, and a time's particle follows
# (에, 부터, 까지, 쯤, 경); with 절, a range, a one-digit verse or any other word after it, a verse. The limit: a verse cited with
# 에 after one of these five names and no word of citing after it, "요나 1:17에 물고기가", is read as a time (한 시 17분에).
# A range of two such times, "요나 10:30~11:30에 왔다" (korean61: 10장 30절에서 11장 30절에), a clock's range too: 열 시 30분에서
# 열한 시 30분에; one within a chapter, "요나 1:15-17에", a verse's.
_PERSON_OR_WORD = frozenset("다니엘 요나 요엘 미가 아가".split())
# A text's words after 에 keep a verse, "다니엘 2:44에 나온다", "요나 1:17에 보면", "미가 5:2에 따르면", "… 기록된": a book's;
# so do a commentary's, "다니엘 2:44에 대한 해석", "요엘 2:28에 관해", "… 언급된", "… 등장하는" (korean61: 두 시 44분에 대한).
# 에는 and 에도 as 에, "요나 10:30에도 왔다" (korean61: 10장 30절에도; "다니엘 2:44에도 나온다" a verse).
_TIME_AFTER = re.compile(
    r"(?:에(?:는|도)?(?! ?(?:나오|나온|나와|나타|기록|적힌|적혀|쓰인|쓰여|보면|따르면|이르|의하면|대한|대해|대하여|관한|관해"
    r"|관하여|언급|등장|묘사|예언))|부터|까지|쯤|경)(?![가-힣])"
    r"|(?:부터|까지)(?:는|도|만)(?![가-힣])"
)


def verse(match: re.Match[str]) -> str:
    book, chapter, first, last_chapter, last, _, particle = match.groups()
    if _a_time_of_day(match):
        return match.group()  # `CLOCK` reads it: 열 시 30분에
    said = f"{book}{chapter}장 {first}절" + (f"에서 {last_chapter}장" if last_chapter else "")
    said += f"{'' if last_chapter else '에서'} {last}절" if last else ""
    return said + (particle_after("절", particle) if particle else "")


def _a_time_of_day(match: re.Match[str]) -> bool:
    """Whether a reference after a name that is also a person's or a word is a time of day, as a listener takes it."""
    book, chapter, first, last_chapter, last, jeol, particle = match.groups()
    if book.strip() not in _PERSON_OR_WORD or jeol or particle or (last and not last_chapter):
        return False
    ends = ((chapter, first), (last_chapter, last))
    if not all(_clock_like(hour, minute) for hour, minute in ends if minute):
        return False
    return _TIME_AFTER.match(match.string, match.end()) is not None


def _clock_like(hour: str, minute: str) -> bool:
    """Whether "hour:minute" can be a time of day: an hour to 24 and a minute of two digits under 60."""
    return int(hour) <= 24 and len(minute) == 2 and int(minute) < 60


# Weekdays from one to another, "월~금", "월요일~금요일" (espeak: 월 금, the 에서 lost): 월요일에서 금요일; not a
# date's 일, "20일~목요일" (20일요일), nor days to months, "일~월 단위" (일요일에서 월요일 단위).
WEEKDAY_RANGE = re.compile(
    r"(?<![가-힣\d])([월화수목금토일])(?:요일)? ?[~～〜–] ?([월화수목금토일])(?:요일|(?![가-힣])(?! ?(?:단위|별)))"
)
# Hours and minutes, "2h 30m", "1h30m": the "m" is minutes, not 미터.
HOURS_MINUTES = re.compile(r"(?<![\w.])(\d{1,3}) ?h ?(\d{1,2}) ?m(?![A-Za-z\d²³/])")
# A time with its half of the day, "3:00 PM", "PM 3:00", "10am" (espeak: 세 시 "pee em"): 오후 세 시.
# Not a concentration, "10 pM", "5 aM" (pico-, attomolar: 오후 열 시): a small letter before a capital M; nor
# the fine dust "PM2.5", "PM10" after a number ("3 PM10": 오후 세 시10).
# "3 p.m." too (it was left: 삼, "p", "m" and two pauses), its last point kept where it ends the text.
MERIDIEM_AFTER = re.compile(
    r"([01]?\d)(:[0-5]\d)? ?([AaPp])(?:[Mm](?<![ap]M)|\.[Mm]\.)(?![A-Za-z\d])"
)  # the hour checked by `meridiem`
# A range of hours with one half of the day, "1-3pm", "9~11 AM" (1-오후 세 시): 오후 한 시에서 세 시.
MERIDIEM_HOURS = re.compile(
    r"(?<![\d:.\-])(1[0-2]|0?[1-9]) ?[-~～〜–] ?(1[0-2]|0?[1-9]) ?([AaPp])(?:[Mm](?<![ap]M)|\.[Mm]\.)(?![A-Za-z\d])"
)
# ... and a range between two such times, "9am-6pm", "1pm~3pm", "9 AM ~ 6 PM" (the 에서 lost: 오전 아홉 시
# 오후 여섯 시), read once each is: 오전 9시에서 오후 6시.
MERIDIEM_RANGE = re.compile(r"(?:(?<=\d시)|(?<=:\d\d))\.? ?[-~～〜–] ?(?=오[전후] \d)")
MERIDIEM_BEFORE = re.compile(r"(?<![A-Za-z])([AaPp])[Mm](?<![ap]M) ?(?=(?:1[0-2]|0?[1-9]):[0-5]\d(?![\d:]))")
# An event of Korean history named by its date, "6.25 전쟁", "3.1절", "5.18 민주화운동" (espeak: 육 점 이오, a
# decimal): as Koreans say them, the month a number and the day its digits, 육이오, 삼일절, 오일팔; a day of
# tens is a number (6.10 민주항쟁: 육십), and 12.12 is 십이십이. Only the dates of such events: a section's
# heading, "2.1 전쟁의 원인", "2.3 절연 저항", "3.1 운동 방정식", stays a decimal (이일 전쟁, 삼일 운동 방정식);
# and "N.M절" is a section ("2.5절", "3.2절"), "3.1절" too where it is referred to as one ("3.1절에서 설명한",
# "3.1절과 3.2절").
DATED_EVENT = re.compile(
    r"(?<![\d.])(1[0-2]|[1-9])\.([1-9]|[12]\d|3[01])(?![\d.])"
    r"(?= ?(?:전쟁|사변|혁명|민주항쟁|항쟁|사태|선언|광복절|광복|(절)(?:[은는이을를의에과와도]|까지|부터)?(?![가-힣]| ?참[고조])|의거|군사정변"
    r"|정변|참사|테러(?!리)|(?:민주화|독립)?운동(?:[은는이을를의에과와도]|(?![가-힣]))(?!의? ?(?:방정식|법칙|에너지))))"
)
_EVENT_DATES = frozenset(
    "1.4 1.21 2.8 2.28 3.1 3.15 4.3 4.16 4.19 4.27 5.16 5.18 6.3 6.10 6.15 6.25 6.29 7.4 8.15 9.11 9.19 9.28 "
    "10.4 10.26 10.29 11.3 12.3 12.12".split()
)
_OTHER_SECTION = re.compile(r"(?<![\d.])(?!3\.1절)\d{1,2}\.\d{1,2}절")  # "3.1절과 3.2절": sections
MONTH = re.compile(r"(?<![\d.])(0?6|10)(?= ?월)")
# A time of day, "10:30" or "10:30:15" (열 시 삼십 분 십오 초), but not before a ratio's word ("1:10 축척").
CLOCK = re.compile(
    r"(?<![\d:.])(2[0-4]|1\d|0?\d):([0-5]\d)(?::([0-5]\d))?(?![\d:])(?! ?(?:비율|비(?![가-힣])|축척))"
    rf"(?:{PARTICLE})?"
)

# A game's score the clock would read, "3:16로 이겼다", "스코어는 2:15였다" (korean61: 세 시 16분으로 이겼다): a score's 대, the
# particle as the second number takes it, 3 대 16으로 (and "10:3로 이겼다" 10 대 3으로, the ratio's 3로 before). Only with a
# game's verb after it (이겼다, 졌다, 비겼다, 승리, 패배, 역전, 앞섰다, 꺾었다 …) or 스코어, 점수 before it; not a time a particle of
# time follows, "점수는 10:30부터 공개", nor one of a clock's zero, "03:05로 이겼다" (rvk62: korean62's 10 대 30부터, 03 대 05로).
SCORE = re.compile(
    rf"(?<![\d:.])(?!0\d)(\d{{1,3}}):(?!0\d)(\d{{1,3}})(?![\d:]|\.\d)(?:{PARTICLE})?"
    r"(?= ?(?:이겼|이기|졌|지고|비겼|비기|승리|패배|패했|역전|앞섰|앞서|뒤졌|뒤지|꺾|제압|완승|완패|신승|석패|대승|대패))"
    r"|((?:스코어|점수)(?:는|가|도)? )(?!0\d)(\d{1,3}):(?!0\d)(\d{1,3})(?![\d:]|\.\d|에|부터|까지|쯤|경)"
)


def score(match: re.Match[str]) -> str:
    """ "3:16로" (before a game's verb) as 3 대 16으로: the particle in the form 16's 육 takes."""
    first, second, particle, word, *after_the_word = match.groups()
    if word:
        return f"{word}{after_the_word[0]} 대 {after_the_word[1]}"
    return f"{first} 대 {second}" + (particle_after(second, particle) if particle else "")


def year_month_day(match: re.Match[str]) -> str:
    year, _, month, day = match.groups()
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31):
        return match.group(0)
    return f"{year}년 {int(month)}월 {int(day)}일"


def dated_event(match: re.Match[str]) -> str:
    """ "6.25" as 육이오, "6.10" as 육십, "12.12" as 십이십이: one word, as the event's name is said."""
    month, day, section = match.groups()
    date = f"{month}.{day}"
    if date not in _EVENT_DATES or (section and (date != "3.1" or _names_other_sections(match.string))):
        return match.group(0)
    as_number = day.endswith("0") or month == day == "12"
    return _sino(int(month)) + (_sino(int(day)) if as_number else "".join(_DIGITS[int(d)] for d in day))


@functools.lru_cache(maxsize=1)
def _names_other_sections(text: str) -> bool:
    """Whether `text` names a section "N.M절" besides 3.1절: searched once per text (the one `DATED_EVENT.sub`
    is reading), not once per "3.1절" in it, which made the work grow with the square of the text."""
    return _OTHER_SECTION.search(text) is not None


def _sino(number: int) -> str:
    """1-39 in Sino-Korean words: 일, 십, 십이, 이십, 삼십일."""
    tens, ones = divmod(number, 10)
    return (_DIGITS[tens] if tens > 1 else "") + ("십" if tens else "") + (_DIGITS[ones] if ones else "")


def meridiem(match: re.Match[str]) -> str:
    """ "3:00 PM" as 오후 3:00, "10am" as 오전 10시; "오후 3PM" keeps its one 오후; "13 PM", "123 PM" and
    "1.5 PM" are left."""
    hour, minutes, half = match.groups()
    start = match.start()
    if not 1 <= int(hour) <= 12 or (start and match.string[start - 1] in "0123456789:."):
        return match.group(0)
    said = match.string[max(0, match.start() - 3) : match.start()].rstrip().endswith(("오전", "오후"))
    last_point = "." if match.group().endswith(".") and match.end() == len(match.string) else ""
    return ("" if said else "오전 " if half in "Aa" else "오후 ") + f"{hour}{minutes or '시'}{last_point}"


def meridiem_hours(match: re.Match[str]) -> str:
    """ "1-3pm" as 오후 1시에서 3시, the half of the day said once, before the first hour; a range to noon,
    "11-12pm", or past it, "9-6pm", as 오전 9시에서 오후 6시 (오후 열한 시: the night; 9-오후 여섯 시), and one from
    noon, "12-2pm", as 오후 12시에서 2시 (it was left: 12-오후 두 시)."""
    first, last, half = match.groups()
    if first == last or match.start() and match.string[match.start() - 1].isalnum():
        return match.group(0)
    said, other = ("오전", "오후") if half in "Aa" else ("오후", "오전")
    if int(first) < int(last) < 12 or int(first) == 12:
        return f"{said} {first}시에서 {last}시"
    return f"{other} {first}시에서 {said} {last}시"  # "9-6pm", "11-12pm": from the morning


# ... nor after one, "비율은 1:10", "축척 1:50", "The ratio is 1:10" (korean18: 한 시 10분, one ten): a ratio, `korean_formulas`'.
# A bare 비 only as "A와 B의 비": "오늘 비는 1:10에 그쳤다" is the rain's time (korean19: 1 대 10).
# Its object's and an amount's forms too, "비율을 1:10으로", "비율은 약 1:10" (korean19: 한 시 10분).
# ... and in brackets or after "=", "비율(1:10)", "비율 = 1:10", and an English ratio's of two terms, "The ratio of A to B
# is 1:10" (korean19: 한 시 10분, one ten).
_RATIO_WORD_BEFORE = re.compile(
    r"(?:(?:비율|축척)(?:[은는이을]|\(| ?=)?(?: 약)?|(?<=의 )비는?"
    r"|\b(?:[Rr]atio|[Ss]cale)(?: of [\w.]{1,12} to [\w.]{1,12})?(?: (?:is|was|of))?):? ?$"
)
# ... and the range's second end after a ratio's first, "비율은 1:10~1:20" (korean19: 1 대 10에서 1시 20분).
_RATIO_RANGE_BEFORE = re.compile(r"(?<![\d:])\d{1,2}:\d{2} ?(?:[~～〜-]|에서) ?$")


def after_a_ratio_word(text: str, start: int) -> bool:
    """Whether a ratio's word ends just before `start`, or a range from a ratio: "1:10" there is no time of day."""
    if _RATIO_WORD_BEFORE.search(text, max(0, start - 48), start):
        return True
    first = _RATIO_RANGE_BEFORE.search(text, max(0, start - 12), start)
    return first is not None and bool(
        _RATIO_WORD_BEFORE.search(text, max(0, first.start() - 48), first.start())
    )


def clock(match: re.Match[str]) -> str:
    """ "10:30:15" as 10시 30분 15초; a particle after it as its last word takes it, "3:16와" 16분과 (korean60: 16분와,
    the form the writer chose for 육's sound)."""
    hour, minute, second, particle = match.groups()
    if not second and after_a_ratio_word(match.string, match.start()):
        return match.group()  # read by `korean_formulas.RATIO` next: 1 대 10
    said = (
        f"{int(hour)}시"
        + (f" {int(minute)}분" if int(minute) else "")
        + (f" {int(second)}초" if second and int(second) else "")
    )
    return said + (particle_after(said, particle) if particle else "")


def june_or_october(match: re.Match[str]) -> str:
    return "시" if match.group(1) == "10" else "유"  # 유월 and 시월, not 육월 and 십월
