"""korean16: what korean15 left of the Korean reading, each against what korean15 read (the comment beside each
case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("Ca²⁺ 이온", "Ca 투 플러스 이온"),  # korean15: Ca의 2제곱⁺ 이온 (espeak: Ca 이온, the charge unsaid)
        ("Fe²⁺가 Fe³⁺로 산화된다.", "Fe 투 플러스가 Fe 쓰리 플러스로 산화된다."),
        ("Na⁺ 이온과 Cl⁻ 이온", "Na 플러스 이온과 Cl 마이너스 이온"),  # korean15: Na⁺, Cl⁻ (unsaid)
        ("SO₄²⁻ 이온", "S-O포 투 마이너스 이온"),  # korean15: S-O포²⁻
        ("Ca²⁺은 뼈에 있다.", "Ca 투 플러스는 뼈에 있다."),  # the particle in 플러스's form
        ("The Ca²⁺ ion is small.", "The Ca two plus ion is small."),  # an English sentence's: English words
        # a power, a variable's or a set's sign, a symbol of no element: as before
        ("x² + y²", "x의 2제곱 더하기 y의 2제곱"),
        ("A²⁺", "A의 2제곱⁺"),
        ("x⁺", "x⁺"),
        ("ℤ⁺는", "양의 정수 집합은"),
        ("mol⁻¹", "mol의 마이너스 1제곱"),
    ],
)
def test_an_ions_charge_is_said_as_a_chemistry_lecturer_says_it(written: str, said: str) -> None:
    """A superscript digit and sign after a chemical formula is the ion's charge, not a power: a Korean lecturer says
    its size and sign in English words, Ca 투 플러스, Fe 쓰리 플러스, Cl 마이너스. Only a formula of element symbols;
    "A²⁺" (no element A) keeps korean15's power."""
    assert spoken(written) == said
