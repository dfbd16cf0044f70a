"""Stop 58's last reading of the Korean/English reading (read58k): what korean19's generic type's brackets still took
from two bounds joined by a comma."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean19 (rvk19 mended only a ">" glued to a number): len<10, size>는 0이면 오류, "=" the copula, no bound said
        ("len<10, size>=0이면 오류", "len 10 미만, size 0 이상이면 오류"),
        ("ab<3, cd>=2이면", "ab 3 미만, cd 2 이상이면"),  # korean19: ab<3, cd>는 2이면
        ("len<5, size> 3이면 오류", "len 5 미만, size 3 초과이면 오류"),  # korean19: held as written
        ("ab<3, cd>-1이면", "ab 3 미만, cd 마이너스 1 초과이면"),  # korean19: ab<3, cd>마이너스 1이면
        (
            "num<10, val> -1이면",
            "num 10 미만, val 마이너스 1 초과이면",
        ),  # korean19: num<10, val> 마이너스 1이면
    ],
)
def test_two_bounds_joined_by_a_comma_with_an_equal_a_spaced_or_a_signed_bound_are_said(text, said):
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    "text",
    [
        "Array<5> x;",
        "std::array<int, 5> a;",
        "Map<K, V> m;",
        "Array<5>는 배열이다",
        "List<String> 타입",
        "Map<K, List<V>> m;",
    ],
)
def test_a_generic_types_brackets_are_held_as_written_still(text):
    assert spoken_form(text, "ko") == text


@pytest.mark.parametrize(
    ("text", "said"),
    [  # korean19: L-I-N-I제로.₈Co₀.₁…, N-I제로.₈, F-E제로.₅O, C-O제로.₂ (the first count half read)
        # korean21: each count said whole (read58k left them as written, and espeak said no subscript: Li Ni Co Mn O투)
        (
            "LiNi₀.₈Co₀.₁Mn₀.₁O₂ 양극재",
            "L-I-N-I 제로 포인트 에잇 C-O 제로 포인트 원 M-N 제로 포인트 원 O투 양극재",
        ),
        ("Ni₀.₈ 비율", "N-I 제로 포인트 에잇 비율"),
        ("Fe₀.₅O", "F-E 제로 포인트 파이브 O"),
        ("Co₀.₂", "C-O 제로 포인트 투"),
    ],
)
def test_a_formula_with_a_decimal_count_is_not_half_read(text, said):
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Fe₂O₃", "F-E투O쓰리"),
        ("2H₂SO₄", "2 H투S-O포"),
        ("C₆H₁₂O₆", "C식스H트웰브O식스"),
        ("LiCoO₂ 양극", "L-I-C-O-O투 양극"),
    ],
)
def test_a_formula_with_whole_counts_is_read_whole_still(text, said):
    assert spoken_form(text, "ko") == said
