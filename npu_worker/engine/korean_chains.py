"""Chains of bounds, "a ≤ b ≤ c", "1 ≤ x ≤ 3", "0 < θ < π", read as a Korean lecturer says them: the middle term
first with its topic particle, then its two bounds, the lower one first: b는 a 이상 c 이하, x는 1 이상 3 이하; in a
condition, x가 1 이상 3 이하이면.

espeak-ng said nothing for the signs (a b c); the k6 reading said each bound where it stood, "a 이상 b c 이하",
which puts b's bound before b and its other bound after c, and "a < 1 < b" came out "a 1 미만 초과 b". A part of
`korean_reading`, which applies this before any single bound is read.
"""

from __future__ import annotations

import re

from .korean_formulas import PARTICLE, final_sound, particle_after
from .korean_ranges import BOUND_WORDS, LOWER_BOUND_WORDS, SIDE, SIDE_UNIT
from .korean_words import MATH_NAMES

_EDGE = rf"[-−]?\d+(?:\.\d+)?(?:{SIDE_UNIT})?|[a-zα-ω]\d{{0,2}}|\d*π"  # the first term: one term alone
# The middle term: a number, a variable, or a short formula of them, "0 < x - 1 < 3" (it was 0 초과 x 빼기 1이 3 미만).
_MIDDLE = rf"[-−]?\d+(?:\.\d+)?(?![\w.])|[A-Z]\d{{0,2}}(?![\w.])|{SIDE}"
# A count's capital as the last side, "1 ≤ i ≤ N", "0 ≤ k < K", "0 ≤ i ≤ N - 1" (it was 1 이상 i ≤ N: the second sign
# unsaid; 0 이상 i N 빼기 1 이하), of a variable after a number: "a < b < C" is left, as names ranked are.
_COUNT = r"[A-Z](?: [-−] \d{1,3}| ?\+ ?\d{1,3})?(?![A-Za-z\d_(]|\.\w)"
_POWER_END = re.compile(r"(?:\^\d{1,3}|[²³])$")  # said 제곱: a closed syllable
# A place or a range the chain names, "1 ≤ i ≤ n에 대해", "a ≤ x ≤ b에서 연속", "0 ≤ x ≤ 1의 범위": it was 1 이상 i n 이하에
# 대해 (the single bounds, each where it stood), and "a ≤ x ≤ b에서" was left unread, its signs unsaid.
_PLACE = r"에(?:서)?(?![가-힣])|의(?![가-힣])"
# What may follow the last side: a particle (said in the form the bound's word takes), a copula's ending ("이면", "일
# 때", "인"), or no word at all. Not a unit or a counter, "3개", nor a longer chain, "a < b < c < d", nor a function,
# "f(x)", nor a fraction but π's, "x/2" (left to the single bounds).
_AFTER = rf"(?:{PARTICLE}|(?=이(?:[면다고며]|라면)|일 ?(?:때|경우|수록)|인(?![가-힣])|{_PLACE}|[^\w.,/^(<>≤≥℃°%‰Ω]|[.,](?!\d)|$))"
CHAIN = re.compile(
    rf"(?=[-−]?[\w.π%‰℃°Ω]{{1,12}} ?[<>≤≥])(?<![\w.)\]<>≤≥=+\-−*/^])(?<![<>≤≥] )({_EDGE}) ?(?:([<≤]) ?({_MIDDLE}) ?([<≤])"
    rf"|([>≥]) ?({_MIDDLE}) ?([>≥])) ?({SIDE}|{_COUNT})(?! ?[<>≤≥])(?! ?[-+−*/] ?[\w(]){_AFTER}"
)
_LETTER = re.compile(r"[A-Za-zα-ωπ]")
# A condition's or a noun's clause after the chain, "1 ≤ x ≤ 3이면", "0 < x < 1일 때", "1 ≤ k ≤ n인 정수": its subject
# takes 이/가 there, x가 1 이상 3 이하이면 (x는 says a statement's topic); so does one before a place, i가 1 이상 n 이하에 대해.
_CLAUSE_AFTER = re.compile(rf"이면|이라면|일 ?(?:때|경우|수록)|인(?![가-힣])|{_PLACE}")


def chain(match: re.Match[str]) -> str:
    """ "a ≤ b ≤ c" as b는 a 이상 c 이하, "a > b > c" as b는 c 초과 a 미만 (the lower bound first); a chain of numbers
    alone, "1 < 2 < 3", or of capitals, "A > B > C" (a ranking of names), left."""
    first, rising, middle_up, rising_2, falling, middle_down, falling_2, last, particle = match.groups()
    middle = middle_up or middle_down
    if not _LETTER.search(first + middle + last):
        return match.group(0)
    if last[:1].isupper() and not (first.lstrip("-−")[:1].isdigit() and middle[:1].islower()):
        return match.group(0)  # "a < b < C", "1 < 2 < N": a count bounds a variable from a number
    if middle[0].isupper() and not (first.lstrip("-−")[:1].isdigit() or last[:1].isdigit()):
        return match.group(0)  # "A > B > C", "X < Y < Z": names ranked; "0 ≤ N ≤ 100" a variable's
    if rising:
        lower = f"{first} {LOWER_BOUND_WORDS[rising]}"
        upper, word = last, BOUND_WORDS[rising_2]
    else:
        lower = f"{last} {BOUND_WORDS[falling_2]}"
        upper, word = first, LOWER_BOUND_WORDS[falling]
    said_middle = middle[:-1] + MATH_NAMES.get(middle[-1], middle[-1])
    closed = bool(_POWER_END.search(middle) or final_sound(said_middle))
    if _CLAUSE_AFTER.match(match.string, match.end()):
        topic = "이" if closed else "가"
    else:
        topic = "은" if closed else "는"
    ending = particle_after(word, particle) if particle else ""
    return f"{middle}{topic} {lower} {upper} {word}{ending}"
