"""Korean slide text a lecturer reads that the reading got wrong: a number before a word that only opens like a
counter, arrows and marks, "≠", English ordinals in compounds, a level's "Lv." (`korean_reading`,
`korean_numerals`, `korean_marks`).

Each reading is phonemized by the real espeak tokenizer (what ZipVoice and the espeak engine speak) and
compared with the words a Korean lecturer says; the comment says what was said before.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    return EspeakTokenizer()


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("레벨 3 달성", "레벨 삼 달성"),  # 세 달성: the native number of the counter 달 (months)
        ("버전 2 개발", "버전 이 개발"),  # 두 개발
        ("모듈 3 시스템", "모듈 삼 시스템"),  # 세 시스템
        ("그룹 2 잔여 용량", "그룹 이 잔여 용량"),  # 두 잔여
        ("표 3 살펴보기", "표 삼 살펴보기"),  # 세 살펴보기
    ],
)
def test_a_number_before_a_word_that_only_opens_like_a_counter_is_sino_korean(tokenizer, written, said):
    assert tokenizer.symbols(written, "ko") == tokenizer.symbols(said, "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("총 3 명이 참석", "총 세 명이 참석"),
        ("3 시간동안 충전", "세 시간동안 충전"),
        ("오후 3 시부터", "오후 세 시부터"),
        ("2 가지를 봅니다", "두 가지를 봅니다"),
        ("20 살이다", "스무 살이다"),
        ("3 달 후", "세 달 후"),
    ],
)
def test_a_spaced_counter_with_its_particles_still_takes_a_native_number(written, said):
    assert spoken(written) == said
