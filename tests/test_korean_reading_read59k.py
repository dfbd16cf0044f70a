"""Stop 59's last reading of the Korean/English reading (read59k): what rvk21's version after a name's slash took from
a unit's rate and a letter's division, each case against what int read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # int: 5 밀리그램 one point five milliliters (0d1e79d: 밀리그램/1 point five, espeak's "slash")
        ("The dose is 5 mg/1.5 mL here.", "The dose is 5 밀리그램/one point five milliliters here."),
        ("The rate is x/1.5 here.", "The rate is x/one point five here."),  # int: x one point five
        ("The step is Hz/1.5 here.", "The step is Hz/one point five here."),  # int: Hz one point five
        # as int read them: a name's version, a protocol's, a product's
        ("It is HTTP/1.1 here.", "It is HTTP one point one here."),
        ("It uses TLS/1.3 and gzip here.", "It uses TLS one point three and gzip here."),
        ("It is Python/3.12 here.", "It is Python three point one two here."),
    ],
)
def test_a_slash_before_a_decimal_is_said_unless_a_name_s_version(text: str, said: str) -> None:
    """rvk21 read a decimal after any letters' slash as a name's version, the slash a space: a unit's rate and a
    letter's division lost their slash (x one point five, 5 밀리그램 one point five milliliters); only a name's, a
    capital and a letter or more, "HTTP/1.1", "Python/3.12", is a version."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # int: L-I et al., N-A et al. (0d1e79d: Li, Na, as written: a battery lecture's author, espeak's "lee")
        ("Li⁺ 이온의 확산 (Li et al., 2020)", "L-I 플러스 이온의 확산 (Li et al., 2020)"),
        ("Na⁺ 채널 연구 (Na et al., 2020)", "N-A 플러스 채널 연구 (Na et al., 2020)"),
        ("Li⁺ 이온 확산은 Li 등(2020)이 보고했다.", "L-I 플러스 이온 확산은 Li 등(2020)이 보고했다."),
        ("Li⁺ 이온. Li and Wang (2020)", "L-I 플러스 이온. Li and Wang (2020)"),
        ("Li⁺ 이온 (Li, 2020)", "L-I 플러스 이온 (Li, 2020)"),
        ("Li⁺ 이온. Li (2019a)", "L-I 플러스 이온. Li (2019a)"),
        # as int read them: the element beside a year's Korean word, a list's "등", a Korean word
        ("Li⁺ 이온과 Li 2020년 생산량", "L-I 플러스 이온과 L-I 2020년 생산량"),
        ("Li⁺ 이온. Li, Na 등 알칼리 금속", "L-I 플러스 이온. L-I, Na 등 알칼리 금속"),
        ("Li⁺ 이온과 Li 금속", "L-I 플러스 이온과 L-I 금속"),
    ],
)
def test_an_author_s_name_cited_beside_an_ion_is_as_written(text: str, said: str) -> None:
    """rvk22 spelled an ion's symbols bare in the same text, "Li 금속" L-I 금속, and so an author's name in a citation,
    "(Li et al., 2020)", "Li 등(2020)": L-I et al. (a battery lecture's citations of Li, a surname, beside Li⁺)."""
    assert spoken_form(text, "ko") == said
