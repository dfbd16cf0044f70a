"""Text → segments: a short first segment for early audio, then sentences packed into larger ones.

Every segment is synthesised with the whole prompt, and the decoder pays for the prompt's frames at
every step, so fewer, larger segments are cheaper; but the first audio waits for the first segment,
so that one is kept short (its first sentence, or its first clauses when the sentence is long).
Lengths are measured in model tokens through a `count` callable, so the plan follows the tokenizer.
No segment exceeds its bound: a run without spaces (Chinese, Japanese, a Korean or Latin string with no
space) is cut between characters when no better boundary is left, since one unbounded segment makes the
decoder's attention quadratic in its length (2 000 Hangul syllables asked onnxruntime for tens of GB).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable

from ..sentence_ends import ends_sentence

# A sentence ends at . ! ? … followed by space or the end ("3.7V" is no boundary; which single points end
# none, a Korean date's "2024. 12. 5." or "Dr. Kim", says `sentence_ends`), or at a CJK full-width mark
# (。！？), which is followed by no space in Chinese and Japanese text.
_SENTENCE_MARK = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’)\]]*+(?=\s|$)|[。！？][」』”’）)]*+|\n")
_CLAUSE_END = re.compile(r"(?<=[,;:，；：、])\s+|(?<=[，；：、])")


def split_sentences(text: str) -> list[str]:
    """Sentences with their final punctuation, whitespace-trimmed; empty pieces dropped."""
    pieces, start = [], 0
    for mark in _SENTENCE_MARK.finditer(text):
        if mark.group()[0] in "。！？\n" or ends_sentence(text, mark.start(), mark.end()):
            pieces.append(text[start : mark.end()])
            start = mark.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def split_clauses(sentence: str) -> list[str]:
    return [piece.strip() for piece in _CLAUSE_END.split(sentence) if piece and piece.strip()]


def is_cjk(char: str) -> bool:
    """A character of a script written without spaces between words (Han, kana, CJK punctuation)."""
    code = ord(char)
    return (
        0x3000 <= code <= 0x30FF  # CJK punctuation, hiragana, katakana
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
        or 0x20000 <= code <= 0x3FFFF
    )


def join(left: str, right: str) -> str:
    """Two pieces of text as one: with a space, except where either side is CJK (no space was there)."""
    if not left or not right:
        return left or right
    return left + right if is_cjk(left[-1]) or is_cjk(right[0]) else f"{left} {right}"


def _boundaries(word: str) -> list[int]:
    """Where a run of characters may be cut: before each character that does not continue the one
    before it (a combining mark, a zero-width joiner or a variation selector does)."""
    keep = {"\u200d", "\ufe0e", "\ufe0f"}
    return [
        i
        for i in range(1, len(word))
        if not unicodedata.combining(word[i]) and word[i] not in keep and word[i - 1] != "\u200d"
    ]


def _split_characters(word: str, limit: int, count: Callable[[str], int]) -> list[str]:
    """A run with no space longer than `limit` tokens, cut between characters into the longest pieces
    of ≤ limit tokens (at least one character each). Each cut is found by galloping, then bisecting
    over the allowed ends after the piece's start, so a piece costs O(log n) counts of at most twice
    its own length; the rest of the run is never counted whole (that made 2 000 Han characters in a
    Korean request, each a dozen tokens, cost seconds of planning: quadratic in the run)."""
    pieces: list[str] = []
    ends = [*_boundaries(word), len(word)]  # where a piece may end: the allowed cuts, then the end
    start, first = 0, 0  # the piece begins at `start`; ends[first] is the first end after it
    while first < len(ends):
        taken = _longest_fit(word, start, ends, first, limit, count)
        pieces.append(word[start : ends[taken]])
        start, first = ends[taken], taken + 1
    return pieces


def _longest_fit(
    word: str, start: int, ends: list[int], first: int, limit: int, count: Callable[[str], int]
) -> int:
    """The last index from `first` on where word[start:ends[index]] fits `limit` (`first` when none
    does), by galloping over first, first + 1, first + 3, first + 7, ... and bisecting the last step."""

    def fits(end: int) -> bool:
        return count(word[start:end]) <= limit

    good, probe = first - 1, first
    while probe < len(ends) and fits(ends[probe]):
        good, probe = probe, 2 * probe - first + 1
    bad = min(probe, len(ends))
    while bad - good > 1:
        middle = (good + bad) // 2
        if fits(ends[middle]):
            good = middle
        else:
            bad = middle
    return max(good, first)


# A unit of text and whether it continues the unit before it inside one word (a cut with no space).
Unit = tuple[str, bool]


def _split_words(text: str, limit: int, count: Callable[[str], int]) -> list[Unit]:
    """Last resort for a clause longer than `limit`: cut at spaces into pieces of ≤ limit tokens, and a
    run without spaces longer than that between its characters (`_split_characters`)."""
    pieces: list[Unit] = []
    current, glued = "", False
    for word in text.split():
        parts = [word] if count(word) <= limit else _split_characters(word, limit, count)
        for index, part in enumerate(parts):
            candidate = join(current, part)
            if current and (index > 0 or count(candidate) > limit):  # a cut part is as long as fits
                pieces.append((current, glued))
                current, glued = part, index > 0
            else:
                current = candidate
    if current:
        pieces.append((current, glued))
    return pieces


def _units(sentence: str, limit: int, count: Callable[[str], int]) -> list[Unit]:
    """A sentence as pieces of ≤ limit tokens: whole, else clauses, else word runs, else characters."""
    if count(sentence) <= limit:
        return [(sentence, False)]
    units: list[Unit] = []
    for clause in split_clauses(sentence):
        units += [(clause, False)] if count(clause) <= limit else _split_words(clause, limit, count)
    return units


def _pack(units: list[Unit], limit: int, count: Callable[[str], int]) -> list[str]:
    segments: list[str] = []
    for unit, glued in units:
        joined = segments[-1] + unit if glued and segments else join(segments[-1], unit) if segments else unit
        if segments and count(joined) <= limit:
            segments[-1] = joined
        else:
            segments.append(unit)
    return segments


# How many times the first bound a first word may take to be said whole (at speed 0.25 "안녕하세요." is
# 2.3 times the first bound with the test model's voice).
WHOLE_FIRST_WORD = 4


def _rest_of_word(first: str, rest: list[Unit]) -> list[Unit]:
    """The units after `first` that continue its last word: cut from it between letters, not between
    CJK characters (Chinese and Japanese have no spaces to keep words by; any cut there is as good)."""
    taken: list[Unit] = []
    left = first
    for unit, glued in rest:
        if not glued or is_cjk(left[-1]) or is_cjk(unit[0]):
            break
        taken.append((unit, glued))
        left = unit
    return taken


def _fill_first(
    first: str, units: list[Unit], first_min: int, first_max: int, count: Callable[[str], int]
) -> tuple[str, list[Unit]]:
    """A first segment under `first_min` with the units after it taken along while it stays within
    `first_max`, ending at a word's end; and the units left. Alone, "네." at speed 2 was 0.1 s of audio,
    nearly all of it inside the 100 ms cross-fade into the next segment."""
    best, candidate = (first, 0), first
    for taken, (unit, glued) in enumerate(units, 1):
        if count(candidate) >= first_min:
            break
        candidate = candidate + unit if glued else join(candidate, unit)
        if count(candidate) > first_max:
            break
        if not _rest_of_word(candidate, units[taken:]):
            best = (candidate, taken)
    return best[0], units[best[1] :]


# A piece with more characters than this many per token of the larger bound is over it without being
# counted. Speech has about one token per character or more (Korean 3.7 per syllable, English ≈ 1, pinyin
# 2), so no real text reaches it; what does is text the tokenizer says nothing for (emoji, "..." runs),
# whose growing pieces were each counted again whole as they grew: 2 000 such characters cost seconds.
CHARS_PER_TOKEN = 4


def _bounded(count: Callable[[str], int], most_chars: int) -> Callable[[str], int]:
    return lambda piece: count(piece) if len(piece) <= most_chars else sys.maxsize


def plan_segments(
    text: str, count: Callable[[str], int], first_max: int, later_max: int, first_min: int = 0
) -> list[str]:
    """Segments of `text` in order, joined they hold all its characters but spaces, in order.

    The first segment is the first sentence (or its first clauses/words up to `first_max` tokens; a
    word longer than that whole, when it fits `later_max`, but for CJK runs, which are cut anyway),
    extended by following sentences (or the opening words of the next) only while it is under
    `first_min` tokens and stays within `first_max`; the rest is packed
    into segments of up to `later_max` tokens, split at sentence, then clause, then word boundaries,
    then between characters. A single character over the bound is the only segment that exceeds it,
    and no segment has more than `CHARS_PER_TOKEN` characters per token of the larger bound.
    """
    first_max, later_max = max(1, first_max), max(1, later_max)
    count = _bounded(count, CHARS_PER_TOKEN * max(first_max, later_max))
    sentences = split_sentences(text)
    if not sentences:
        return []
    first, rest_of_first, remaining = _first_segment(sentences, count, first_max, later_max, first_min)
    units = _later_units(rest_of_first, remaining, later_max, count)
    return [first] + _pack(units, later_max, count)


def _first_segment(
    sentences: list[str], count: Callable[[str], int], first_max: int, later_max: int, first_min: int
) -> tuple[str, list[Unit], list[str]]:
    """The first segment, what its sentence has left once it was cut (units), and the sentences after:
    a word the first bound cut kept whole where it fits, then filled up to `first_min` tokens."""
    head = _units(sentences[0], first_max, count)
    first, rest_of_first = head[0][0], head[1:]
    word_rest = _rest_of_word(first, rest_of_first)
    whole_word = min(later_max, WHOLE_FIRST_WORD * first_max)
    if word_rest and count(first + "".join(unit for unit, _ in word_rest)) <= whole_word:
        # The first bound is for latency: a word it cut ("안녕하세" | "요." at speed 0.5) was said as two
        # segments, joined by a cross-fade mid-word. A word within a few times that bound stays whole (a
        # longer run without spaces is cut as before: first audio would wait for all of it).
        first += "".join(unit for unit, _ in word_rest)
        rest_of_first = rest_of_first[len(word_rest) :]
    remaining = sentences[1:]
    fill = first_min < first_max  # an early plan; a packed one (first_min = first_max) cuts at sentence ends
    if not rest_of_first:
        while remaining and count(first) < first_min and count(join(first, remaining[0])) <= first_max:
            first = join(first, remaining.pop(0))
        if fill and remaining and count(first) < first_min:  # the next does not fit whole: its opening
            opening = _units(remaining[0], max(1, first_max - count(first)), count)
            filled, rest = _fill_first(first, opening, first_min, first_max, count)
            if filled != first:
                first, rest_of_first = filled, rest
                remaining.pop(0)
    elif fill:
        first, rest_of_first = _fill_first(first, rest_of_first, first_min, first_max, count)
    return first, rest_of_first, remaining


def _later_units(
    rest_of_first: list[Unit], remaining: list[str], later_max: int, count: Callable[[str], int]
) -> list[Unit]:
    """Everything after the first segment as units of at most `later_max` tokens, to be packed."""
    units: list[Unit] = []
    for piece, glued in rest_of_first:  # cut for the first bound, packed under the later one
        if count(piece) <= later_max:
            units.append((piece, glued))
        else:
            smaller = _units(piece, later_max, count)
            units += [(smaller[0][0], glued), *smaller[1:]]
    for sentence in remaining:
        units += _units(sentence, later_max, count)
    return units
