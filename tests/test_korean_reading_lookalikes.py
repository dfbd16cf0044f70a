"""Lecture text that only looks like what a Korean reading rule reads (`korean_reading`,
`sentence_ends`): a section number is no historical event, a range no phone number, a formula's step `h`
no hour, a quiz's "No." no number sign. Each case was read wrongly by a rule once; the rule's own
readings stay beside it, so both sides are pinned.
"""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken
from npu_worker.engine.zipvoice.segmenter import split_sentences
from tests.reading_support import streamed


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("3.1절에서 설명한 바와 같이", "3 점 일절에서 설명한 바와 같이"),  # a section: it was 삼일절
        ("3.1절과 3.2절을 비교한다.", "3 점 일절과 3 점 이절을 비교한다."),  # 삼일절과 삼이절
        ("2.5절을 참고하라.", "2 점 오절을 참고하라."),  # 이오절
        ("6.25절의 예제", "6 점 이오절의 예제"),  # 육이오절
        ("2.1 전쟁의 원인", "2 점 일 전쟁의 원인"),  # a heading: 이일 전쟁
        ("1.2 선언적 프로그래밍", "1 점 이 선언적 프로그래밍"),  # 일이 선언적
        ("2.3 절연 저항", "2 점 삼 절연 저항"),  # 이삼 절연
        ("2.5 절반", "2 점 오 절반"),  # 이오 절반
        ("1.3 테러리즘", "1 점 삼 테러리즘"),  # 일삼 테러리즘
    ],
)
def test_a_section_number_or_a_heading_is_no_event_of_korean_history(written, said):
    """Sections and headings numbered like a date before a word that opens like an event's name were read
    as the event's date, 삼일절, 이일 전쟁."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"), [("3.1절 기념식", "삼일절 기념식"), ("9.11 테러", "구일일 테러")]
)
def test_the_holiday_and_the_events_are_still_read_by_their_dates(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["f(x+2h)", "(f(x+h)-f(x))/2h", "오차는 O(2h)", "x - 2h"])
def test_a_step_h_after_an_operator_or_a_functions_bracket_is_no_hour(text):
    """Numerical analysis' step: "f(x+2h)" was f(x+두 시간), "/2h" 나누기 두 시간."""
    assert "시간" not in spoken(text)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("충전(2h)", "충전(두 시간)"),
        ("1-2h 소요", "1에서 2 시간 소요"),
        ("12h 명/12h 암", "열두 시간 명 열두 시간 암"),  # the slash between a word and a number unsaid
    ],
)
def test_hours_in_a_words_bracket_or_a_range_are_still_hours(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    "text", ["IEEE 1588-2008", "IEEE 1364-2005 표준", "IEEE Std 1800-2017", "KS C 1000-2005"]
)
def test_a_standards_number_and_its_edition_are_no_range_of_years(text):
    """ "IEEE 1588-2008" (the PTP standard's 2008 edition) was read 1588에서 2008."""
    assert spoken(text) == text


@pytest.mark.parametrize("text", ["10 pM", "5 aM 농도", "10pM"])
def test_a_pico_or_attomolar_concentration_is_no_time_of_day(text):
    """ "10 pM" (picomolar) was read 오후 열 시."""
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("1500-3000원", "1500에서 3000원"),  # it was 일오공공 삼공공공원, a company's number
        ("하루 1800-2200kcal이다.", "하루 1800에서 2200 킬로칼로리이다."),
        ("1500-5000명", "1500에서 5000명"),
        ("1500-2500 rpm", "1500-2500 rpm"),  # round hundreds: left, as before
    ],
)
def test_a_range_from_1500_to_past_2099_is_no_company_phone_number(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("1577-5555", "일오칠칠 오오오오"), ("1644-8282번으로 전화", "일육사사 팔이팔이번으로 전화")],
)
def test_a_company_number_that_runs_up_is_still_read_digit_by_digit(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["20일~목요일 마감", "5일~금", "3일~일요일"])
def test_a_dates_day_before_a_tilde_is_no_sunday(text):
    """ "20일~목요일" was read 20일요일에서 목요일: the date's 일 taken for Sunday."""
    assert "일요일에서" not in spoken(text)


