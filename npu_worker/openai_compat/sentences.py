"""Sentences out of text that arrives in fragments (LLM tokens), so speech can start before the end.

A sentence is cut at its final punctuation: CJK full stops (。！？) at once, Latin ones (. ! ? …) and
Korean text's (which uses them too) once whitespace follows, so "3.14" or a fragment ending in "."
is not cut early; a newline always cuts. A single point is cut as the ZipVoice segmenter cuts it
(`engine/sentence_ends.py`: not inside "2024. 12. 5.", nor after "Dr." or "e.g."); one after a digit
may need the next characters to decide (a date's next part), every other is cut at the space. When
enough text waits without a sentence end, it is cut at its last clause mark (, ; : 、 ， or a Korean
sentence ending with no point, "…니다 ", "…요 ") instead, and a run with no mark at all at its last
space (a tab, an ideographic space; a no-break space only where there is no other) before `max_chars`.
No piece outgrows `max_chars`, however long a fragment (a sentence end or clause mark past it is not cut
at): the first audio never waits for the whole utterance, and a piece never exceeds the text limit its
fragments kept. Pure code, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..engine import lazy_re, sentence_ends
from ..engine.sentence_ends import LOOK_BACK, ends_sentence

# `sentence_ends`' patterns compile at their first use (`lazy_re`: in an espeak child a lecture's texts use
# none); in the worker that use is a speech stream's sentences, on the event loop, which held every connection
# while the first stream's compiled them (one holds a Hangul class's bitmap): they compile with this import
lazy_re.compile_patterns(sentence_ends)

CLOSERS = re.escape("\"'”’)]」』》")
# A run of marks is matched from its first mark only, and whole (possessive): tried at every mark of a
# run, as before, 2 000 "." without a space took 0.3 s of the event loop per fragment (quadratic).
SENTENCE_END = re.compile(rf"(?<![.!?…])[.!?…]++[{CLOSERS}]*+(?=\s)|[。！？]+[{CLOSERS}]*|\n")
# Korean polite and formal sentence endings, where a text without punctuation (speech recognition's, an
# LLM's) ends its sentences: such text waited for `max_chars` (240 characters) before its first audio.
KOREAN_ENDING = r"(?:니다|[어아여해에예세네군지]요|죠)(?=\s)"
CLAUSE_END = re.compile(rf"(?<![,;:])[,;:]++[{CLOSERS}]*+(?=\s)|[，、；：]|{KOREAN_ENDING}")


# The last whitespace before a bound (greedy, from the end: one pass): one a line breaks at first, then a
# no-break space ("10\u00a0km"). " " alone was looked for, so words apart by a tab, an ideographic space
# (a Korean IME's) or a no-break space (a web page's) were cut inside one at the bound.
LAST_SPACES = (
    re.compile(r"(?s:.*)[^\S\u00a0\u2007\u202f]"),
    re.compile(r"(?s:.*)[\u00a0\u2007\u202f]"),
)


def last_space(text: str, bound: int) -> int:
    """The offset of the last whitespace in text[:bound] (a breaking one if any), or -1."""
    for pattern in LAST_SPACES:
        if (found := pattern.match(text, 0, bound)) is not None:
            return found.end() - 1
    return -1


# Symbols kept to go before the next piece (an ellipsis, a bullet, an emoji or two), at most.
UNSPOKEN_CHARS = 16


def cluster_start(text: str, at: int) -> int:
    """`at`, moved back to the start of the character it falls inside: a cut of a run with no space
    split a decomposed Hangul syllable (its vowel and final read as jamo) or an accented letter."""
    while at > 1 and _continues(text, at):
        at -= 1
    return at


def _continues(text: str, at: int) -> bool:
    char = text[at]
    return (
        unicodedata.combining(char) != 0
        or char in "\u200d\ufe0e\ufe0f"  # zero-width joiner, variation selectors
        or "\u1160" <= char <= "\u11ff"  # a Hangul vowel or final jamo, after its initial
        or "\ud7b0" <= char <= "\ud7ff"
        or text[at - 1] == "\u200d"
    )


def speakable(piece: str) -> bool:
    """A letter or a digit of any script: a piece of marks and symbols alone gives no speech."""
    return any(char.isalnum() for char in piece)


@dataclass(frozen=True)
class AssemblyRules:
    first_clause_chars: int = 16  # a clause is cut once this much text waits (first piece of an utterance)
    clause_chars: int = 48  # ... and this much for later pieces (fewer, longer pieces sound better)
    max_chars: int = 240  # never hold more than this without cutting


class SentenceAssembler:
    """`feed(fragment)` returns the pieces now complete; `flush()` returns the rest (end of input)."""

    def __init__(self, rules: AssemblyRules = AssemblyRules()) -> None:
        self.rules = rules
        self._buffer = ""
        self._decided = 0  # the points before this offset end no sentence: never looked at again
        # The end of the text already cut, which a point's look back reaches into as the segmenter's does
        # on the whole text: "Who was it? I. Then" (the pronoun), "… 측정한다. 2. 저항을" (a list mark).
        self._before = ""
        self._unspoken = ""  # a piece with nothing to say ("...", "😀", "-"), put before the next one
        self.pieces_made = 0

    @property
    def pending(self) -> str:
        return self._buffer

    def feed(self, fragment: str) -> list[str]:
        self._buffer += fragment
        pieces: list[str] = []
        while (cut := self._next_cut()) is not None:
            pieces += self._take(cut)
        return pieces

    def flush(self) -> list[str]:
        """The rest; symbols with nothing to say are dropped after spoken pieces, but an utterance of
        nothing else is given as it is (EmptyText, as every route answers such a text). A point left
        undecided for want of what follows it ("정답은 2024. 1" at the end) is decided as the segmenter
        decides it on the whole text (it was given with the rest, one piece)."""
        pieces: list[str] = []
        while (cut := self._next_cut(complete=True)) is not None:
            pieces += self._take(cut)
        pieces += self._take(len(self._buffer))
        if not self.pieces_made and self._unspoken:
            pieces, self._unspoken = [self._unspoken], ""
        return pieces

    def _take(self, cut: int) -> list[str]:
        self._before = (self._before + self._buffer[:cut])[-LOOK_BACK:]
        piece, self._buffer = self._buffer[:cut].strip(), self._buffer[cut:]
        self._decided = max(0, self._decided - cut)
        if not piece:
            return []
        if not speakable(piece):  # alone it was an EmptyText error event (an LLM's "...", emoji, bullets)
            joined = f"{self._unspoken} {piece}".lstrip()
            self._unspoken = joined if len(joined) <= UNSPOKEN_CHARS else ""  # never grows: it says nothing
            return []
        if self._unspoken:
            joined, self._unspoken = f"{self._unspoken} {piece}", ""
            piece = joined if len(joined) <= self.rules.max_chars else piece
        self.pieces_made += 1
        return [piece]

    def _next_cut(self, complete: bool = False) -> int | None:
        text, shift, bound = self._buffer, len(self._before), self.rules.max_chars
        # Searched up to the bound only (a match ending past it is not cut at anyway): searched to the end,
        # a fragment with no sentence end was read whole at every cut (100 000 characters: 0.76 s).
        for sentence in SENTENCE_END.finditer(text, self._decided, bound + 1):
            if sentence.end() > bound:  # a piece never outgrows the bound: cut within it, below
                break
            if sentence.group()[0] in "。！？\n":
                return sentence.end()
            ends = ends_sentence(
                self._before + text, shift + sentence.start(), shift + sentence.end(), complete=complete
            )
            if ends:
                return sentence.end()
            if ends is None:  # the next fragment decides; no later end may be cut before it
                break
            self._decided = sentence.end()
        waiting = len(text.strip())
        threshold = self.rules.first_clause_chars if self.pieces_made == 0 else self.rules.clause_chars
        if waiting >= threshold:
            lead = len(text) - len(text.lstrip())  # a clause mark ends its match: no space to strip there
            clauses = [m.end() for m in CLAUSE_END.finditer(text, 0, bound + 1) if 4 <= m.end() - lead]
            clauses = [end for end in clauses if end <= bound]  # a lookahead may end one past it
            if clauses:
                return clauses[-1]
        # The raw length, whitespace included: a stream of blank fragments must not grow the buffer
        # (each feed searches all of it) while its stripped length stays under the bound.
        if len(text) > bound:
            space = last_space(text, bound)
            return space if space > 0 else cluster_start(text, bound)
        return None
