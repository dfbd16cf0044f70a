"""Token tables and tokenizers (espeak on the real espeak-ng library, simple, emilia's optional extra)."""

import importlib
import importlib.util
import json
import re
import sys
import unicodedata
from importlib import resources

import pytest

from npu_worker.engine.text_form import MOST_CLAUSE_CHARS, espeak_pieces
from npu_worker.engine.zipvoice.tokenizer import (
    PUNCTUATION,
    EspeakTokenizer,
    SimpleTokenizer,
    TokenTable,
    add_punctuation,
    choose_tokenizer,
    make_tokenizer,
)
from npu_worker.protocol import EngineError, ModelLoadError


def write_table(tmp_path, lines):
    path = tmp_path / "tokens.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_token_table_reads_tab_lines_with_the_space_token_and_the_pad_id(tmp_path):
    table = TokenTable.load(write_table(tmp_path, ["_\t0", " \t3", "a\t1", "ˈ\t2"]))
    assert table.pad_id == 0
    assert table.ids[" "] == 3
    assert table.to_ids(["a", " ", "ˈ", "?"]) == [1, 3, 2]  # unknown symbols are dropped


def test_token_table_without_pad_token_names_the_file(tmp_path):
    path = write_table(tmp_path, ["a\t1"])
    with pytest.raises(ModelLoadError, match="tokens.txt has no pad token"):
        TokenTable.load(path)


def test_token_table_with_a_bad_line_names_file_and_line(tmp_path):
    path = write_table(tmp_path, ["_\t0", "broken"])
    with pytest.raises(ModelLoadError, match="line 2"):
        TokenTable.load(path)


def test_final_full_stop_is_added_only_when_punctuation_is_missing():
    assert add_punctuation(" 안녕하세요 ") == "안녕하세요."
    assert add_punctuation("정말요?") == "정말요?"
    assert add_punctuation("好。") == "好。"


def test_simple_tokenizer_is_one_symbol_per_character():
    assert SimpleTokenizer().symbols("ab c.", "en") == ["a", "b", " ", "c", "."]


def test_espeak_tokenizer_gives_korean_ipa_characters_with_spaces_and_punctuation():
    symbols = EspeakTokenizer().symbols("안녕하세요. 오늘은 배터리를 봅니다.", "ko")
    assert all(len(s) == 1 for s in symbols)
    assert " " in symbols and "ˈ" in symbols
    assert symbols[-1] == "."
    assert "안" not in symbols  # phonemes, not Hangul


def test_espeak_tokenizer_keeps_the_final_mark_when_the_phonemizer_drops_it():
    tokenizer = EspeakTokenizer(phonemize=lambda text, voice: "nɛ")
    assert tokenizer.symbols("네?", "ko") == ["n", "ɛ", "?"]


def test_tokenizer_choice_follows_metadata_and_the_token_table(tmp_path):
    korean = TokenTable.load(write_table(tmp_path, ["_\t0", "a\t1"]))
    assert choose_tokenizer(None, {"use_espeak": "1", "use_pinyin": "1"}, korean) == "espeak"
    pinyin = TokenTable.load(write_table(tmp_path, ["_\t0", "b0\t1", "zh0\t2"]))
    assert choose_tokenizer(None, {"use_espeak": "1", "use_pinyin": "1"}, pinyin) == "emilia"
    assert choose_tokenizer(None, {"use_espeak": "0", "use_pinyin": "0"}, korean) == "simple"
    assert choose_tokenizer("simple", {"use_espeak": "1"}, korean) == "simple"
    with pytest.raises(ModelLoadError, match="unknown tokenizer"):
        choose_tokenizer("bpe", {}, korean)


