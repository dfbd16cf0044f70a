"""The text readings' patterns compile at their first use (`engine/lazy_re.py`), not at import: an espeak child
compiled all 286 before its `READY` (≈ 190 ms of CPU), where a lecture's texts use 121, which the engine's load
reads once. Each check that counts compiles runs in a fresh interpreter (this one's modules are loaded already)."""

from __future__ import annotations

import copy
import json
import pickle
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from npu_worker.engine import english_numbers, english_reading, korean_reading, lazy_re, sentence_ends
from npu_worker.engine.lazy_re import LazyPattern

REPO = Path(__file__).resolve().parents[1]

COUNTING = """
import json, re._compiler as compiler, sys
import npu_worker.engine.espeak  # what an espeak child has loaded before it reads a text
compiled = []
real = compiler.compile
def counted(pattern, flags=0):
    compiled.append(pattern if isinstance(pattern, str) else "?")
    return real(pattern, flags)
compiler.compile = counted
"""


def compiles_in_a_fresh_interpreter(code: str) -> list[str]:
    """The patterns `re` compiled while `code` ran (after the counting began)."""
    script = COUNTING + code + "\nprint(json.dumps(compiled))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(out.stdout.splitlines()[-1])


def test_the_reader_compiles_no_pattern_at_import():
    compiled = compiles_in_a_fresh_interpreter("import npu_worker.engine.korean_reading")
    assert compiled == []  # 284 before: every pattern of every reading module


def test_after_an_espeak_engines_load_reading_a_lecture_compiles_nothing_more():
    code = (
        "from npu_worker.engine.espeak import EspeakEngine, espeak_text\n"
        "from npu_worker.engine.base import SynthesisRequest\n"
        "EspeakEngine().load()\n"  # a real espeak-ng, as an espeak child loads it before its READY
        "compiled.clear()\n"
        "for section in json.load(open('npu_worker/bench/lecture_ko_39.json'))['sections']:\n"
        "    espeak_text(SynthesisRequest(section['text'], 'ko'))\n"
    )
    assert compiles_in_a_fresh_interpreter(code) == []  # without the load's number: 119 at the first one


def test_after_a_zipvoice_tokenizer_is_made_reading_a_lecture_compiles_nothing_more():
    code = (
        "from npu_worker.engine.zipvoice.tokenizer import EspeakTokenizer\n"
        "from npu_worker.engine.korean_reading import spoken_form\n"
        "EspeakTokenizer()\n"  # as ZipVoice's load makes it (the reader was compiled whole at its import)
        "compiled.clear()\n"
        "for section in json.load(open('npu_worker/bench/lecture_ko_39.json'))['sections']:\n"
        "    spoken_form(section['text'], 'ko')\n"
    )
    assert compiles_in_a_fresh_interpreter(code) == []


