"""Review of korean14 (rvk14): what its rules read that no test of theirs covered, each against what korean14 read
(the comment beside each case)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken, spoken_form
from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean14: async이고 0, a chain of equalities across a query's "&"
        ("/synth_batch?async=1&async=0", "/synth_batch?async는 1&async는 0"),
        ("a=1&token=s3cret-value", "a는 1&token은 s3cret-value"),  # korean14: token이고
        # korean14: document.title이고 'owned', the chain's term taken through a quote
        (
            "<img src=x onerror=\"document.title='owned'\">",
            "<img src는 x onerror는 \"document.title은 'owned'\">",
        ),
        # a chain of terms still says its next link the same
        ("따라서 f(1) = 2 = g(1)이다.", "따라서 f(1)은 2이고 g(1)이다."),
        ("p = q = r = s", "p는 q이고 r이고 s"),
    ],
)
def test_a_query_strings_pairs_are_no_chain_of_equalities(written: str, said: str) -> None:
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "The price is $3.50 today.",
            "The price is three dollars and fifty cents today.",
        ),  # korean17: 3 점 오영 달러
        ("The total is $1.5M now.", "The total is 150만 달러 now."),  # korean14: 1 달러 point 5M
        ("The price is 5.99$ today.", "The price is 5 점 구구 달러 today."),  # korean14: 5 point 9 9 달러
        ("See §14.2 of the paper.", "See 14 점 이절 of the paper."),  # korean14: 14절 point 2
        ("See § 14.2 of the paper.", "See 14 점 이절 of the paper."),
        (
            "p < 0.05 is significant.",
            "p less than zero point zero five is significant.",
        ),  # korean17: p 0 점 영오 미만
        (
            "x > 0.5 is the threshold.",
            "x greater than zero point five is the threshold.",
        ),  # korean17: x 0 점 오 초과
        ("0.5 < x is given.", "0 점 오 초과 x is given."),  # korean14: 0 point 5 초과 x
        (
            "The ratio is 0.5/1.0 here.",
            "The ratio is 0 점 오/1 점 영 here.",
        ),  # korean14: 0 point 1분의 5 point 0
        ("The gain is ×1.5 here.", "The gain is 1 점 오배 here."),  # korean14: 1배 point 5
        (
            "The range is 0.1~0.9 here.",
            "The range is 0 점 일에서 0 점 구 here.",
        ),  # korean14: 0 point 1에서 0 point 9
        # a decimal of its own keeps korean14's English point
        ("The lr is (0.5) here.", "The lr is (zero point five) here."),
        ("Send HTTP/1.1 to the worker.", "Send HTTP one point one to the worker."),  # rvk22: HTTP 1 point 1
        (
            "It reads 256 KiB in aiohttp 3.14: over 512 KiB.",
            "It reads 256 KiB in aiohttp three point one four: over 512 KiB.",
        ),
        ("The ratio is 3.5:1 here.", "The ratio is 3 점 오 대 1 here."),  # korean14: 3 point 5 대 1
        (
            "It took 0.4 ms at the median: 0.3 ms here.",
            "It took zero point four milliseconds at the median: zero point three milliseconds here.",
        ),
        ("The price rose 3.5 times today.", "The price rose three point five times today."),
    ],
)
def test_an_amount_a_section_or_a_bound_in_an_english_sentence_keeps_its_number_whole(
    written: str, said: str
) -> None:
    """korean14 said an English sentence's decimal "3 point 5" before the Korean rules read a currency's or a section's
    sign or a bound's, which took the whole number only: the amount cut in two. They are left to those rules, as before
    korean14."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("∀x∃y", "for all x there exists y"),  # korean14: for all xthere exists y
        ("∀ε > 0 ∃δ > 0", "for all ε > 0 there exists δ > 0"),
        ("x ∉ ∅", "x not in the empty set"),  # korean14: x not in ∅ (espeak: x not in)
        ("A ∩ B = ∅", "A intersection B = the empty set"),
        ("A ⊃ B", "A superset of B"),  # korean14: A ⊃ B (espeak: A B)
        ("A⊇B", "A superset of B"),
        ("A ⊊ B", "A proper subset of B"),
        # korean14's readings, as they were
        ("∀x ∈ ℝ, x² ≥ 0", "for all x in R, x squared ≥ 0"),
        ("(A ∪ B)ᶜ is empty.", "(A union B) complement is empty."),
        ("(∀x)", "(for all x)"),
        (
            "a ∅10 mm pipe",
            "a ∅10 mm pipe",
        ),  # a diameter, as the Korean rules leave it (rvk14's first: the empty set)
        ("a ∅ 10 mm pipe", "a ∅ 10 mm pipe"),
    ],
)
def test_english_text_says_every_set_sign_a_word_apart(written: str, said: str) -> None:
    assert spoken_form(written, "en") == said


