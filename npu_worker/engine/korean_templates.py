"""A replacement template ("\\2분의 \\1") as a callable for the Korean reading's `re.Pattern.sub` passes.

Python 3.11's `sub` given a template with a group reference parses it on every call, before it looks for a match
(`re._subx`): about 2 µs a pass on this 2-core VM whether anything matches or not, for the twenty-three such passes of
`korean_reading` and its parts. A callable costs nothing until a match, and `Match.expand` reads the template as
`sub` does (an unmatched group is empty in both).
"""

from __future__ import annotations

import re
from collections.abc import Callable


def template(replacement: str) -> Callable[[re.Match[str]], str]:
    """`replacement` expanded at each match, as `sub` would expand it."""
    return lambda match: match.expand(replacement)
