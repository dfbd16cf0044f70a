"""What the tests of the Korean lecture readings share: the real espeak tokenizer (what ZipVoice and the
espeak engine speak), as a fixture, and the stream socket's sentences for a text arriving in pieces."""

from __future__ import annotations

import pytest

from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer
from npu_worker.openai_compat.sentences import SentenceAssembler


@pytest.fixture(scope="module")
def tokenizer() -> EspeakTokenizer:
    """A test module imports it as `from tests.reading_support import tokenizer as tokenizer`."""
    return EspeakTokenizer()


def streamed(text: str, size: int) -> list[str]:
    """The stream socket's sentences for `text` arriving `size` characters at a time."""
    assembler, pieces = SentenceAssembler(), []
    for start in range(0, len(text), size):
        pieces += assembler.feed(text[start : start + size])
    return pieces + assembler.flush()
