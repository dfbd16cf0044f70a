"""rvk21: a review of korean21's readings, each case against what korean21 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Meet me at 24:00 here.", "Meet me at 스물네 시 here."),  # korean21: twenty-four to 00
        (
            "The shop closes at 24:30 here.",
            "The shop closes at 스물네 시 30분 here.",
        ),  # korean21: twenty-four to thirty
        ("The ratio is 007:1 here.", "The ratio is 007 대 1 here."),  # korean21: 007 to one
        # a ratio as korean21 read it
        ("Mix them 3:2 in the bowl.", "Mix them three to two in the bowl."),
        ("The mix is 0:1 here.", "The mix is zero to one here."),
        ("It runs 25:10 here.", "It runs twenty-five to ten here."),
    ],
)
def test_a_day_s_end_in_an_english_sentence_is_no_ratio(written: str, said: str) -> None:
    """ "24:30" is a clock the Korean rules read (스물네 시 30분), not a ratio of twenty-four to thirty; a term with a
    leading zero is no ratio's either (its "00" was left as digits)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "hydroxide와 H⁺가 만난다.",
            "hydroxide와 H 플러스가 만난다.",
        ),  # korean21: H⁺ (espeak's English plus)
        ("dioxide 속의 K⁺", "dioxide 속의 K 플러스"),
        ("biochemistry 강의: H⁺ 펌프", "biochemistry 강의: H 플러스 펌프"),
        ("electrochemical gradient와 K⁺", "electrochemical gradient와 K 플러스"),
        ("acidity가 높으면 H⁺가 많다.", "acidity가 높으면 H 플러스가 많다."),
        ("photoelectron과 C⁺", "photoelectron과 C 플러스"),
        ("electronegativity와 H⁺", "electronegativity와 H 플러스"),
        ("protonated 상태의 H⁺", "protonated 상태의 H 플러스"),
        ("cations와 K⁺", "cations와 K 플러스"),
        # what korean21 took out stays out: a word that only holds a chemistry word's letters
        ("anatomy 책과 C⁺", "anatomy 책과 C⁺"),
        ("electronics 회로의 V⁺", "electronics 회로의 V⁺"),
        ("education 자료의 C⁺", "education 자료의 C⁺"),
        ("placid 호수와 C⁺", "placid 호수와 C⁺"),
    ],
)
def test_chemistry_s_words_with_their_prefixes_and_endings_make_an_ion(written: str, said: str) -> None:
    """A single capital's plus is an ion in a text about chemistry: "hydroxide", "biochemistry", "acidity" are its words
    as "oxide", "chemistry", "acid" are (korean21 matched only the bare words)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "Grew by 3.5%p.",
            "Grew by three point five percentage points.",
        ),  # korean21: three point five 퍼센트p
        (
            "Margin fell 0.5%p.",
            "Margin fell zero point five percentage points.",
        ),  # korean21: zero point five 퍼센트p
        ("It grew by 3.5%p here.", "It grew by three point five percentage points here."),
        (
            "Accuracy rose 2 %p.",
            "Accuracy rose two percentage points.",
        ),  # korean21: 2 퍼센트포인트, the Korean word
        ("It rose 1%p here.", "It rose one percentage point here."),
        # a Korean sentence's and a percent as before
        ("정확도가 2%p 올랐다.", "정확도가 2 퍼센트포인트 올랐다."),
        ("Grew by 5%.", "Grew by five percent."),
    ],
)
def test_a_korean_report_s_percentage_point_in_an_english_sentence_is_english(
    written: str, said: str
) -> None:
    """ "%p", a Korean report's percentage point, in an English sentence (korean21 took "Grew by 3.5%p." for one): said
    in English words, not the decimal's English words and a Korean word with a letter left after it."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Revenue rose ▲5%.", "Revenue rose 증가 5 퍼센트."),  # korean21: Revenue rose ▲five percent.
        ("Sales fell ▼3.5%.", "Sales fell 감소 3 점 오 퍼센트."),  # korean21: 감소 3 점 오 percent.
        ("Sales fell △3%.", "Sales fell 마이너스 3 퍼센트."),  # korean21: △three percent.
        ("Users grew 10%↑.", "Users grew 10 퍼센트 증가 ."),  # korean21: ten percent 증가
        # a short English sentence without one as korean21 read it
        ("Heat 2.5 liters.", "Heat two point five liters."),
    ],
)
def test_a_short_sentence_with_a_korean_report_s_sign_stays_korean(written: str, said: str) -> None:
    """A short capitalised sentence with a Korean report's sign, "▲5%", "10%↑", is the Korean rules', as one with "YoY"
    is: the sign is said in Korean (증가), and the amount beside it in the same voice."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Range was 3~5%.", "Range was three to five percent."),  # korean21: Range was 3 five percent.
        ("The range is 3~5% here.", "The range is three to five percent here."),  # korean21: 3 five percent
        (
            "It takes 3∼5 ms here.",
            "It takes three to five milliseconds here.",
        ),  # korean21: 3 five milliseconds
        # a hyphen's range and one before no unit as before
        ("The range is 3-5% here.", "The range is three to five percent here."),
        (
            "It costs 3~5 dollars here.",
            "It costs three to five dollars here.",
        ),  # korean60: a currency's name a unit's
    ],
)
def test_a_tilde_s_range_before_a_unit_in_an_english_sentence_is_said_to(written: str, said: str) -> None:
    """ "3~5%" in an English sentence runs from three to five, as "3-5%" does: the tilde was lost (3 five percent)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Shares rose 1.5x.", "Shares rose one point five x."),  # korean21: 1 point 5x (0d1e79d: 1 점 오x)
        ("It is 1.5x faster here.", "It is one point five x faster here."),  # korean21: 1 point 5x
        ("It has 1.2M users here.", "It has one point two M users here."),  # korean21: 1 point 2M
        ("It is 1.5x, here.", "It is one point five x, here."),
        # a unit's, a mantissa's and a version's decimal as before
        ("The battery is 3.7V.", "The battery is three point seven volts."),
        ("It is 1.5e-3 here.", "It is 1 점 오 곱하기 10의 마이너스 3제곱 here."),
        # korean63: a version after its word in English words (korean62: v2 점 0, the Korean chain)
        ("Use v2.0 here.", "Use v two point zero here."),
    ],
)
def test_a_decimal_glued_to_a_letter_in_an_english_sentence_is_english(written: str, said: str) -> None:
    """A factor's or a scale's decimal, "1.5x", "1.2M", in one voice: its "point" was English and its digits were
    left to the Korean voice (일 point 오x)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The limit as x → -∞ is 0.", "The limit as x approaches minus infinity is 0."),  # korean21: -무한대
        ("The limit as x→-1 is 2.", "The limit as x approaches minus one is 2."),  # korean21: 마이너스 1
        ("As x→0, the sum is 3.", "As x approaches zero, the sum is 3."),  # korean21: approaches 0 (영)
        ("The limit as x→0⁺ is 1.", "The limit as x approaches zero plus is 1."),
        # infinity, a letter, a decimal and a Korean sentence's limit as before
        ("The limit as x→∞ is 0.", "The limit as x approaches infinity is 0."),
        ("The limit as x → a is L.", "The limit as x approaches a is L."),
        ("The limit as x → 1.5 is 2.", "The limit as x approaches one point five is 2."),
        ("극한은 x→-1일 때 2다.", "극한은 x가 마이너스 1로 갈 때 2다."),
    ],
)
def test_a_limit_s_target_in_an_english_sentence_is_english(written: str, said: str) -> None:
    """What a limit approaches in an English sentence, "x → -∞", "x→-1", "x→0", in English words as a bound's number
    is ("x > -1": greater than minus one): korean21 said the arrow in English and left its target to the Korean rules."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "재료:\n- Add 1/2 cup.\n- Heat 2.5 liters.",
            "재료:\n- Add one half cup.\n- Heat two point five liters.",
        ),
        ("• Heat 2.5 liters.", "• Heat two point five liters."),  # korean21: • Heat 2 점 오 liters.
        (
            "* Add 1/2 cup.",
            "  Add one half cup.",
        ),  # korean21: Add 2분의 1 cup. (Markdown's bullet unsaid as before)
        # a bullet's name, formula and report as a bare line's
        ("- Tesla Model 3.", "- Tesla Model 3."),
        ("- Revenue grew 5% YoY.", "- Revenue grew 5 퍼센트 전년 대비."),
    ],
)
def test_a_slide_s_bulleted_short_english_sentence_is_english(written: str, said: str) -> None:
    """A short capitalised step on a slide's bullet, "- Add 1/2 cup.", is English as the bare line "Add 1/2 cup." is
    (korean21 took only the bare line): one voice a sentence."""
    assert spoken_form(written, "ko") == said
