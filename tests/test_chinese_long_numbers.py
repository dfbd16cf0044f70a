"""Chinese text with a number longer than cn2an reads (16 digits before the point, 16 after): an ID, a
card number, a constant's digits. A long whole part was left as digits, which no pinyin token table holds
(the number went unsaid), a long fraction cut to 16 digits, each with a UserWarning that, taken as an
error, left every number of the text unread. Such a number is read digit by digit."""

from __future__ import annotations

import importlib.util
import warnings

import pytest

from npu_worker.engine.zipvoice.tokenizer import make_tokenizer

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("jieba", "pypinyin", "cn2an")),
    reason="needs the [zh] extra",
)

DIGITS = "零一二三四五六七八九"


def spelt(number: str) -> str:
    return "".join(DIGITS[int(digit)] if digit.isdigit() else "点" for digit in number)


@pytest.mark.parametrize(
    "number",
    [
        "12345678901234567890",
        "98765432109876543",
        "12345678901234567.25",
        "3.14159265358979323846",  # cn2an kept 16 of the 20 digits after the point
        "1234567890123456.12345678901234567",
    ],
)
def test_a_number_past_sixteen_digits_is_read_digit_by_digit(number):
    tokenizer = make_tokenizer("emilia")
    symbols = tokenizer.symbols(f"编号{number}。", "zh")
    assert symbols == tokenizer.symbols(f"编号{spelt(number)}。", "zh")
    assert not any(symbol.isdigit() for symbol in symbols)


def test_a_long_percentage_is_said_as_one():
    tokenizer = make_tokenizer("emilia")
    number = "12345678901234567890"
    assert tokenizer.symbols(f"比例{number}%。", "zh") == tokenizer.symbols(
        f"比例百分之{spelt(number)}。", "zh"
    )


def test_a_long_number_leaves_the_other_numbers_read_as_numbers_even_with_warnings_as_errors():
    tokenizer = make_tokenizer("emilia")
    long_number = "12345678901234567890"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        symbols = tokenizer.symbols(f"我有3个和{long_number}个。", "zh")
    assert symbols == tokenizer.symbols(f"我有三个和{spelt(long_number)}个。", "zh")


def test_a_number_of_sixteen_digits_is_still_read_as_a_number():
    tokenizer = make_tokenizer("emilia")
    number = "1234567890123456"
    symbols = tokenizer.symbols(f"编号{number}。", "zh")
    assert not any(symbol.isdigit() for symbol in symbols)
    assert symbols != tokenizer.symbols(f"编号{spelt(number)}。", "zh")  # 一千二百三十四万…, not 一二三四…
