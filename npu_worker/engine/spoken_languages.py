"""The languages an engine says it speaks, as `/health` lists them (`languages`): what a caller may send
as `lang` before a request is refused with `UnknownLanguage` (`npu-worker bench --lang` checks it
before its run, which it sent whole before, every request refused).

An optional engine method, `spoken_languages()`, as `check_language` is: espeak and ZipVoice's espeak
based tokenizers know theirs; a proxy (sovits) and ZipVoice's `simple` tokenizer take any, and list none.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from npu_worker.engine.base import language_code
from npu_worker.engine.espeak_lib import EspeakVoice, find_voice


def spoken_languages(engine: object) -> list[str] | None:
    """The engine's list, or None when it takes any language (or cannot tell)."""
    listed = getattr(engine, "spoken_languages", None)
    return listed() if callable(listed) else None


def espeak_spoken(
    voices: tuple[EspeakVoice, ...], aliases: dict[str, str], own: tuple[str, ...] = ()
) -> list[str]:
    """Every language code of espeak-ng's voices, each alias whose voice is there (`korean`, `en`), and
    each voice's name and identifier, which `find_voice` takes as well (`german`, `gmw/en-us`: without
    them `bench --lang german` and the player said the worker did not speak what it spoke), after the
    codes. A code with a region the list lacks is still spoken when its language is (`ko-kr`: ko)."""
    codes = {code for voice in voices for code in voice.languages}
    codes |= {alias for alias, name in aliases.items() if find_voice(voices, name) is not None}
    codes |= set(own)  # a tokenizer's own (`emilia`'s Chinese and English)
    names: set[str] = set()
    for voice in voices:
        identifier = voice.identifier.lower()
        spelt = (voice.name.lower(), identifier, identifier.rsplit("/", 1)[-1])
        names |= {name for name in spelt if name and language_code(name) == name}  # (one that reaches it)
    return sorted(codes) + sorted(names - codes)  # the codes first: what a refusal shows of the list


def tokenizer_languages(tokenizer: Any) -> list[str] | None:
    """A ZipVoice tokenizer's: None for `simple` (one token a character, any language), else espeak-ng's
    with the tokenizer's own (`emilia`'s Chinese and English codes)."""
    if getattr(tokenizer, "name", None) == "simple":
        return None
    return list(_espeak_here(tuple(getattr(tokenizer, "LANGUAGES", ()))))


@lru_cache(maxsize=4)
def _espeak_here(own: tuple[str, ...]) -> tuple[str, ...]:
    """`espeak_spoken` of this process's espeak-ng (what the tokenizers phonemize with), made once."""
    from npu_worker.engine.espeak import LANGUAGE_ALIASES
    from npu_worker.engine.espeak_lib import get_espeak

    return tuple(espeak_spoken(get_espeak().voices(), LANGUAGE_ALIASES, own))
