"""The Korean reading's leftovers of the last stop (k6): chains of bounds, a number on a comparison's left, a letter's
fraction in an exponent, a bracket's factorial, fiscal years across two, a shell's positional parameters, a star
between terms, a particle after a bound's word, the divergence and the curl, "ln₂", a mother's "MoM의", and a
comparison in code (`korean_ranges`, `korean_formulas`, `korean_functions`, `korean_marks`, `korean_units`).

Each reading is the words a Korean lecturer says; the comment says what was read before. The lookalikes below read
as before."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "a ≤ b ≤ c이면",
            "b가 a 이상 c 이하이면",
        ),  # a ≤ b ≤ c이면: the signs unsaid (k6: a 이상 b c 이하이면)
        ("x < y < z", "y는 x 초과 z 미만"),
        ("a>b>c", "b는 c 초과 a 미만"),  # the lower bound first
        ("a ≤ b ≤ 1", "b는 a 이상 1 이하"),  # a b 이하 1 이하: the first bound read as the second
        ("2x - 3 > 0이면", "2x 빼기 3이 0 초과이면"),  # 2x 빼기 3 > 0이면: the sign unsaid
        ("x² - 4 ≥ 0일 때", "x의 2제곱 빼기 4가 0 이상일 때"),
        ("x^2 < 4일 때", "x의 2제곱 4 미만일 때"),  # x의 2제곱 4일 미만 때: 일 read as a counter
        ("3인치 < x", "3인치 초과 x"),  # 3인치 < x
        ("3cm < x", "3 센티미터 초과 x"),  # 3 센티미터 < x
        ("x ≤ 3이 되면", "x 3 이하가 되면"),  # x 3 이하이 되면: the writer's particle for 삼
        ("x ≤ 3을 만족", "x 3 이하를 만족"),  # 이하을
        ("x ≥ y가 되면", "x y 이상이 되면"),  # 이상가
        ("SOC < 20%가 되면", "S-O-C 20 퍼센트 미만이 되면"),  # 미만가
        ("if (a>b) return a;", "if (a가 b보다 크다) return a;"),  # if (a b 초과): a bound's words in code
        ("while (i < n) {", "while (i가 n보다 작다) {"),
        ("if (a >= b && b > c)", "if (a가 b보다 크거나 같다 && b가 c보다 크다)"),  # a b 이상 && b c 초과
        ("for (i = 0; i < n; i++)", "for (i에 0을 대입; i가 n보다 작다; i++)"),  # i n 미만
        ("3 ℃ < t", "3 도 초과 t"),  # 3 도 < t
        ("3 개 < n", "세 개 초과 n"),  # 세 개 < n
        ("x^{n/2}", "x의 2분의 n제곱"),  # x^{n/2}: braces and all
        ("n의 값은 (n-1)!", "n의 값은 (n 빼기 1) 팩토리얼"),  # (n-1)!: the sign unsaid
        ("(n+1)!은", "(n 플러스 1) 팩토리얼은"),
        (
            "n!/k!이면",
            "n 팩토리얼 나누기 k 팩토리얼이면",
        ),  # n 팩토리얼/k!이면: the last before a copula unsaid
        ("n!은 n 곱하기 (n-1)!", "n 팩토리얼은 n 곱하기 (n 빼기 1) 팩토리얼"),  # n!은 n 곱하기 (n-1)!
        (
            "n!/(k!(n-k)!)",
            "n 팩토리얼 나누기 (k 팩토리얼 곱하기 (n 빼기 k) 팩토리얼)",
        ),  # n 팩토리얼/(k 팩토리얼(n-k)!)
        ("FY2024년 매출", "2024 회계연도 매출"),  # FY2024년: espeak's English "fy"
        ("FY2024년도 예산", "2024 회계연도 예산"),
        ("FY2024-25 예산", "2024에서 2025 회계연도 예산"),  # FY2024-25
        ("FY2023~25", "2023에서 2025 회계연도"),  # 2023 회계연도 25: the tilde lost
        (
            "스크립트에서 $1-$2를 출력",
            "스크립트에서 달러 1 빼기 달러 2를 출력",
        ),  # 1에서 2 달러를: a range of money
        ("echo $(($1-$2))", "echo $((달러 1 빼기 달러 2))"),
        ("a * 2", "a 곱하기 2"),  # a   2: the star a space
        ("x*y", "x 곱하기 y"),  # x y
        ("2 * (a+b)", "2 곱하기 (a 플러스 b)"),
        ("∇·E", "델 닷 E"),  # 델 ·E: the dot unsaid
        ("∇×B", "델 크로스 B"),  # 델 ×B
        ("∇ × B", "델 크로스 B"),  # 델 곱하기 B: a product's word
        ("ln₂", "엘엔 2"),  # 엘엔₂
        ("MoM의 조언", "MoM의 조언"),  # 전월 대비의 조언: a mother's advice
    ],
)
def test_the_last_stops_leftovers_are_said_as_a_lecturer_says_them(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A > B > C", "A > B > C"),  # a ranking of names
        ("a < b > c", "a < b > c"),  # no chain: its signs point both ways
        ("a < b < c < d", "a < b < c < d"),  # a longer chain, left whole (not a 초과 b < c < d)
        ("<b>굵게</b>", "<b>굵게</b>"),
        ("vector<int> v;", "vector<int> v;"),
        ("3 < 5", "3 < 5"),  # two numbers compared
        ("5 - 3 > 0", "5 빼기 3 > 0"),  # no formula's letter on the left
        ("20 ≤ x ≤ 40", "x는 20 이상 40 이하"),  # k7: the middle term first
        ("0 < a ≤ b", "a는 0 초과 b 이하"),
        ("x > 0인가?", "x 0 초과인가?"),  # a copula's ending, no particle
        ("x > 0일 때", "x 0 초과일 때"),
        ("x ≤ 3이면", "x 3 이하이면"),
        ("t > 3일 동안", "t 3일 초과 동안"),
        ("2x < y", "2x y 미만"),
        ("x > 0", "x 0 초과"),
        ("x > 0이면", "x 0 초과이면"),  # a number's bound outside code, as in a formula
        ("3 cm < x", "3 센티미터 초과 x"),
        ("1,000 < x", "1000 초과 x"),
        ("(가)!", "(가)!"),  # an exclamation
        ("(2020)!", "(2020)!"),
        ("정답은 (a)!", "정답은 (a)!"),  # an answer exclaimed
        ("정답은 n!", "정답은 n!"),
        ("3!이면", "3 팩토리얼이면"),  # k7: a factorial before a copula (k6 left it)
        ("FY2024-01", "FY2024-01"),  # runs down: a code
        ("FY2024", "2024 회계연도"),
        ("$1-$2 사이", "1에서 2 달러 사이"),  # no code around it: money
        ("$1+$2", "1 달러+2 달러"),
        ("Note * 2", "Note   2"),  # a word, no term
        ("*중요* 내용", "중요 내용"),
        ("2**10", "2의 10제곱"),  # k11: a Python power (it was 2 10, unsaid)
        ("∇f", "델 f"),
        ("∇²u", "라플라시안 u"),
        ("ln 2", "엘엔 2"),
        ("MoM 10% 증가", "전월 대비 10 퍼센트 증가"),
        ("x^{n/k}", "x^{n/k}"),
    ],
)
def test_the_lookalikes_of_the_last_stops_leftovers_read_as_before(written, said):
    assert spoken(written) == said
