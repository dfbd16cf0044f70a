"""rvk22: a review of rvk21's readings, each case against what rvk21 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The limit as x → +∞ is 0.", "The limit as x approaches plus infinity is 0."),  # rvk21: x to +무한대
        ("The limit as x→+∞ is 0.", "The limit as x approaches plus infinity is 0."),
        ("The limit as N → ∞ is 0.", "The limit as N approaches infinity is 0."),  # rvk21: N to 무한대
        (
            "The limit as N → -∞ is 0.",
            "The limit as N approaches minus infinity is 0.",
        ),  # rvk21: N to -무한대
        # as rvk21 read them: a small letter's limit, a capital's map
        ("The limit as x → -∞ is 0.", "The limit as x approaches minus infinity is 0."),
        ("The limit as x→∞ is 0.", "The limit as x approaches infinity is 0."),
        ("Here A → B is a map.", "Here A to B is a map."),
    ],
)
def test_a_limit_to_a_signed_infinity_or_a_capital_s_limit_is_english(written: str, said: str) -> None:
    """A limit at plus infinity, or of a capital letter, in an English sentence: rvk21 said "→ -∞" in English words
    but left "+∞" and a capital's "N → ∞" to a map's "to" and the Korean rules' 무한대 (Korean in English)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("The range is 3 ~ 5% here.", "The range is three to five percent here."),  # rvk21: 3   five percent
        (
            "The range is 10 ~ 20 ms here.",
            "The range is ten to twenty milliseconds here.",
        ),  # rvk21: 10   twenty
        ("The range is 5~3% here.", "The range is five to three percent here."),  # rvk21: 5 three percent
        # as rvk21 read them: an unspaced tilde's, a hyphen's, a descending hyphen's (a subtraction's "5-3")
        ("The range is 3~5% here.", "The range is three to five percent here."),
        ("It is 5-10 V here.", "It is five to ten volts here."),
        ("It is 5-3 dB here.", "It is 5-3 decibels here."),
    ],
)
def test_a_spaced_or_descending_tilde_s_range_keeps_its_to(written: str, said: str) -> None:
    """A tilde's range before a unit in an English sentence, spaced or running down: the tilde was lost and its first
    number left to the Korean voice beside the English second (3 five percent); a tilde is no minus, so "to"."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "Uses HTTP/1.1 only.",
            "Uses HTTP one point one only.",
        ),  # rvk21: HTTP 1 point 1 (0d1e79d: 1 점 일, Korean)
        ("It is HTTP/1.1 here.", "It is HTTP one point one here."),  # rvk21 and 0d1e79d: HTTP 1 point 1
        ("It uses TLS/1.3 and gzip here.", "It uses TLS one point three and gzip here."),
        # as rvk21 read them: a whole version's, a fraction's and a Korean sentence's
        ("It uses HTTP/2 here.", "It uses HTTP 2 here."),
        ("The dose is 2.5/day here.", "The dose is 2 점 오/day here."),
        ("HTTP/1.1 버전을 쓴다.", "HTTP 1 점 1 버전을 쓴다."),
    ],
)
def test_a_version_after_a_name_s_slash_is_said_in_one_voice(written: str, said: str) -> None:
    """ "HTTP/1.1" in an English sentence (more of them since korean21's capitalised opening, "Uses HTTP/1.1 only."):
    its "point" was English and its digits left to the Korean voice (일 point 일)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "It is 3.5, not 4 here.",
            "It is three point five, not four here.",
        ),  # rvk21: 3 point 5, not 4; korean60: four (the Korean voice said 사)
        (
            "The values are 1.5, 2.5 and 3.5 here.",
            "The values are one point five, two point five and three point five here.",
        ),
        (
            "It gets HTTP/1.1, with a close here.",
            "It gets HTTP one point one, with a close here.",
        ),  # rvk21: HTTP 1 point 1,
        # as rvk21 read them: a decimal before a sentence's end, a factor's before a comma, a list's glued comma
        ("It is 3.5 here.", "It is three point five here."),
        ("It is 1.5x, here.", "It is one point five x, here."),
        ("It is 1.5,5 here.", "It is 1 point 5,5 here."),
    ],
)
def test_a_decimal_before_a_clause_s_comma_is_said_in_one_voice(written: str, said: str) -> None:
    """A decimal before a comma in an English sentence kept its English "point" between digits left to the Korean voice
    (삼 point 오): the comma was taken for a list's glued one."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "Fe³⁺ 이온과 Fe 원자",
            "F-E 쓰리 플러스 이온과 F-E 원자",
        ),  # rvk21: … 이온과 Fe 원자 (espeak's "fee")
        ("Cu²⁺ + 2e⁻ → Cu", "C-U 투 플러스 플러스 2 e 마이너스에서 C-U"),  # rvk21: …에서 Cu
        ("Na⁺와 Na의 차이", "N-A 플러스와 N-A의 차이"),  # rvk21: Na의
        ("Fe₂O₃와 Fe³⁺, 그리고 Fe", "F-E투O쓰리와 F-E 쓰리 플러스, 그리고 F-E"),
        ("He⁺ 이온과 He 원자", "H-E 플러스 이온과 H-E 원자"),  # rvk21: He 원자
        # as rvk21 read them: a symbol that is an English word, a longer word, a symbol with no ion in the text
        ("In³⁺ 이온과 In 2024", "I-N 쓰리 플러스 이온과 In 2024"),
        ("Ca²⁺ 이온과 Cat 사진", "C-A 투 플러스 이온과 Cat 사진"),
        ("Fe 원자와 Cu 원자", "Fe 원자와 Cu 원자"),
        ("Na⁺ 이온은 config.Na 값과 다르다.", "N-A 플러스 이온은 config.Na 값과 다르다."),  # a name's part
        ("Na⁺ 이온은 Na.cfg 파일에 있다.", "N-A 플러스 이온은 Na.cfg 파일에 있다."),
        ("Na⁺ 이온은 /Na/ 경로에 있다.", "N-A 플러스 이온은 /Na/ 경로에 있다."),
        ("Na⁺ 이온. Na.", "N-A 플러스 이온. N-A."),
    ],
)
def test_an_ion_s_symbols_bare_in_the_same_text_are_spelled_alike(written: str, said: str) -> None:
    """korean21 spelled an ion's symbols, F-E 쓰리 플러스, and left the same symbols bare beside it, "Fe 원자", to espeak,
    which says them as a word ("fee"): one element said two ways in one sentence (0d1e79d said Fe both times)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("T₀.₅ 값", "T 제로 포인트 파이브 값"),  # rvk21: T제로.₅ (the count's ".₅" unsaid)
        ("T₀.₅는 반감기이다.", "T 제로 포인트 파이브는 반감기이다."),
        ("Q₀.₂₅ 분위수", "Q 제로 포인트 투 파이브 분위수"),  # rvk21: Q제로.₂₅
        # as rvk21 read them: an element's, a formula's, a whole subscript
        ("V₀.₅ 값", "V 제로 포인트 파이브 값"),
        ("CO₀.₅ 조성", "C-O 제로 포인트 파이브 조성"),
        ("T₀ 값", "T제로 값"),
    ],
)
def test_a_capital_s_decimal_subscript_is_said_whole(written: str, said: str) -> None:
    """A capital of no element with a decimal subscript, a half-life's "T₀.₅", a quantile's "Q₀.₂₅": its whole part was
    said and the rest left to espeak, which says nothing for a subscript (T제로, the half lost), where "V₀.₅" was said
    whole."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("As x grows, f(x) → 0 here.", "As x grows, f(x) approaches zero here."),  # rvk21: f(x) to 0 (영)
        ("Here f(x) → ∞ as x grows.", "Here f(x) approaches infinity as x grows."),  # rvk21: to 무한대
        ("Here f(x) → -1 as x grows.", "Here f(x) approaches minus one as x grows."),
        # as rvk21 read them: a map of a function, a letter's limit
        ("We map f(x) → 2x here.", "We map f(x) to 2x here."),
        ("The limit as x → 0 of f(x) is 1.", "The limit as x approaches zero of f(x) is 1."),
    ],
)
def test_a_function_s_limit_in_an_english_sentence_is_english(written: str, said: str) -> None:
    """ "f(x) → 0" in an English sentence of a Korean text: korean21 said a letter's limit "approaches" and left a
    function's to a map's "to", its number to the Korean voice (f(x) to 영; 0d1e79d: f(x)가 0으로)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 5 in 이 구간", "x 5 미만 in 이 구간"),  # rvk21: x 5 in 미만 이 구간 (inches)
        ("x < 5 in 이 구간에서 성립한다.", "x 5 미만 in 이 구간에서 성립한다."),
        # as rvk21 read them: a Korean word after "in", a copula glued or spaced (inches)
        ("x < 5 in 범위", "x 5 미만 in 범위"),
        ("x ≥ 3 in이면", "x 3 in 이상이면"),
        ("x ≥ 3 in 이면", "x 3 in 이상 이면"),
    ],
)
def test_in_before_the_word_this_is_the_preposition(written: str, said: str) -> None:
    """ "in 이 구간" ("in this interval"): korean21 took "in" before a Korean word for the preposition but not before
    "이", a particle's letter, so the bound's word went after it as after inches (x 5 in 미만)."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1) Add 1/2 cup.", "첫 번째, Add one half cup."),  # rvk21: Add 2분의 1 cup.
        ("(1) Heat 2.5 liters.", "첫 번째, Heat two point five liters."),  # rvk21: Heat 2 점 오 liters.
        (
            "재료:\n1) Heat 2.5 liters.\n2) Add 1/2 cup.",
            "재료:\n첫 번째, Heat two point five liters.\n두 번째, Add one half cup.",
        ),
        # as rvk21 read them: a step with a period, a name, a report's period, a Korean step
        ("1. Heat 2.5 liters.", "첫 번째, Heat two point five liters."),
        ("1) Tesla Model 3.", "첫 번째, Tesla Model 3."),
        ("2) Revenue grew 5% YoY.", "두 번째, Revenue grew 5 퍼센트 전년 대비."),
        ("1) 설탕 1/2컵.", "첫 번째, 설탕 2분의 1컵."),
    ],
)
def test_a_numbered_step_s_short_english_sentence_is_english(written: str, said: str) -> None:
    """rvk21 took a bullet's short capitalised sentence, "- Add 1/2 cup.", for English, and "1. Add 1/2 cup." was; a step
    numbered "1)" or "(1)" was not: Korean words in an English step (Add 2분의 1 cup.)."""
    assert spoken_form(written, "ko") == said
