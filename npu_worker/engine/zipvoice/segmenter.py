"""Text → segments: a short first segment for early audio, then sentences packed into larger ones.

Every segment is synthesised with the whole prompt, and the decoder pays for the prompt's frames at
every step, so fewer, larger segments are cheaper; but the first audio waits for the first segment,
so that one is kept short (its first sentence, or its first clauses when the sentence is long).
Lengths are measured in model tokens through a `count` callable, so the plan follows the tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A sentence ends at . ! ? … (or the CJK marks) followed by space or the end; "3.7V" is no boundary.
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*(?:\s+|$)|\n+")
_CLAUSE_END = re.compile(r"(?<=[,;:，；：、])\s+|(?<=[，；：、])")


def split_sentences(text: str) -> list[str]:
    """Sentences with their final punctuation, whitespace-trimmed; empty pieces dropped."""
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]


def split_clauses(sentence: str) -> list[str]:
    return [piece.strip() for piece in _CLAUSE_END.split(sentence) if piece and piece.strip()]


def _split_words(text: str, limit: int, count: Callable[[str], int]) -> list[str]:
    """Last resort for a clause longer than `limit`: cut at spaces into pieces of ≤ limit tokens."""
    pieces: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and count(candidate) > limit:
            pieces.append(current)
            current = word
        else:
            current = candidate
    if current:
        pieces.append(current)
    return pieces


def _units(sentence: str, limit: int, count: Callable[[str], int]) -> list[str]:
    """A sentence as pieces of ≤ limit tokens: whole, else clauses, else word runs."""
    if count(sentence) <= limit:
        return [sentence]
    units: list[str] = []
    for clause in split_clauses(sentence):
        units += [clause] if count(clause) <= limit else _split_words(clause, limit, count)
    return units


def _pack(units: list[str], limit: int, count: Callable[[str], int]) -> list[str]:
    segments: list[str] = []
    for unit in units:
        if segments and count(f"{segments[-1]} {unit}") <= limit:
            segments[-1] = f"{segments[-1]} {unit}"
        else:
            segments.append(unit)
    return segments


def plan_segments(
    text: str, count: Callable[[str], int], first_max: int, later_max: int, first_min: int = 0
) -> list[str]:
    """Segments of `text` in order, joined they hold all its words.

    The first segment is the first sentence (or its first clauses/words up to `first_max` tokens),
    extended by following sentences only while it stays under `first_min` tokens; the rest is packed
    into segments of up to `later_max` tokens, split at sentence, then clause, then word boundaries.
    """
    first_max, later_max = max(1, first_max), max(1, later_max)
    sentences = split_sentences(text)
    if not sentences:
        return []
    head = _units(sentences[0], first_max, count)
    first, rest_of_first = head[0], head[1:]
    remaining = sentences[1:]
    if not rest_of_first:
        while remaining and count(first) < first_min and count(f"{first} {remaining[0]}") <= first_max:
            first = f"{first} {remaining.pop(0)}"
    units: list[str] = []
    if rest_of_first:
        units += _pack(rest_of_first, later_max, count)
    for sentence in remaining:
        units += _units(sentence, later_max, count)
    return [first] + _pack(units, later_max, count)
