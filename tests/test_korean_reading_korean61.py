"""Stop 60's reading follow-ups (korean61): each case against what the reading before it said (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # rvk60: 10장 30절에, 9장 15절부터, 7장 45절까지, 2장 30절에 (a time after a name that is also a book's, a verse)
        ("요나 10:30에 왔다.", "요나 열 시 30분에 왔다."),
        ("요엘 9:15부터 일했다.", "요엘 아홉 시 15분부터 일했다."),
        ("다니엘 7:45까지 기다렸다.", "다니엘 일곱 시 45분까지 기다렸다."),
        ("미가 2:30에 만나자.", "미가 두 시 30분에 만나자."),
        # as rvk60 read them: a verse by its 절, a one-digit verse, a minute past 59, another word, a full book's name
        ("요나 3:10절에 나온다.", "요나 3장 10절에 나온다."),
        ("미가 5:2에 나온다.", "미가 5장 2절에 나온다."),
        ("다니엘 2:44에 나온다.", "다니엘 2장 44절에 나온다."),
        # korean61: 두 시 44분에 대한, 두 시 28분에 관해, 열두 시 13분에 언급된 (a commentary's words after 에, a time's)
        ("다니엘 2:44에 대한 해석", "다니엘 2장 44절에 대한 해석"),
        ("요엘 2:28에 관해 말하자면", "요엘 2장 28절에 관해 말하자면"),
        ("다니엘 12:13에 언급된 끝", "다니엘 12장 13절에 언급된 끝"),
        ("아가 2:10에 등장하는 표현", "아가 2장 10절에 등장하는 표현"),
        ("요나 10:30에도 왔다.", "요나 열 시 30분에도 왔다."),  # korean61: 10장 30절에도 (에는 a time's)
        ("다니엘 2:44에도 나온다.", "다니엘 2장 44절에도 나온다."),  # as before
        ("다니엘 2:44에는 나온다.", "다니엘 2장 44절에는 나온다."),  # korean61: 두 시 44분에는
        ("요나 1:17 말씀", "요나 1장 17절 말씀"),
        ("다니엘 9:70에 나온다.", "다니엘 9장 70절에 나온다."),
        ("요한복음 3:16에 나온다.", "요한복음 3장 16절에 나온다."),
    ],
)
def test_a_name_that_is_also_a_book_s_before_a_time(text: str, said: str) -> None:
    """rvk60 read a clock time after 요나, 요엘, 다니엘, 미가 as a verse: 요나 10장 30절에 왔다."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("요한복음 3:16~4:2", "요한복음 3장 16절에서 4장 2절"),  # rvk60: 16절에서 4 대 2
        ("요한복음 3:16-4:2를 읽어라.", "요한복음 3장 16절에서 4장 2절을 읽어라."),  # rvk60: 16절-4 대 2를
        ("시편 23:1-6을 읽어라.", "시편 23장 1절에서 6절을 읽어라."),  # as before
    ],
)
def test_a_verse_range_to_another_chapter(text: str, said: str) -> None:
    """rvk60 read the second reference of a range across chapters as a ratio."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("3:16와 같이 한다.", "세 시 16분과 같이 한다."),  # rvk60: 16분와
        ("3:20와 3:30 사이", "세 시 20분과 세 시 30분 사이"),  # rvk60: 20분와
        ("3:05로 옮겼다.", "세 시 5분으로 옮겼다."),  # rvk60: 5분로
        ("3:00을 넘겼다.", "세 시를 넘겼다."),  # rvk60: 세 시을
        ("3:16과 같이 한다.", "세 시 16분과 같이 한다."),  # as before
        ("비율은 1:10과 같다.", "비율은 1 대 10과 같다."),  # a ratio's, as before
    ],
)
def test_a_clock_s_particle_is_the_one_its_last_word_takes(text: str, said: str) -> None:
    """rvk60 kept the particle the writer chose for the minute's sound after the clock's 분 or 시."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # rvk60: eight thousand eighty to eighty, twenty-two to twenty-two (a ratio's word)
        (
            "Run docker run -p 8080:80 now. 그렇다.",
            "Run docker run -p eight thousand eighty colon eighty now. 그렇다.",
        ),
        ("Use -p 22:22 here. 그렇다.", "Use -p twenty-two colon twenty-two here. 그렇다."),
        # rvk60: 3 점 오영 달러, not 4 (the Korean rules' money and digit in an English sentence)
        ("It costs $3.50, not 4. 그렇다.", "It costs three dollars and fifty cents, not four. 그렇다."),
        ("It costs $1,000, not 4. 그렇다.", "It costs one thousand dollars, not four. 그렇다."),
        # rvk60: nine hundred eleven, one hundred twelve (a phone number said as an amount)
        ("Call 911 or one. 그렇다.", "Call nine one one or one. 그렇다."),
        ("Please dial 112 now. 그렇다.", "Please dial one one two now. 그렇다."),
        ("Call 3 times. 그렇다.", "Call 3 times. 그렇다."),  # a count, as before
        # korean61: one one two or one hundred nineteen (the list's first number only, the pair's rule the second)
        ("Call 112 or 119 now. 그렇다.", "Call one one two or one one nine now. 그렇다."),
        (
            "Dial 112, 119, or 911 now. 그렇다.",
            "Dial one one two, one one nine, or nine one one now. 그렇다.",
        ),
        (
            "Call 911 or 3 people. 그렇다.",
            "Call nine one one or three people. 그렇다.",
        ),  # a count after it, as before
        # rvk60: Press gets to go back, Hit to twice (an assignment's and a map's words for a key)
        ("Press ← to go back. 그렇다.", "Press left arrow to go back. 그렇다."),
        ("Then press the ← key. 그렇다.", "Then press the left arrow key. 그렇다."),
        ("Hit → twice. 그렇다.", "Hit right arrow twice. 그렇다."),
        # korean61: left arrow and to, Ctrl plus gets (the second key of a pair, a key after a modifier)
        ("Use ← and → to move. 그렇다.", "Use left arrow and right arrow to move. 그렇다."),
        ("Press Ctrl+← to jump. 그렇다.", "Press Ctrl plus left arrow to jump. 그렇다."),
        ("Press Shift + → here. 그렇다.", "Press Shift plus right arrow here. 그렇다."),
        (
            "To go back, press ←. 그렇다.",
            "To go back, press left arrow. 그렇다.",
        ),  # rvk60: press . (a bullet's)
        (
            "Please call 911 now. 그렇다.",
            "Please call nine one one now. 그렇다.",
        ),  # rvk60: 911 (the Korean voice's)
        ("Here x ← x + 1 is an update. 그렇다.", "Here x gets x plus one is an update. 그렇다."),  # as before
    ],
)
def test_an_english_sentence_s_ports_amounts_phone_numbers_and_keys(text: str, said: str) -> None:
    """rvk60 read a port mapping as a ratio, a dollar amount before a comma and a phone number as amounts, and a key's
    arrow as an assignment."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("αₙ을 구한다.", "알파 n을 구한다."),  # rvk60: 알파ₙ을 (espeak: 알피으파 엔을, garbled)
        ("xₙ을 구한다.", "x n을 구한다."),  # rvk60: xₙ을 (espeak: x을, the index unsaid)
        ("aᵢⱼ를 구한다.", "a i j를 구한다."),  # rvk60: aᵢⱼ를
        ("The xₙ term. 그렇다.", "The x n term. 그렇다."),  # rvk60: xₙ
        ("x ≤ 2σᵢ", "x 2시그마 i 이하"),  # rvk60: 2시그마ᵢ (the bounds' rules place it first, as before)
        ("x₁을 구한다.", "x₁을 구한다."),  # a digit's, which espeak says, as before
        # korean61: x n를, a i을, x i과 y n와 (the particle in the term's letter's form, after the index said)
        ("xₙ를 구한다.", "x n을 구한다."),
        ("aᵢ을 구한다.", "a i를 구한다."),
        ("xᵢ과 yₙ와 같다.", "x i와 y n과 같다."),
        ("xₙ로 둔다.", "x n으로 둔다."),
    ],
)
def test_a_subscript_letter_index_is_said(text: str, said: str) -> None:
    """rvk60 left a subscript letter to espeak, which said nothing for it after a Latin letter and garbled a Greek
    letter's name before it."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    "text",
    [
        "요나 " + "1:1" * 3400,
        "요한복음 1:1-" * 1000,
        "3:16" + "와" * 10_000,
        "Call " + "9" * 10_000,
        "Call " + "911 or " * 1400 + "911 times",
        "Press " + "←" * 5000,
        "α⁺" * 5000,
        "x" + "ₙ" * 10_000,
    ],
)
def test_the_new_patterns_stay_linear_on_long_hostile_runs(text: str) -> None:
    """10 KB runs each read once (a pattern that backtracked would take minutes here, not a fraction of a second)."""
    assert spoken_form(text, "ko")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("α⁺β", "알파 플러스 베타"),  # rvk60: 알파⁺베타 (the sign unsaid)
        ("α⁺β 상태를 본다.", "알파 플러스 베타 상태를 본다."),  # rvk60: 알파⁺베타
        ("The α⁺β state. 그렇다.", "The alpha plus beta state. 그렇다."),  # rvk60: alpha⁺beta
        ("α⁺β⁻", "알파 플러스 베타 마이너스"),  # as before
        ("α⁺β²", "알파⁺베타의 2제곱"),  # a power's letter, as before
    ],
)
def test_a_greek_letter_s_sign_before_a_letter_without_one(text: str, said: str) -> None:
    """rvk60 said a Greek letter's sign only where the next letter had a sign too, "α⁺β⁻"."""
    assert spoken_form(text, "ko") == said
