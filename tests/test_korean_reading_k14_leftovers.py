"""Korean reading (korean14): stop 56's leftovers of the Korean reading, each against what korean13 read (the
comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_copulas import NEGATED_COPULAS, STATEMENT_COPULAS
from npu_worker.engine.korean_reading import spoken, spoken_form


@pytest.mark.parametrize("copula", list(NEGATED_COPULAS))
def test_every_copula_of_the_table_is_said_negated_after_not_equal_and_not_an_element(copula: str) -> None:
    """`korean_copulas`' table is the one list of copulas: "≠" and "∉" read each one the same way, the term a topic
    before a statement's, a subject before a clause's (korean13 spelled "≠"'s list apart from the table)."""
    particle = "는" if copula in STATEMENT_COPULAS else "가"
    negated = NEGATED_COPULAS[copula]
    assert spoken(f"x ≠ 0{copula}") == f"x{particle} 0이 {negated}"
    assert spoken(f"x ∉ A{copula}") == f"x{particle} A의 원소가 {negated}"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # k13: A는 B의 부분집합이고 B가 C의 부분집합이면, a topic opening a clause
        ("A ⊂ B ⊂ C이면", "A가 B의 부분집합이고 B가 C의 부분집합이면"),
        ("x ∈ A ⊂ B일 때", "x가 A의 원소이고 A가 B의 부분집합일 때"),
        ("A ⊃ B ⊃ C이면", "A가 B를 포함하고 B가 C를 포함하면"),
        # a statement's chain and one with no copula keep their topics, as korean13
        ("A ⊂ B ⊂ C입니다", "A는 B의 부분집합이고 B는 C의 부분집합입니다"),
        ("A ⊂ B ⊂ C", "A는 B의 부분집합이고 B는 C의 부분집합"),
    ],
)
def test_a_chain_of_sets_takes_its_particles_from_its_last_copula(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("|A| = 3", "|A|는 3"),  # k13: |A| 는 3
        ("|M| = 3", "|M|은 3"),  # k13: |M| 는 3, 엠 closed
        ("집합 A에 대해 |A| = 3입니다.", "집합 A에 대해 |A|는 3입니다."),
        ("a |= b", "a |= b"),  # code's operator: as before
        ("|x| = 3", "x의 절댓값은 3"),  # a small letter's absolute value: as before
    ],
)
def test_a_capitals_bars_keep_the_particle_of_equals_on_its_letter(written: str, said: str) -> None:
    """ "|A| = 3": a set's size, a determinant or a segment's length, which no one word says (`korean_absolute` leaves
    the bars unsaid, the words around name it: "행렬식 |A|"). Its "=" is the topic particle the letter takes, joined to
    the word as after any term; korean13 left a space between (espeak read the particle as a word of its own)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("전력은 P = VI = I²R입니다", "전력은 P가 VI이고 I의 2제곱R입니다"),  # k13: P가 VI는 I의 2제곱R
        ("따라서 a = b = c입니다.", "따라서 a는 b이고 c입니다."),  # k13: a는 b는 c
        ("x = 3, y = 4이면", "x는 3, y는 4이면"),  # a list, no chain: as before
        ("x += y = 1", "x += y는 1"),  # an operator's "=" opens no chain: as before
    ],
)
def test_a_chain_of_equalities_says_its_next_link_the_same(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ ℝⁿ", "x in R n"),  # k13: as written (espeak's English: "x")
        ("Let x ∈ ℝ^3 be a vector.", "Let x in R 3 be a vector."),  # a dimension, no power
        ("(A ∪ B)ᶜ is empty.", "(A union B) complement is empty."),
        ("∀x ∈ ℝ, x² ≥ 0", "for all x in R, x squared ≥ 0"),
        ("x ∉ A ⊂ B", "x not in A subset of B"),
    ],
)
def test_english_text_says_its_set_signs(written: str, said: str) -> None:
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The battery is 3.7V.", "The battery is three point seven volts."),  # k13: 3 점 칠 volts
        ("The value of pi is 3.14 here.", "The value of pi is three point one four here."),  # k13: 3 점 일사
        ("This is 0.5 + 1.25 cm.", "This is zero point five plus one point two five centimeters."),
        # the Korean sentence beside it keeps the Korean reading, and a dotted chain its 점, as before
        (
            "배터리는 3.7V입니다. The battery is 3.7V.",
            "배터리는 3 점 칠 볼트입니다. The battery is three point seven volts.",
        ),
        # korean63: a version after its word in English words (korean62: 2 점 10 점 1, the Korean chain)
        ("Use version 2.10.1 in the lab.", "Use version two point ten point one in the lab."),
    ],
)
def test_an_english_sentence_says_its_decimal_point_in_english(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x^2 is positive.", "x squared is positive."),  # k13: x의 2제곱 is positive.
        (
            "f(x) = x^2 is continuous!",
            "f(x) = x squared is continuous!",
        ),  # k13: f(x)는 x의 2제곱 is continuous!
        ("a = 1 is true.", "a = one is true."),  # k13: a는 1 is true.
        ("a = 1 is true", "a는 1 is true"),  # k10's: no sentence mark, a formula's note: Korean, as before
        ("x = 3 for all x", "x는 3 for all x"),  # k10's, as before
        ("x^2 is positive", "x의 2제곱 is positive"),  # no sentence mark: Korean, as before
        (
            "sin x is odd.",
            "sin x is odd.",
        ),  # a function's name is no English word (nothing here to read either way)
        (
            "그리고 x^2 is positive.",
            "그리고 x의 2제곱 is positive.",
        ),  # a Korean word in it: a Korean sentence, as before
    ],
)
def test_a_sentence_of_one_small_english_word_is_english_when_closed_with_a_longer_word(
    written: str, said: str
) -> None:
    """The boundary between an English sentence and a formula's note in a Korean text: no Hangul and two of English's
    small words ("is", "the", "of", …) as before, or one with another English word of three or more small letters (not
    a function's name, "sin", "log") in a sentence closed by its mark (". ! ?"). "x^2 is positive." is a sentence and
    is read in English (x squared, "=" espeak's "equals"); "a = 1 is true" and "x = 3 for all x", unclosed, are a
    formula's note on a slide and stay Korean (a는 1, as k10 decided); closed, "a = 1 is true." is a sentence and its
    "=" espeak's English "equals"."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # k13: if ok:\n0 이상 x && x가 n보다 작다, the line before's "if" made half the line code
        ("if ok:\n0 <= x && x < n", "if ok:\n0 이상 x 그리고 x n 미만"),
        ("0 <= x && x < n", "0 이상 x 그리고 x n 미만"),  # the same line alone, as before
        # a keyword on the comparison's own line keeps the code voice, as before
        ("if ok:\nwhile (i < n && j < m)", "if ok:\nwhile (i가 n보다 작다 && j가 m보다 작다)"),
        ("for (i = 0; i < n; i++)", "for (i에 0을 대입; i가 n보다 작다; i++)"),
    ],
)
def test_a_formulas_line_after_a_code_line_reads_as_a_formula(written: str, said: str) -> None:
    assert spoken(written) == said
