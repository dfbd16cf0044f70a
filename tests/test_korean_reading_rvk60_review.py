"""Stop 60's review of korean60 (rvk60): each case against what korean60 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("미가 10:3으로 끝난다.", "미가 10장 3절로 끝난다."),  # korean60: 3절으로 (삼's particle after 절)
        ("시편 23:5를 보라.", "시편 23장 5절을 보라."),  # korean60: 5절를
        ("시편 23:1-6는 유명하다.", "시편 23장 1절에서 6절은 유명하다."),  # korean60: 6절는
        ("요한복음 3:16와 같다.", "요한복음 3장 16절과 같다."),  # korean60: 16절와
        # as korean60 read them: a particle that fits 절 already, 절 written, a copula, a word that only opens like one
        ("요한복음 3:16은 유명하다.", "요한복음 3장 16절은 유명하다."),
        ("요한복음 3:16절로 간다.", "요한복음 3장 16절로 간다."),
        ("요한복음 3:16이다.", "요한복음 3장 16절이다."),
        ("요한복음 3:16가지", "요한복음 3장 16절가지"),
    ],
)
def test_a_verse_s_particle_is_the_one_jeol_takes(text: str, said: str) -> None:
    """korean60 said a Bible verse's number as 절 and kept the particle the writer chose for the number's sound:
    요한복음 3장 16절와, 10장 3절으로."""
    assert spoken_form(text, "ko") == said
