"""The languages an engine says it speaks, as `/health` lists them (`languages`): what a caller may send
as `lang` before a request is refused with `UnknownLanguage` (`npu-worker bench --lang` checks it
before its run, which it sent whole before, every request refused).

An optional engine method, `spoken_languages()`, as `check_language` is: espeak and ZipVoice's espeak
based tokenizers know theirs; a proxy (sovits) and ZipVoice's `simple` tokenizer take any, and list none.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from npu_worker.engine.espeak_lib import EspeakVoice, find_voice


def spoken_languages(engine: object) -> list[str] | None:
    """The engine's list, or None when it takes any language (or cannot tell)."""
    listed = getattr(engine, "spoken_languages", None)
    return listed() if callable(listed) else None


def espeak_spoken(voices: tuple[EspeakVoice, ...], aliases: dict[str, str]) -> list[str]:
    """Every language code of espeak-ng's voices, and each alias whose voice is there (`korean`, `en`).
    A code with a region the list lacks is still spoken when its language is (`ko-kr`: ko)."""
    codes = {code for voice in voices for code in voice.languages}
    codes |= {alias for alias, name in aliases.items() if find_voice(voices, name) is not None}
    return sorted(codes)


def tokenizer_languages(tokenizer: Any) -> list[str] | None:
    """A ZipVoice tokenizer's: None for `simple` (one token a character, any language), else espeak-ng's
    with the tokenizer's own (`emilia`'s Chinese and English codes)."""
    if getattr(tokenizer, "name", None) == "simple":
        return None
    return sorted({*_espeak_here(), *getattr(tokenizer, "LANGUAGES", ())})


@lru_cache(maxsize=1)
def _espeak_here() -> tuple[str, ...]:
    """`espeak_spoken` of this process's espeak-ng (what the tokenizers phonemize with), made once."""
    from npu_worker.engine.espeak import LANGUAGE_ALIASES
    from npu_worker.engine.espeak_lib import get_espeak

    return tuple(espeak_spoken(get_espeak().voices(), LANGUAGE_ALIASES))
