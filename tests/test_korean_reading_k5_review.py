"""A review of the k5 round's readings against the code before it, over ~3 000 generated lecture sentences: what
the new rules misread there, each beside text that reads as the round meant."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # English words after a sign were read as a formula: the bound's word went after the sentence
        # (it was <b>굵게</b holds here. 초과)
        ("Note that <b>굵게</b> holds here.", "Note that <b>굵게</b> holds here."),
        ("x > holds here.", "x > holds here."),
        ("vector<int> v;", "vector<int> v;"),  # it was vector<int v 초과;
        # a decimal's whole part was taken for the bound's amount
        ("y > 0.5x + 3이면", "y 0 점 오x 더하기 3 초과이면"),  # it was y 0 초과.5x 더하기 3이면
        # the report's word written after it was said twice
        ("MoM 대비 10% 증가", "전월 대비 10 퍼센트 증가"),  # it was 전월 대비 대비
        ("YoY 대비해서", "전년 대비해서"),
    ],
)
def test_what_the_rounds_rules_misread_reads_well(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("y ≥ 2x + 1", "y 2x 더하기 1 이상"),
        ("x > 2 holds", "x 2 초과 holds"),
        ("y > 2x", "y 2x 초과"),
        ("x^2 + y^2 ≤ 1이면", "x의 2제곱 더하기 y의 2제곱 1 이하이면"),
        ("y > 0.5", "y 0 점 오 초과"),
        ("x > 3,000원", "x 3000원 초과"),
        ("YoY +5%", "전년 대비 플러스 5 퍼센트"),
    ],
)
def test_what_the_round_meant_still_reads_so(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # a logarithm's base before a capital, a bracket or nothing was left half English (로그₂N)
        ("log₂N", "로그 2의 N"),
        ("O(log₂(n))", "O(로그 2의 (n))"),
        ("log_2(x)", "로그 2의 (x)"),
        ("log₂입니다", "로그 2입니다"),
        # a formula's last factorial was unsaid (n 팩토리얼 / k!), one with a particle too
        ("n! / k!", "n 팩토리얼 나누기 k 팩토리얼"),
        ("1 + 3!", "1 더하기 3 팩토리얼"),
        ("5!은 120입니다", "5 팩토리얼은 120입니다"),
        ("5!는", "5 팩토리얼은"),
        ("3!로 나눕니다", "3 팩토리얼로 나눕니다"),
        (
            "3!이다",
            "3 팩토리얼이다",
        ),  # k7: a copula after it makes it a factorial (k5 left it as an exclamation)
    ],
)
def test_a_logarithm_and_a_factorial_are_said_whole(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "written",
    ["log_file", "blog₂8", "log_2 Note", "정답은 3!", "Hello!", "Top-3!", "(가)!(", "(정말!)"],
)
def test_an_exclamation_and_a_name_are_left(written):
    assert spoken(written) == written


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # the particle after this round's amounts kept the number's form (200만 달러이, 100 달러은), as "$100-200이"
        # and "$100이" did not
        ("$1M-$2M이", "100만에서 200만 달러가"),
        ("$1-2B을", "10억에서 20억 달러를"),
        ("$5K-10K이", "5000에서 1만 달러가"),
        ("100$은", "100 달러는"),
        ("100$이", "100 달러가"),
        ("$2M이", "200만 달러가"),
        ("$1.5M+이", "150만 달러 이상이"),  # it was 150만 달러+이
        ("$1.5M+의", "150만 달러 이상의"),
    ],
)
def test_a_particle_after_an_amount_takes_the_currencys_form(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$1M-$2M의", "100만에서 200만 달러의"),
        ("$2M가지", "200만 달러가지"),
        ("$1.5M+예산", "150만 달러+예산"),
        ("100$입니다", "100 달러입니다"),
        ("$100-200이", "100에서 200 달러가"),
    ],
)
def test_what_is_no_particle_reads_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # an English word after a bound's amount was taken for its unit, and now "n>=3" is a bound too
        ("x >= 0 and y >= 0", "x 0 이상 and y 0 이상"),  # it was x 0 and 이상 y 0 이상
        ("x > 0 or x < -1", "x 0 초과 or x 마이너스 1 미만"),
        ("n ≥ 1 for all n", "n 1 이상 for all n"),
        (
            "n > 5 in the list",
            "n greater than five in the list",
        ),  # an English sentence's (korean17: n 5 초과)
        ("x > 3 cm", "x 3 센티미터 초과"),  # a unit stays one
        ("T > 300 K", "T 300 K 초과"),
        ("x > 3 in", "x 3 in 초과"),
    ],
)
def test_an_english_word_after_a_bound_is_no_unit(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # a bound between two variables took a formula's first term: its word went inside the formula
        ("y > x + 1", "y x 더하기 1 초과"),  # it was y x 초과 플러스 1
        ("y ≥ x - 1이면", "y x 빼기 1 이상이면"),  # it was y x 이상 - 1이면
        ("y > x^2", "y x의 2제곱 초과"),  # it was y x 초과^2
        ("y ≤ x² + 1", "y x의 2제곱 더하기 1 이하"),  # it was y x 이하² 플러스 1
        ("y > x^2이면", "y x의 2제곱 초과이면"),
    ],
)
def test_a_bound_before_a_formula_is_said_after_it(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≥ y이면", "x y 이상이면"),
        ("a > b일 때", "a b 초과일 때"),
        ("x > y, z", "x y 초과, z"),
        ("a<b>c", "a<b>c"),
    ],
)
def test_a_bound_between_two_variables_reads_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        # a sum of amounts, a shell's "$1+$2", was read "so much or more" before the second (1 달러 이상2 달러)
        ("$1+$2", "1 달러+2 달러"),
        ("echo $(($1+$2))", "echo $((달러 1 더하기 달러 2))"),
        ("$1M+$2M", "100만 달러+200만 달러"),
        ("$100+ 예산", "100 달러 이상 예산"),
        ("$1.5M+", "150만 달러 이상"),
    ],
)
def test_a_sum_of_amounts_is_no_lower_bound(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("5 s⁻¹이", "5 퍼 초가"),  # it was 5 퍼 초이: the writer's 이 for 일
        ("6.02×10²³ mol⁻¹을", "6 점 영이 곱하기 10의 23제곱 퍼 몰을"),
        ("3 ms⁻²이", "3 미터 퍼 초 제곱이"),
        ("10 m⁻²는", "10 퍼 제곱미터는"),
        ("5 s⁻¹이다", "5 퍼 초이다"),  # a copula, no particle
        ("5 s⁻¹", "5 퍼 초"),
    ],
)
def test_a_particle_after_a_unit_to_a_negative_power_takes_the_units_form(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("my MoM and DaD", "my MoM and DaD"),  # it was my 전월 대비 and DaD: a mother
        ("your MoM's car", "your MoM's car"),
        ("MoM 성장률", "전월 대비 성장률"),
        ("Revenue grew 5% YoY.", "Revenue grew 5 퍼센트 전년 대비."),
    ],
)
def test_a_mother_is_no_months_change(written, said):
    assert spoken(written) == said
