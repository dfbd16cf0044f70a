"""Text → token ids for ZipVoice: `espeak` (any espeak-ng language, Korean fine-tunes), `simple`
(one token per character) and `emilia` (the released zh/en models; optional `[zh]` extra).

The token table comes from the model's tokens.txt; symbols it does not know are dropped, as in the
reference tokenizers. Which tokenizer a model needs is chosen from its metadata and token table
(`choose_tokenizer`), and a setting can override it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from npu_worker.engine.base import language_code
from npu_worker.engine.espeak import READER_WARM_UP, voice_names
from npu_worker.engine.espeak_phonemizer import ChildPhonemizer
from npu_worker.engine.korean_reading import spoken_form
from npu_worker.engine.text_form import espeak_pieces
from npu_worker.protocol import ModelLoadError

PUNCTUATION = frozenset(";:,.!?；：，。！？")
_FULLWIDTH = str.maketrans({"，": ",", "。": ".", "！": "!", "？": "?", "；": ";", "：": ":", "、": ","})


@dataclass(frozen=True)
class TokenTable:
    """tokens.txt: `token<TAB>id` per line (a whitespace separator is accepted too)."""

    ids: Mapping[str, int]
    pad_id: int

    @classmethod
    def load(cls, path: Path) -> TokenTable:
        ids: dict[str, int] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelLoadError(f"cannot read token table {path}: {exc}") from exc
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            separator = line.rfind("\t")
            if separator < 0:
                separator = line.rfind(" ")
            token, raw_id = line[:separator], line[separator + 1 :]
            if separator <= 0 or not raw_id.strip().isdigit():
                raise ModelLoadError(f"{path} line {number} is not 'token<TAB>id': {line!r}")
            ids[token] = int(raw_id)
        if "_" not in ids:
            raise ModelLoadError(f"{path} has no pad token '_'")
        return cls(ids=ids, pad_id=ids["_"])

    def to_ids(self, symbols: list[str]) -> list[int]:
        return [self.ids[s] for s in symbols if s in self.ids]

    def has_pinyin(self) -> bool:
        """True when the table holds emilia's pinyin initials (`b0`, `zh0`, ...)."""
        return "zh0" in self.ids or "b0" in self.ids


def add_punctuation(text: str) -> str:
    """A final full stop when the text ends without punctuation (reference behaviour)."""
    text = text.strip()
    if text and text[-1] not in PUNCTUATION:
        text += "."
    return text


class Tokenizer(Protocol):
    name: str

    def symbols(self, text: str, lang: str) -> list[str]:
        """Token symbols of one text (no table lookup)."""
        ...

    def knows_language(self, lang: str) -> bool:
        """Whether `symbols` can phonemize `lang` (checked when a request arrives, before it queues)."""
        ...


class SimpleTokenizer:
    """One token per character, no normalisation."""

    name = "simple"

    def symbols(self, text: str, lang: str) -> list[str]:
        return list(text)

    def knows_language(self, lang: str) -> bool:
        return True


Phonemize = Callable[[str, str], "str | list[str]"]


# espeak-ng's phonemes, made in a child process started on first use: a text that crashes espeak's
# parser fails its section instead of ending the worker.
_default_phonemize: Phonemize = ChildPhonemizer()


def espeak_voice(lang: str) -> str:
    """Request `lang` → espeak-ng voice name (`en` means `en-us`, as the reference tokenizer), found as
    the espeak engine finds it: a code with no voice of its own falls back to its language ("ko-KR",
    a browser's language, is ko: ZipVoice refused it as an unknown language while espeak spoke it)."""
    return _voice_of(language_code(lang))


@lru_cache(maxsize=64)
def _voice_of(code: str) -> str:
    from npu_worker.engine.espeak_lib import get_espeak

    names = list(voice_names(code).values())
    return next((name for name in names if get_espeak().find_voice(name) is not None), names[0])


def espeak_knows(lang: str) -> bool:
    """Whether espeak-ng has a voice for request `lang`."""
    from npu_worker.engine.espeak_lib import get_espeak

    return get_espeak().find_voice(espeak_voice(lang)) is not None


def espeak_languages() -> list[str]:
    """The language codes espeak-ng has voices for (what an UnknownLanguage answer lists)."""
    from npu_worker.engine.espeak_lib import get_espeak

    return sorted({voice.languages[0] for voice in get_espeak().voices() if voice.languages})


