"""What the Korean reading (`korean_reading`) calls each unit, sign, currency, Greek letter and digit, and the
native numerals a counter takes: the vocabulary, kept apart from the patterns that find where each is said."""

# A unit after a number ("3.7V", "50kW"): espeak said the letters' English names.
UNITS = {
    "V": "볼트",
    "kV": "킬로볼트",
    "mV": "밀리볼트",
    "W": "와트",
    "mW": "밀리와트",  # "5mW", "1TWh", "3kVA", "3.6MJ", "2mol", "1atm": espeak said the letters' English names
    "TWh": "테라와트시",
    "VA": "볼트암페어",
    "kVA": "킬로볼트암페어",
    "MVA": "메가볼트암페어",
    "J": "줄",
    "kJ": "킬로줄",
    "MJ": "메가줄",
    "GJ": "기가줄",
    "kN": "킬로뉴턴",
    "mol": "몰",
    "atm": "기압",
    "kW": "킬로와트",
    "MW": "메가와트",
    "GW": "기가와트",
    "Wh": "와트시",
    "kWh": "킬로와트시",
    "MWh": "메가와트시",
    "GWh": "기가와트시",
    "Ah": "암페어시",
    "mAh": "밀리암페어시",
    "mA": "밀리암페어",
    "A": "암페어",  # "10A 전류": espeak said the letter's English name, 에이
    "kA": "킬로암페어",
    "μA": "마이크로암페어",
    "µA": "마이크로암페어",
    "Ω": "옴",  # espeak: the Greek letter's name, omega
    "kΩ": "킬로옴",
    "MΩ": "메가옴",
    "mΩ": "밀리옴",
    "μF": "마이크로패럿",
    "µF": "마이크로패럿",
    "nF": "나노패럿",
    "pF": "피코패럿",
    "Pa": "파스칼",
    "hPa": "헥토파스칼",
    "kPa": "킬로파스칼",
    "MPa": "메가파스칼",
    "dB": "데시벨",
    "kcal": "킬로칼로리",
    "Nm": "뉴턴미터",
    "Hz": "헤르츠",
    "kHz": "킬로헤르츠",
    "MHz": "메가헤르츠",
    "GHz": "기가헤르츠",
    "km": "킬로미터",
    "m": "미터",
    "cm": "센티미터",
    "mm": "밀리미터",
    "nm": "나노미터",
    "μm": "마이크로미터",
    "µm": "마이크로미터",
    "km²": "제곱킬로미터",
    "m²": "제곱미터",
    "cm²": "제곱센티미터",
    "m³": "세제곱미터",
    "kg": "킬로그램",
    "g": "그램",
    "mg": "밀리그램",
    "L": "리터",
    "ℓ": "리터",
    "mL": "밀리리터",
    "mℓ": "밀리리터",  # "500㎖ 생수": "5 미터" and espeak's "letter 2113" for the "ℓ"
    "kℓ": "킬로리터",
    "dL": "데시리터",
    "ha": "헥타르",
    "cal": "칼로리",
    "ml": "밀리리터",
    "cc": "시시",
    "KB": "킬로바이트",
    "kB": "킬로바이트",
    "MB": "메가바이트",
    "GB": "기가바이트",
    "TB": "테라바이트",
    "h": "시간",  # "2h", "5min", "30sec" (espeak: 이 에이치, 오 "min", 삼십 "sec")
    "hr": "시간",
    "hrs": "시간",
    "min": "분",
    "mins": "분",
    "sec": "초",
    "ms": "밀리초",
    "μs": "마이크로초",
    "µs": "마이크로초",
    "ns": "나노초",
    "Mbps": "메가비피에스",
    "Gbps": "기가비피에스",
}

# Units written out in small letters, "x < 5 ohm.", "x < 5 bits 이면": a bound's amount ends with one (`korean_ranges`), as
# with "kg"; any other small word apart from it, "p < 0.05 here.", is the sentence's.
SPELLED_UNITS = (
    "ohms?|bits?|bytes?|volts?|watts?|amps?|hertz|joules?|newtons?|pascals?|kelvins?|grams?|kilograms?|meters?|metres?"
    "|liters?|litres?|seconds?|minutes?|hours?|days?|weeks?|months?|years?|miles?|inch(?:es)?|feet|foot|pounds?|degrees?"
)

