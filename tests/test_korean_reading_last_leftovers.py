"""The last misreadings of Korean lecture text left by earlier rounds (`korean_marks`, `korean_formulas`), each
beside text that only looks like it and reads as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from tests.reading_support import tokenizer as tokenizer  # a fixture


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("§3.2와 §3.1을 비교", "3 점 이절과 3 점 일절을 비교"),  # it was 이절와: 와 was chosen for 이
        ("§3와", "3절과"),
        ("§3.2는 생략", "3 점 이절은 생략"),  # 이절는
        ("§3.2가 핵심", "3 점 이절이 핵심"),
        ("§3.2를 보라", "3 점 이절을 보라"),
        ("§3.2랑 같다", "3 점 이절이랑 같다"),
        ("§3으로 넘어간다", "3절로 넘어간다"),  # 삼: 으로; 절: 로
        ("§3.2와의 차이", "3 점 이절과의 차이"),
        ("§3으로부터", "3절로부터"),
        ("§ 3.2와", "3 점 이절과"),
    ],
)
def test_a_sections_particle_is_the_one_its_word_takes(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("§3.2절과 §3.1절을", "3 점 이절과 3 점 일절을"),  # the word written: its particle is the writer's
        ("§3과 §4", "3절과 4절"),  # 과, 을, 로, 의: right after 절 too
        ("§3을", "3절을"),
        ("§1로", "1절로"),
        ("§3.2의 정의", "3 점 이절의 정의"),
        ("§3.2에서", "3 점 이절에서"),
        ("§3가지", "3절가지"),  # a word that opens like 가: as before
        ("§3.2는데", "3 점 이절는데"),
        ("§ 3.2 와", "3 점 이절 와"),  # apart: no particle of its
        ("3.2와 3.1", "3 점 이와 3 점 일"),  # no section sign: the number's own particle
    ],
)
def test_a_sections_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


def test_a_sections_particle_sounds_as_after_its_word(tokenizer):
    assert tokenizer.symbols("§3.2와 §3.1", "ko") == tokenizer.symbols("삼 점 이절과 삼 점 일절", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("(1)^T", "(1)의 T제곱"),  # a number's power, as "2^T" is: it was (1)의 전치
        ("(1.05)^T 배", "(1 점 영오)의 T제곱 배"),
        ("(1+r)^T", "(1 플러스 r)의 T제곱"),  # a growth over T periods
        ("(-1)^T", "(마이너스 1)의 T제곱"),
        (
            "x^T 에서 T는 온도",
            "x의 T제곱 에서 T는 온도",
        ),  # T said to be a temperature right after: no transpose
        ("x^T에서 T는 절대온도이다", "x의 T제곱에서 T는 절대온도이다"),
        ("a^T (T: 시간)", "a의 T제곱 (T: 시간)"),
    ],
)
def test_a_power_of_t_that_is_no_transpose_is_a_power(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("(AB)^T", "(AB)의 전치"),
        ("(x)^T", "(x)의 전치"),
        ("f(1)^T", "f(1)의 전치"),  # a function's value
        ("A^T에서 T는 전치", "A의 전치에서 T는 전치"),  # T said to be the transpose
        ("x^T y에서 T는 온도", "x의 전치 y에서 T는 온도"),  # said further on: not looked for
        ("W^T x, T는 시퀀스 길이", "W의 전치 x, T는 시퀀스 길이"),
        ("2^T", "2의 T제곱"),
    ],
)
def test_a_transposes_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("a+b", "a 플러스 b"),  # espeak said the English word "plus"
        ("x+1의 값", "x 플러스 1의 값"),
        ("N+1 문제", "N 플러스 1 문제"),
        ("3+4=7", "3 플러스 4는 7"),
        ("T+1일", "T 플러스 1일"),
    ],
)
def test_an_unspaced_plus_between_terms_is_the_korean_word(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "text", ["Ctrl+C", "C++", "Li+ 이온", "A+ 학점", "a+=1", "GMT+9", "Na+와 K+", "U+223C", "U+1F600"]
)
def test_an_unspaced_plus_that_joins_no_terms_is_left(text):
    assert spoken(text) == text


def test_an_unspaced_plus_sounds_korean(tokenizer):
    assert tokenizer.symbols("a+b", "ko") == tokenizer.symbols("a 플러스 b", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "한국어すし를 먹는다",
            "한국어를 먹는다",
        ),  # it was 한국어 를: the particle cut off, a pause before it
        ("도쿄とうきょう에서", "도쿄에서"),
        ("ABCすし를", "ABC를"),
    ],
)
def test_kana_inside_a_word_is_left_out_with_no_gap(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("한국어すし", "한국어 "),  # the text's end: as before
        ("사과ひらがな 단어", "사과  단어"),
        ("すし를", " 를"),  # nothing before it
        ("스시(すし)를", "스시( )를"),
    ],
)
def test_kana_between_words_is_left_out_with_a_space_as_before(written, said):
    assert spoken(written) == said


def test_kana_inside_a_word_sounds_as_the_word_without_it(tokenizer):
    assert tokenizer.symbols("한국어すし를 먹는다", "ko") == tokenizer.symbols("한국어를 먹는다", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x -> xs", "x에서 xs"),  # Haskell's head and tail: it was read as the code x->xs
        ("(x:xs) 에서 x -> xs 로", "(x:xs) 에서 x에서 xs 로"),
        ("\\x -> go", "x에서 go"),  # a lambda (its backslash not said)
    ],
)
def test_a_haskell_arrow_is_an_arrow_not_a_pointers_member(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("p -> next", "p->next"), ("node -> left", "node->left"), ("cur_node -> data", "cur_node->data")],
)
def test_a_pointers_member_is_still_code(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("e^x를 미분하면", "e의 x제곱을 미분하면"),  # it was 제곱를: the particle chosen for 엑스
        ("x²는 양수", "x의 2제곱은 양수"),  # 제곱는
        ("x^2가 크다", "x의 2제곱이 크다"),
        ("e^x와 ln x", "e의 x제곱과 ln x"),
        ("x^2로 나누면", "x의 2제곱으로 나누면"),
        ("10^9는 10억", "10의 9제곱은 10억"),
        ("f(x)^2를", "f(x)의 2제곱을"),
    ],
)
def test_a_powers_particle_is_the_one_its_word_takes(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("2^n을", "2의 n제곱을"),  # a closed form already
        ("x²으로", "x의 2제곱으로"),
        ("10^3이다", "10의 3제곱이다"),
        ("A^T를", "A의 전치를"),  # 전치 is open: the writer's particle fits it
        ("Aᵀ는", "A의 전치는"),
        ("x^2가지", "x의 2제곱가지"),  # no particle: a word that opens like one
    ],
)
def test_a_powers_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


def test_a_powers_particle_sounds_as_after_its_word(tokenizer):
    assert tokenizer.symbols("x^2를 적분", "ko") == tokenizer.symbols(
        "x의 2제곱을 적분", "ko"
    )  # not ...제곱를


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$100만 규모", "100만 달러 규모"),  # it was 100 달러만: "only 100 dollars"
        ("$3억 달러", "3억 달러"),  # it was 3 달러억 달러
        ("$100 달러 규모", "100 달러 규모"),  # the word written too: said once (it was 달러 달러)
        ("€20억", "20억 유로"),
        ("$5천만이 들었다", "5천만 달러가 들었다"),
        ("$100을 받았다", "100 달러를 받았다"),  # it was 달러을: 을 chosen for 백
        ("€30이 들었다", "30 유로가 들었다"),
        ("$100과 $200", "100 달러와 200 달러"),
        ("$100으로", "100 달러로"),
    ],
)
def test_an_amount_of_money_reads_its_scale_and_its_words_particle(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("$5를 냈다", "5 달러를 냈다"),
        ("₩1000을", "1000 원을"),
        ("¥500은", "500 엔은"),
        ("£10이다", "10 파운드이다"),  # a copula: as before
        ("$100만큼", "100 달러만큼"),  # as much as: no scale
        ("$1.5B를 투자", "15억 달러를 투자"),
    ],
)
def test_an_amount_of_moneys_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("HTTP/2와 HTTP/3을 비교한다.", "HTTP 2와 HTTP 3을 비교한다."),  # espeak said "slash"
        ("HTTP/1.1은", "HTTP 1 점 일은"),
    ],
)
def test_a_names_version_after_its_slash_is_said_without_the_slash(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("TCP/IP", "TCP IP"),
        ("I/O", "I-O"),
        ("A/4", "A/4"),  # one letter: no name
        ("https://example.com/HTTP/2", "https://example.com/HTTP/2"),  # a web address's path
        ("HTTP/2.0.1", "HTTP/2 점 0 점 1"),  # a version of three parts: as before
    ],
)
def test_a_names_slash_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


def test_a_names_version_sounds_without_the_slash(tokenizer):
    assert tokenizer.symbols("HTTP/2와", "ko") == tokenizer.symbols("HTTP 2와", "ko")


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("v = 3.0 × 10^8 m/s이다.", "v는 3 점 영 곱하기 10의 8제곱 미터 퍼 초이다."),  # it was 10^초속 8미터
        ("3×10^8m/s", "3 곱하기 10의 8제곱 미터 퍼 초"),
        ("10^-3 m/s", "10의 마이너스 3제곱 미터 퍼 초"),
        ("1.2 × 10^5 km/h", "1 점 이 곱하기 10의 5제곱 킬로미터 퍼 시간"),  # it was 10^시속 5킬로미터
    ],
)
def test_a_speed_after_a_powers_exponent_keeps_the_power(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("300km/h", "시속 300킬로미터"),
        ("5 m/s", "초속 5미터"),
        ("9.8m/s²", "9 점 팔 미터 퍼 초 제곱"),
        ("10^-9 m/s²", "10의 마이너스 9제곱 미터 퍼 초 제곱"),
    ],
)
def test_a_speeds_lookalikes_read_as_before(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x > 0일 때", "x 0 초과일 때"),  # it was x 0일 초과 때: 일 read as a counter of days
        ("x>0일 때", "x 0 초과일 때"),
        ("n ≥ 1인 정수", "n 1 이상인 정수"),  # it was n 1인 이상 정수: 인 read as a counter of people
        ("n>1인 경우", "n 1 초과인 경우"),
        ("x ≤ 10일지", "x 10 이하일지"),
    ],
)
def test_a_variables_bound_keeps_its_copula_after_the_bound(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("t > 3일 동안", "t 3일 초과 동안"),  # days: a counter
        ("기간 > 3일", "기간 3일 초과"),  # no variable
        ("직원 ≥ 5인 사업장", "직원 5인 이상 사업장"),
        ("SOC < 20%", "S-O-C 20 퍼센트 미만"),
        ("x > 0", "x 0 초과"),
    ],
)
def test_a_bounds_lookalikes_read_as_before(written, said):
    assert spoken(written) == said
