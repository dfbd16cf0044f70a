"""Text in the form espeak-ng and the tokenizers read: NFC, full-width digits and Latin letters as ASCII.

Text often arrives decomposed (NFD: macOS file names, some PDFs and editors): espeak-ng read a decomposed
Hangul syllable's conjoining jamo as letters ("입니다" became "iˈɯŋipnˌidɐ" instead of "ˈipnidˌɐ"),
dropped a decomposed accent's word ("café" → "kˈeɪf"), and a cut between characters could separate a
syllable's jamo. Full-width digits (a Korean or Japanese IME's wide mode) were said not at all ("１２３"
gave no phoneme) and full-width letters were spelled out as symbols. Full-width punctuation stays: the
segmenters and espeak read "。，！？" as CJK marks, which they are. Control characters other than tab and
line breaks become spaces: espeak reads "\x01" as the start of an embedded command, so "\x01450S" in a
caller's text set the speaking rate past the checked `speed_factor` range, "\x01200A" the amplitude.
Enclosed and squared forms (①, ㉑, Ⓐ, ㈜, ㎞, ㎾, ㎡) become what they enclose: espeak said "Chinese letter"
for "㎞" and "㉑", spelled "Ⓐ" as its code point and dropped "①" (one level of decomposition, so "㎡" keeps
its "²").
"""

from __future__ import annotations

import re
import unicodedata

_WIDE_TO_ASCII: dict[int, int | str] = {
    code: code - 0xFEE0
    for span in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
    for code in range(span[0], span[1] + 1)
}
_CONTROLS: dict[int, int | str] = {
    code: " " for code in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if chr(code) not in "\t\n\r"
}
_ENCLOSED = (range(0x2460, 0x2500), range(0x3200, 0x3300), range(0x3380, 0x3400))
# Every character `_FORM` changes lies in this class: a text with none is only composed, not translated
# character by character (tests/test_korean_reading_skips.py checks the class holds them all).
_FORMED = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2460-\u24ff\u3200-\u32ff\u3380-\u33ff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]"
)


def _inside(code: int) -> str:
    """An enclosed or squared character's own characters: its compatibility decomposition, one level."""
    fields = unicodedata.decomposition(chr(code)).split()
    return "".join(chr(int(field, 16)) for field in fields if not field.startswith("<")) or chr(code)


_FORM = {
    **_WIDE_TO_ASCII,
    **_CONTROLS,
    **{code: _inside(code) for span in _ENCLOSED for code in span if unicodedata.decomposition(chr(code))},
}


def readable(text: str) -> str:
    """`text` composed (NFC), full-width digits and letters made ASCII, control characters made spaces,
    enclosed and squared forms spelled out."""
    composed = unicodedata.normalize("NFC", text)
    return unicodedata.normalize("NFC", composed.translate(_FORM)) if _FORMED.search(composed) else composed


# espeak-ng's time grows with the square of a word's length ("x" * 1 600: 16 ms, 800: 5.5 ms) and it says
# only the first ~40 letters or ~75 syllables of a long one; no word is this long (the longest English
# word has 45 letters).
MOST_WORD_CHARS = 48
# It also drops the rest of a clause past ~150 characters of Korean without punctuation (37 words of the
# lecture with its marks taken out: the 38th and later were not said).
MOST_CLAUSE_CHARS = 100
_LONG_WORD = re.compile(rf"(\w{{{MOST_WORD_CHARS}}})(?=\w)")
_CLAUSE_MARK = re.compile(r"[.,;:!?。，！？；：、\n]")
_WORD = re.compile(r"\S+\s*")


def espeak_pieces(text: str) -> list[str]:
    """`text` in pieces espeak-ng reads whole: a space after every MOST_WORD_CHARS word characters in a
    row, and cut at spaces so that no piece holds more than MOST_CLAUSE_CHARS characters without a
    clause mark."""
    spaced = _LONG_WORD.sub(r"\1 ", text)
    if (
        len(spaced) <= MOST_CLAUSE_CHARS
    ):  # a preview's sentence: no cut can fall in it (one piece, 15 µs less)
        return [spaced.lstrip()]
    pieces, current, run = [], "", 0
    for match in _WORD.finditer(spaced):
        word = match.group(0)
        if current and run + len(word) > MOST_CLAUSE_CHARS:
            pieces.append(current)
            current, run = "", 0
        current += word
        marks = list(_CLAUSE_MARK.finditer(word))
        run = len(word) - marks[-1].end() if marks else run + len(word)
    return [*pieces, current] if current or not pieces else pieces
