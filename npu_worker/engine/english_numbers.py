"""An English sentence's numbers in a Korean text in English words (`english_reading.signs_in_korean_text`).

The Korean voice says digits in Korean and English words in English: "The battery is 3.7V." was read 3 point 7 volts,
which it said 삼 point 칠 volts, two languages in one number. The forms the English rules have made English, a
decimal's "point", a number before a unit's name, the terms of "plus", "minus", "to": three point seven volts, five
kilometers per hour, three plus four; a span of years, "from 1990 to 2000", as years are said, nineteen ninety; dollars,
a clock time and a small fraction, "$3.50", "3:30", "1/2": three dollars and fifty cents, three thirty, one half. Other
numbers, a year alone, a count, a version, stay the Korean rules' (no English rule reads them; "In 2024 we grew." 2024
as the Korean voice says it).
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_dates import after_a_ratio_word
from .korean_formulas import PORT_MAPPING

_DIGIT_NAMES = "zero one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_GROUPS = ((1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand"))

# The units an English sentence names after a number, "V" volts (`english_reading` reads them): a number before one
# of their names, singular or plural, is said in words.
# ... and a Korean report's "%p", "It grew by 3.5%p." (korean21: three point five 퍼센트p, the Korean rules' word and a
# letter left): three point five percentage points.
# ... and a micro unit, "5 μA", "10 µm" (korean60: 5 mu A, the Greek letter named; before it 5 마이크로암페어, the Korean
# rules' word): five microamperes, ten micrometers.
UNIT_NAMES = {
    "V": "volts", "kV": "kilovolts", "mV": "millivolts", "A": "amperes", "mA": "milliamperes", "W": "watts",
    "kW": "kilowatts", "MW": "megawatts", "Wh": "watt-hours", "kWh": "kilowatt-hours", "mAh": "milliampere-hours",
    "Hz": "hertz", "kHz": "kilohertz", "MHz": "megahertz", "GHz": "gigahertz", "km": "kilometers", "m": "meters",
    "cm": "centimeters", "mm": "millimeters", "nm": "nanometers", "kg": "kilograms", "g": "grams",
    "mg": "milligrams", "L": "liters", "mL": "milliliters", "ms": "milliseconds", "min": "minutes", "h": "hours",
    "KB": "kilobytes", "kB": "kilobytes", "MB": "megabytes", "GB": "gigabytes", "TB": "terabytes", "dB": "decibels",
    "Ω": "ohms", "kΩ": "kilohms", "Pa": "pascals", "kPa": "kilopascals", "J": "joules", "kJ": "kilojoules",
    "km/h": "kilometers per hour", "m/s": "meters per second", "°C": "degrees Celsius", "℃": "degrees Celsius",
    "%": "percent", "%p": "percentage points",
    "μA": "microamperes", "µA": "microamperes", "μF": "microfarads", "µF": "microfarads", "μm": "micrometers",
    "µm": "micrometers", "μs": "microseconds", "µs": "microseconds",
}  # fmt: skip
# ... and a currency's name, "It costs 3~5 dollars." (read59k: 3에서 5 dollars, the digits the Korean voice's): three to
# five dollars.
_UNIT_WORDS = (
    "(?:"
    + "|".join(
        sorted({name.split()[0].removesuffix("s") for name in UNIT_NAMES.values()} | {"dollar", "euro"})
    )
    + ")"
)
# A decimal said with "point", "3 point 1 4"; a number before the name of a unit, or beside "plus", "minus", "to",
# "=" (not a bound's "<=", ">="), a power's "10 to the power of 3", "5 squared": each a number of its own, not glued to
# a letter, a "/", a "." or a ",".
# ... and one glued to a letter of its own, a factor's or a scale's, "1.5x", "1.2M" (korean21: 1 point 5x, the digits the
# Korean voice's around an English word): one point five x, one point two M.
# ... and a version's after a name's slash, "HTTP/1.1", "TLS/1.3" (rvk21: HTTP 1 point 1 in any sentence korean21 took for
# English, the digits the Korean voice's around "point"): HTTP one point one, the slash a space as the Korean rules' "HTTP/2".
# ... and one before a clause's comma, "It is 3.5, not 4.", "HTTP/1.1, with" (rvk21: 3 point 5, as above); a list's "1,5" not.
SAID_DECIMAL = re.compile(
    r"(?:(?<![\w./,])|(?<=[A-Za-z])(/))(\d+) point ((?:\d ){0,14}\d)(?:(?![\w.]|,\d)|(?=[A-Za-z](?!\w)))"
)
_NUMBER_ALONE = r"(\d+)(?![\w.,:/%°])"
# ... and its sign, glued before it, "-5 degrees", "−5 degrees" (korean16: 마이너스 5 degrees, a Korean word, and −five, a
# sign the Korean rules no longer read before a word): minus five degrees. Not an exponent's "1.8e+03 volts" (the Korean
# rules read it whole).
SAID_INTEGER = re.compile(
    rf"(?:(?<![\w./,:$€£¥₩§#)])([-−])|(?<![\w./,:$€£¥₩§#\-−])(?<![eE]\+)){_NUMBER_ALONE}"
    rf"(?= (?:{_UNIT_WORDS}|(?:plus|minus|to) (?:\d|[a-z]+ point)|to the power|squared|cubed|(?:less|greater) than))"
    rf"|(?:(?<=plus )|(?<=minus )|(?<=\d to )|(?<=power of )|(?<=[^<>!=]= )|(?<= gets )){_NUMBER_ALONE}"
    r"|(?:(?<=than )|(?<=equal to )|(?<=approaches ))(\d+)(?![\w:/%°]|[.,]\d)"  # a bound's, a limit's, before a comma too
)

# ... and a span of years after a word that dates it, "The year 2024 to 2025", "from 1990 to 2000" (korean16: two
# thousand twenty-four, a count's words): as a lecturer says a year, twenty twenty-four, nineteen ninety; a later year
# after "to", none a unit's number ("from 1500 to 2000 volts" as before).
_YEAR = r"(1[1-9]\d\d|20\d\d)"
YEAR_SPAN = re.compile(
    rf"\b((?:[Yy]ears?|[Ff]rom|[Bb]etween|[Ii]n|[Ss]ince|[Dd]uring) ){_YEAR} (to|and) {_YEAR}"
    rf"(?![\w.,:/%°])(?! (?:{_UNIT_WORDS}))"
)

# ... and an unspaced hyphen's range before a unit's name, "5-10 volts", "5-10 V", "10-20%" (korean16: left, the
# digits to the Korean voice beside English words), said "to", five to ten volts, when it runs up; "5-3 dB" and a
# decimal's "1.5-2.5 V" as before. A tilde's too, "3~5%", "3~5 ms" (korean21: 3 five percent, the range's tilde lost).
# A spaced tilde's and a descending one's too, "3 ~ 5%", "5~3%" (rvk21: 3 five percent, the tilde lost): a tilde is no
# subtraction, so its range is said whichever way it runs, five to three percent.
UNIT_RANGE = re.compile(rf"(?<![\w./,\-−~∼～〜])(\d+)(-| ?[~∼～〜] ?)(?=(\d+) {_UNIT_WORDS})")

# ... and a whole number in brackets before one, "(−3) volts", "(5) volts" (korean16: (마이너스 3) volts, Korean words
# beside English ones): (minus three) volts.
BRACKETED = re.compile(rf"(?<=\()([-−]?)(\d+)(?=\) {_UNIT_WORDS})")


# An amount of dollars, a clock time and a small fraction, "It costs $3.50.", "We met at 3:30.", "Add 1/2 cup." (korean17:
# 3 점 오영 달러, 세 시 30분, 2분의 1: the Korean rules' words in an English sentence): three dollars and fifty cents,
# three thirty, one half. A scaled amount, "$1.5M", a rate, "$3.50/kWh", a range of times, "3:30-4:00", a date "1/2/2024" stay the Korean rules'.
# ... and a range of dollars, "$5-$10", "$5–10" (korean18: five dollars–10, two voices), the Korean rules' as before; one
# with a scale's word, "$5 million", "$2.5 billion" (korean18: five dollars million, 2 점 오 달러 billion): five million
# dollars, two point five billion dollars.
_NO_RANGE_BEFORE, _NO_RANGE_AFTER = r"(?<![\w.,$])(?<![-–~])(?<![-–~] )", r"(?! ?[-–~] ?\$?\d)"
_SCALE = "(?:thousand|million|billion|trillion)"
DOLLARS = re.compile(
    rf"{_NO_RANGE_BEFORE}\$(\d{{1,3}}(?:,\d{{3}}){{1,3}}|\d{{1,12}})(?:\.(\d\d))?(?![\w/]|[.,]\d| {_SCALE}\b){_NO_RANGE_AFTER}"
)  # a comma after it a clause's, "$3.50, not 4" (korean60: 3 점 오영 달러, the Korean rules'); one before a digit a group's
SCALED_DOLLARS = re.compile(
    rf"{_NO_RANGE_BEFORE}\$(\d{{1,3}})(?:\.(\d{{1,2}}))? ({_SCALE})\b{_NO_RANGE_AFTER}"
)
# ... a clock's "am" or "pm" glued to it, "3:30pm" (korean18: three thirtypm), apart, three thirty PM; another letter
# glued, "10:00Z", and a range spaced, "9:00 - 17:00" (korean18: 아홉 시 - seventeen o'clock), the Korean rules' as before.
CLOCK = re.compile(
    r"(?<![\w.:/\-–~])(?<![-–~] )([01]?\d|2[0-3]):([0-5]\d)(?:([AaPp])[Mm]\b)?(?![\w:]|\.\d| ?[-–~] ?\d)"
)
# ... and a ratio no clock's form takes, "The ratio is 3:2 here.", "Mix them 3:2.", "16:9" (korean20: 3 대 2, the Korean rules'
# word in an English sentence): three to two; a range, "3:2-4:3", and a chain, "1:2:3", the Korean rules' as before. Not a
# day's end, "24:00", "24:30", nor a term with a leading zero, "007:1", the Korean rules' clock and digits as before
# (korean21: twenty-four to 00, twenty-four to thirty for 스물네 시 30분).
RATIO = re.compile(
    r"(?<![\w.:/\-–~])(?<![-–~] )(?!24:[0-5]\d(?!\d))(0|[1-9]\d{0,3}):(0|[1-9]\d{0,3})(?![\w:]|\.\d| ?[-–~] ?\d)"
)
# ... and a whole number before one, "5 1/2 inches" (korean18: 5 one half, the whole the Korean voice's): five and one half.
FRACTION = re.compile(r"(?<![\w./,\-−])(?:(\d{1,2}) )?([1-9])/([2-9]|10)(?![\w/]|[.,]\d)")
# ... and a letter over a whole number, "The value is x/2 here." (read59k: 2분의 x, the Korean rules' words): x over two;
# not a unit's rate, "km/2h", a path's, "a/x/2", nor a name's version, "HTTP/2".
LETTER_OVER = re.compile(r"(?<![\w./\\])([A-Za-z])/([1-9]\d{0,2})(?![\w/]|[.,]\d)")
_PARTS = "_ _ half third quarter fifth sixth seventh eighth ninth tenth".split()


# A version or a section after its word, "version 1.2.3.4", "Use Python 3.11", "section 2.10.1", "v1.2.3" (korean62: one
# dot two dot three dot four, an IP address's; three point one one, a decimal's digits; 2 점 10 점 1, the Korean rules'
# chain): each part a number, one point two point three point four, three point eleven, two point ten point one.
_NUMBERED_BY = (
    r"(?:[Vv]ersion|[Rr]elease|[Ss]ection|[Cc]hapter|[Ff]igure|[Tt]able|Python|Java|Node(?:\.js)?|Ubuntu|Android|iOS"
    r"|macOS|CUDA|PyTorch|TensorFlow)"
)
VERSION = re.compile(rf"(?<![\w.])({_NUMBERED_BY} |v)(\d{{1,4}}(?:\.\d{{1,4}}){{1,3}})(?!\w|\.\d)")
# A report's decimal without its leading zero after "=", "(p = .048)" (korean62: left, espeak's Korean voice said 영사팔,
# the point lost; "p < .05" was said): zero point zero four eight, as "p = 0.048" is.
_LEADING_POINT = re.compile(r"(?:(?<==)|(?<== ))\.(?=\d)")


def amounts_said(sentence: str) -> str:
    """`sentence` with its versions, dollars, clock times, ratios and small fractions in English words."""
    if "." in sentence:
        sentence = VERSION.sub(
            lambda m: (
                m.group(1).rstrip() + " " + " point ".join(map(_number_or_digits, m.group(2).split(".")))
            ),
            sentence,
        )
        sentence = _LEADING_POINT.sub("0.", sentence)
    if "$" in sentence:
        sentence = DOLLARS.sub(_dollars, SCALED_DOLLARS.sub(_scaled_dollars, sentence))
    if ":" in sentence:
        # "-p 8080:80" before a clock or a ratio reads it
        sentence = PORT_MAPPING.sub(_port_mapping, sentence)
        sentence = RATIO.sub(_ratio, CLOCK.sub(_clock, sentence))
    if "/" not in sentence:
        return sentence
    sentence = LETTER_OVER.sub(lambda m: f"{m.group(1)} over {english_number(m.group(2))}", sentence)
    return FRACTION.sub(_fraction, sentence)


def _dollars(match: re.Match[str]) -> str:
    dollars, cents = int(match.group(1).replace(",", "")), int(match.group(2) or 0)
    said = (
        [f"{english_number(str(dollars))} dollar{'' if dollars == 1 else 's'}"]
        if dollars or not cents
        else []
    )
    if cents:
        said.append(f"{english_number(str(cents))} cent{'' if cents == 1 else 's'}")
    return " and ".join(said)


def _scaled_dollars(match: re.Match[str]) -> str:
    whole, fraction, scale = match.groups()
    said = english_number(whole)
    if fraction:
        said += " point " + " ".join(_DIGIT_NAMES[int(digit)] for digit in fraction)
    return f"{said} {scale} dollars"


def _clock(match: re.Match[str]) -> str:
    hour, minutes = english_number(str(int(match.group(1)))), int(match.group(2))
    if not match.group(3) and after_a_ratio_word(match.string, match.start()):
        return f"{hour} to {english_number(str(minutes))}"  # "ratio is 1:10": one to ten
    half_of_day = f" {match.group(3).upper()}M" if match.group(3) else ""
    if not minutes:
        return f"{hour} o'clock{half_of_day}"
    return f"{hour} {'oh ' if minutes < 10 else ''}{english_number(str(minutes))}{half_of_day}"


def _port_mapping(match: re.Match[str]) -> str:
    """ "docker run -p 8080:80" as eight thousand eighty colon eighty (korean60: … to eighty, a ratio's word)."""
    option, space, address, host, container = match.groups()
    return f"{option}{space}{address}{english_number(host)} colon {english_number(container)}"


def _ratio(match: re.Match[str]) -> str:
    return f"{english_number(match.group(1))} to {english_number(match.group(2))}"


def _fraction(match: re.Match[str]) -> str:
    whole, numerator, denominator = match.group(1), int(match.group(2)), int(match.group(3))
    part = _PARTS[denominator]
    if numerator > 1:
        part = "halves" if part == "half" else part + "s"
    said = f"{english_number(str(numerator))} {part}"
    return f"{english_number(whole)} and {said}" if whole else said


# ... and a whole number paired with one said so, "It is 3.5, not 4.", "4 or 3.5" (read59k: three point five, not 4, the
# 4 the Korean voice's 사): three point five, not four, four or three point five.
_SAID_WORD = (
    "(?:"
    + "|".join([*_DIGIT_NAMES, *_TEENS, *_TENS[2:], "hundred", *(name for _, name in reversed(_GROUPS))])
    + ")"
)
_PAIR = r"(,? (?:not|or|nor|and|to) )"
# ... and after an amount said so, "$3.50, not 4" (korean60: three dollars and fifty cents, not 4): not four.
PAIRED_AFTER = re.compile(rf"\b({_SAID_WORD}|dollars?|cents?){_PAIR}(\d{{1,3}})(?![\w:/%°]|[.,]\d)")
# A number to call, "Call 911 or one", "dial 112" (korean60: nine hundred eleven, a pair's number): digit by digit, as
# a phone number is said, nine one one; only a service's three digits (911, 999, 000, 110 to 139), not a count, "Call 3
# times", "call 100 people", "call 120 customers". Each of a list of them, "Call 112 or 119", "dial 112, 119 or 911" (korean61:
# one one two or one hundred nineteen, the pair's rule reading the second).
_SERVICE_NUMBER = r"(?:911|999|000|1[1-3]\d)(?![\w:/%°-]|[.,]\d)"
CALLED = re.compile(
    r"(?<![A-Za-z])((?:[Cc]all|[Dd]ial|[Tt]ext)(?:ed|ing|s)? )"
    rf"({_SERVICE_NUMBER}(?:(?:,? (?:or|and) |, ){_SERVICE_NUMBER})*)(?! [a-z]+s\b)"
)
_DIGITS = re.compile(r"\d+")
# A step of two words, a verb and its number, "Press 1.", "Wait 5.", "Call 911." (korean61: a Korean sentence, 일, 오, 구백십일:
# `korean_code` took no such sentence for English): English, its number in English words, press one, nine one one.
STEP_VERBS = r"(?:Call|Dial|Text|Press|Type|Enter|Add|Subtract|Multiply|Divide|Wait|Repeat|Choose|Select|Pick|Count|Skip|Try)"
STEP = re.compile(rf"(\s{{0,4}}(?:[-•·*▪◦‣–]\s{{1,4}})?{STEP_VERBS} )(\d{{1,12}})\s{{0,4}}")
PAIRED_BEFORE = re.compile(rf"(?<![\w./,:$€£¥₩§#\-−])(\d{{1,3}}){_PAIR}(?={_SAID_WORD}\b)")


# An IP address, "Connect to 192.168.0.1 now.", "at 10.0.0.1:8080" (korean61: 192 점 168 점 0 점 1, the Korean rules' chain
# and word in an English sentence): each part's digits and "dot", one nine two dot one six eight dot zero dot one, a port's
# number after "colon".
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
IP_ADDRESS = re.compile(rf"(?<![\w.:])({_OCTET}(?:\.{_OCTET}){{3}})(?::(\d{{1,5}}))?(?![\w:]|\.\d)")


def _ip_address(match: re.Match[str]) -> str:
    address, port = match.groups()
    said = " dot ".join(_DIGITS.sub(_digit_by_digit, part) for part in address.split("."))
    return said + (f" colon {_number_or_digits(port)}" if port else "")


def numbers_said(sentence: str) -> str:
    """`sentence` with its decimals said "point", and its numbers before a unit or beside an operator, in words."""
    if "." in sentence:
        sentence = IP_ADDRESS.sub(_ip_address, sentence)
    sentence = CALLED.sub(lambda m: m.group(1) + _DIGITS.sub(_digit_by_digit, m.group(2)), sentence)
    step = STEP.fullmatch(sentence)
    if step:
        return step.group(1) + _number_or_digits(step.group(2)) + sentence[step.end(2) :]
    sentence = UNIT_RANGE.sub(_range_to, sentence)
    sentence = BRACKETED.sub(
        lambda m: ("minus " if m.group(1) else "") + _number_or_digits(m.group(2)), sentence
    )
    sentence = SAID_DECIMAL.sub(_decimal, sentence)
    sentence = YEAR_SPAN.sub(_year_span, sentence)
    sentence = SAID_INTEGER.sub(_integer, sentence)
    if " " in sentence:
        sentence = PAIRED_AFTER.sub(
            lambda m: m.group(1) + m.group(2) + _number_or_digits(m.group(3)), sentence
        )
        sentence = PAIRED_BEFORE.sub(lambda m: _number_or_digits(m.group(1)) + m.group(2), sentence)
    return sentence


def _range_to(match: re.Match[str]) -> str:
    first, mark, last = match.groups()
    return f"{first} to " if mark != "-" or int(first) < int(last) else match.group()


def _year_span(match: re.Match[str]) -> str:
    dating, first, word, last = match.groups()
    if int(last) <= int(first):
        return match.group()
    return f"{dating}{year_words(first)} {word} {year_words(last)}"


def year_words(year: str) -> str:
    """A year of four digits as said, 2024 twenty twenty-four, 1905 nineteen oh five, 2005 two thousand five."""
    number = int(year)
    if 2000 <= number <= 2009:
        return english_number(year)
    century, rest = divmod(number, 100)
    if rest == 0:
        return f"{english_number(str(century))} hundred"
    if rest < 10:
        return f"{english_number(str(century))} oh {_DIGIT_NAMES[rest]}"
    return f"{english_number(str(century))} {english_number(str(rest))}"


def _integer(match: re.Match[str]) -> str:
    sign, before_a_word, after_a_word, bound = match.groups()
    said = _number_or_digits(before_a_word or after_a_word or bound)
    return f"minus {said}" if sign else said


# ... the name a capital and a letter or more, not a unit's: a unit's rate and a letter's division, "5 mg/1.5 mL",
# "x/1.5", keep their slash (rvk21: 5 밀리그램 one point five, x one point five: the rate and the division unsaid).
_NAME_BEFORE_SLASH = re.compile(r"(?<![A-Za-z])[A-Z][A-Za-z]{1,15}$")


def _decimal(match: re.Match[str]) -> str:
    slash, whole, fraction = match.groups()
    said = _number_or_digits(whole)
    if slash:
        name = _NAME_BEFORE_SLASH.search(match.string, max(0, match.start() - 16), match.start())
        said = (" " if name and name.group() not in UNIT_NAMES else "/") + said
    letter_after = match.string[match.end() : match.end() + 1].isalpha()
    return f"{said} point {' '.join(_DIGIT_NAMES[int(digit)] for digit in fraction.split())}{' ' if letter_after else ''}"


def _digit_by_digit(match: re.Match[str]) -> str:
    """A number to call as a phone number is said, each digit's name: "911" nine one one."""
    return " ".join(_DIGIT_NAMES[int(digit)] for digit in match.group())


def _number_or_digits(digits: str) -> str:
    """`english_number`'s words, or, for what it leaves as written ("007", over nine digits), each digit's English
    name: zero zero seven (korean16: the digits to the Korean voice, 공공칠 volts, two voices in one number)."""
    said = english_number(digits)
    return " ".join(_DIGIT_NAMES[int(digit)] for digit in digits) if said == digits else said


def english_number(digits: str) -> str:
    """A whole number of up to twelve digits, "125", in English words, one hundred twenty-five; a longer one, or one
    with a leading zero ("007"), as written."""
    if not digits.isdigit() or len(digits) > 12 or (len(digits) > 1 and digits[0] == "0"):
        return digits
    number = int(digits)
    if number == 0:
        return "zero"
    words = []
    for size, name in _GROUPS:
        if number >= size:
            words += [_below_thousand(number // size), name]
            number %= size
    if number:
        words.append(_below_thousand(number))
    return " ".join(words)


def _below_thousand(number: int) -> str:
    hundreds, rest = divmod(number, 100)
    words = [f"{_DIGIT_NAMES[hundreds]} hundred"] if hundreds else []
    if rest >= 20:
        words.append(_TENS[rest // 10] + (f"-{_DIGIT_NAMES[rest % 10]}" if rest % 10 else ""))
    elif rest >= 10:
        words.append(_TEENS[rest - 10])
    elif rest:
        words.append(_DIGIT_NAMES[rest])
    return " ".join(words)
