"""`re` for the text readings' modules (`korean_*`, `english_*`, `sentence_ends`), its `compile` deferred to a
pattern's first use. Their patterns (286 at d69ca74) took ≈ 190 ms of CPU to compile at import (Python 3.11's
`re` fills a `[가-힣]` class's bitmap one character at a time, in Python), in every espeak child before its `READY`;
a lecture's texts used 121 of them, which the espeak engine's load reads once (`EspeakEngine.warm_up_reader`;
ZipVoice's tokenizer when made).

Each module imports this as `re`, so a pattern is written `re.compile(...)` as anywhere else. A pattern compiles
at the first look at anything but its source (`pattern`, which composed patterns read) and then sets the
compiled pattern's methods on itself: a later `PATTERN.sub(...)` calls `re.Pattern.sub` directly, no Python call
added a use. Two threads at a first use both compile (`re`'s cache returns the same pattern): harmless.
"""

from __future__ import annotations

import re as _re
from re import DOTALL as DOTALL
from re import IGNORECASE as IGNORECASE
from re import MULTILINE as MULTILINE
from re import VERBOSE as VERBOSE
from re import Match as Match
from re import Pattern as Pattern
from re import escape as escape
from re import fullmatch as fullmatch
from re import search as search
from re import split as split
from re import sub as sub
from types import ModuleType
from typing import Any, cast

# What a first use sets on the pattern from the compiled one (anything else is looked up on it each time).
_SET_AT_FIRST_USE = (
    *("findall", "finditer", "fullmatch", "match", "scanner", "search", "split", "sub", "subn"),
    *("flags", "groupindex", "groups"),
)


class LazyPattern:
    """A pattern's source, compiled at the first use of anything but `pattern`."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.source_flags = pattern, flags

    def __getattr__(self, name: str) -> Any:
        """Called only for what is not set yet: the first use (or a name no compiled pattern has). Not for
        a special name: `copy` and `pickle` ask a copy made without `__init__` for `__setstate__`, and the
        look-up of its missing `pattern` came back here without end (RecursionError)."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compile_now(), name)

    def compile_now(self) -> Pattern[str]:
        """Compile (at the first use, or ahead of it: `compile_patterns`) and hold the compiled methods."""
        compiled = _re.compile(self.pattern, self.source_flags)
        for attribute in _SET_AT_FIRST_USE:
            setattr(self, attribute, getattr(compiled, attribute))
        return compiled

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.source_flags!r})"


def compile(pattern: str, flags: int = 0) -> Pattern[str]:
    """The pattern, compiled at its first use (typed as what it then behaves as)."""
    return cast("Pattern[str]", LazyPattern(pattern, flags))


def compile_patterns(module: ModuleType) -> None:
    """Compile a module's patterns now, in a process whose first use of them must not pay for it: the
    worker's, where `sentence_ends`' first use is a speech stream's, on the event loop (`openai_compat`)."""
    for value in vars(module).values():
        if isinstance(value, LazyPattern):
            value.compile_now()
