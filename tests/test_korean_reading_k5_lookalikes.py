"""Text that looks like what the k5 round's readings (`test_korean_reading_k5_leftovers`) read, found by a short pass
around each, misread: formulas' bounds, functions, units, money and report terms, each beside text that looks like it
and reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$100-200달러", "100에서 200달러"),  # it was 100 달러에서 200달러: the word twice
        ("$1.5M+", "150만 달러 이상"),  # it was 150만 달러+
        ("α∂²u/∂x²", "알파 x에 대한 u의 이계 편미분"),  # it was 알파x에 대한: one word
        ("x^{1/2}", "x의 2분의 1제곱"),  # it was x^{2분의 1}
        ("e^{iπ}", "e의 i파이제곱"),  # it was e^{i파이}
        ("FY2023~FY2024", "2023에서 2024 회계연도"),  # the tilde was lost: 2023 회계연도 2024 회계연도
        ("FY2023-FY2024", "2023에서 2024 회계연도"),
    ],
)
def test_the_lookalikes_of_this_rounds_readings_read_as_theirs(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$1.5M", "150만 달러"),
        ("$100-200명", "100 달러에서 200명"),  # people, no amount: as before
        ("x^{n/k}", "x^{n/k}"),
    ],
)
def test_the_lookalikes_of_this_rounds_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("n>=3이면", "n 3 이상이면"),  # espeak said the English "greater or equal"
        ("x <= 5", "x 5 이하"),
        ("x<=-1", "x 마이너스 1 이하"),
        ("SOC>=20%", "S-O-C 20 퍼센트 이상"),
        ("x != 0일 때", "x가 0이 아닐 때"),  # espeak said the English "not equals"
    ],
)
def test_a_relation_typed_in_ascii_reads_as_its_sign(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("a <=> b", "a <=> b"),
        ("x <== y", "x <== y"),
        ("a => b", "a면 b"),
        ("a !== b", "a !== b"),
    ],
)
def test_an_ascii_relations_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


def test_an_ascii_relation_says_no_english(tokenizer):
    assert tokenizer.symbols("n>=3이면", "ko") == tokenizer.symbols("n 3 이상이면", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x^2-1", "x의 2제곱 마이너스 1"),  # it was x의 2제곱-1: espeak dropped the minus
        ("x²-y²", "x의 2제곱 마이너스 y의 2제곱"),
        ("2^{n}-1", "2의 n제곱 마이너스 1"),
        ("x^2-2x+1", "x의 2제곱 마이너스 2x 플러스 1"),
        ("$100+를", "100 달러 이상을"),  # it was 100 달러+를
    ],
)
def test_an_unspaced_minus_after_a_power_and_an_amount_or_more_before_a_particle(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x^2 - 1", "x의 2제곱 빼기 1"),
        ("T-1", "T-1"),
        ("D-1", "D-1"),
        ("$100+예산", "100 달러+예산"),
    ],
)
def test_an_unspaced_minus_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≥ y이면", "x y 이상이면"),  # it was x ≥ y이면: espeak said nothing for the sign
        ("a > b일 때", "a b 초과일 때"),
        ("x<y", "x y 미만"),
        ("σ² = 1", "시그마의 2제곱은 1"),  # it was 시그마²는 1: the square unsaid
        ("λ^2", "람다의 2제곱"),
        ("d²y/dx²", "d 제곱 y d-x 제곱"),  # it was d의 2제곱y/dx의 2제곱: "slash"
        ("d^2y/dx^2", "d 제곱 y d-x 제곱"),
    ],
)
def test_a_bound_between_variables_a_greek_letters_power_and_a_second_derivative_are_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("<b>굵게</b>", "<b>굵게</b>"),  # a tag
        ("A > B > C", "A > B > C"),  # a ranking
        ("a<b>c", "a<b>c"),  # no chain: its signs point both ways
        ("dy/dx", "d-y d-x"),
    ],
)
def test_a_bound_between_variables_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("6.02×10²³ mol⁻¹", "6 점 영이 곱하기 10의 23제곱 퍼 몰"),  # it was 몰⁻¹: the power unsaid
        ("5 s⁻¹", "5 퍼 초"),  # it was 5 s의 마이너스 1제곱
        ("10 m⁻²", "10 퍼 제곱미터"),
        ("3 ms⁻¹", "3 미터 퍼 초"),  # physics' meters per second, no millisecond
        ("9.8 ms⁻²", "9 점 팔 미터 퍼 초 제곱"),
    ],
)
def test_a_unit_to_a_negative_power_is_per_the_unit(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x² s⁻¹", "x의 2제곱 s의 마이너스 1제곱"),  # after a letter's power: no number's unit
        ("3 mol", "3 몰"),
    ],
)
def test_a_negative_powers_unit_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("sin 30°", "사인 30 도"),  # espeak said the English "sin" before a number
        ("cos60° = 0.5", "코사인 60 도는 0 점 오"),  # and "cos"
        ("tan 45° = 1", "탄젠트 45 도는 1"),
        ("sin(π/6)", "사인(6분의 파이)"),  # k7: π's fraction read (it was 파이/6)
        ("log₁₀100 = 2", "로그 10의 100은 2"),  # and "log"
        ("(x+1)²", "(x 플러스 1)의 2제곱"),  # it was (x 플러스 1)²: the power unsaid
        ("(a-b)³을", "(a 빼기 b)의 3제곱을"),
        ("가격은 $100-200입니다", "가격은 100에서 200 달러입니다"),  # it was 100 달러-200입니다
        ("$100-200의 비용", "100에서 200 달러의 비용"),
        ("약 $100+의 비용", "약 100 달러 이상의 비용"),  # it was 100 달러+의
    ],
)
def test_a_function_before_a_number_a_brackets_power_and_money_before_a_copula(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("log5.txt", "log5.txt"),  # a file's name
        ("log 파일", "log 파일"),
        ("(2020)²", "(2020)²"),  # a footnote's mark
        ("(GPT-4)²", "(GPT-4)²"),
        ("(x)²", "(x)²"),
        ("$100-200명", "100 달러에서 200명"),
    ],
)
def test_a_function_before_a_numbers_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$1M-$2M", "100만에서 200만 달러"),  # it was 100만 달러-200만 달러
        ("$5K-10K", "5000에서 1만 달러"),  # it was 5000 달러-10K
        ("$1-2B", "10억에서 20억 달러"),
        ("$1M~2M", "100만에서 200만 달러"),
        ("100$", "100 달러"),  # espeak said nothing for the sign
        ("100$를", "100 달러를"),
    ],
)
def test_a_range_of_scaled_amounts_and_a_dollar_sign_after_its_amount(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$5M-$2M", "500만 달러-200만 달러"),  # runs down: each alone
        ("$1.5B", "15억 달러"),
        ("a$b", "a$b"),
    ],
)
def test_a_scaled_ranges_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("n ≥ 100만 명", "n 100만 명 이상"),  # it was n 100 이상만 명
        ("x > 1억 원", "x 1억 원 초과"),  # it was x 1 초과억 원
        ("x ≤ 50만 원이면", "x 50만 원 이하이면"),
        ("x > 3 인치", "x 3 인치 초과"),  # it was x 3 초과 인치
        ("x^2 < 4이면", "x의 2제곱 4 미만이면"),  # it was x의 2제곱 < 4이면: the bound unsaid
        ("y > 2x", "y 2x 초과"),  # it was y 2배 초과: so many times
        ("y ≥ 2x + 1", "y 2x 더하기 1 이상"),  # it was y 2배 이상 플러스 1
        ("y ≥ 2x + 1이면", "y 2x 더하기 1 이상이면"),
        ("x^2 + y^2 ≤ 1이면", "x의 2제곱 더하기 y의 2제곱 1 이하이면"),
    ],
)
def test_a_bound_says_a_scaled_amount_and_a_whole_formula_before_its_word(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3 < 5", "3 < 5"),  # two numbers compared
        ("A > B", "A > B"),  # two names ranked
        ("a < b > c", "a < b > c"),  # no chain: its signs point both ways
        ("2x 빠르다, 10x 이상", "2배 빠르다, 10배 이상"),
        ("x > 5m", "x 5 미터 초과"),
    ],
)
def test_a_formulas_bound_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("YoY +5%", "전년 대비 플러스 5 퍼센트"),  # espeak said the English "yo"
        ("매출 QoQ -3%", "매출 전 분기 대비 마이너스 3 퍼센트"),
        ("MoM 2%", "전월 대비 2 퍼센트"),
        ("CAGR 5%", "C-A-G-R 5 퍼센트"),  # espeak: "kagger"
    ],
)
def test_a_reports_change_over_a_period_is_said_in_korean(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"), [("YoYo", "YoYo"), ("yoy_rate", "yoy_rate"), ("WoW 증가", "WoW 증가")]
)
def test_a_change_over_a_periods_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("∫_0^1 x dx", "적분 0부터 1까지 x dx"),  # it was 적분 _0의 1제곱 x dx: the upper limit a power
        ("Σ_{i=1}^{n} i", "시그마 i는 1부터 n까지 i"),  # it was 시그마_{i는 1}^n i
        ("∫_{0}^{π} sin x dx", "적분 0부터 파이까지 sin x dx"),
        ("∫_a^b f(x)dx", "적분 a부터 b까지 f(x)dx"),
    ],
)
def test_an_integrals_and_a_sums_limits_are_from_and_to(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(("written", "said"), [("Σ x", "시그마 x"), ("x_0^2", "x_0의 2제곱")])
def test_a_limits_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("log₂8 = 3", "로그 2의 8은 3"),  # it was log₂8은 3: espeak said the English "log", 이 팔
        ("log_2 8", "로그 2의 8"),
        ("log_{10} x", "로그 10의 x"),
        ("log₂n", "로그 2의 n"),
    ],
)
def test_a_logarithms_base_is_said_before_its_argument(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"), [("log x", "log x"), ("log_file", "log_file"), ("blog₂8", "blog₂8")]
)
def test_a_logarithms_base_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3! = 6", "3 팩토리얼은 6"),  # it was 3! 는 6: the sign unsaid
        ("n!/(k!(n-k)!)", "n 팩토리얼 나누기 (k 팩토리얼 곱하기 (n 빼기 k) 팩토리얼)"),
        ("(n-1)! = 2", "(n 빼기 1) 팩토리얼은 2"),
    ],
)
def test_a_factorial_inside_a_formula_is_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("정답은 3!", "정답은 3!"),
        ("Hello!", "Hello!"),
        ("감사합니다!", "감사합니다!"),
        ("x != 0", "x는 0이 아님"),
    ],
)
def test_a_factorials_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("cos²θ - sin²θ", "코사인 제곱 세타 빼기 사인 제곱 세타"),  # the minus was dropped
        ("α + β", "알파 더하기 베타"),  # it was 플러스: a spaced "+" between terms is 더하기, as in "a + b"
        (
            "sin 2θ = 2sinθcosθ",
            "사인 2세타는 2 사인 세타 코사인 세타",
        ),  # it was 2사인 세타코사인 세타: one word
        ("arcsin x", "아크사인 x"),  # espeak: the English "arcsine"
        ("arctan(1)", "아크탄젠트(1)"),
        ("∂²u/∂t² = c²∇²u", "t에 대한 u의 이계 편미분은 c의 2제곱 라플라시안 u"),  # "∇" was unsaid
        ("∇f", "델 f"),
    ],
)
def test_greek_terms_functions_inverses_and_nabla_are_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("research", "research"), ("arcade", "arcade"), ("a - b", "a 빼기 b"), ("x - 사인", "x - 사인")],
)
def test_greek_terms_lookalikes_read_as_before(written, said):
    assert spoken(written) == said
