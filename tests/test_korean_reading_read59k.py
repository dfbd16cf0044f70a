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


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # int: a approaches b approaches c (0d1e79d: a, b, c, the Korean rules' flow)
        ("It goes a → b → c here.", "It goes a to b to c here."),
        ("The flow x → y → z is here.", "The flow x to y to z is here."),
        ("The flow x → 1 → 2 is here.", "The flow x to one to two is here."),
        # as int read them: a capital's flow, a limit, two limits in one sentence
        ("It goes A → B → C here.", "It goes A to B to C here."),
        ("The limit as x → 0 is 1.", "The limit as x approaches zero is 1."),
        ("As x → 0 and y → 1, it holds here.", "As x approaches zero and y approaches one, it holds here."),
    ],
)
def test_a_flow_of_arrows_in_an_english_sentence_is_no_limit(text: str, said: str) -> None:
    """korean21 said a small letter's arrow to a letter or a number "approaches", a limit's, and so each step of a flow,
    "a → b → c": a approaches b approaches c."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("Let 0 ‹ x here.", "en", "Let 0 < x here."),  # int: Let 0 ‹ x (espeak: nothing for "‹")
        ("Let 0 ‹ ε here.", "en", "Let 0 < ε here."),
        ("If 5 › x then it holds here.", "en", "If 5 > x then it holds here."),
        ("Let 0 ‹ 2π here.", "en", "Let 0 < 2π here."),
        # as int read them: a breadcrumb's label and number, a step's word
        ("Page 1 › 2 › 3", "en", "Page 1 › 2 › 3"),
        ("Step 1 › 2", "en", "Step 1 › 2"),
        ("Step 1 › Done", "en", "Step 1 › Done"),
        ("경로: Page 1 › 2 › 3", "ko", "경로: Page 1 › 2 › 3"),
    ],
)
def test_a_bound_after_a_capitalised_word_s_number_is_no_breadcrumb(text: str, lang: str, said: str) -> None:
    """korean21 took any capitalised word and a number before an angle quote for a breadcrumb's label, "Page 1 › 2", and
    so a sentence's bound, "Let 0 ‹ x": the quote left, which espeak says nothing for (0d1e79d: less than)."""
    assert spoken_form(text, lang) == said