def without_zh_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `import jieba`/`import pypinyin` fail as they do where the [zh] extra is not installed."""
    for name in ("jieba", "pypinyin", "cn2an"):
        monkeypatch.setitem(sys.modules, name, None)


def test_emilia_asked_for_without_the_zh_extra_is_a_clear_load_error(monkeypatch):
    without_zh_extra(monkeypatch)
    with pytest.raises(ModelLoadError, match=r"\[zh\] extra"):
        make_tokenizer("emilia", explicit=True)


def test_emilia_chosen_by_default_without_the_zh_extra_fails_only_on_chinese_text(monkeypatch):
    without_zh_extra(monkeypatch)
    tokenizer = make_tokenizer("emilia")
    with pytest.raises(EngineError, match=r"\[zh\] extra"):
        tokenizer.symbols("你好。", "zh")
    assert tokenizer.symbols("hello.", "en")[-1] == "."


@pytest.mark.parametrize("text", ["2024 was a good year.", "3 apples.", "안녕 means hello."])
def test_emilia_says_what_comes_before_the_first_latin_letter(text):
    """Characters before the first letter were a run of their own, of which only punctuation was kept:
    "2024 was a good year." was said "was a good year." (ZipVoice's own tokenizer reads them with
    the run that follows)."""
    assert make_tokenizer("emilia").symbols(text, "en") == EspeakTokenizer().symbols(text, "en-us")


def test_emilia_reads_a_korean_transcript_in_an_english_request():
    """The default Korean voice's transcript in a `lang: en` request gave only its punctuation: every
    such preview failed with "BadRequest: the reference transcript has no speakable words"."""
    transcript = "안녕하세요, 오늘은 발표를 시작하겠습니다."
    expected = EspeakTokenizer().symbols(transcript, "ko")
    assert make_tokenizer("emilia").symbols(transcript, "en") == expected


def test_emilia_sends_korean_to_espeak_as_a_korean_fine_tune_needs():
    korean = "안녕하세요. 반갑습니다."
    assert make_tokenizer("emilia").symbols(korean, "ko") == EspeakTokenizer().symbols(korean, "ko")


@pytest.mark.skipif(importlib.util.find_spec("jieba") is None, reason="needs the [zh] extra")
def test_emilia_tokenizer_gives_pinyin_initials_and_tone_finals():
    symbols = make_tokenizer("emilia").symbols("你好。", "zh")
    assert symbols[:4] == ["n0", "i2", "h0", "ao3"] and symbols[-1] == "."


def test_tokenizers_say_which_languages_they_know():
    espeak, emilia = EspeakTokenizer(), make_tokenizer("emilia")
    assert espeak.knows_language("ko") and espeak.knows_language("en_US")
    assert not espeak.knows_language("xx-nowhere")
    assert emilia.knows_language("zh") and emilia.knows_language("ko")  # ko goes to espeak
    assert not emilia.knows_language("xx-nowhere")
    assert SimpleTokenizer().knows_language("xx-nowhere")  # characters need no phonemizer


@pytest.mark.parametrize(
    ("given", "composed"),
    [
        (unicodedata.normalize("NFD", "한글 입니다."), "한글 입니다."),  # "입니다" was "iˈɯŋipnˌidɐ"
        (unicodedata.normalize("NFD", "café."), "café."),  # "kˈeɪf"
        ("１２３ ＡＢＣ.", "123 ABC."),  # no phoneme at all for the digits
        ("① ㉑ Ⓐ ㈜ 5㎞ 3㎡.", "1 21 A (주) 5km 3m²."),  # "Chinese letter", dropped, a code point spelled
    ],
    ids=["nfd-hangul", "nfd-accent", "full-width", "enclosed-and-squared"],
)
def test_decomposed_and_full_width_text_gives_the_phonemes_of_its_composed_ascii_form(given, composed):
    for lang in ("ko", "en"):
        assert EspeakTokenizer().symbols(given, lang) == EspeakTokenizer().symbols(composed, lang)


def test_a_text_that_crashes_espeak_is_an_engine_error_and_the_next_one_phonemizes():
    """espeak-ng aborts the process it runs in on "s'" * 100 (a stack overflow in its suffix rules)."""
    tokenizer = EspeakTokenizer()
    korean = tokenizer.symbols("안녕하세요.", "ko")
    with pytest.raises(EngineError, match="espeak-ng's process failed"):
        tokenizer.symbols("s'" * 100, "ko")
    assert tokenizer.symbols("안녕하세요.", "ko") == korean


@pytest.mark.parametrize("unit", ["가", "x"])
def test_a_long_run_without_spaces_is_said_whole(unit):
    """espeak-ng says only the first ~40 letters or ~75 syllables of a word (and takes time growing with
    the square of its length): the rest of a key, a URL or unspaced Korean was silently dropped."""
    tokenizer = EspeakTokenizer()
    short, long = (len(tokenizer.symbols(unit * n + ".", "ko")) for n in (60, 120))
    assert long > 1.9 * short


def test_a_long_korean_passage_without_punctuation_is_said_whole():
    """espeak-ng dropped what a clause held past ~150 characters of Korean: the lecture's first 60
    words with their marks taken out (ASR text, a pasted transcript) lost a third of their phonemes."""
    raw = resources.files("npu_worker.bench").joinpath("lecture_ko_39.json").read_text(encoding="utf-8")
    text = " ".join(section["text"] for section in json.loads(raw)["sections"][:8])
    words = re.sub(r"[.,?!]", "", text).split()[:60]
    with_commas = ", ".join(" ".join(words[i : i + 10]) for i in range(0, 60, 10))
    tokenizer = EspeakTokenizer()

    def said(text: str) -> list[str]:
        return [s for s in tokenizer.symbols(text, "ko") if s not in PUNCTUATION and not s.isspace()]

    assert len(said(" ".join(words))) >= 0.97 * len(said(with_commas))


@pytest.mark.parametrize(
    "text", ["", "안녕.", "가방을 " * 80, ("가방을 " * 20 + ", ") * 6, "가" * 150 + " 나다", "a\nb " * 60]
)
def test_espeak_pieces_keep_the_text_and_bound_each_clause(text):
    pieces = espeak_pieces(text)
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "")  # spaces added in long words only
    for piece in pieces:
        assert max(len(run) for run in re.split(r"[.,;:!?\n]", piece)) <= MOST_CLAUSE_CHARS
        assert max(len(word) for word in piece.split() or [""]) <= 48