@pytest.mark.parametrize(("written", "said"), [("3 PM10", "3 PM10"), ("2 PM2.5", "2 PM2 점 오")])
def test_fine_dust_after_a_number_is_no_time_of_day(written, said):
    """ "3 PM10" was read 오후 세 시10."""
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["정답은 No. 2번 문제는 Yes.", "He said NO. 2024년에는 달라졌다."])
def test_an_answer_no_before_the_next_questions_number_ends_its_sentence(text):
    """ "정답은 No. 2번 문제는" was one sentence read 넘버 투번: the quiz's answer taken for a number sign."""
    assert "넘버" not in spoken(text)
    assert split_sentences(text)[0].endswith("NO." if "NO." in text else "No.")
    for size in (1, 3, len(text)):
        assert streamed(text, size) == split_sentences(text)


@pytest.mark.parametrize("text", ["No. 1 제품", "the No. 12 choice"])
def test_a_number_sign_is_still_one_sentence_with_its_number_when_streamed(text):
    for size in (1, 3, len(text)):
        assert streamed(text, size) == split_sentences(text) == [text]


@pytest.mark.parametrize(
    ("written", "said"),
    [("진자의 길이 ℓ", "진자의 길이 엘"), ("ℓ = 2m", "엘은 2 미터"), ("ℓ은 길이", "엘은 길이")],
)
def test_a_script_l_alone_is_a_lengths_letter_not_a_liter(written, said):
    """Physics' length "ℓ" was read 리터 wherever it stood."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("휘발유 ℓ당 1,700원", "휘발유 리터당 1700원"), ("2ℓ", "2 리터"), ("500 ℓ", "500 리터")],
)
def test_a_liter_after_a_number_or_before_dang_is_still_a_liter(written, said):
    assert spoken(written) == said


def test_a_three_digit_colour_is_no_scientific_notation():
    """ "#1e3" was read #1 곱하기 10의 3제곱."""
    assert spoken("색상 #1e3") == "색상 #1e3"


@pytest.mark.parametrize("text", ["플랜/A", "질문/A, 답/B", "등급/A", "시간/h", "사이즈/L"])
def test_a_letter_after_a_word_and_a_slash_is_a_label_not_per_unit(text):
    """ "플랜/A" was read 플랜 퍼 암페어, "시간/h" 시간 퍼 시간: only after a number's counter is it a unit."""
    assert spoken(text) == text


@pytest.mark.parametrize(("written", "said"), [("100원/L", "100원 퍼 리터"), ("5회/h", "5회 퍼 시간")])
def test_a_single_letter_unit_after_a_counted_word_is_still_per_unit(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["3.1 운동 방정식", "3.1 운동의 법칙", "3.1 운동 에너지"])
def test_a_physics_heading_numbered_3_1_is_no_independence_movement(text):
    """ "3.1 운동 방정식" (a section on the equation of motion) was read 삼일 운동 방정식."""
    assert spoken(text).startswith("3 점 일 운동")


