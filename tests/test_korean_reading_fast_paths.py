"""The Korean reading's fast paths against its full rules, on many texts: the lecture's sentences with the
characters the rules react to put in them. A plain text (`korean_reading.PLAIN`) skips all but the list
mark's rule, a text without a digit the four digit groups, `readable` its translation where nothing changes,
`espeak_pieces` its cutting for a short text: where a fast path read a text otherwise than the full rules,
a slide would be said differently for an unrelated character."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from importlib import resources

import pytest

from npu_worker.engine import korean_held, korean_reading, text_form

# The characters the rules and the fast paths' guards react to: full-width forms, enclosed and squared forms,
# controls, zero-width and other spaces, decomposed and compatibility jamo, Hanja, kana, signs and marks.
INSERTED = [
    *"　\u00a0\u200b\u2060\ufeff\u2028\u2029\x85\x1c\x1f\x0b\x0c\t\n\r\x01\x7f",
    *"ＡＢｘ１２％＄＋～∼→←⇒^²³ⁿᵀ§№$€₩¥£㎞㎡①㉑Ⓐ㈜ㄱㅏ漢字すしｶﾅﾡ~%+-=<>/*&#_@[]|\\`·…“”",
    *("\u1100\u1161", "\u11a8", "가. ", "\n나. ", "ㄱ. ", "1. ", "II. ", "x", "A", "e.g.", "etc", "d", "H"),
]


def lecture_sentences() -> list[str]:
    raw = resources.files("npu_worker.bench").joinpath("lecture_ko_39.json").read_text(encoding="utf-8")
    sections = [section["text"] for section in json.loads(raw)["sections"]]
    return [sentence for text in sections for sentence in re.split(r"(?<=[.?!])\s+", text)]


def every_rule(text: str) -> str:
    """`korean_reading.spoken` with no pass skipped: neither the plain text's path nor a digit group's guard."""
    digit = korean_reading._DIGIT
    korean_reading._DIGIT = re.compile("")  # found in every text: each group runs
    try:
        paths: list[str] = []
        if not korean_held._PRIVATE_USE.search(text):
            text = korean_held._ADDRESS.sub(lambda m: korean_held._held(m, paths), text)
        text = korean_reading._numbers_spoken(text)
    finally:
        korean_reading._DIGIT = digit
    first = korean_held._FIRST_PRIVATE_USE
    return korean_held._PRIVATE_USE.sub(lambda m: paths[ord(m.group()) - first], text) if paths else text


def mutated_texts(count: int, seed: int) -> list[str]:
    """Pieces of the lecture's sentences (at most 100 characters) with up to three characters of `INSERTED`
    put in, a tenth of them decomposed (NFD)."""
    rng, sentences, texts = random.Random(seed), lecture_sentences(), []
    for _ in range(count):
        text = rng.choice(sentences)
        if len(text) > 100:
            start = rng.randrange(len(text) - 100)
            text = text[start : start + 100]
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(INSERTED) + text[at:]
        texts.append(unicodedata.normalize("NFD", text) if rng.random() < 0.1 else text)
    return texts


def test_the_full_rules_are_forced():
    assert every_rule("가. 전압을 측정한다.") == korean_reading._numbers_spoken("가. 전압을 측정한다.")
    assert every_rule("https://a.kr/x?q=1 3.7V") == korean_reading.spoken("https://a.kr/x?q=1 3.7V")


@pytest.mark.parametrize("seed", [0, 1])
def test_the_fast_paths_read_a_text_as_every_rule_does(seed):
    texts = mutated_texts(1000, seed)
    assert sum(bool(korean_reading.PLAIN.fullmatch(text)) for text in texts) > 60  # the plain path is met
    assert sum(not re.search(r"\d", text) for text in texts) > 200  # and the digit groups' skip
    for written in texts:
        for text in (written, text_form.readable(written)):  # as given, and as `spoken_form` hands it over
            assert korean_reading.spoken(text) == every_rule(text), text


@pytest.mark.parametrize("template", ["가. 전압을{}측정한다.", "{}나. 목적"])
def test_a_plain_text_with_any_one_character_reads_as_every_rule_reads_it(template):
    """Each character of the Basic Multilingual Plane that a rule or a guard could take for plain text: the
    class's own (Hangul syllables, spaces of every kind, sentence marks) and its neighbours."""
    near = [
        *range(0x00, 0x100),
        *range(0x1100, 0x1200),
        *range(0x2000, 0x2070),
        *range(0x2460, 0x2500),
        *range(0x3000, 0x3400),
        *range(0xA960, 0xA980),
        *range(0xD7B0, 0xD800),
        *range(0xFF00, 0xFFF0),
        0xAC00,
        0xAC01,
        0xD7A3,
        0xD7A4,
    ]
    for code in near:
        text = template.format(chr(code))
        for given in (text, text_form.readable(text)):
            assert korean_reading.spoken(given) == every_rule(given), hex(code)


def pieces_cut_everywhere(text: str) -> list[str]:
    """`espeak_pieces` without its short text's path."""
    pieces, current, run = [], "", 0
    for match in text_form._WORD.finditer(text_form._LONG_WORD.sub(r"\1 ", text)):
        word = match.group(0)
        if current and run + len(word) > text_form.MOST_CLAUSE_CHARS:
            pieces.append(current)
            current, run = "", 0
        current += word
        marks = list(text_form._CLAUSE_MARK.finditer(word))
        run = len(word) - marks[-1].end() if marks else run + len(word)
    return [*pieces, current] if current or not pieces else pieces


def test_a_short_text_is_cut_and_formed_as_a_long_ones_rules_do():
    rng = random.Random(7)
    alphabet = [*"가나다 x.,\t\n", "\u3000", "\xa0", "\u200b", "\x1c", "\x85", "\u2028", "\x01", "①", "Ａ"]
    alphabet += ["\u1100", "\u1161", "\u11a8", "e\u0301", "ﾡ", "\uff9e"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(130)))
        assert text_form.espeak_pieces(text) == pieces_cut_everywhere(text), text
        composed = unicodedata.normalize("NFC", text)
        assert text_form.readable(text) == unicodedata.normalize(
            "NFC", composed.translate(text_form._FORM)
        ), text
