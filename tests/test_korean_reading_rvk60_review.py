"""Stop 60's review of korean60 (rvk60): each case against what korean60 read (the comment beside it)."""

from __future__ import annotations

import pytest

from npu_worker.engine.korean_reading import spoken_form


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("미가 10:3으로 끝난다.", "미가 10장 3절로 끝난다."),  # korean60: 3절으로 (삼's particle after 절)
        ("시편 23:5를 보라.", "시편 23장 5절을 보라."),  # korean60: 5절를
        ("시편 23:1-6는 유명하다.", "시편 23장 1절에서 6절은 유명하다."),  # korean60: 6절는
        ("요한복음 3:16와 같다.", "요한복음 3장 16절과 같다."),  # korean60: 16절와
        # as korean60 read them: a particle that fits 절 already, 절 written, a copula, a word that only opens like one
        ("요한복음 3:16은 유명하다.", "요한복음 3장 16절은 유명하다."),
        ("요한복음 3:16절로 간다.", "요한복음 3장 16절로 간다."),
        ("요한복음 3:16이다.", "요한복음 3장 16절이다."),
        ("요한복음 3:16가지", "요한복음 3장 16절가지"),
    ],
)
def test_a_verse_s_particle_is_the_one_jeol_takes(text: str, said: str) -> None:
    """korean60 said a Bible verse's number as 절 and kept the particle the writer chose for the number's sound:
    요한복음 3장 16절와, 10장 3절으로."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean60: lambda ό gamma  omicron  sigma, Alpha  Beta  Gamma (a Greek word named letter by letter)
        ("The word λόγος means word here. 그렇다.", "The word λόγος means word here. 그렇다."),
        ("The Greek ΑΒΓ is the alphabet here. 그렇다.", "The Greek ΑΒΓ is the alphabet here. 그렇다."),
        # korean60: 5 mu A, ten mu m, zero point five mu s, The mu A range (a unit's micro named as the letter)
        ("The current is 5 μA here. 그렇다.", "The current is five microamperes here. 그렇다."),
        ("It is 10 μm wide here. 그렇다.", "It is ten micrometers wide here. 그렇다."),
        ("It is 10µm wide here. 그렇다.", "It is ten micrometers wide here. 그렇다."),
        ("The error is 0.5 μs here. 그렇다.", "The error is zero point five microseconds here. 그렇다."),
        ("The μA range is used here. 그렇다.", "The 마이크로암페어 range is used here. 그렇다."),
        # as korean60 read them (but its double space): a letter of its own, a pair with signs, a difference, two
        # letters of a formula, a Korean sentence's unit
        ("The μ is the mean here. 그렇다.", "The mu is the mean here. 그렇다."),
        ("The α⁺β⁻ state is here. 그렇다.", "The alpha plus beta minus state is here. 그렇다."),
        ("The Δx is small here. 그렇다.", "The Delta x is small here. 그렇다."),
        ("The Δθ is small here. 그렇다.", "The Delta theta is small here. 그렇다."),
        ("전류는 5 μA이다.", "전류는 5 마이크로암페어이다."),
    ],
)
def test_an_english_sentence_s_greek_word_and_micro_unit_are_no_letters_named(text: str, said: str) -> None:
    """korean60 named every Greek letter of an English sentence in English, a Greek word's letter by letter and a
    unit's micro as the letter mu: 5 mu A, where the Korean rules had said 마이크로암페어."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean60: x 5 미만 미만 y이면, x 0 초과 초과 y일 때, a 3 이하 이하 b이다 (two bounds in a row)
        ("x<5>y이면 참이다.", "x와 y는 5 미만이면 참이다."),
        ("x > 0 < y일 때", "x와 y는 0 초과일 때"),
        ("a ≤ 3 ≥ b이다.", "a와 b는 3 이하이다."),
        ("x<5>y인 경우", "x와 y는 5 미만인 경우"),
        # as korean60 read them: a spaced ending, a glued particle, a letter between, a longer name
        ("x<5>y 이면", "x와 y는 5 미만 이면"),
        ("x<5>y를 본다", "x 5 미만 미만 y를 본다"),
        ("a<b>c이면", "a<b>c이면"),
        ("x<5>yz이면", "x<5>yz이면"),
    ],
)
def test_a_peak_with_a_copula_glued_bounds_both_letters(text: str, said: str) -> None:
    """korean60 read a peak between two letters, "x<5>y", as both bounded only before a space: glued to its
    copula, as Korean is written, it was two bounds in a row, x 5 미만 미만 y이면."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("아가 3:00에 깼다.", "아가 세 시에 깼다."),  # korean60: 3장 00절에 (a baby's clock time)
        ("다니엘 10:05에 도착했다.", "다니엘 열 시 5분에 도착했다."),  # korean60: 10장 05절에
        ("시편 0:1", "시편 0 대 1"),  # korean60: 0장 1절
        # as korean60 read them: a verse, a long one, a range
        ("시편 119:105 말씀", "시편 119장 105절 말씀"),
        ("고린도전서 13:4~7절", "고린도전서 13장 4절에서 7절"),
    ],
)
def test_a_number_that_opens_with_zero_after_a_book_s_name_is_no_verse(text: str, said: str) -> None:
    """korean60 read any "N:NN" after a book's name as a verse, a clock's "3:00" after 아가 (a baby) or a name,
    다니엘, too: no chapter or verse is 0 or opens with it."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean60: 쓰리을, 나인를, 식스을, 쓰리과 … 나인가 (the particle the Korean digit takes, 삼을, 구를, 육을)
        ("x₀.₃을 구한다.", "x 제로 포인트 쓰리를 구한다."),
        ("x₀.₉를 구한다.", "x 제로 포인트 나인을 구한다."),
        ("α₀.₆을 본다.", "알파 제로 포인트 식스를 본다."),
        ("x₀.₃과 y₀.₉가 있다.", "x 제로 포인트 쓰리와 y 제로 포인트 나인이 있다."),
        ("x₀.₃으로 둔다.", "x 제로 포인트 쓰리로 둔다."),
        ("NCM₀.₉를 쓴다.", "N-C-M 제로 포인트 나인을 쓴다."),
        ("T₀.₃을 구한다.", "T 제로 포인트 쓰리를 구한다."),  # rvk21's, as korean60 read it: 쓰리을
        # as korean60 read them: a particle that fits already, a copula, 의, none
        ("CO₀.₅를 본다.", "C-O 제로 포인트 파이브를 본다."),
        ("x₀.₃이다.", "x 제로 포인트 쓰리이다."),
        ("x₀.₃의 값", "x 제로 포인트 쓰리의 값"),
        ("x₀.₅ 값", "x 제로 포인트 파이브 값"),
    ],
)
def test_a_decimal_index_s_particle_is_the_one_its_english_word_takes(text: str, said: str) -> None:
    """korean60 said a small letter's or an acronym's decimal index in English words and kept the particle the
    writer chose for the Korean digit: x 제로 포인트 쓰리을 (삼을), 나인를 (구를)."""
    assert spoken_form(text, "ko") == said


