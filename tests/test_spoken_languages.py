"""What /health lists as the engine's languages, for ZipVoice's tokenizers (the espeak engine's list is
checked through a served worker in tests/test_bench_language.py)."""

from __future__ import annotations

from npu_worker.engine.spoken_languages import tokenizer_languages
from npu_worker.engine.zipvoice.tokenizer import (
    EmiliaTokenizer,
    EspeakTokenizer,
    SimpleTokenizer,
    espeak_knows,
)


def test_the_simple_tokenizer_takes_any_language_and_lists_none():
    assert tokenizer_languages(SimpleTokenizer()) is None


def test_the_espeak_based_tokenizers_list_what_they_accept():
    """Each code listed is one the tokenizer accepts (no list that the language check then refuses)."""
    espeak, emilia = EspeakTokenizer(), EmiliaTokenizer()
    listed = tokenizer_languages(espeak)
    assert listed is not None and {"ko", "en", "en-us", "korean", "cmn"} <= set(listed)
    assert all(espeak.knows_language(code) for code in listed)
    with_own = tokenizer_languages(emilia)
    assert with_own is not None and {"zh-tw", "yue", *listed} <= set(with_own)
    assert all(emilia.knows_language(code) for code in with_own) and not espeak_knows("zz")


def test_voice_names_and_identifiers_are_listed_after_the_codes():
    """espeak-ng takes a voice's name or identifier as `lang` (`german`, `gmw/en-us`): unlisted, `bench
    --lang german` and the player said the worker did not speak it. They come after the codes, so a
    refusal, which shows the list's first entries, shows codes."""
    listed = tokenizer_languages(EspeakTokenizer())
    assert listed is not None and {"german", "gmw/en-us", "english (america)"} <= set(listed)
    assert listed[0] == "af" and listed.index("zh") < listed.index("gmw/en-us")
