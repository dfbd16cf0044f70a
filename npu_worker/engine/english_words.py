"""An English sentence's Greek letters and report abbreviations in English words, for a Korean text's English sentence
(`english_reading.signs_in_korean_text`): the Korean rules, run after it, said them in Korean, "The angle α is small."
as The angle 알파 is small, "grew 5% YoY" as grew five percent 전년 대비 (read59k). Data and one pass, each pattern
anchored on the letter or the word: linear in the text."""

from __future__ import annotations

from . import lazy_re as re  # `re` with `compile` at a pattern's first use
from .korean_accents import in_english as accents_in_english

GREEK_NAMES = dict(
    zip(
        "αβγδεζηθικλμνξοπρσςτυφχψω",
        (
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma sigma tau"
            " upsilon phi chi psi omega"
        ).split(),
        strict=True,
    )
) | dict(
    zip(
        "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ",
        (
            "Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa Lambda Mu Nu Xi Omicron Pi Rho Sigma Tau"
            " Upsilon Phi Chi Psi Omega"
        ).split(),
        strict=True,
    )
)
GREEK_LETTER = re.compile("[\u0391-\u03a9\u03b1-\u03c9]")
# A report's period-over-period change, "YoY", "QoQ", "MoM", as `korean_marks` finds it (not a code name, "YoYo", nor
# someone's mother, "my MoM"): year over year, quarter over quarter, month over month.
OVER_PERIOD = re.compile(
    r"(?<![A-Za-z\d_])(?<!my )(?<!My )(?<!his )(?<!her )(?<!our )(?<!your )(YoY|QoQ|MoM)(?![A-Za-z\d_'’])"
)
_PERIODS = {"YoY": "year over year", "QoQ": "quarter over quarter", "MoM": "month over month"}


def words_said(sentence: str) -> str:
    """`sentence` with its Greek letters named in English, "Δx" Delta x, "2α" two alpha's letter apart from the number
    and from another letter, a formula letter's accent, "x̄" x bar, and its report abbreviations in English words."""
    if "oY" in sentence or "oQ" in sentence or "oM" in sentence:
        sentence = OVER_PERIOD.sub(lambda m: _PERIODS[m.group(1)], sentence)
    sentence = accents_in_english(sentence)  # "x̄" x bar (korean61: espeak's x, the bar unsaid)
    return GREEK_LETTER.sub(_greek_name, sentence)


_RELATION_BEFORE = re.compile(r"[<>≤≥=] {0,2}[-−]?\d{0,3}$")
_RELATION_AFTER = re.compile(r"[²³]? {0,2}[<>≤≥=]")
# A letter of a Greek word, "λόγος", "ΑΒΓ" (korean60: lambda ό gamma  omicron  sigma, letter by letter): three Greek
# letters in a row or one with an accent; and a unit's micro, "The μA range" (korean60: mu A): left as written, as the
# Korean rules leave them, a Greek word to espeak, the unit to its Korean name (a number's unit, "5 μA", is said before:
# five microamperes, `english_numbers.UNIT_NAMES`). Two letters of a formula, "Δθ", "αβ", are each named.
_GREEK_RUN_BEFORE = re.compile("[\u0370-\u03ff\u1f00-\u1fff]{1,2}$")
_GREEK_RUN_AFTER = re.compile("[\u0370-\u03ff\u1f00-\u1fff]{1,2}")
_NOT_A_PLAIN_LETTER = re.compile("[^\u0391-\u03a9\u03b1-\u03c9]")
_MICRO_UNIT = re.compile("(?<=μ)[AFms](?![A-Za-z])")


def _greek_name(match: re.Match[str]) -> str:
    """A letter's English name; one a relation bounds, "0 < θ < π", "x ≥ π", left to the bounds' rules (the Korean
    chain's, as before), and a Greek word's or a unit's (`_in_a_greek_word`, `_MICRO_UNIT`) as written."""
    text, start, end = match.string, match.start(), match.end()
    if _RELATION_BEFORE.search(text, max(0, start - 8), start) or _RELATION_AFTER.match(text, end):
        return match.group()
    if _in_a_greek_word(text, start, end) or _MICRO_UNIT.match(text, end):
        return match.group()
    before = " " if start and text[start - 1].isalnum() and not GREEK_LETTER.match(text, start - 1) else ""
    after = " " if text[end : end + 1].isalnum() else ""
    return before + GREEK_NAMES[match.group()] + after


def _in_a_greek_word(text: str, start: int, end: int) -> bool:
    """Whether the letter at `start` is one of three Greek letters in a row or beside an accented one (looked at two
    letters each way: linear)."""
    before = _GREEK_RUN_BEFORE.search(text, max(0, start - 2), start)
    after = _GREEK_RUN_AFTER.match(text, end)
    run = (before.group() if before else "") + (after.group() if after else "")
    return len(run) >= 2 or bool(_NOT_A_PLAIN_LETTER.search(run))
