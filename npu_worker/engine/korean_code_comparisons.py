"""A comparison in code read as a lecturer says it, "if (a>b)", "while (lo <= hi)": if (a가 b보다 크다), while (lo가 hi보다
작거나 같다). Which comparisons are code's (a keyword before them on their line, or a join of a statement a keyword
opens) and how they are said; `korean_ranges`' bounds ask it before saying a bound in the formula voice.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_particles import particle_after

# A comparison in code, "if (a>b)", "while (i < n)" (it was if (a b 초과): a bound's words after a keyword): as the
# comparison a lecturer says, if (a가 b보다 크다); after "&&", "||" or a statement's ";" too, "for (i = 0; i < n; i++)".
_CODE_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?:if|elif|while|until|assert|return) ?\(?|&&|\|\||;|(?<![A-Za-z])(?:and|or) \(?) ?$"
)
# ... the "&&", "||" or ";" only in a statement that a keyword opens: "x > y; y > z", "x>y||y>z" are a formula's (the
# k6 rule read the second as code, x y 초과; y가 z보다 크다: one line in two voices).
# ... and Python's "and", "or" in a statement a keyword opens, "if x > 10 and y < 5:" (it was if x 10 초과 and y 5 미만:,
# the code read as a formula): if x가 10보다 크다 and y가 5보다 작다:; "x >= 0 and y >= 0" with no keyword stays a formula's.
_CODE_JOIN = re.compile(r"(?:&&|\|\||;|and \(?|or \(?) ?$")
_CODE_KEYWORD = re.compile(r"(?<![A-Za-z])(?:if|elif|while|until|for|assert|return)(?![A-Za-z])")
CODE_AFTER = re.compile(r" ?(?:[)&|;:{,?]|$)| (?:and|or)(?![A-Za-z])")  # what closes a comparison in code
CODE_WORDS = {"<": "작다", "≤": "작거나 같다", ">": "크다", "≥": "크거나 같다"}


def in_code(text: str, start: int) -> bool:
    """Whether the comparison at `start` follows a code's keyword, "if (", or a join, "&&", ";", of a statement a keyword
    opens on its own line ("if ok:\n0 <= x && x < n" is a formula) or one before, its "(" open ("if (x > 0 &&\ny > 0)")."""
    # ... a line its condition wraps onto, "if (x > 0 &&\n    y > 0)": the join at the end of the line before (k14 looked
    # past no indent: y 0 초과, the second line a formula's)
    reach = max(0, start - 80)
    head = text[reach:start].rstrip(" \t")
    if head.endswith("\n"):  # Python's "and" there too: a space for `_CODE_BEFORE`'s " ?$"
        head = (
            text[reach - 1 : reach] + head[:-1].rstrip(" \t") + " "
        )  # (the character before, for the look-behind)
        code = _CODE_BEFORE.search(head, max(1 if reach else 0, len(head) - 11))
    else:
        code = _CODE_BEFORE.search(text, max(0, start - 10), start)
    if not code:
        return False
    line = text.rfind("\n", reach, start) + 1 or reach
    opened = [keyword.end() for keyword in _CODE_KEYWORD.finditer(text, reach, line)][-1:]
    held = bool(opened) and text.count("(", opened[0], start) > text.count(")", opened[0], start)
    return not _CODE_JOIN.match(code.group()) or held or bool(_CODE_KEYWORD.search(text, line, start))


# ... and between names longer than a letter, a member or a short formula, in code only, "while (lo <= hi)", "i < arr.length",
# "for (…; i < n - 1; …)" (it was while (lo ≤ hi), i < arr.length: the sign unsaid; i n 빼기 1 미만, a formula's voice in
# code's): lo가 hi보다 작거나 같다, i가 arr.length보다 작다, i가 n 빼기 1보다 작다.
_NAME = r"[A-Za-z_][A-Za-z\d_]{0,30}(?:\.[A-Za-z_][A-Za-z\d_]{0,30}(?:\(\))?)?"
_CODE_SIDE = rf"(?:{_NAME}|\d+)(?: [-+*/] (?:{_NAME}|\d+)){{0,3}}"
CODE_COMPARISON = re.compile(
    rf"(?<![\w.])({_NAME}) ?([<>≤≥]) ?({_CODE_SIDE})(?= ?(?:[)&|;:{{,?]|$)| (?:and|or)(?![A-Za-z]))"
)


# ... but not a generic type's bracket, "Map<String, Integer> m;" in a loop's body (k8: Map가 String보다 작다, Integer>):
# a "<" whose ">" closes a list of names.
_GENERIC_REST = re.compile(r"[\w ,.?\[\]<]{0,80}>")


def code_comparison(match: re.Match[str]) -> str:
    """ "while (lo <= hi)" as while (lo가 hi보다 작거나 같다); outside code left."""
    left, sign, right = match.groups()
    if not in_code(match.string, match.start()) or (
        sign == "<" and _GENERIC_REST.match(match.string, match.start(3))
    ):
        return match.group(0)
    return f"{left}{particle_after(left, '가')} {right}보다 {CODE_WORDS[sign]}"