SYMBOLS = {"%p": "퍼센트포인트", "%": "퍼센트", "‰": "퍼밀", "°C": "도", "℃": "도", "°": "도"}

CURRENCY = {"$": "달러", "€": "유로", "£": "파운드", "¥": "엔", "₩": "원"}
# Signs and Greek letters of formulas that espeak said nothing for ("√2" was 이, "∞" silence) or in English
# or Greek, which broke the Hangul after them ("θ는": theta and the jamo of 는 spelled): Korean names. Read
# after the units, so "10Ω" and "5μs" are still 옴 and 마이크로초.
MATH_NAMES = {
    "√": "루트 ",
    "∞": "무한대",
    "∑": "시그마",
    "∫": "적분 ",
    "∂": "편미분 ",
    "∆": "델타",
    **dict(
        zip(
            "αβγδεζηθικλμνξπρστυφχψω",
            "알파 베타 감마 델타 엡실론 제타 에타 세타 요타 카파 람다 뮤 뉴 크사이 파이 로 시그마 타우 입실론 파이 카이 프사이 오메가".split(),
            strict=True,
        )
    ),
    **dict(
        zip("ΓΔΘΛΞΠΣΦΨΩ", "감마 델타 세타 람다 크사이 파이 시그마 파이 프사이 오메가".split(), strict=True)
    ),
}

# The digits' Sino-Korean names, said one by one after a decimal point ("3.14": 삼 점 일사) and in the name of
# a dated event ("5.18": 오일팔).
DIGITS = "영일이삼사오육칠팔구"
# A digit said in English, as Koreans say one inside a name ("A4" 에이포) or a subscript ("ε₀" 엡실론 제로).
ENGLISH_DIGITS = ["제로", "원", "투", "쓰리", "포", "파이브", "식스", "세븐", "에잇", "나인"]
# ... and two digits' English words, a formula's count "C₆H₁₂O₆" (트웰브), `korean_subscripts`.
ENGLISH_TEENS_HANGUL = [
    "텐",
    "일레븐",
    "트웰브",
    "써틴",
    "포틴",
    "피프틴",
    "식스틴",
    "세븐틴",
    "에이틴",
    "나인틴",
]
ENGLISH_TENS_HANGUL = ["", "", "트웬티", "써티", "포티", "피프티", "식스티", "세븐티", "에이티", "나인티"]
# The subscript letters' code-point spans (ₐ…ₜ, ᵢ…ᵪ, ⱼ), for a character class: `korean_absolute`, `korean_ranges`.
SUBSCRIPT_SPANS = "\u2090-\u209c\u1d62-\u1d6a\u2c7c"

# A counter's native numerals ("3개": 세 개, "3시": 세 시).
NATIVE_ONES = ["", "한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉"]
NATIVE_TENS = ["", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔"]

# English ordinals, for an English compound in Korean text ("2nd-order": second-order, which espeak reads in
# English; 두 번째-order was half Korean): the first nineteen, then the tens' cardinals and ordinals.
ENGLISH_ORDINALS = (
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
    " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth".split()
)
ENGLISH_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()

# The Korean readings of Hanja common on Korean slides and reports ("전년比", "約 10%", "前年", "株式會社"), which
# espeak's Korean voice called "Chinese letter" one by one (and a Hangul word joined to one, "전년比", it spelled
# as jamo). Each as it is read inside a word; "年" opening a word is 연 (`korean_marks`).
HANJA = dict(
    zip(
        "比對対約前後年月日週時分秒間計總総大小中上下外內内無有新舊高低增増減株式會会社韓國国美英獨佛北南東西"
        "金人名個件回次第號等級位元円可不未非全半初末最現今昨明正反同平均合差價価格品質電車水火木土"
        "一二三四五六七八九十百千萬万億兆度期",
        "비대대약전후년월일주시분초간계총총대소중상하외내내무유신구고저증증감주식회회사한국국미영독불북남동서"
        "금인명개건회차제호등급위원엔가불미비전반초말최현금작명정반동평균합차가가격품질전차수화목토"
        "일이삼사오육칠팔구십백천만만억조도기",
        strict=True,
    )
)
