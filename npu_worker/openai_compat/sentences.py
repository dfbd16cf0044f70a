"""Sentences out of text that arrives in fragments (LLM tokens), so speech can start before the end.

A sentence is cut at its final punctuation: CJK full stops (。！？) at once, Latin ones (. ! ? …) and
Korean text's (which uses them too) once whitespace follows, so "3.14" or a fragment ending in "."
is not cut early; a newline always cuts. When enough text waits without a sentence end, it is cut at
its last clause mark (, ; : 、 ，) instead, and a run with no mark at all at its last space before
`max_chars`: the first audio never waits for the whole utterance. Pure code, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CLOSERS = re.escape("\"'”’)]」』》")
# A run of marks is matched from its first mark only, and whole (possessive): tried at every mark of a
# run, as before, 2 000 "." without a space took 0.3 s of the event loop per fragment (quadratic).
SENTENCE_END = re.compile(rf"(?<![.!?…])[.!?…]++[{CLOSERS}]*+(?=\s)|[。！？]+[{CLOSERS}]*|\n")
CLAUSE_END = re.compile(rf"(?<![,;:])[,;:]++[{CLOSERS}]*+(?=\s)|[，、；：]")


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
        return self._take(len(self._buffer))

    def _take(self, cut: int) -> list[str]:
        piece, self._buffer = self._buffer[:cut].strip(), self._buffer[cut:]
        if not piece:
            return []
        self.pieces_made += 1
        return [piece]

    def _next_cut(self) -> int | None:
        text = self._buffer
        sentence = SENTENCE_END.search(text)
        if sentence is not None:
            return sentence.end()
        waiting = len(text.strip())
        threshold = self.rules.first_clause_chars if self.pieces_made == 0 else self.rules.clause_chars
        if waiting >= threshold:
            clauses = [m.end() for m in CLAUSE_END.finditer(text) if len(text[: m.end()].strip()) >= 4]
            if clauses:
                return clauses[-1]
        # The raw length, whitespace included: a stream of blank fragments must not grow the buffer
        # (each feed searches all of it) while its stripped length stays under the bound.
        if len(text) > self.rules.max_chars:
            space = text.rfind(" ", 0, self.rules.max_chars)
            return space if space > 0 else self.rules.max_chars
        return None