@pytest.mark.parametrize(
    ("written", "said"), [("일~월 단위로 집계", "일 월 단위로 집계"), ("월~일 별", "월 일 별")]
)
def test_days_to_months_as_units_are_no_weekday_range(written, said):
    """ "일~월 단위" (by day to by month) was read 일요일에서 월요일 단위."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    "text",
    [
        "주요 내용은 ▲3대 전략 ▲5개 과제 ▲10대 사업 등이다.",  # 증가 3대 전략 증가 다섯 개 과제 …
        "▲1위 삼성전자 ▲2위 LG전자",
        "△1단계 설계 △2단계 시공",  # 마이너스 1단계
        "▲2024년 실적 ▼2025년 전망",
    ],
)
def test_a_news_lists_bullet_before_a_counted_number_is_no_increase_or_minus(text):
    """A Korean news list's "▲" joined to its item's number was read 증가 (increase), "△" 마이너스."""
    said = spoken(text)
    assert not {"증가", "감소", "마이너스"} & set(said.split())


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("매출 1,200억 원(▲3.5%)", "매출 1200억 원(증가 3 점 오 퍼센트)"),
        ("금리 ▼20bp", "금리 감소 20bp"),
        ("주가 ▲1,200원", "주가 증가 1200원"),
        ("순이익 △5억", "순이익 마이너스 5억"),
        ("전년 대비(▲30)", "전년 대비(증가 30)"),
    ],
)
def test_a_reports_sign_before_an_amount_is_still_its_change(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("원료 → 가공 → 유통 → 판매", "원료, 가공, 유통, 판매"),  # 원료에서 가공에서 유통에서 판매
        ("데이터 수집 → 전처리 → 모델 학습", "데이터 수집, 전처리, 모델 학습"),
        ("A -> B -> C", "A, B, C"),
        ("높은 온도 ⇒ 수명 단축 ⇒ 교체", "높은 온도, 수명 단축, 교체"),  # 온도면 … 단축이면
    ],
)
def test_a_flow_of_steps_is_said_step_by_step(written, said):
    """A slide's flow, each arrow read as a link, repeated 에서 (or 이면) after every step."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("A → B로 변환, C → D로 변환", "A에서 B로 변환, C에서 D로 변환"),
        ("A → B로 바뀌고 나서 C → D로", "A에서 B로 바뀌고 나서 C에서 D로"),
        ("→ 충전 → 방전", "충전에서 방전"),  # the first arrow a bullet
    ],
)
def test_two_arrows_of_one_line_apart_are_each_a_link(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("현재 등급은 Lv. 3. 다음 목표는 Lv. 4.", "현재 등급은 Lv. 3."),  # 레벨 세 번째, 다음 목표는 …
        ("정답은 No. 3. 다음 문제로 넘어갑니다.", "정답은 No. 3."),
        ("발표일은 Jan. 5. 다음 일정은 미정.", "발표일은 Jan. 5."),
        ("He reached Lv. 3. Then he quit.", "He reached Lv. 3."),
    ],
)
def test_a_number_signs_number_ending_a_sentence_is_no_list_mark(text, first):
    """The point after "Lv. 3" was taken for a list item's mark after a sentence (its "Lv." ends none):
    read 세 번째, and the two sentences were one."""
    assert split_sentences(text)[0] == first
    assert "번째" not in spoken(text)
    for size in (1, 3, len(text)):
        assert streamed(text, size) == split_sentences(text)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("방수 등급은 IP68.", "방수 등급은 IP 육팔."),  # IP68. was left: 육십팔
        ("IP67, IP68 등급", "IP 육칠, IP 육팔 등급"),  # one rating 육십칠, the other 육팔
        ("양극재는 NCM811, NCA 등", "양극재는 NCM 팔일일, NCA 등"),  # 팔백십일
        ("NCM 811.5", "NCM 811 점 오"),  # a decimal: left
    ],
)
def test_a_rating_or_a_cathode_before_a_point_or_a_comma_is_read_digit_by_digit(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("金大中 전 대통령", "김대중 전 대통령"),  # 금대중: the surname read as gold
        ("不正 행위", "부정 행위"),  # 불정
        ("不同 조건", "부동 조건"),
        ("十月 三日", "시월 삼일"),  # 십월
        ("六月", "유월"),
    ],
)
def test_hanja_read_in_korean_follow_its_sound_rules(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [("現金 흐름", "현금 흐름"), ("金土日 휴무", "금토일 휴무"), ("不可", "불가"), ("佛大", "불대")],
)
def test_gold_a_weekday_and_other_readings_of_those_hanja_stay(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x → 0일 때 극한값은 1이다.", "x가 0으로 갈 때 극한값은 1이다."),  # x에서 0일 때: from x
        ("n → ∞이면 수렴한다", "n이 무한대로 가면 수렴한다"),  # n에서 무한대이면
        ("h → 0인 극한", "h가 0으로 가는 극한"),
        ("x → 0.5", "x가 0 점 오로"),  # x가 0으로 점 오: the limit cut inside its decimal
        ("x → 0.5일 때", "x가 0 점 오로 갈 때"),
        ("lim_{x→0} f(x)", "lim_{x가 0으로} f(x)"),  # x에서 0
        ("x → 0으로 갈 때", "x가 0으로 갈 때"),
    ],
)
def test_a_limit_with_its_copula_or_a_decimal_goes_to_its_value(written, said):
    """ "x → 0일 때", calculus' commonest line, was read x에서 0일 때 (from x, when 0)."""
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"), [("A → B로 변환", "A에서 B로 변환"), ("전압 → 3.5", "전압에서 3 점 오")]
)
def test_an_arrow_from_a_word_or_a_capital_is_still_a_link(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x ≠ 0일 때", "x가 0이 아닐 때"),  # x 낫 이퀄 0일 때
        ("a ≠ b이면", "a가 b가 아니면"),
        ("n ≠ 1인 경우", "n이 1이 아닌 경우"),
        ("x ≠ y이고 y ≠ z이면", "x가 y가 아니고 y가 z가 아니면"),
        ("x ≠ 0", "x는 0이 아님"),  # no copula: as the branch read it
    ],
)
def test_not_equal_with_a_copula_is_said_as_a_clause(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("점심 11-12pm", "점심 오전 열한 시에서 오후 열두 시"),  # 오후 열한 시에서 열두 시: 11 at night
        ("회의 10-12pm", "회의 오전 열 시에서 오후 열두 시"),
        ("12-2pm 점심", "오후 열두 시에서 두 시 점심"),  # 12-오후 두 시
        ("근무 9-6pm", "근무 오전 아홉 시에서 오후 여섯 시"),  # 9-오후 여섯 시
        ("야간 10-2am", "야간 오후 열 시에서 오전 두 시"),
        ("1-3pm 세미나", "오후 한 시에서 세 시 세미나"),  # as the branch read it
    ],
)
def test_a_range_of_hours_to_from_or_past_noon_keeps_each_half_of_the_day(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("총 3 명한테 물었다", "총 세 명한테 물었다"),  # 삼 명한테: the spaced counter's particle unknown
        ("3 살짜리 아이", "세 살짜리 아이"),
        ("3 시경 도착", "세 시경 도착"),
        ("3 명이서 갔다", "세 명이서 갔다"),
        ("3 개예요", "세 개예요"),
        ("3 명께서 오셨다", "세 명께서 오셨다"),
    ],
)
def test_a_spaced_counter_with_any_particle_of_a_sentence_takes_a_native_number(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize("text", ["1 개요", "레벨 3 달성", "3 시장 동향", "그룹 2 잔여 용량", "3 시야각"])
def test_a_spaced_word_that_only_opens_like_a_counter_stays_sino_korean(text):
    assert spoken(text) == text


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (
            "p → q가 참이면 ¬q → ¬p도 참이다.",
            "p면 q가 참이면 낫 q면 낫 p도 참이다.",
        ),  # p에서 q가: from p; k12: "¬" said (낫)
        ("명제 p → q의 대우", "명제 p면 q의 대우"),
        ("p → q", "p면 q"),  # p가 q로: as a limit
        ("x → y → z", "x, y, z"),  # x에서 y가 z로
    ],
)
def test_an_arrow_between_propositions_is_a_conditional(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("(2) 식을 (1) 식에 대입하면", "(2) 식을 (1) 식에 대입하면"),  # 두 번째, 식을: an equation's number
        ("(1) 식에서 x를 구한다.", "(1) 식에서 x를 구한다."),
        ("(1) 식물의 구조", "첫 번째, 식물의 구조"),  # a list item whose word opens with 식
        ("1) 식품 안전", "첫 번째, 식품 안전"),
    ],
)
def test_an_equations_number_opening_a_line_is_no_list_mark(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("x → 0이면 f(x) → 1", "x가 0으로 가면 f(x)가 1로"),  # x, 0이면 f(x), 1: taken for a flow
        ("f(x) → 1일 때", "f(x)가 1로 갈 때"),  # f(x)에서 1일 때
        ("f(n) → 0", "f(n)이 0으로"),
    ],
)
def test_two_limits_of_one_line_and_a_functions_limit_go_to_their_values(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("금리↑ → 투자↓", "금리 증가에서 투자 감소 "),  # 금리 증가 에서: the particle a word of its own
        ("가격 ↑ → 수요 ↓", "가격  증가에서 수요  감소 "),
        ("A  →  B", "A에서 B"),  # two spaces: the arrow unsaid
    ],
)
def test_an_arrow_after_a_said_sign_or_two_spaces_still_joins_its_particle(written, said):
    assert spoken(written) == said
