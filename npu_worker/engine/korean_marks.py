"""Korean text's list marks, letters and signs as a Korean lecturer says them, before its numbers are read
(`korean_reading.spoken`, which calls `marks_spoken` first).

espeak-ng's Korean voice read a list's "1." as 일 with the falling tone of a sentence's end, "II." as
English "roman two", "Ⅱ" as the word "letter" and code-point digits, "SOC" and "EV" as the English words
"sock" and "ev", "A4" as 에이 사, "CO2" as 코 이, "Q&A" with the English "and", "/" as "slash" and the
middle dot "ㆍ" of Korean documents as "Chinese letter" (the words around it letter by letter). Every
pattern is anchored on a letter, a digit or a single sign, with bounded repeats: linear in the text.
"""

from __future__ import annotations

import unicodedata

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import PARTICLE, particle_after
from .korean_subscripts import formulas_spoken
from .korean_templates import template
from .korean_words import DIGITS, ENGLISH_DIGITS, HANJA
from .sentence_ends import LIST_LABEL, opens_list_item

# Signs written in Korean documents that espeak misread: the middle dots "ㆍ" (a Hangul letter, arae-a),
# "・" and "･" ("Japanese letter") separate words as "·" does; "≈", "∴" and "∵" were English words, as were
# "↑" and "↓" ("up arrow": "15%↑" is 15 퍼센트 증가).
_SIGNS = str.maketrans(
    {
        "ㆍ": " ",
        "・": " ",
        "･": " ",
        "≈": " 약 ",
        "≒": " 약 ",
        "∴": " 따라서 ",
        "∵": " 왜냐하면 ",
        "↑": " 증가 ",
        "↓": " 감소 ",
    }
)
# Roman numerals' characters, "Ⅰ. 서론", "제Ⅱ장": their numbers.
_ROMAN_NUMERALS = {code: str(int(unicodedata.numeric(chr(code)))) for code in range(0x2160, 0x2180)}
# "1. 전압을 …", "II. 본론", "가. 전압을 …", "2.3.1. 세부" when `opens_list_item` says it marks a list item
_LIST_MARK = re.compile(
    r"(?<![\w.])([1-9]\d?(?:\.\d{1,2}){0,3}|[IVX]{1,7}|[가나다라마바사아자차카타파하ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ])\.(?=\s)"
)
# ... and one with its label, "Step 1. 준비", "Q1. 무엇인가요?": the label and its number, then the pause (not 첫
# 번째, and no sentence's falling tone: "Step 1." was a sentence of its own).
_LABELLED_MARK = re.compile(rf"(?<![\w.])({LIST_LABEL}\d{{1,2}})\.(?=\s)")
# "1) 안전성", "(2) 경제성" opening a line (espeak: 일 안전성, the mark said as a bare number): 첫 번째, 두 번째.
# Not an equation's number before its word 식, "(2) 식을 (1) 식에 대입하면" (it was 두 번째, 식을): left as inside a line.
_BRACKET_MARK = re.compile(
    r"^([ \t]*)\(?([1-9]\d?)\)[ \t]+(?=[^\W\d_])(?!식(?:[을를이가은는에의과와도]|으로|로|\s|$))", re.MULTILINE
)
# Hanja: a gloss in brackets after its Hangul word, "매출(賣出)", is not read (it said the word again, or
# "Chinese letter"); a run of those in `HANJA` is read as Korean ("전년比" 전년비, "前年" 전년, "約 10%" 약), any
# other run is left out with a space: espeak said "Chinese letter" for each and spelled a Hangul word joined
# to one as jamo ("전년對比": ㅈ ㅓ ㄴ …).
_HANJA_CHARACTERS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HANJA_GLOSS = re.compile(rf"(?<=[가-힣])\([{_HANJA_CHARACTERS}]{{1,12}}\)")
_OPENS_WITH_D_OR_J = re.compile("[다-딯자-짛]")
_WEEKDAYS = "月火水木金土日"  # "金土日": 금토일, days, no name
_HANJA_RUN = re.compile(rf"[{_HANJA_CHARACTERS}]{{1,32}}")
# Kana: espeak's Korean voice said "Japanese letter" for each and spelled a Hangul word joined to one as jamo
# ("한국어すし": ㅎ ㅏ ㄴ …). It cannot say Japanese: a run of kana is left out with a space, as an unknown
# Hanja run is, and the Korean around it reads as Korean. A run inside a word, before its particle, "한국어すし를", is
# left out whole: a space there cut the particle off (한국어 를, a pause before it).
_KANA_RUN = re.compile("[\u3041-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f]{1,64}")
# A section sign before its number, "§ 3", "§3.2" (espeak said nothing for it): the section, 3절, 3.2절.
# Not a range of them, "§§ 3-5", "§ 3-5" (left as before: it was 3절-5).
# A code's four-digit section whole, "18 U.S.C. § 1030": 1030절 (it was 103절0, its last digit cut off).
# The sign and the word both written, "§3.2절", "§ 3절에서": said once (it was 3 점 이절절).
# A particle the writer chose for the number's sound, "§3.2와" (이: 와), "§3.2는", "§3으로" (삼: 으로), is said after
# 절 as 절 takes it (`korean_particles.particle_after`): 3.2절과, 3.2절은, 3절로 (it was 절와, 절는, 절으로).
_SECTION_NUMBER = re.compile(
    rf"(?<!§)§ ?(\d{{1,4}}(?:\.\d{{1,3}}){{0,3}})(?!\d|\.\d| ?[-–~] ?\d)(?:절|{PARTICLE})?"
)
# A derivative, "dV/dt", "dy/dx" (espeak: 디 브이 "slash" 디티, the English word): each "d" and its letter spelled
# by name, 디브이 디티, as a lecturer says it; not a word's "d" ("and/dt") nor an operator's "d/dt".
_DERIVATIVE = re.compile(r"(?<![A-Za-z\d])d([A-Za-z])/d([A-Za-z])(?![A-Za-z\d])")
# A display mode's "@", "4K@60Hz", "1080p@60fps" (espeak: English "at sign"): a pause, 4K 60 헤르츠; not an e-mail's,
# "kp@60fps.net" (it was kp 60fps.net: a domain goes on after the rate).
_AT_RATE = re.compile(r"(?<=[\dKkPp])@(?=\d{1,3}(?:\.\d{1,3})? ?(?:Hz|hz|fps|FPS)(?![A-Za-z]|\.[A-Za-z]))")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10}
# "A/S", "I/O": letter names side by side ("A-S"); "EV/HEV" two words; not a slash inside a web address.
_LETTERS_SLASH = re.compile(r"(?<![A-Za-z/.])([A-Z]{1,5})/([A-Z]{1,5})(?![A-Za-z/])")
# ... and a name's version after its slash, "HTTP/2", "HTTP/1.1" (espeak: 에이치티티피 "slash" 이): a pause, HTTP 2.
_NAME_VERSION = re.compile(r"(?<![A-Za-z/.])([A-Z]{2,6})/(?=\d{1,2}(?:\.\d{1,2})?(?![\d/]|\.\d))")
# A rate per so many, "3.2명/10만 명", "5건/1,000명" (espeak: 삼 점 이명 십만 명, no "per"): as a Korean reads a
# rate, the base first, 10만 명당 3.2명. Only over a round base (1, 10, 100, 1,000, 1만, 10만 …) and a counter of
# people or cases, a particle after it at most: "5년/10만km" (a warranty's, either limit), "5건/10만 인구" are two
# figures.
_RATE = re.compile(
    r"(?<![\d.,])(\d{1,6}(?:\.\d{1,3})?) ?(명|건|회|개|대|가구)/"
    r"(1(?:0{1,3}|,000)?(?: ?[천만억])?|[1-9]0{0,3}[천만억])( ?)(명|인|가구|세대|건|회|대)(?![가-힣\d](?<![이은는을의과와도에로으]))"
)
# "입/출력": two words; "5년/10만km" (a warranty's, espeak: "slash") too.
_HANGUL_SLASH = re.compile(r"(?<=[가-힣])/(?=[가-힣]|\d)")
# A cathode's metals in their ratio, "NCM811", "NCM 622", "NCA-955" (espeak: 팔백십일): its digits one by one,
# as a battery engineer says it (엔씨엠 팔일일).
# ... and an ingress protection's "IP67" (아이피 육십칠): 아이피 육칠; ending a sentence or before a comma too
# ("등급은 IP68.", "IP67, IP68": it was left there); not a decimal's digits ("NCM 811.5").
_CATHODE = re.compile(r"(?<![A-Za-z])(?:(NCMA|NCM|NMC|NCA)[ -]?([1-9]{3})|(IP)([0-6]\d))(?!\d|[.,]\d)")
# A single digit inside a name of capitals is said in English, as Koreans say it: "A4" 에이포, "B2B" 비투비,
# "MP3" 엠피쓰리, "CO2" and "CO₂" 씨오투, "H₂O" 에이치투오; the letters are joined by hyphens, which espeak
# spells by name ("C-O", not the word "co"). "PM2.5" keeps its decimal.
_LETTERS_DIGIT = re.compile(r"(?<![A-Za-z\d.\-])([A-Z]{1,4})([0-9₀-₉])([A-Z]{0,3})(?![A-Za-z\d₀-₉]|\.\d)")
# A range of such names, "Q1~Q3", "H1~H2" (espeak: Q원 Q쓰리, the tilde unsaid): Q원에서 Q쓰리; and a quarter
# written "1Q", "3Q" (일 큐) as Korean reports say it, 1분기.
_NAME_RANGE = re.compile(r"(?<=[A-Z][0-9]) ?[~～〜] ?(?=[A-Z][0-9](?![A-Za-z\d]))")
_QUARTER = re.compile(r"(?<![\w.])([1-4])Q(?![A-Za-z\d])")
# Acronyms a Korean lecturer spells letter by letter that espeak said as English words: "SOC" (sock), "EV"
# (ev), "ESS", "LED" (led), "ISO" (eye-so), "AR" (are) …; spelled with hyphens, which espeak reads as
# letter names. Those said as words in Korean too (RAM 램, LAN 랜, NASA 나사, TOEIC 토익) are not here.
_SPELLED = frozenset(
    "SOC SOH SOP EV HEV PHEV BEV FCEV ESS EMS UPS OBC LED CATL BYD ICE UX ERP ROI ESG AR QA IR PER EPS"
    " IMF ISO IEC SI MES IC CAE RFID BLE AWS IDE CLI GUI CI ECG ICT OTA EMI EMC IGBT CAGR".split()
)
# Not a part of one name: a code name's "MAX_SOC", an address's "ESS@kepco.co.kr", "ICT.ac.kr", "/EV/".
_ACRONYM = re.compile(r"(?<![A-Za-z\-_@./])[A-Z]{2,5}(?![A-Za-z\-_@/]|\.[A-Za-z])")
# "Q&A", "R&D", "M&A" as Koreans say them, 큐앤에이 (espeak said the English word "and" between the letters).
_AMPERSAND = re.compile(r"(?<=[A-Za-z가-힣]) ?& ?(?=[A-Za-z가-힣])")
# A footnote's or a citation's mark on a word, "배터리¹의", "참고문헌[1]": not read (espeak said "배터리 일 의",
# the particle cut from its word); a power on a letter, "x²", is `korean_formulas`'. Not a code name's index,
# "arr[1]", "list[0]" (after a Latin letter, or from 0: no citation).
_FOOTNOTE = re.compile(r"(?<=[가-힣])[¹²³⁴⁵⁶⁷⁸⁹⁰]+|(?<=[가-힣.)])\[[1-9]\d{0,2}(?:[,\-–] ?\d{1,3})*\]")
# Latin abbreviations of Korean academic slides, which espeak said in English ("for example", "etcetera"):
# as a Korean lecturer reads them. "etc." keeps its point, which may end a sentence. Without a point only
# in small letters: "VS Code" is a name, "ETC" a toll system, "삼성 VS 애플" said 브이에스 as before.
_ABBREVIATIONS = {
    "e.g.": "예를 들어",
    "i.e.": "즉",
    "etc.": "등.",
    "etc": "등",
    "cf.": "참고",
    "vs.": "대",
    "vs": "대",
}
_ABBREVIATION = re.compile(r"(?<![A-Za-z.])((?i:e\.g\.|i\.e\.|etc\.|cf\.|vs\.)|[Ee]tc|[Vv]s)(?![A-Za-z])")
# A level, "Lv. 3", "Lv3" (espeak: "el vee" and the point's pause): 레벨 3, as said; "LV" alone is a low voltage's.
_LEVEL = re.compile(r"(?<![A-Za-z])(?:[Ll]v\.? ?|LV\. ?)(?=\d)")
# A fiscal year, "FY2024", "FY 24" (espeak: the English "fy", 파이): 2024 회계연도, as Korean reports say it; not a
# code's "FY2024A". Its own word for the year written after it, "FY2024년", "FY2024년도" (it was left: espeak's "fy"),
# said once: 2024 회계연도.
# A range of them, "FY2023~FY2024", "FY2023-FY2024": 2023에서 2024 회계연도 (the tilde was lost between the two); and a
# fiscal year across two, "FY2024-25", "FY2024-2025" (it was left): 2024에서 2025 회계연도. Not one that runs down,
# "FY2024-01" (a code), left.
_FISCAL_YEAR = re.compile(
    r"(?=FY)(?<![A-Za-z\d])FY ?'?(\d{4}|\d{2})(?: ?[-~–] ?(?:FY ?'?)?(\d{4}|\d{2}))?(?:년도?)?"
    r"(?![\d년A-Za-z]|[-/.]\d)"
)
# A report's period-over-period change, "YoY +5%", "QoQ", "MoM" (espeak: English "yo", "koh"): 전년 대비, as a Korean
# report says it; "CAGR" is spelled (espeak: "kagger"). Not inside a code name, "YoYo", "yoy_rate".
# Its own word written after it, "MoM 대비 10%", said once (it was 전월 대비 대비).
# Not someone's mother, "my MoM", "your MoM's", "MoM의 조언" (it was 전월 대비의 조언): left as written.
_OVER_PERIOD = re.compile(
    r"(?<![A-Za-z\d_])(?<!my )(?<!My )(?<!his )(?<!her )(?<!our )(?<!your )(YoY|QoQ|MoM(?!의))(?![A-Za-z\d_'’])(?: ?대비)?"
    rf"(?:{PARTICLE})?"
)  # not a game's "WoW"; a particle in the form 대비 takes, "YoY이 증가", "MoM은" (it was 전년 대비이, 전월 대비은)
_PERIODS = {"YoY": "전년 대비", "QoQ": "전 분기 대비", "MoM": "전월 대비"}
# A Markdown heading's "###" (an LLM's answer, a lecture written in Markdown): espeak said "hash" for each.
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)


