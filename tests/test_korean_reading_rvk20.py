"""rvk20: what the review of korean20 found, each case against what korean20 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean20: K⁺와 (espeak's English "plus" beside F 마이너스: a halide's minus no longer made the text chemistry's)
        ("K⁺와 F⁻가 결합한다.", "K 플러스와 F 마이너스가 결합한다."),
        ("H⁺와 F⁻의 반응", "H 플러스와 F 마이너스의 반응"),  # korean20: H⁺와
        ("K⁺와 I⁻", "K 플러스와 I 마이너스"),  # korean20: K⁺와
        # a rail's minus still makes no closure an ion's, as korean20 made it
        ("V⁺ 단자와 V⁻ 단자, C⁺", "V 플러스 단자와 V 마이너스 단자, C⁺"),
        ("A⁻ 와 C⁺ 폐포", "A 마이너스 와 C⁺ 폐포"),
    ],
)
def test_a_halide_s_minus_makes_a_single_capital_s_plus_an_ion_s(written: str, said: str) -> None:
    """ "F⁻", "I⁻" beside "K⁺" are a salt's ions: K 플러스, one voice, as before korean20 (not "V⁻", "A⁻")."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        # korean20: Chapter 1 > Section 2 (said greater than; korean19 left lang=en's to espeak, which says nothing)
        ("Go to Chapter 1 › Section 2 for details.", "en", "Go to Chapter 1 › Section 2 for details."),
        ("Go to Chapter 1 › Section 2 for details.", "ko", "Go to Chapter 1 › Section 2 for details."),
        ("Settings › Step 2 › Done", "en", "Settings › Step 2 › Done"),  # korean20: Step 2 > Done
        # a bound typed with the angle quote as korean20 read it
        ("x ‹ 2π", "en", "x < 2π"),
        ("r › 0", "ko", "r 0 초과"),
        ("x › Tmax", "en", "x > Tmax"),
    ],
)
def test_a_breadcrumb_s_angle_quote_is_no_bound(written: str, lang: str, said: str) -> None:
    """ "Chapter 1 › Section 2" is a path through a document, not 1 greater than Section 2."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean20: A⁺, B⁺ (espeak's English plus) beside O 마이너스
        ("혈액형은 A⁺, B⁺, O⁻ 중 하나", "혈액형은 A 플러스, B 플러스, O 마이너스 중 하나"),
        ("수혈할 때 AB⁺형은 O⁻형의 피를 받는다.", "수혈할 때 AB 플러스형은 O 마이너스형의 피를 받는다."),
        ("A⁺ 학점과 C⁺ 클로저", "A⁺ 학점과 C⁺ 클로저"),  # no blood: as before
    ],
)
def test_a_blood_group_s_sign_is_said_in_one_voice(written: str, said: str) -> None:
    """A blood group's plus, "A⁺", is said as its minus is, in a text about blood: one voice, not espeak's plus."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        # korean20: f(a⁺) (espeak's English plus) beside f(a 마이너스)
        ("f(a⁺)와 f(a⁻)가 같다.", "ko", "f(a 플러스)와 f(a 마이너스)가 같다."),
        ("f(a⁻)와 f(a⁺)를 비교", "ko", "f(a 마이너스)와 f(a 플러스)를 비교"),
        (
            "값은 같다. The values f(a⁺) and f(a⁻) agree.",
            "ko",
            "값은 같다. The values f(a plus) and f(a minus) agree.",
        ),
        # a positive part with no minus beside it as before; lang=en's plus left to espeak as before
        ("x⁺와 y⁻", "ko", "x⁺와 y 마이너스"),
        ("The values f(a⁺) and f(a⁻) agree.", "en", "The values f(a⁺) and f(a minus) agree."),
    ],
)
def test_a_letter_s_plus_beside_its_minus_is_said_alike(written: str, lang: str, said: str) -> None:
    """ "f(a⁺)" and "f(a⁻)" are one limit's two sides: both in the sentence's words, not one left to espeak."""
    assert spoken_form(written, lang) == said
