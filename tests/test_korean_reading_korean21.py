"""korean21: the leftovers of korean20, each case against what korean20 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean20: as x가 0으로 minus is 1 (the Korean rules' particles in an English sentence)
        (
            "극한은 다음과 같다. The limit as x→0⁻ is 1.",
            "극한은 다음과 같다. The limit as x approaches zero minus is 1.",
        ),
        (
            "The limit as n → ∞ is zero.",
            "The limit as n approaches infinity is zero.",
        ),  # korean20: n이 무한대로
        ("The limit as x → a is L.", "The limit as x approaches a is L."),  # korean20: x가 a로
        ("Here A → B is a map.", "Here A to B is a map."),  # korean20: A에서 B
        ("We map x → 2x here.", "We map x to 2x here."),  # korean20: x에서 2x
        ("Here p ⇒ q is true.", "Here p implies q is true."),  # korean20: p면 q
        # a Korean sentence's arrows as before
        ("x→0일 때 극한값은 1입니다.", "x가 0으로 갈 때 극한값은 1입니다."),
        ("수집 → 전처리 → 학습", "수집, 전처리, 학습"),
    ],
)
def test_an_english_sentence_s_arrow_is_said_in_english(written: str, said: str) -> None:
    """An arrow in an English sentence of a Korean text in English words: one voice a sentence."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("설탕을 넣는다. Add 1/2 cup.", "설탕을 넣는다. Add one half cup."),  # korean20: Add 2분의 1 cup.
        ("Heat 2.5 liters.", "Heat two point five liters."),  # korean20: Heat 2 점 오 리터.
        ("Wait 10 ms here.", "Wait ten milliseconds here."),  # one small word, as before
        # a name, a formula and a Korean report's period stay the Korean rules'
        ("Tesla Model 3.", "Tesla Model 3."),
        ("Let x = 3.", "Let x는 3."),
        ("Revenue grew 5% YoY.", "Revenue grew 5 퍼센트 전년 대비."),
    ],
)
def test_a_short_english_sentence_is_taken_for_english(written: str, said: str) -> None:
    """A step of a recipe or a manual, "Add 1/2 cup.", has none of English's small words but is English: one voice."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "값은 다음과 같다. x ‹ π here.",
            "값은 다음과 같다. x less than pi here.",
        ),  # korean20: x 파이 미만 here.
        ("x = 3 here.", "x = three here."),  # korean20: x는 3 here.
        ("It holds when x < π/2.", "It holds when x less than pi over two."),  # korean20: x < 파이/2
        (
            "It holds when x ≤ 2π/3.",
            "It holds when x less than or equal to two pi over three.",
        ),  # korean20: 2파이/3
        ("The angle is π/2 here.", "The angle is pi over two here."),  # korean20: 2분의 파이
        # a Korean sentence's as before
        ("θ < π/2이면", "세타 2분의 파이 미만이면"),
        ("x < 5이면", "x 5 미만이면"),
    ],
)
def test_a_bound_on_pi_in_an_english_sentence_is_english(written: str, said: str) -> None:
    """ "x ‹ π here.", "x < π/2" in English words: x less than pi over two, not Korean words before "here"."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "비율은 이렇다. The ratio is 3:2 here.",
            "비율은 이렇다. The ratio is three to two here.",
        ),  # korean20: 3 대 2
        ("Mix them 3:2 in the bowl.", "Mix them three to two in the bowl."),  # korean20: 3 대 2
        ("Use a 16:9 screen.", "Use a sixteen to nine screen."),  # korean20: 16 대 9
        # a clock, a ratio after its word, a range and a Korean sentence's ratio as before
        ("We met at 3:30.", "We met at three thirty."),
        ("The ratio of A to B is 1:10.", "The ratio of A to B is one to ten."),
        ("It ran 3:30-4:00 here.", "It ran 세 시 30분에서 네 시 here."),
        ("비율은 3:2입니다", "비율은 3 대 2입니다"),
    ],
)
def test_a_ratio_in_an_english_sentence_is_english(written: str, said: str) -> None:
    """ "3:2" in an English sentence of a Korean text: three to two, not the Korean rules' 3 대 2."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("경로: Page 1 › 2 › 3", "ko", "경로: Page 1 › 2 › 3"),  # korean20: Page 1 > 2 > 3 (greater than)
        ("Page 1 › 2 › 3", "en", "Page 1 › 2 › 3"),  # korean20: Page 1 > 2 > 3
        ("Step 1 › 2", "en", "Step 1 › 2"),  # korean20: Step 1 > 2
        # a bound and a chain typed with the angle quote as before
        ("0 ‹ x ‹ 1", "ko", "x는 0 초과 1 미만"),
        ("r › 0", "ko", "r 0 초과"),
        ("x ‹ 2π", "en", "x < 2π"),
    ],
)
def test_a_page_breadcrumb_is_no_comparison(written: str, lang: str, said: str) -> None:
    """ "Page 1 › 2 › 3" is a path through pages, not 1 greater than 2 greater than 3."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("anatomy 강의의 C⁺ 폐포", "anatomy 강의의 C⁺ 폐포"),  # korean20: C 플러스 ("atom" inside "anatomy")
        ("electronics 회로와 V⁺", "electronics 회로와 V⁺"),  # korean20: V 플러스 ("electron" inside it)
        # chemistry's words, a particle glued after one or not, as before
        ("electron과 C⁺", "electron과 C 플러스"),
        ("배터리 charge와 C⁺", "배터리 charge와 C 플러스"),
        ("The oxidation of C⁺ is fast.", "The oxidation of C plus is fast."),
    ],
)
def test_chemistry_s_english_words_are_whole_words(written: str, said: str) -> None:
    """ "anatomy" and "electronics" are no chemistry: a closure's "C⁺" stays espeak's, as in any text without it."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean20: Fe 쓰리 플러스 (Fe as written, espeak's word) beside F-E투O쓰리 (spelled)
        ("Fe₂O₃와 Fe³⁺", "F-E투O쓰리와 F-E 쓰리 플러스"),
        ("Ca²⁺ 이온과 CaCO₃", "C-A 투 플러스 이온과 C-A-C-O쓰리"),  # korean20: Ca 투 플러스
        ("OH⁻ 이온", "O-H 마이너스 이온"),  # korean20: OH (espeak's English "oh")
        # a single capital, an electron, a counted formula and a blood group as before
        ("H⁺ 이온", "H 플러스 이온"),
        ("2e⁻", "2 e 마이너스"),
        ("SO₄²⁻ 이온", "S-O포 투 마이너스 이온"),
        ("수혈할 때 AB⁺형", "수혈할 때 AB 플러스형"),
    ],
)
def test_an_ion_s_symbols_are_spelled_as_a_formula_s(written: str, said: str) -> None:
    """ "Fe³⁺" F-E 쓰리 플러스, as "Fe₂O₃" is F-E투O쓰리: one element said one way in one lecture."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("Σ⁻ 입자", "ko", "시그마 마이너스 입자"),  # korean20: 시그마⁻ (espeak's English hyphen)
        ("Σ⁺와 Σ⁻", "ko", "시그마 플러스와 시그마 마이너스"),  # korean20: 시그마⁺와 시그마⁻
        ("π⁻ 중간자는", "ko", "파이 마이너스 중간자는"),  # korean20: 파이⁻
        ("Σ⁻", "en", "Σ minus"),  # korean20: Σ⁻ (Sigma hyphen)
        # a power on a Greek letter as before
        ("Σ⁻¹ 행렬", "ko", "시그마⁻¹ 행렬"),
        ("σ² 분산", "ko", "시그마의 2제곱 분산"),
    ],
)
def test_a_greek_letter_s_sign_is_said(written: str, lang: str, said: str) -> None:
    """A particle's "Σ⁻" is Sigma minus, not the letter and espeak's "hyphen"."""
    assert spoken_form(written, lang) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 5 in 범위", "x 5 미만 in 범위"),  # korean20: x 5 in 미만 범위 (taken for inches)
        # inches before a copula, and an English word after the amount, as before
        ("x ≥ 3 in 이면", "x 3 in 이상 이면"),
        ("x < 5 in range", "x 5 미만 in range"),
    ],
)
def test_in_before_a_korean_word_is_no_unit(written: str, said: str) -> None:
    """ "in" between a bound's amount and a Korean word is the preposition, not inches: the bound's word after 5."""
    assert spoken_form(written, "ko") == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("CO₀.₅ 조성", "C-O 제로 포인트 파이브 조성"),  # korean20: C-O제로.₅ (the count half read)
        ("Fe₀.₅O는", "F-E 제로 포인트 파이브 O는"),  # korean20: Fe₀.₅O (espeak said no subscript)
        # whole counts, a name's decimal and a variable's subscript as before
        ("Fe₂O₃", "F-E투O쓰리"),
        ("PM2.5 농도", "PM2 점 오 농도"),
        (
            "x₀.₅",
            "x 제로 포인트 파이브",
        ),  # korean60: a small letter's decimal index said too (it was x₀.₅, espeak: x)
    ],
)
def test_a_formula_s_decimal_count_is_said_whole(written: str, said: str) -> None:
    """ "CO₀.₅" C-O 제로 포인트 파이브: its count said as a formula's counts are, in English words, none of it lost."""
    assert spoken_form(written, "ko") == said
