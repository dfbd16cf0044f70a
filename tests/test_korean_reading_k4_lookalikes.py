"""Text that looks like what the last round's rules read (`korean_units`' amounts of money, `korean_ranges`'
variable's bound, `korean_arrows`' lambda, `korean_formulas`' power) and that they misread: each beside text that
reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$3억 달러입니다", "3억 달러입니다"),  # it was 3억 달러 달러입니다
        ("$3억 달러로 늘었다", "3억 달러로 늘었다"),
        ("$100 달러까지", "100 달러까지"),
        ("$100 달러씩", "100 달러씩"),
        ("$100 달러부터", "100 달러부터"),
        ("$100 달러보다", "100 달러보다"),
        ("$100 달러짜리", "100 달러짜리"),
        ("$100 달러였다", "100 달러였다"),
        ("$100 달러라는", "100 달러라는"),
        ("€20억 유로로", "20억 유로로"),
        ("$100달러로", "100달러로"),  # it was 100 달러달러로
    ],
)
def test_a_currencys_word_written_after_its_amount_is_said_once_before_any_particle(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$100 달러 규모", "100 달러 규모"),
        ("$3억 달러를", "3억 달러를"),
        ("₩5000 원이다", "5000 원이다"),
    ],
)
def test_a_currencys_written_word_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$100조차 없다", "100 달러조차 없다"),  # not even $100: it was 100조 달러차, a hundred trillion
        ("$5만큼", "5 달러만큼"),
        ("$100조", "100조 달러"),  # the scale itself: as before
        ("$100조가", "100조 달러가"),
    ],
)
def test_a_particle_that_opens_like_a_scale_is_no_scale(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > 0일때", "x 0 초과일때"),  # it was x 0일 초과때: 일 a counter of days
        ("x > 0일수록 커진다", "x 0 초과일수록 커진다"),
        ("x > 0일까?", "x 0 초과일까?"),
        ("x > 0인지 확인한다", "x 0 초과인지 확인한다"),  # it was x 0인 초과지: 인 a counter of people
        ("x > 0인가?", "x 0 초과인가?"),
        ("x > 0인가를 확인한다", "x 0 초과인가를 확인한다"),
        ("n ≥ 1인가요?", "n 1 이상인가요?"),
        ("x > 0인데", "x 0 초과인데"),
    ],
)
def test_a_variables_bound_keeps_the_copulas_endings_after_the_bound(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("t > 3일 동안", "t 3일 초과 동안"),  # days: a counter, as before
        ("직원 ≥ 5인 사업장", "직원 5인 이상 사업장"),  # no variable: people
    ],
)
def test_a_variables_bound_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("\\x -> go", "x에서 go"),  # it was \\x에서 go: espeak said English "backslash"
        ("map (\\x -> x) xs", "map (x가 x로) xs"),
    ],
)
def test_a_lambdas_backslash_is_not_said(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("p -> next", "p->next"),  # a pointer's member: code, as before
        ("C:\\Users\\data", "C:\\Users\\data"),  # a path's backslash: no lambda
    ],
)
def test_a_lambdas_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


def test_a_lambda_sounds_without_a_backslash(tokenizer):
    assert tokenizer.symbols("\\x -> go", "ko") == tokenizer.symbols("x에서 go", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x^{2}를 미분하면", "x의 2제곱을 미분하면"),  # it was x^{2}를: espeak said 엑스 이, the power lost
        ("10^{-3}", "10의 마이너스 3제곱"),  # it was 10^{마이너스 3}: ten minus three
        ("x^{2}+y^{2}=r^{2}", "x의 2제곱 플러스 y의 2제곱은 r의 2제곱"),
        ("A^{T}를", "A의 전치를"),
        ("3 × 10^{8} m/s", "3 곱하기 10의 8제곱 미터 퍼 초"),
    ],
)
def test_a_power_with_its_exponent_in_braces_reads_as_without_them(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("{x^2}", "{x의 2제곱}"),
    ],
)
def test_a_braced_powers_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


def test_a_braced_power_sounds_as_the_power(tokenizer):
    assert tokenizer.symbols("10^{-3}", "ko") == tokenizer.symbols("10^-3", "ko")
