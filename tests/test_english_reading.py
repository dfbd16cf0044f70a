"""English text's powers and relation signs read as an English reader says them (`english_reading`, through
`spoken_form` for `lang=en`): phonemized by the real espeak tokenizer and compared with the words said; the
comment says what espeak said before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    return EspeakTokenizer()


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("E = mc²", "E equals m c squared"),  # "m c two"
        ("E=mc^2", "E equals m c squared"),
        ("x² + y³", "x squared plus y cubed"),  # "x two plus y three"
        ("10⁻³ seconds", "10 to the power of minus 3 seconds"),  # "ten three": the minus lost
        ("10^-3", "10 to the power of minus 3"),
        ("2ⁿ states", "2 to the power of n states"),  # "two n"
        ("(a+b)²", "(a+b) squared"),
        ("a ≠ b", "a is not equal to b"),  # "a not equal to b"
        ("p ⇒ q", "p implies q"),  # nothing for the arrow
    ],
)
def test_powers_and_relations_are_said_in_english_words(tokenizer, written, said):
    assert tokenizer.symbols(written, "en") == tokenizer.symbols(said, "en")


@pytest.mark.parametrize("text", ["the energy¹ of it", "version 2", "H₂O", "Hello, world."])
def test_a_footnote_mark_and_plain_text_are_left(text):
    assert spoken_form(text, "en-US") == text


def test_other_languages_are_left_as_written():
    assert spoken_form("E = mc²", "de") == "E = mc²"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("An area of 5 km².", "An area of 5 square kilometers."),  # "k m squared": espeak knew "km²"
        ("An area of 1 km².", "An area of 1 square kilometer."),
        ("A room of 1,200 m²", "A room of 1,200 square meters"),  # "m two", then "m squared"
        ("3.5 cm^3 of water", "3.5 cubic centimeters of water"),  # "c m cubed"
        ("5 ft² of floor", "5 square feet of floor"),  # "f t squared"
    ],
)
def test_a_unit_of_length_squared_after_a_number_is_an_area_or_a_volume(tokenizer, written, said):
    assert tokenizer.symbols(written, "en") == tokenizer.symbols(said, "en")


@pytest.mark.parametrize("text", ["as shown by Li² and Wu³.", "He said it².", "This is¹ true."])
def test_a_footnote_mark_after_a_two_letter_word_or_name_is_left(text):
    """ "Li²" was spelled "L i squared", "it²" "i t squared"."""
    assert spoken_form(text, "en") == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("⇒ Faster charging", "Faster charging"),  # "implies Faster charging"
        ("Key points:\n⇒ Faster charging\n⇒ Longer life", "Key points:\nFaster charging\nLonger life"),
        ("Heat ⇒", "Heat "),  # "Heat implies"
    ],
)
def test_an_arrow_opening_or_ending_a_line_is_a_bullet_not_implies(written, said):
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize("text", ["as reported by the model (GPT-4)¹.", "See Table 2¹ and Fig. 3."])
def test_a_footnote_mark_one_after_a_number_or_a_bracket_is_no_power(text):
    """ "(GPT-4)¹" was read "to the power of 1": nothing is raised to the first."""
    assert spoken_form(text, "en") == text


@pytest.mark.parametrize(
    ("written", "said"),
    [("10¹² bytes", "10 to the power of 12 bytes"), ("5 s⁻¹", "5 s to the power of minus 1")],
)
def test_a_power_with_more_than_a_one_is_still_said(written, said):
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The gradient is A^T b.", "The gradient is A transpose b."),  # "A to the power of T b"
        ("x^T y", "x transpose y"),
        ("(AB)^T", "(AB) transpose"),
        ("2^T states", "2 to the power of T states"),  # a number's power of T stays one
    ],
)
def test_a_matrix_or_vector_raised_to_t_is_its_transpose(written, said):
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The oxide ion O²⁻ and Ca²⁺ ions", "The oxide ion O two minus and Ca two plus ions"),
        ("the sulfide ion S²⁻", "the sulfide ion S two minus"),
        ("Na⁺ and Cl⁻", "Na plus and Cl minus"),
        ("x² and A²⁺", "x squared and A²⁺"),  # a power, and no element's symbol: as before
    ],
)
def test_an_ions_charge_is_no_power(written, said):
    """ "O²⁻" was read "O squared dash"; then left as written, espeak said "O two" (its sign unsaid, korean15)."""
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("if x ≦ 1 then", "if x ≤ 1 then"), ("a ⩽ b", "a ≤ b"), ("x ≧ 0", "x ≥ 0"), ("n ⩾ 1", "n ≥ 1")],
)
def test_the_other_forms_of_the_bound_signs_read_as_the_signs(written, said):
    """JIS's "≦" and the slanted "⩽" of math fonts: espeak-ng said nothing for them ("x one"); "≤" it reads."""
    assert spoken_form(written, "en") == said