@pytest.mark.parametrize(
    ("written", "said"), [("∀x∃y", "for all x there exists y"), ("x ∉ ∅", "x not in the empty set")]
)
def test_espeak_says_the_set_signs_words(written: str, said: str) -> None:
    """What the English voice says, through the real espeak tokenizer: korean14's "xthere" was one word (ksðəɹ), and
    "∅" nothing."""
    tokenizer = EspeakTokenizer()
    assert tokenizer.symbols(spoken_form(written, "en"), "en") == tokenizer.symbols(said, "en")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "x ≠ 0이므로 양변을 x로 나눕니다.",
            "x가 0이 아니므로 양변을 x로 나눕니다.",
        ),  # korean14: x 낫 이퀄 0이므로
        ("x → 0이므로", "x가 0으로 가므로"),  # korean14: x에서 0이므로, "from x"
        ("x → ∞이라면", "x가 무한대로 간다면"),
        ("f(x) → 1이니까", "f(x)가 1로 가니까"),
        (
            "x ∈ A이므로 x ∈ B입니다.",
            "x가 A의 원소이므로 x는 B의 원소입니다.",
        ),  # korean14: x ∈ A이므로, unsaid
        ("x ∉ A이지만", "x가 A의 원소가 아니지만"),
        ("A ⊇ B이므로", "A가 B를 포함하므로"),
        ("A ⊂ B ⊂ C이므로", "A가 B의 부분집합이고 B가 C의 부분집합이므로"),  # korean14: … B ⊂ C이므로
        ("a ≠ b이면서", "a가 b가 아니면서"),
        ("x ∈ [0, 1]이므로", "x가 0 이상 1 이하이므로"),
        ("x → 0이면", "x가 0으로 가면"),  # the table's copulas, as before
    ],
)
def test_a_reasons_and_a_contrasts_copula_after_a_sign_is_said(written: str, said: str) -> None:
    """A lecture's prose joins its formulas with 이므로, 이지만, 이라면, 이면서, 이니까 as often as with 이면; korean14's
    table of copulas (`korean_copulas`) had none of them, so the sign before one was left (∈, ⊂ unsaid; ≠ 낫 이퀄) or
    read as a flow (→ 에서)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("||v|| = 1", "||v||는 1"),  # korean14: ||v|| 는 1, the particle a word apart
        ("단위 벡터는 ||u|| = 1입니다.", "단위 벡터는 ||u||가 1입니다."),  # korean14: ||u|| 가
        ("||A|| = 5", "||A||는 5"),
        ("a || b = c", "a || b는 c"),  # a logical "or": as before
        ("x ||= y", "x ||= y"),  # an operator: as before
    ],
)
def test_a_norms_bars_keep_the_particle_of_equals_on_its_letter(written: str, said: str) -> None:
    """korean14 joined the particle to a capital's bars, "|A|는 3"; a norm's double bars kept the space before it."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "E = mc² = 9 × 10¹⁶ J",
            "E는 mc의 2제곱이고 9 곱하기 10의 16제곱 J",
        ),  # korean14: mc의 2제곱은, a second topic
        ("y = 2x + 1 = 5", "y는 2x 더하기 1이고 5"),  # korean14: 2x 더하기 1은
        ("x = (a + b) = c", "x는 (a 더하기 b)이고 c"),
        ("1 + 1 = 2", "1 더하기 1은 2"),  # one "=": as before
    ],
)
def test_a_chains_middle_term_with_a_power_or_an_operator_is_said_the_same(written: str, said: str) -> None:
    """korean14's chain took a middle term of one word: one its power or "+" had made words by then was a second topic."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # korean14: y 0 초과, the condition's second line in the formula voice beside the first's code voice
        ("if (x > 0 &&\ny > 0)", "if (x가 0보다 크다 &&\ny가 0보다 크다)"),
        ("if (0 <= x\n    && x < n) {", "if (0 이상 x\n    && x가 n보다 작다) {"),  # korean14: && x n 미만
        ("if (0 <= x\n        and x < n):", "if (0 이상 x\n        and x가 n보다 작다):"),
        # korean14's own case: the line before is a statement of its own, closed
        ("if ok:\n0 <= x && x < n", "if ok:\n0 이상 x 그리고 x n 미만"),
        ("if (ok) {\n0 <= x && x < n", "if (ok) {\n0 이상 x 그리고 x n 미만"),
        # korean15: korean14 read y 0 초과, the indent between the join and the comparison
        ("if (x > 0 &&\n    y > 0)", "if (x가 0보다 크다 &&\n    y가 0보다 크다)"),
        (
            "if (x > 0 &&\n        y > 0 &&\n        z < 1) {",
            "if (x가 0보다 크다 &&\n        y가 0보다 크다 &&\n        z가 1보다 작다) {",
        ),
        ("while (i < n ||\n\tj < m)", "while (i가 n보다 작다 ||\n\tj가 m보다 작다)"),
        ("if (x > 0 and\n    y > 0):", "if (x가 0보다 크다 and\n    y가 0보다 크다):"),  # korean14: y 0 초과
        # no keyword's "(" open: a formula's lines, as before
        ("x > y;\n    y > z", "x y 초과;\n    y z 초과"),
    ],
)
def test_a_conditions_next_line_keeps_the_code_voice_while_its_bracket_is_open(
    written: str, said: str
) -> None:
    """korean14 counted a code keyword on the comparison's own line only, so that a formula's line under "if ok:" is a
    formula; a condition wrapped over two lines, its "(" still open, lost the code voice on its second."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≠ 0.5", "x는 0 점 오가 아님"),  # korean14: x는 0이 아님 점 오, the decimal cut
        ("a ≠ 3.14", "a는 3 점 일사가 아님"),  # korean14: a는 3이 아님 점 일사
        ("x ≠ 2.5, y ≠ 0", "x는 2 점 오가 아님, y는 0이 아님"),
        ("x ≠ 0.5이면", "x가 0 점 오가 아니면"),  # a copula after it: as before
        ("1.5 → 2.5", "1 점 오에서 2 점 오"),  # an arrow's decimal: as before
    ],
)
def test_not_equal_to_a_decimal_says_the_whole_number(written: str, said: str) -> None:
    """A bare "≠"'s term took a decimal's digits as written, "0.5", which the Korean rules had said by then, 0 점 오:
    only its whole part was the term."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ∈ A라고 하자.", "x가 A의 원소라고 하자."),  # korean14: x ∈ A라고 하자., the sign unsaid
        ("A ⊂ B라고 하자.", "A가 B의 부분집합이라고 하자."),  # the copula in the form 부분집합 takes
        ("A ⊂ B라면", "A가 B의 부분집합이라면"),
        ("x ∉ A라고 하자.", "x가 A의 원소가 아니라고 하자."),
        ("A ⊇ B라면", "A가 B를 포함한다면"),
        ("x ∈ [0, 1]이라고 하자.", "x가 0 이상 1 이하라고 하자."),
        ("x ≠ 0이라고 하자.", "x가 0이 아니라고 하자."),  # korean14: x 낫 이퀄 0이라고
        ("x ∈ B면", "x가 B의 원소이면"),  # "면": as before
    ],
)
def test_a_suppositions_copula_after_a_sign_is_said(written: str, said: str) -> None:
    """ "x ∈ A라고 하자" (let x be in A) opens half of a lecture's proofs; korean14's table had no 라고, 라면."""
    assert spoken(written) == said