class EspeakTokenizer:
    """espeak-ng IPA phonemes flattened to single characters (spaces, stress marks, punctuation kept).

    If espeak drops the clause's final punctuation, the text's own final mark is kept, because the
    model was trained with it and the segmenter relies on it. Korean text is read in its
    `spoken_form`.
    """

    name = "espeak"

    def __init__(self, phonemize: Phonemize | None = None) -> None:
        self._phonemize = phonemize or _default_phonemize
        spoken_form(READER_WARM_UP, "ko")  # the reader's patterns a lecture uses compile now (`lazy_re`)

    def symbols(self, text: str, lang: str) -> list[str]:
        voice = espeak_voice(lang)
        flat = " ".join(self._phonemes(piece, voice) for piece in espeak_pieces(spoken_form(text, lang)))
        flat = unicodedata.normalize("NFC", flat.replace("\n", " ")).strip()
        final = text.strip()[-1:].translate(_FULLWIDTH)
        if final in PUNCTUATION and not flat.endswith(final):
            flat = flat.rstrip(".,;:!? ") + final
        return list(flat)

    def _phonemes(self, text: str, voice: str) -> str:
        phonemes = self._phonemize(text, voice)
        return ("".join(phonemes) if isinstance(phonemes, list) else str(phonemes)).strip()

    def knows_language(self, lang: str) -> bool:
        return espeak_knows(lang)


class EmiliaTokenizer:
    """The released zh/en models' tokenizer: Chinese via jieba + pypinyin (initial + `0`, tone-3
    final), Latin letters via espeak `en-us`.

    Requests in other languages go to espeak for that language: fine-tunes made with the official
    recipe (Korean with `--tokenizer espeak`) keep the pretrained tokens.txt, pinyin included, and their
    export metadata says `use_pinyin=1` like every export, so a Korean fine-tune looks like an emilia
    model from its files. The [zh] extra is only needed once Chinese text arrives (or when this
    tokenizer is asked for explicitly: `require_chinese`).
    """

    name = "emilia"
    LANGUAGES = ("zh", "cmn", "en", "en-us", "zh-cn", "zh-tw", "yue")

    def __init__(self, phonemize: Phonemize | None = None, require_chinese: bool = False) -> None:
        if require_chinese:
            self._require_chinese(ModelLoadError)
        self._espeak = EspeakTokenizer(phonemize)

    @staticmethod
    def _require_chinese(error: type[Exception]) -> None:
        try:
            import jieba  # noqa: F401
            import pypinyin  # noqa: F401
        except ImportError as exc:
            raise error(
                "the emilia tokenizer needs the [zh] extra for Chinese (pip install '.[zh]' in the npu-worker checkout): "
                + str(exc)
            ) from exc

    def knows_language(self, lang: str) -> bool:
        return language_code(lang) in self.LANGUAGES or espeak_knows(lang)

    def symbols(self, text: str, lang: str) -> list[str]:
        if language_code(lang) not in self.LANGUAGES:
            return self._espeak.symbols(text, lang)
        text = text.translate(_FULLWIDTH)
        runs = _language_runs(text)
        if any(kind == "zh" for _, kind in runs):
            from npu_worker.protocol import EngineError

            self._require_chinese(EngineError)
            runs = _language_runs(_normalise_chinese_numbers(text))
        result: list[str] = []
        for piece, kind in runs:
            if kind == "zh":
                result += self._chinese(piece)
            elif kind == "en":
                result += self._espeak.symbols(piece, "en-us")
            elif _HANGUL.search(piece):  # no Latin or Han in the text: a Korean voice's transcript, say
                result += self._espeak.symbols(piece, "ko")
            else:
                result += [c for c in piece if c in PUNCTUATION or c == " "]
        return result

    @staticmethod
    def _chinese(text: str) -> list[str]:
        import jieba
        from pypinyin import Style, lazy_pinyin
        from pypinyin.contrib.tone_convert import to_finals_tone3, to_initials

        syllables = lazy_pinyin(
            list(jieba.cut(text)), style=Style.TONE3, tone_sandhi=True, neutral_tone_with_five=True
        )
        phones: list[str] = []
        for syllable in syllables:
            if not (syllable[:-1].isalpha() and syllable[-1:] in "12345" and len(syllable) > 1):
                phones += [c for c in syllable if not c.isspace() or c == " "]
                continue
            initial = to_initials(syllable, strict=False)
            final = to_finals_tone3(syllable, strict=False, neutral_tone_with_five=True)
            phones += ([initial + "0"] if initial else []) + ([final] if final else [])
        return phones


