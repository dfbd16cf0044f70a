"""An English sentence's arrows in English words, for `english_reading.signs_in_korean_text`: a limit's
"x→0" approaches, a map's "A → B" to, "⇒" implies, "←" gets, "↔" and (between propositions if and only if), a key's
"Press ←" left arrow; a bullet's, opening or ending the sentence, unsaid. The Korean rules' particles (x가 0으로,
A에서 B) are words of another language in an English sentence, which the Korean voice said as written.
Each pattern is anchored on an arrow, with bounded repeats and look-arounds: linear in the text.
"""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use

# "⇒", "⟹", "⇔" as `english_reading.spoken` says them for lang=en, and an English sentence's arrow too.
IMPLICATIONS = {"⇒": " implies ", "⟹": " implies ", "⇔": " if and only if "}


def arrows_said(sentence: str) -> str:
    """`sentence` with its arrows in English words (a limit's first, then the others)."""
    if _ARROW.search(sentence):
        sentence = _ARROW.sub(_arrow, _LIMIT_ARROW.sub(_limit_arrow, sentence))
    return sentence


# An English sentence's arrows, "The limit as x→0⁻ is 1.", "Here A → B is a map.", "Here p ⇒ q is true." (korean20: as x가 0으로 minus,
# A에서 B, p면 q: the Korean rules' particles in an English sentence, which espeak's Korean voice says nothing else for):
# a limit's, a small letter's going to a number, a letter or infinity, approaches; another right arrow to; "⇒", "⇔" as
# `english_reading.spoken` says them for lang=en; one opening or ending the sentence a bullet, unsaid.
# ... and "←", "↔", "Here x ← x + 1 is an update.", "Here A ↔ B holds." (read59k: x는 x plus one, A와 B: the Korean rules'
# particles, which the Korean voice said in an English sentence): a pseudo-code's assignment, gets; both ways, and, between
# propositions if and only if, as "⇔" is said.
_ARROW = re.compile(r" {0,4}([→⟶➔➜➡⇒⟹⇔←⟵↔⟷]) {0,4}")
_BOTH_WAYS = {"↔", "⟷"}
_PROPOSITIONS = re.compile(r"(?<![A-Za-z])[¬~]?[pqrs] {0,4}[↔⟷] {0,4}[¬~]?[pqrs](?![A-Za-z])")
_BLANK = re.compile(r"[\s.]*")
# ... and a key's, "Press ← to go back", "Hit → twice" (korean60: Press gets to go back, Hit to twice): the key's name.
# The second key of a pair, "Use ← and → to move", and one after a modifier, "Ctrl+←" (korean61: left arrow and to, Ctrl
# plus gets), so too.
_KEY_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?:[Pp]ress|[Hh]it|[Tt]ap|[Cc]lick|[Uu]se|the|(?:Ctrl|Alt|Shift|Cmd) ?\+)|[←→] (?:and|or))$"
)
_KEY_NAMES = {"←": " left arrow ", "→": " right arrow "}
# ... and a signed infinity, "x → +∞", and a capital's going to one, "N → ∞" (rvk21: x to +무한대, N to 무한대: a map's "to"
# and the Korean rules' word): approaches plus infinity, N approaches infinity; a capital's "A → B" a map as before.
# ... and a function's at a letter, "f(x) → 0" (korean21: f(x) to 0, a map's "to" and the Korean voice's 영): f(x) approaches
# zero.
_LIMIT_ARROW = re.compile(
    r"(?:(?<=(?<![A-Za-z])[a-z])|(?<=(?<![A-Za-z])[a-z]\([a-z]\))|(?<=(?<![A-Za-z])[A-Z])(?= {0,4}[→⟶➔➜➡] {0,4}[-−+]?∞))"
    r" {0,4}[→⟶➔➜➡] {0,4}(?=[-−]?(?:\d{1,15}(?:\.\d{1,15})?(?![\w(]|\.\d)|[a-z](?![\w(]))|[-−+]?∞)([-−+])?(∞)?"
)


# ... but not a step of a flow, "a → b → c", "x → 1 → 2" (korean21: a approaches b approaches c): a map's "to" (`_ARROW`).
_FLOW_AFTER = re.compile(r"[-−+]?(?:\d{1,15}(?:\.\d{1,15})?|[a-z]|∞) {0,4}[→⟶➔➜➡]")
_FLOW_BEFORE = re.compile(r"[→⟶➔➜➡] {0,4}(?:[A-Za-z]|[a-z]\([a-z]\))$")


def _limit_arrow(match: re.Match[str]) -> str:
    """ "→ -∞", "→ -1", "→ +∞" with the sign in English words too (korean21: approaches -무한대, approaches 마이너스 1)."""
    text, start = match.string, match.start()
    if _FLOW_AFTER.match(text, match.end()) or _FLOW_BEFORE.search(text, max(0, start - 12), start):
        return match.group()
    sign, infinity = match.groups()
    said = {None: " approaches ", "+": " approaches plus "}.get(sign, " approaches minus ")
    return f"{said}infinity" if infinity else said


def _arrow(match: re.Match[str]) -> str:
    """An arrow between two terms in English words; a bullet's, opening or ending the sentence, as a space."""
    text, start, end = match.string, match.start(), match.end()
    # no copy of the sentence before or after it: linear in many arrows (the run always matches, empty at worst)
    sign = match.group(1)
    if sign in _KEY_NAMES and _KEY_BEFORE.search(text, max(0, start - 8), start):
        # ending the sentence too, "To go back, press ←." (rvk60's bullet rule: unsaid)
        return _KEY_NAMES[sign].rstrip() if _BLANK.fullmatch(text, end) else _KEY_NAMES[sign]
    blank = _BLANK.match(text)
    opens = blank is not None and blank.end() >= start
    if opens or _BLANK.fullmatch(text, end):
        return "" if opens else " "
    if sign in "←⟵":
        return " gets "
    if sign in _BOTH_WAYS:
        logic = _PROPOSITIONS.search(text, max(0, start - 2), min(len(text), end + 2))
        return " if and only if " if logic else " and "
    return IMPLICATIONS.get(sign, " to ")