def marks_spoken(text: str) -> str:
    """`text` with its list marks, Roman numerals, acronyms, letter-and-digit names and signs in the words
    a Korean lecturer says; its numbers are left to `korean_reading`."""
    text = text.translate(_ROMAN_NUMERALS).translate(_SIGNS)
    if _HANJA_RUN.search(text):
        text = _HANJA_RUN.sub(_hanja, _HANJA_GLOSS.sub("", text))
    if _KANA_RUN.search(text):
        text = _KANA_RUN.sub(_kana, text)
    text = _SECTION_NUMBER.sub(
        lambda m: f"{m.group(1)}절{particle_after('절', m.group(2)) if m.group(2) else ''}", text
    )
    text = _LABELLED_MARK.sub(_labelled_mark, text)
    text = list_marks_spoken(text)
    text = _BRACKET_MARK.sub(template(r"\1\2번째, "), text)
    text = _HEADING.sub("", text)
    text = _FOOTNOTE.sub("", text)
    text = _ABBREVIATION.sub(lambda m: _ABBREVIATIONS[m.group().lower()], text)
    text = _LEVEL.sub("레벨 ", text)
    if "o" in text:  # each has one; the pattern scans only a text that could hold it
        text = _OVER_PERIOD.sub(
            lambda m: _PERIODS[m.group(1)] + (particle_after("대비", m.group(2)) if m.group(2) else ""), text
        )
    text = _FISCAL_YEAR.sub(_fiscal_year, text)
    text = _DERIVATIVE.sub(template(r"d-\1 d-\2"), text)
    text = _AT_RATE.sub(" ", text)
    text = _LETTERS_SLASH.sub(_letters_slash, text)
    text = _NAME_VERSION.sub(template(r"\1 "), text)
    text = _RATE.sub(template(r"\3\4\5당 \1\2"), text)
    text = _HANGUL_SLASH.sub(" ", text)
    text = _CATHODE.sub(_digit_by_digit, text)
    text = _NAME_RANGE.sub("에서 ", text)
    text = _QUARTER.sub(template(r"\1분기"), text)
    text = formulas_spoken(text)
    text = _LETTERS_DIGIT.sub(_letters_digit, text)
    text = _ACRONYM.sub(lambda m: "-".join(m.group()) if m.group() in _SPELLED else m.group(), text)
    return _AMPERSAND.sub("앤", text)


