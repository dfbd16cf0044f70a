"""A Korean particle written after a sign or a number, in the form the word the reading says there takes
(은/는, 이/가, 을/를, 과/와, 이랑/랑, 으로/로): the writer chose it for the sign's sound, the listener hears the word's.
What picks it is the final sound a Korean says at the end of the text before it (`final_sound`), Hangul,
digits, a letter spelled out or an English word as Korean borrows it; every rule of `korean_reading` that
says a word before a particle takes it from here.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use

# A particle written right after a sign or a number, chosen for the sound the writer had in mind ("x^2를": 이,
# "§3.2와": 이, "$100을": 백), where the reading says a word that ends otherwise (x의 2제곱, 3.2절, 100 달러):
# `particle_after` gives the word's form (x의 2제곱을, 3.2절과, 100 달러를; it was 제곱를, 절와, 달러을). Only a particle
# that ends its word or goes on into another one ("와의", "으로부터"): a word that only opens like one, "가지", "는데",
# and a copula, "이다", keep their syllables.
PARTICLE = (
    r"((?:이)?랑(?!(?![의은도])[가-힣])|(?:으)?로(?!(?![서써는도부])[가-힣])|[와과](?!(?![의는도])[가-힣])"
    r"|[는은가이를을](?![가-힣]))"
)
_FORMS = {"는": ("는", "은"), "은": ("는", "은"), "가": ("가", "이"), "이": ("가", "이"), "를": ("를", "을")}
_FORMS |= {
    "을": ("를", "을"),
    "와": ("와", "과"),
    "과": ("와", "과"),
    "랑": ("랑", "이랑"),
    "이랑": ("랑", "이랑"),
}
_TRAILING_DIGITS = re.compile(r"[0-9]+$")
# An English word said with a closed last syllable, as Korean borrows it: "-l", "-le" ㄹ (토탈, 타이틀), "-m", "-n", "-ng",
# "-me", "-ne" (네임, 라인, 토큰). Three letters or more with a vowel and a lowercase end (not "km", nor an acronym
# spelled letter by letter); other endings ("count" 카운트, "list" 리스트) stay open, as before.
_ENGLISH_WORD_AT_END = re.compile(
    r"(?<![A-Za-z])(?=[A-Za-z]{3})(?=[A-Za-z]*[aeiouy])[A-Za-z]*[a-z](?:(l|le)|m|n|ng|me|ne)$"
)
_RIEUL = 8  # ㄹ's index among a Hangul syllable's finals


def particle_after(word: str, particle: str) -> str:
    """`particle` (one `PARTICLE` matches) in the form it takes after `word`: 은, 이, 을, 과, 이랑 and 으로 after a
    closed syllable (로 after ㄹ), 는, 가, 를, 와, 랑 and 로 after an open one; one of a single form, 의, as written
    (a factorial's "n!의 값" raised KeyError: the whole request failed)."""
    final = final_sound(word)
    if particle in ("으로", "로"):
        return "으로" if final == "ㄴ" else "로"
    forms = _FORMS.get(particle)
    return forms[1 if final else 0] if forms else particle


def final_sound(before: str) -> str | None:
    """The final consonant a Korean says at the end of `before` ("" for an open syllable, "ㄹ", or "ㄴ" for
    any other): what picks 은/는, 이/가, 과/와 and 으로/로. None when nothing is before it."""
    last = before[-1:]
    if not last:
        return None
    if "가" <= last <= "힣":
        final = (ord(last) - ord("가")) % 28
        return "" if not final else "ㄹ" if final == _RIEUL else "ㄴ"
    trailing = _TRAILING_DIGITS.search(before)  # ASCII digits only: "x₂" is a digit to isdigit(), not here
    if trailing:
        number = trailing.group()
        zeros = len(number) - len(number.rstrip("0"))
        if zeros == 0:
            return "" if last in "2459" else "ㄹ" if last in "178" else "ㄴ"  # 이 사 오 구; 일 칠 팔; 삼 육
        return "" if zeros == 12 < len(number) else "ㄴ"  # 영, 십, 백, 천, 만, 억 closed; 조 open
    if last.isascii() and last.isalpha() and not before[-2:-1].isalpha():
        return "ㄹ" if last.upper() in "LR" else "ㄴ" if last.upper() in "MN" else ""  # 엘 알, 엠 엔; 에이 …
    word = _ENGLISH_WORD_AT_END.search(before[-40:])
    if word:  # "total", "token", "name", "title" (korean16: total는): 토탈은, 토큰은, 네임은, 타이틀은
        return "ㄹ" if word.group(1) else "ㄴ"
    return ""
