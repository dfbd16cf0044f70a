"""What the k5 round found misread in a lecture's formulas, bounds, units and amounts of money, each beside
text that looks like it and reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > 3인치", "x 3인치 초과"),  # it was x 3인 초과치: 인 read as a counter
        ("x<3인치이면", "x 3인치 미만이면"),
        ("t > 3개월", "t 3개월 초과"),  # it was t 세 개 초과월
        ("d ≥ 2일차", "d 2일차 이상"),  # it was d 2일 이상차
        ("d > 10피트", "d 10피트 초과"),  # it was d 10 초과피트
        ("x > 3인분", "x 3인분 초과"),
        ("x>0이면", "x 0 초과이면"),  # it was x0 초과이면: the variable and the number one word
        ("온도>45℃", "온도 45 도 초과"),
    ],
)
def test_a_bound_says_its_whole_unit_apart_from_its_variable(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > 0일 때", "x 0 초과일 때"),
        ("x>0일 때", "x 0 초과일 때"),
        ("t > 3일 동안", "t 3일 초과 동안"),
        ("직원 ≥ 5인 사업장", "직원 5인 이상 사업장"),
        ("SOC < 20%", "S-O-C 20 퍼센트 미만"),
        ("p < 0.05이면", "p 0 점 영오 미만이면"),
    ],
)
def test_a_bounds_lookalikes_read_as_before(written, said):
    assert spoken(written) == said