def _fiscal_year(match: re.Match[str]) -> str:
    """ "FY2024" as 2024 회계연도, "FY2024-25" as 2024에서 2025 회계연도 (the century of the first); one that runs down
    left."""
    first, last = match.groups()
    if not last:
        return f"{first} 회계연도"
    if len(first) == 4 and len(last) == 2:
        last = first[:2] + last
    return f"{first}에서 {last} 회계연도" if int(first) < int(last) else match.group(0)


def list_marks_spoken(text: str) -> str:
    """`text` with the marks of its list items, "1.", "II.", "가.", read (`_list_mark`): the one rule here
    that a text of Hangul words and sentence marks alone can meet (`korean_reading.spoken`'s plain text)."""
    return _LIST_MARK.sub(_list_mark, text)


def _list_mark(match: re.Match[str]) -> str:
    """A list item's "1." or "II." as a lecturer reads it, "1번째," (첫 번째 and a short pause, once
    `korean_numerals` reads the counter), "가." as 가 and the pause, a section's "2.3.1." as its number and
    the pause; any other "1." is left."""
    mark = match.group(1)
    if not opens_list_item(match.string, match.end(1)):
        return match.group(0)
    if not mark.isascii() or "." in mark:  # 가, ㄱ (기역): the letter and a pause
        return f"{mark},"
    return f"{mark if mark.isdigit() else _roman(mark)}번째,"