def test_the_worker_processs_engine_load_reads_no_text_its_child_does():
    code = (
        "from npu_worker.engine.espeak_process_engine import EspeakProcessEngine\n"
        "engine = EspeakProcessEngine()\n"
        "engine.load()\n"  # a real espeak child, which warms its own reader
        "engine.close()\n"
        "print('READER', 'npu_worker.engine.korean_reading' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.splitlines() == ["READER False"]  # it cost the worker ≈ 80 ms of CPU at a start


def test_a_first_speech_stream_compiles_no_sentence_pattern_on_the_workers_event_loop():
    """`sentence_ends` is lazy (a lecture's texts use none of its patterns in an espeak child), and the worker
    imports it for the OpenAI speech stream's sentences, cut on the event loop: there the first stream's
    first sentences compiled ten of them (one holds a Hangul class's bitmap), with every connection held."""
    code = (
        "from npu_worker.openai_compat.sentences import SentenceAssembler\n"
        "compiled.clear()\n"  # what the worker's import compiled, at its start
        "assembler = SentenceAssembler()\n"
        "for word in '오늘은 2024. 12. 5. 입니다. Dr. Kim e.g. 1. 전압을 측정합니다. 다음은? 네! '.split():\n"
        "    assembler.feed(word + ' ')\n"
        "assembler.flush()\n"
    )
    assert compiles_in_a_fresh_interpreter(code) == []


def reading_modules() -> list[types.ModuleType]:
    modules = {korean_reading, english_reading, english_numbers, sentence_ends}
    modules |= {module for module in vars(korean_reading).values() if isinstance(module, types.ModuleType)}
    modules |= {
        sys.modules[name]
        for name in sys.modules
        if name.startswith(("npu_worker.engine.korean_", "npu_worker.engine.english_"))
    }
    return sorted((module for module in modules if module is not re), key=lambda module: module.__name__)


def lazy_patterns() -> list[tuple[str, LazyPattern]]:
    """Every reading module's patterns, those kept in a dict, tuple or list too."""
    found = []
    for module in reading_modules():
        for name, value in vars(module).items():
            values = (
                value.values()
                if isinstance(value, dict)
                else value
                if isinstance(value, tuple | list)
                else [value]
            )
            found += [(f"{module.__name__}.{name}", each) for each in values if isinstance(each, LazyPattern)]
    return found


def test_every_reading_pattern_compiles_as_written():
    patterns = lazy_patterns()
    assert len(patterns) > 250  # the modules' patterns were found (286 on 2026-12-07)
    for name, lazy in patterns:
        compiled = re.compile(lazy.pattern, lazy.source_flags)  # a typo's error here, not at a first request
        assert (lazy.flags, lazy.groups, lazy.groupindex) == (
            compiled.flags,
            compiled.groups,
            compiled.groupindex,
        ), name


def test_a_lazy_pattern_reads_as_its_compiled_one_and_calls_it_directly_once_used():
    lazy = lazy_re.compile(r"(?P<whole>\d+)(?:\.(\d+))?", re.ASCII)
    real = re.compile(r"(?P<whole>\d+)(?:\.(\d+))?", re.ASCII)
    assert "sub" not in vars(lazy) and lazy.pattern == real.pattern  # its source read without a compile
    text = "3.7 and 12, 5.25"
    assert lazy.sub(r"<\1>", text) == real.sub(r"<\1>", text)
    assert [m.span(2) for m in lazy.finditer(text)] == [m.span(2) for m in real.finditer(text)]
    assert lazy.fullmatch("3.7").groups() == ("3", "7") and lazy.search("x") is None  # type: ignore[union-attr]
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (real.flags, real.groups, real.groupindex)
    # `re`'s own compiled pattern (its cache's) behind it: a later use calls `re.Pattern.sub` itself
    assert vars(lazy)["sub"] == real.sub and vars(lazy)["search"].__self__ is real


def test_a_bad_pattern_is_refused_at_its_first_use():
    lazy = lazy_re.compile(r"(unclosed")
    with pytest.raises(re.error):
        lazy.search("unclosed")


@pytest.mark.parametrize("used", [False, True], ids=["unused", "used"])
@pytest.mark.parametrize(
    "duplicate",
    [copy.copy, copy.deepcopy, lambda lazy: pickle.loads(pickle.dumps(lazy))],
    ids=["copy", "deepcopy", "pickle"],
)
def test_a_lazy_pattern_is_copied_and_pickled_as_a_compiled_one_is(duplicate, used):
    """A table of patterns copied (or sent to another process) works as `re.Pattern`s did: `copy` and
    `pickle` raised RecursionError, asking the copy for `__setstate__` before it had its source (`deepcopy`
    got the compiled pattern's own `__deepcopy__`, and a compiled pattern)."""
    lazy = lazy_re.compile(r"(\d+)\.(\d+)")
    if used:
        lazy.search("")
    again = duplicate(lazy)
    assert again.pattern == lazy.pattern and again.sub(r"\2.\1", "3.7V") == "7.3V"
