"""The review of the last stop's Korean reading (k6): what a caller's text made of its new rules.

Each reading is the words a Korean lecturer says; the comment says what happened before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("n!의 값은", "n 팩토리얼의 값은"),
        ("5!의 값", "5 팩토리얼의 값"),
        ("(n-1)!의 값", "(n 빼기 1) 팩토리얼의 값"),
        ("(2n)!의", "(2n) 팩토리얼의"),
        ("(n+1)!의 값", "(n 플러스 1) 팩토리얼의 값"),
    ],
)
def test_a_factorial_before_the_possessive_is_said_and_fails_no_request(written, said):
    """ "n!의 값" raised KeyError in the reading (의 has one form, `particle_after` knew only those with two): the
    whole request failed."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("*n* 3개", "n 세 개"),  # n 곱하기 세 개: the italic's closing star a product's
        ("변수 *x* 1개", "변수 x 한 개"),
        ("*i* j 참고", "i j 참고"),
        ("3 *x*", "3 x"),  # 3 곱하기 x: the italic's opening star
        ("a *b* c", "a b c"),
        # the products the k6 rule meant read as it meant them
        ("a*b*c", "a 곱하기 b 곱하기 c"),
        ("a * 2", "a 곱하기 2"),
        ("2 * (a+b)", "2 곱하기 (a 플러스 b)"),
    ],
)
def test_a_markdown_italic_letter_is_no_product(written, said):
    """Markdown's italic variable, "*n* 3개" (an LLM's answer writes its variables so), was read as a product by the
    k6 star rule: n 곱하기 세 개."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "a < b < f(x)",
            "b는 a 초과 f(x) 미만",
        ),  # k6: a 초과 b < f(x), half read; left whole, then read by k7's review
        ("a ≤ b ≤ c_1", "a ≤ b ≤ c_1"),
        ("a < b < n-1", "a < b < n-1"),
        ("x < y < zz", "x < y < zz"),
        # the chains the k6 rule meant read as it meant them
        ("a < b < c^2", "b는 a 초과 c의 2제곱 미만"),  # k7: the middle term first
        ("a ≤ b ≤ c이면", "b가 a 이상 c 이하이면"),
        ("a < b < n - 1", "b는 a 초과 n 빼기 1 미만"),
        ("a < b < c2", "b는 a 초과 c2 미만"),  # k6: left whole; k7 reads an index's digits
    ],
)
def test_a_chain_whose_last_term_no_bound_reads_is_left_whole(written, said):
    """A chain's first bound is read only where its second is read too: a half-read chain said one sign and not the
    other."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "셸 호스팅 비용은 $5-$9",
            "셸 호스팅 비용은 5에서 9 달러",
        ),  # 달러 5 빼기 달러 9: a price as a subtraction
        ("인수 가격은 $1-$2", "인수 가격은 1에서 2 달러"),  # 인수, an acquisition's
        ("매개변수 없이 $5-$9 가격", "매개변수 없이 5에서 9 달러 가격"),
        ("인자 값은 $1-$2 사이", "인자 값은 1에서 2 달러 사이"),
        # a shell's parameters read as the k6 rule meant
        ("스크립트에서 $1-$2를 출력", "스크립트에서 달러 1 빼기 달러 2를 출력"),
        ("셸에서 $1+$2를 계산", "셸에서 달러 1 더하기 달러 2를 계산"),
        ("echo $(($1-$2))", "echo $((달러 1 빼기 달러 2))"),
    ],
)
def test_a_price_near_a_word_of_code_is_money(written, said):
    """The k6 rule took any "$1-$2" within 40 characters after 셸, 스크립트, 인자, 인수 or 매개변수 for a shell's
    parameters: a hosting's price, an acquisition's (인수) were read as a subtraction."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > y; y > z", "x y 초과; y z 초과"),  # x y 초과; y가 z보다 크다: one line in two voices
        ("x>y||y>z", "x y 초과 또는 y z 초과"),  # k11: the join said (it was unsaid)
        ("문장입니다; x > y", "문장입니다; x y 초과"),
        ("a && b > c", "a && b c 초과"),
        ("if (a ≤ b를", "if (a b 이하를"),  # if (a가 b보다 작거나 같다: the particle dropped
        # code read as the k6 rule meant
        ("for (i=0; i<n; i++)", "for (i에 0을 대입; i가 n보다 작다; i++)"),
        ("if (x > y && y > z)", "if (x가 y보다 크다 && y가 z보다 크다)"),
    ],
)
def test_a_join_of_code_counts_only_in_a_statement_a_keyword_opens(written, said):
    """The k6 rule read a comparison after any ";", "&&" or "||" as code's, a formula's second half included."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2x - 3 > 0이면", "2x 빼기 3이 0 초과이면"),  # 2x 빼기 3 0 초과이면: two numbers in a row, 삼 영
        ("x - 1 < 2일 때", "x 빼기 1이 2 미만일 때"),
        ("x² - 4 ≥ 0을", "x의 2제곱 빼기 4가 0 이상을"),
        ("x - 1.5 > 0", "x 빼기 1 점 오가 0 초과"),
        ("x-3>0", "x-3이 0 초과"),
        # a power's end is said 제곱, a letter's alone: no subject needed, as before
        ("x^2 < 4일 때", "x의 2제곱 4 미만일 때"),
        ("x > 0", "x 0 초과"),
        ("3 < 5", "3 < 5"),
    ],
)
def test_a_formulas_last_number_before_a_bound_is_its_subject(written, said):
    """ "2x - 3 > 0" was read 2x 빼기 3 0 초과: the formula's last number and the bound's said in a row (삼 영, a
    listener hears one number); a lecturer says the formula's subject particle, 2x 빼기 3이 0 초과."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x < 2π", "x 2파이 미만"),  # x 2 미만파이: the bound's word inside the amount
        ("0 < x < 2π", "x는 0 초과 2파이 미만"),
        ("x > 2π이면", "x 2파이 초과이면"),  # x 2 초과파이이면
        ("0 ≤ θ < 2π일 때", "세타가 0 이상 2파이 미만일 때"),  # k6: 0 ≤ 세타, a sign unsaid
        ("π < 4", "파이 4 미만"),
    ],
)
def test_a_bound_of_pis_multiple_says_it_whole(written, said):
    """A trigonometry lecture's "0 < x < 2π" was read 0 초과 x 2 미만파이 (before k6 too): the bound's word cut the
    amount in two."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "n!/(k!(n-k)!)",
            "n 팩토리얼 나누기 (k 팩토리얼 곱하기 (n 빼기 k) 팩토리얼)",
        ),  # k 팩토리얼(n-k): product unsaid
        ("3!(2+1)!", "3 팩토리얼 곱하기 (2 플러스 1) 팩토리얼"),
        ("5!(참고)", "5 팩토리얼(참고)"),  # a bracket with no factorial of its own: no product
        ("n!(n+1)", "n 팩토리얼(n 플러스 1)"),
        # a period-over-period word's particle in the form 대비 takes (it was 전월 대비은: the writer's for "MoM")
        ("MoM은 5%", "전월 대비는 5 퍼센트"),
        ("YoY이 증가", "전년 대비가 증가"),
        ("QoQ을 보면", "전 분기 대비를 보면"),
        ("MoM과 YoY", "전월 대비와 전년 대비"),
        ("MoM의 조언", "MoM의 조언"),
    ],
)
def test_a_factorials_product_and_a_periods_particle_are_said(written, said):
    """The binomial coefficient's "k!(n-k)!" was said k 팩토리얼 n-k 팩토리얼, the brackets silent and the product
    unsaid; "MoM은" kept the writer's particle for the letters, 전월 대비은."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "if (x>0 && y<z)",
            "if (x가 0보다 크다 && y가 z보다 작다)",
        ),  # x 0 초과 && y가 z보다 작다: two voices
        ("if (x > 0) return x;", "if (x가 0보다 크다) return x;"),  # x 0 초과
        ("for (i = 0; i < 10; i++)", "for (i에 0을 대입; i가 10보다 작다; i++)"),
        ("while (n >= 1)", "while (n이 1보다 크거나 같다)"),
        # a formula's, outside code or with a sentence's ending, as before
        ("x > 0이면", "x 0 초과이면"),
        ("if (x > 0이면", "if (x 0 초과이면"),
        ("if (n ≥ 1인 정수", "if (n 1 이상인 정수"),
        ("if (x > 0 or x < -1", "if (x가 0보다 크다 or x가 마이너스 1보다 작다"),  # k7: "or" joins code
        ("if a > b이면", "if a b 초과이면"),  # if a가 b보다 크다이면
        ("if (a>b일 때", "if (a b 초과일 때"),
        ("if (a > b or b < c)", "if (a가 b보다 크다 or b가 c보다 작다)"),  # k6: a b 초과 or b c 미만
        ("while a < b:", "while a가 b보다 작다:"),
        ("조건 x > 0; y > 0", "조건 x 0 초과; y 0 초과"),
    ],
)
def test_a_number_compared_in_code_reads_as_a_letter_compared_there(written, said):
    """k6 read a comparison in code as a lecturer says it, "if (a>b)" a가 b보다 크다, but one with a number as a
    formula's bound, "if (x > 0)" x 0 초과: one condition in two voices."""
    assert spoken(written) == said