def _labelled_mark(match: re.Match[str]) -> str:
    """ "Step 1." opening a list item as "Step 1,"; any other, "정답은 Q1. 다음", is left."""
    return f"{match.group(1)}," if opens_list_item(match.string, match.end(1)) else match.group(0)


def _roman(numeral: str) -> int:
    values = [_ROMAN_VALUES[letter] for letter in numeral]
    return sum(
        -value if value < after else value for value, after in zip(values, [*values[1:], 0], strict=True)
    )


def _hanja(match: re.Match[str]) -> str:
    run, start = match.group(), match.start()
    if not all(character in HANJA for character in run):
        return " "
    syllables = [HANJA[character] for character in run]
    # "不" is 부 before ㄷ or ㅈ: "不正" 부정, "不同" 부동 (it was 불정)
    for index, character in enumerate(run[:-1]):
        if character == "不" and _OPENS_WITH_D_OR_J.match(syllables[index + 1]):
            syllables[index] = "부"
    said = "".join(syllables)
    opens_word = not start or not match.string[start - 1].isalnum()
    if run[0] == "金" and len(run) == 3 and run[1] not in _WEEKDAYS:  # a name, "金大中": 김대중 (금대중)
        said = "김" + said[1:]
    said = said.replace("십월", "시월").replace("육월", "유월")  # "十月", "六月" (십월, 육월)
    return "연" + said[1:] if run[0] == "年" and opens_word else said  # "年間" 연간; "2024年", "前年" 년


def _kana(match: re.Match[str]) -> str:
    """A run of kana left out: with no space where a word goes on across it into Hangul ("한국어すし를")."""
    text, start, end = match.string, match.start(), match.end()
    inside_a_word = start > 0 and text[start - 1].isalnum() and "가" <= text[end : end + 1] <= "힣"
    return "" if inside_a_word else " "


def _digit_by_digit(match: re.Match[str]) -> str:
    letters, digits = match.group(1, 2) if match.group(1) else match.group(3, 4)
    return f"{letters} " + "".join(DIGITS[int(digit)] for digit in digits)


def _letters_slash(match: re.Match[str]) -> str:
    left, right = match.groups()
    return f"{left}-{right}" if len(left) == len(right) == 1 else f"{left} {right}"


def _letters_digit(match: re.Match[str]) -> str:
    letters, digit, rest = match.groups()
    return "-".join(letters) + ENGLISH_DIGITS[unicodedata.digit(digit)] + "-".join(rest)