@pytest.mark.parametrize(
    ("text", "said"),
    [
        # korean60: x에 0이고, A에 B 이면, x에 3이면 (the object's 에 for a later term's particle, y를, C를)
        ("x ← 0이고 y를 출력한다.", "x는 0이고 y를 출력한다."),
        ("A ← B 이면 C를 얻는다.", "A는 B 이면 C를 얻는다."),
        ("x ← 3이면 y를 출력한다.", "x는 3이면 y를 출력한다."),
        ("max ← a[0]이고 이후 a[i]를 비교한다.", "max는 a[0]이고 이후 a[i]를 비교한다."),
        # as korean60 read them: a value with its particle, a minus's or an operator's words in it, one Korean word
        ("x ← -1로 둔다.", "x를 마이너스 1로 둔다."),
        ("x ← 3을 대입한다.", "x에 3을 대입한다."),
        ("x ← x + 1로 갱신한다.", "x를 x 더하기 1로 갱신한다."),
        ("n ← n - 1로 줄인다.", "n을 n 빼기 1로 줄인다."),
        ("합 ← 평균값으로 설정", "합을 평균값으로 설정"),
    ],
)
def test_a_left_arrow_s_value_ends_before_a_korean_word(text: str, said: str) -> None:
    """korean60 took the particle of any term up to 30 characters after a left arrow for its value's, across Korean
    words: "x ← 0이고 y를 출력" read x에 0이고, where the assignment is x는 0."""
    assert spoken_form(text, "ko") == said
