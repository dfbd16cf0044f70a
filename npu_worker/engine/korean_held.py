"""What the Korean reading's rules must not read as Korean, held out while they run (`korean_reading.spoken`):
a web address's path and a generic type's brackets, each held as one private-use character and given back
as written; an English sentence's signs, said in English words first, and its "=" held as a noncharacter
for espeak's English "equals".

Apart from the rules' order (`korean_reading`) because it is the other side of the reading: not how a sign
is said, but which text no Korean rule may see.
"""

from __future__ import annotations

from . import english_reading
from . import korean_code as code
from . import lazy_re as re  # `re` with `compile` at a pattern's first use

# A web address's path and query ("/search?q=1&page=2", "/abs/2401.12345", "/R&D/A4") are no Korean text:
# read by the rules "q=1" was "q는 1", "R&D/A4" "R앤D-A4", an arXiv number a decimal. They are left to espeak
# as written; the host keeps its numbers' reading ("10.0.0.1": 십 점 영 점 영 점 일).
_ADDRESS = re.compile(r"(?:https?://|www\.)[A-Za-z\d.\-:]{1,253}(/[!-~]{0,2000}[\w/=#&%+\-])?")
# ... and a generic type's brackets, "Array<5> x;", "std::array<int, 5> a;" (korean18: Array 5 미만 미만 x;, 5 미만 a;), held as
# a path is: no comparison (a name of two characters or more glued before its "<"). Not a ">" glued to a name or a number,
# two bounds' "len<5, size>3" (korean19 held it: len<5, size>3), nor a ">=" or a ">" before a spaced or signed number,
# "len<10, size>=0", "len<5, size> 3", "ab<3, cd>-1" (korean19: len<10, size>는 0, len<5, size> 3, cd>마이너스 1).
_GENERIC = re.compile(
    r"(?<=[A-Za-z_:][A-Za-z\d_])(<[A-Za-z\d_:]{1,40}(?:, ?[A-Za-z\d_:]{1,40}){0,3}>)(?![A-Za-z\d_=]| ?[-−]?\d)"
)
_FIRST_PRIVATE_USE, _PRIVATE_USE_COUNT = 0xE000, 6400
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


def paths_held(text: str) -> tuple[str, list[str]]:
    """`text` with each web address's path (and generic type's brackets) held as one private-use character,
    and the paths held; none where the text has such characters of its own."""
    paths: list[str] = []
    if not _PRIVATE_USE.search(text):  # each path is one such character while the rules run
        text = _ADDRESS.sub(lambda m: _held(m, paths), text)
        if "<" in text and ">" in text:
            text = _GENERIC.sub(lambda m: _held(m, paths), text)
    return text, paths


def paths_given_back(text: str, paths: list[str]) -> str:
    """The paths `paths_held` took, back in their places as written."""
    return _PRIVATE_USE.sub(lambda m: paths[ord(m.group()) - _FIRST_PRIVATE_USE], text) if paths else text


def english_equals_given_back(text: str) -> str:
    """An English sentence's "=" back, once the rules ran, for espeak's English "equals"."""
    return text.replace(_HELD_EQUALS, "=")


def _held(match: re.Match[str], paths: list[str]) -> str:
    if not match.group(1) or len(paths) >= _PRIVATE_USE_COUNT:
        return match.group(0)
    paths.append(match.group(1))
    return match.group(0)[: match.start(1) - match.start()] + chr(_FIRST_PRIVATE_USE + len(paths) - 1)


# An English sentence's "=", "E = mc^2 is the equation." (k9 read E는 mc의 2제곱 is …: its "^2" said in Korean by the
# time "=" was read, the sentence no longer without Hangul): found in the text as written and held as a noncharacter no
# rule reads, then given back to espeak's English "equals".
# ... and its powers, said in English words (k10: E = mc의 2제곱 is the equation., Korean in an English sentence): E = m c
# squared is the equation., as `english_reading` says them for `lang=en`.
_HELD_EQUALS = "\ufdd0"
_EQUALS_SIGN = re.compile(r"(?<![<>=!])=(?![=>])")
# ... and its units, "+" and spaced minus, in English words (k11: This is 3 더하기 4 센티미터.): This is 3 plus 4 centimeters.
# ... and a bound on a bare π, "x > π." (korean19: x > 파이): a bound in English words, greater than pi
# ... and its arrows, "Here A → B is a map." (korean20: A에서 B). What `english_held` reads in an English sentence:
# ... and its Greek letters and a report's "YoY" (read59k: 알파, 전년 대비): alpha, year over year (`english_words`); its
# "←", "↔" (read59k: 는, 와): gets, and.
_ENGLISH_SIGN = re.compile(r"[=^⁰¹²³⁴⁵⁶⁷⁸⁹ⁿⁱ⁺⁻+\dπ→⟶➔➜➡⇒⟹⇔←⟵↔⟷\u0391-\u03a9\u03b1-\u03c9]|[YQM]o[YQM]")


def english_held(text: str) -> str:
    """An English sentence's signs said in English words and its "=" held (`english_equals_given_back`)."""
    if not _ENGLISH_SIGN.search(text) or _HELD_EQUALS in text:
        return text
    # joined once: a text of many short English sentences was copied whole for each (quadratic)
    pieces: list[str] = []
    done = 0
    for begin, end in code.english_sentences(text):
        sentence = english_reading.signs_in_korean_text(english_reading.powers_spoken(text[begin:end]))
        pieces += [text[done:begin], _EQUALS_SIGN.sub(_HELD_EQUALS, sentence)]
        done = end
    return "".join(pieces) + text[done:]
