"""korean17's leftovers (korean18): what a Korean text still read wrongly, each against what korean17 read (the comment
beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken, spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "황산은 H₂SO₄입니다.",
            "황산은 H투S-O포입니다.",
        ),  # korean17: H₂S-O포 (H₂ left to espeak's code points)
        ("인산 H₃PO₄와 HNO₃", "인산 H쓰리P-O포와 H-N-O쓰리"),  # korean17: H₃P-O포
        ("과산화수소 H₂O₂는", "과산화수소 H투O투는"),  # korean17: H₂O투
        ("HSO₄⁻ 이온", "H-S-O포 마이너스 이온"),  # as before
        ("H₂O와 CO₂", "H투O와 C-O투"),  # as before: one part's subscript
        ("A4 용지와 MP3", "A포 용지와 M-P쓰리"),  # as before
    ],
)
def test_a_formula_with_subscripts_on_several_parts_is_one_formula(written: str, said: str) -> None:
    """ "H₂SO₄" reads each part as "H₂O" and "SO₄" are read (the letters by name, a subscript in English): H투S-O포."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("클로저 C⁺는 집합입니다.", "클로저 C⁺는 집합입니다."),  # korean17: C 플러스는 (an ion's)
        ("V⁺ 공간의 원소", "V⁺ 공간의 원소"),  # korean17: V 플러스
        ("S⁺와 U⁺를 비교한다.", "S⁺와 U⁺를 비교한다."),  # korean17: S 플러스와 U 플러스를
        ("The function C⁺ is finite.", "The function C⁺ is finite."),  # korean17: C plus
        # ions as before: a word of chemistry, another ion, a size, two letters, an electron
        ("C⁺ 이온의 전하", "C 플러스 이온의 전하"),
        ("H⁺ 농도가 높다.", "H 플러스 농도가 높다."),
        ("Na⁺와 K⁺가 이동한다.", "Na 플러스와 K 플러스가 이동한다."),
        ("H⁺와 OH⁻", "H 플러스와 OH 마이너스"),
        ("Ca²⁺", "Ca 투 플러스"),
        ("Cl⁻", "Cl 마이너스"),
        ("Cu²⁺ + 2e⁻ → Cu", "Cu 투 플러스 플러스 2 e 마이너스에서 Cu"),
        ("The H⁺ ion is small.", "The H plus ion is small."),
    ],
)
def test_a_single_letter_with_a_sign_is_an_ion_only_beside_chemistry(written: str, said: str) -> None:
    """A single capital with a sign and no size is an ion only in a text about chemistry; elsewhere it is left to espeak
    as "x⁺" is (a closure, a space's half)."""
    assert spoken(written) == said


def test_a_single_letter_with_a_sign_in_english_text() -> None:
    """The same rule for `lang=en`: "C⁺" of a closure as written, "K⁺" beside "Na⁺" an ion."""
    assert spoken_form("The closure C⁺ is finite.", "en") == "The closure C⁺ is finite."
    assert spoken_form("The ions Na⁺ and K⁺ move.", "en") == "The ions Na plus and K plus move."
