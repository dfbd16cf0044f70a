"""Text in the form espeak-ng and the tokenizers read: NFC, full-width digits and Latin letters as ASCII.

Text often arrives decomposed (NFD: macOS file names, some PDFs and editors): espeak-ng read a decomposed
Hangul syllable's conjoining jamo as letters ("입니다" became "iˈɯŋipnˌidɐ" instead of "ˈipnidˌɐ"),
dropped a decomposed accent's word ("café" → "kˈeɪf"), and a cut between characters could separate a
syllable's jamo. Full-width digits (a Korean or Japanese IME's wide mode) were said not at all ("１２３"
gave no phoneme) and full-width letters were spelled out as symbols. Full-width punctuation stays: the
segmenters and espeak read "。，！？" as CJK marks, which they are.
"""

from __future__ import annotations

import unicodedata

_WIDE_TO_ASCII = {
    code: code - 0xFEE0
    for span in ((0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
    for code in range(span[0], span[1] + 1)
}


def readable(text: str) -> str:
    """`text` composed (NFC) with full-width digits and letters made ASCII; nothing else changes."""
    return unicodedata.normalize("NFC", text).translate(_WIDE_TO_ASCII)