_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")  # jamo, compatibility jamo, syllables


# cn2an reads at most 16 digits before a decimal point, and 16 after it: a longer whole part it left as
# digits, which no pinyin token table holds (the number went unsaid), a longer fraction it cut to 16
# digits, each with a UserWarning (under `-W error`, an exception that left every number of the text
# unread). Such a number is an ID, a phone or card number, a constant's digits: read digit by digit.
CN2AN_MAX_DIGITS = 16
_NUMBER = re.compile(r"([0-9]+)(?:\.([0-9]+))?(%?)")
_CHINESE_DIGITS = str.maketrans({**dict(zip("0123456789", "零一二三四五六七八九", strict=True)), ".": "点"})


def _digit_by_digit(match: re.Match[str]) -> str:
    """A number too long for cn2an, digit by digit (`%`: 百分之 first, as cn2an reads one); others as
    they are, for cn2an."""
    whole, fraction, percent = match.groups()
    if max(len(whole), len(fraction or "")) <= CN2AN_MAX_DIGITS:
        return match.group()
    spelt = (whole if fraction is None else f"{whole}.{fraction}").translate(_CHINESE_DIGITS)
    return f"百分之{spelt}" if percent else spelt


def _normalise_chinese_numbers(text: str) -> str:
    try:
        import cn2an
    except ImportError:
        return text
    text = _NUMBER.sub(_digit_by_digit, text)
    try:
        return str(cn2an.transform(text, "an2cn"))
    except Exception:  # cn2an raises plain exceptions on odd input; the digits then stay as they are
        return text


def _language_runs(text: str) -> list[tuple[str, str]]:
    """Split into runs of Chinese, Latin letters and other characters; others join the run before, and
    those at the start the first run that has a language, as in ZipVoice's `get_segment` (they were a run
    of their own, of which only punctuation was kept: "2024 was a good year." lost its number)."""
    runs: list[tuple[str, str]] = []
    for char in text:
        kind = "zh" if "\u4e00" <= char <= "\u9fff" else "en" if re.match(r"[A-Za-z]", char) else "other"
        if runs and runs[-1][1] == "other":  # only the leading run can be one
            runs[-1] = (runs[-1][0] + char, kind)
        elif runs and (kind == runs[-1][1] or kind == "other"):
            runs[-1] = (runs[-1][0] + char, runs[-1][1])
        else:
            runs.append((char, kind))
    return runs


TOKENIZERS = ("espeak", "simple", "emilia")


def choose_tokenizer(requested: str | None, metadata: Mapping[str, str], table: TokenTable) -> str:
    """The tokenizer name: the setting if given, else from the encoder metadata and the token table.

    The official export writes `use_espeak=1` and `use_pinyin=1` for every model, so pinyin is only
    taken when the token table really has pinyin initials; the emilia tokenizer still sends non-zh/en
    requests to espeak, which is right for fine-tunes that kept the pretrained token table.
    """
    if requested:
        if requested not in TOKENIZERS:
            raise ModelLoadError(f"unknown tokenizer {requested!r}; use one of {', '.join(TOKENIZERS)}")
        return requested
    flag = {key: str(value).strip().lower() in ("1", "true", "yes") for key, value in metadata.items()}
    if flag.get("use_pinyin") and table.has_pinyin():
        return "emilia"
    if flag.get("use_espeak", True):
        return "espeak"
    return "simple"


def make_tokenizer(name: str, phonemize: Phonemize | None = None, explicit: bool = False) -> Tokenizer:
    """The tokenizer called `name`; `explicit` (asked for by a setting) checks optional extras now."""
    if name == "espeak":
        return EspeakTokenizer(phonemize)
    if name == "emilia":
        return EmiliaTokenizer(phonemize, require_chinese=explicit)
    if name == "simple":
        return SimpleTokenizer()
    raise ModelLoadError(f"unknown tokenizer {name!r}; use one of {', '.join(TOKENIZERS)}")
