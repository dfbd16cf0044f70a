"""The same text makes the same espeak audio, byte for byte: twice in one process, after other texts and
after a synthesis stopped half-way, in a second espeak instance (a lane), in a child process and in a
second child. espeak-ng's wave generator kept counters in C statics from one utterance to the next (the
pitch flutter's place, the gain control), so a cache refill was a few samples longer or shorter than
the first render and differed from its first voiced sound on (`engine/espeak_state.py`)."""

from __future__ import annotations

import hashlib
import shutil
import struct
import subprocess
import sys

import espeakng_loader
import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from npu_worker.engine import espeak_state
from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak import EspeakEngine
from npu_worker.engine.espeak_lib import get_espeak
from npu_worker.engine.espeak_process_engine import EspeakProcessEngine
from npu_worker.engine.espeak_state import CarriedState, _symbols
from tests import espeak_children

child_engine = espeak_children.engine  # the fixture: this module's own loaded espeak child
TEXT = SynthesisRequest("오늘은 인공지능 음성 합성에 대해 이야기하겠습니다. 내일은 맑겠습니다.", "ko")
OTHERS = [
    SynthesisRequest("hello there, how are you today?", "en", 1.6),
    SynthesisRequest("가나다", "ko", 0.7),
]


def pcm(engine: EspeakEngine, request: SynthesisRequest = TEXT, stop_after: int | None = None) -> str:
    """The request's float32 PCM, hashed; `stop_after`: the sink refuses the chunk after that many."""
    chunks: list[np.ndarray] = []

    def sink(chunk: np.ndarray) -> bool:
        chunks.append(chunk.copy())
        return stop_after is None or len(chunks) < stop_after

    engine.stream_into(request, sink)
    return hashlib.sha256(np.concatenate(chunks).tobytes()).hexdigest()


@pytest.fixture(scope="module")
def engine() -> EspeakEngine:
    engine = EspeakEngine()
    engine.load()
    return engine


def test_the_wheels_library_has_the_statics_that_carry_over():
    assert get_espeak().version in espeak_state.VERIFIED
    assert get_espeak()._carried.repeatable  # (a stripped build would not be: the tests below say so)


def test_a_file_that_is_not_the_loaded_library_is_never_written_by(tmp_path):
    """The statics' addresses come from the file read: one that is not the library loaded (another ELF,
    no ELF at all) resets nothing, rather than writing where its symbols say."""
    (tmp_path / "text").write_text("not an ELF file")
    library = get_espeak()._lib
    for path in (sys.executable, str(tmp_path / "text"), str(tmp_path / "missing")):
        assert not CarriedState(library, path).repeatable, path


def doctored(tmp_path, change) -> str:
    """A copy of the loaded library file with `change(path, data, symbols, build_id)` made to its bytes."""
    source = espeakng_loader.get_library_path()
    copy = str(tmp_path / "libespeak-ng.so")
    shutil.copyfile(source, copy)
    with open(copy, "rb") as file:  # (a bare open() left to the GC: an "unclosed file" warning)
        data = bytearray(file.read())
    symbols, build_id = _symbols(copy)
    assert build_id is not None
    change(copy, data, symbols, build_id)
    with open(copy, "wb") as file:
        file.write(data)
    return copy


def entry(path: str, prefix: str) -> int:
    """Where in the file the symbol table entry of the 4-byte static named `prefix`... starts."""
    with open(path, "rb") as file:
        symtab = ELFFile(file).get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        (index,) = [
            i
            for i, symbol in enumerate(symtab.iter_symbols())
            if symbol.name.startswith(prefix + ".") and symbol["st_size"] == 4
        ]
        return int(symtab["sh_offset"] + index * symtab["sh_entsize"])


def another_build(path, data, symbols, build_id):
    """The same code at the same offsets (the anchors agree), another build id: another build."""
    at = data.find(build_id[1])
    data[at] ^= 0xFF


def flutter_in_code(path, data, symbols, build_id):
    """Flutter_ix said to be at espeak_Synth's first instruction (in its writable section still)."""
    (synth,) = {symbol.value for symbol in symbols["espeak_Synth"]}
    struct.pack_into("<Q", data, entry(path, "Flutter_ix") + 8, synth)  # (its st_value)


def flutter_in_relro(path, data, symbols, build_id):
    """Flutter_ix said to be in .data.rel.ro: a writable section, read-only once relocated (RELRO)."""
    with open(path, "rb") as file:
        sections = list(ELFFile(file).iter_sections())
    (index,) = [i for i, section in enumerate(sections) if section.name == ".data.rel.ro"]
    # (its st_shndx, then its st_value: 16 bytes into that section)
    struct.pack_into("<HQ", data, entry(path, "Flutter_ix") + 6, index, sections[index]["sh_addr"] + 16)


def flutter_outside_its_section(path, data, symbols, build_id):
    """Flutter_ix said to be in .data while its address is in .bss: writable memory still, but not where
    its own table entry says (a damaged or forged table; only the section bound catches it)."""
    with open(path, "rb") as file:
        sections = list(ELFFile(file).iter_sections())
    (index,) = [i for i, section in enumerate(sections) if section.name == ".data"]
    (value,) = {s.value for name, listed in symbols.items() if name.startswith("Flutter_ix.") for s in listed}
    assert not sections[index]["sh_addr"] <= value < sections[index]["sh_addr"] + sections[index]["sh_size"]
    struct.pack_into("<H", data, entry(path, "Flutter_ix") + 6, index)  # (its st_shndx)


CHANGES = [another_build, flutter_in_code, flutter_in_relro, flutter_outside_its_section]


@pytest.mark.parametrize("change", CHANGES)
def test_a_file_whose_exported_functions_agree_but_is_another_build_or_points_elsewhere(tmp_path, change):
    """A file with the loaded library's exported functions at the same offsets was trusted: another
    build's statics (its build id differs), or a symbol in code or in memory made read-only after
    relocation, had 4 bytes written there before each synthesis (a crash, or another object changed).
    Now nothing is written unless the build id in memory is the file's and each static is in a
    writable mapping inside its section."""
    library = get_espeak()._lib
    assert CarriedState(
        library, espeakng_loader.get_library_path()
    ).repeatable  # the file itself: still trusted
    carried = CarriedState(library, doctored(tmp_path, change))
    assert not carried.repeatable and carried._saved == []


def unterminated_note_name(path, data, symbols, build_id):
    """The build id note's name "GNU\\0" without its terminator (pyelftools' construct error)."""
    at = data.find(b"GNU\0" + build_id[1])
    data[at + 3] = ord("X")


def symbol_entries_of_no_size(path, data, symbols, build_id):
    """.symtab's entry size 0 (pyelftools' ELFError)."""
    with open(path, "rb") as file:
        elf = ELFFile(file)
        (index,) = [i for i, section in enumerate(elf.iter_sections()) if section.name == ".symtab"]
        at = elf["e_shoff"] + index * elf["e_shentsize"] + 56  # (its sh_entsize)
    struct.pack_into("<Q", data, at, 0)


def notes_past_any_file_offset(path, data, symbols, build_id):
    """The build id note section's file offset 2**64 - 1 (an OverflowError out of its stream's seek)."""
    with open(path, "rb") as file:
        elf = ELFFile(file)
        (index,) = [
            i for i, section in enumerate(elf.iter_sections()) if section.name == ".note.gnu.build-id"
        ]
        at = elf["e_shoff"] + index * elf["e_shentsize"] + 24  # (its sh_offset)
    struct.pack_into("<Q", data, at, 2**64 - 1)


def section_headers_cut_off(path, data, symbols, build_id):
    """The file cut off before its section headers end (pyelftools' ELFParseError)."""
    del data[len(data) - 100 :]


DAMAGES = [
    unterminated_note_name,
    symbol_entries_of_no_size,
    notes_past_any_file_offset,
    section_headers_cut_off,
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_library_file_writes_nothing_and_raises_nothing(tmp_path, damage):
    """A library file the ELF reader cannot read (each damage raises another of pyelftools' errors) is
    left unrepeatable, and loading espeak goes on: no error out of it."""
    carried = CarriedState(get_espeak()._lib, doctored(tmp_path, damage))
    assert not carried.repeatable and carried._saved == []


def test_a_private_copy_of_the_library_is_read_once_per_process(tmp_path):
    """Each lane loads a private copy of the same file: its symbol table is read once per process
    (pyelftools takes 50-160 ms a read). A copy with other bytes is read anew (the tests above)."""
    path, copy = espeakng_loader.get_library_path(), str(tmp_path / "libespeak-ng.so")
    shutil.copyfile(path, copy)
    library = get_espeak()._lib
    assert CarriedState(library, path).repeatable
    hits = espeak_state._read.cache_info().hits
    assert CarriedState(library, copy).repeatable
    assert espeak_state._read.cache_info().hits == hits + 1


def test_another_espeak_release_is_left_alone(monkeypatch):
    """Statics of the same names and size in a release whose source was not read may mean something
    else: nothing is written (it was, for any release whose symbols matched)."""
    library = get_espeak()._lib
    path = espeakng_loader.get_library_path()
    assert CarriedState(library, path).repeatable
    monkeypatch.setattr(espeak_state, "VERIFIED", ("1.51",), raising=False)  # (as if 1.52.0 were unread)
    assert not CarriedState(library, path).repeatable


def test_the_same_text_twice_in_one_process_is_the_same_pcm(engine):
    first = pcm(engine)
    assert pcm(engine) == first
    for other in OTHERS:
        pcm(engine, other)
    pcm(engine, stop_after=1)  # stopped after its first chunk: espeak left mid-utterance
    assert pcm(engine) == first
    lane = engine.lane()  # a second espeak instance (another copy of the library)
    lane.load()
    assert pcm(lane) == first


def test_the_same_text_is_the_same_pcm_in_one_child_and_in_two(engine, child_engine):
    first = pcm(child_engine)
    for other in OTHERS:
        pcm(child_engine, other)
    assert pcm(child_engine) == first
    second = EspeakProcessEngine()
    second.load()
    try:
        assert second.child.pid != child_engine.child.pid
        assert pcm(second) == first
    finally:
        second.close()
    assert pcm(engine) == first  # and the same as the server's own process makes


def test_the_worker_process_imports_no_elf_reader():
    """The worker never loads espeak-ng itself (its children do): importing the ELF reader there cost
    30-40 ms of its start for nothing, so pyelftools is imported where a verified build is read."""
    code = (
        "import sys, npu_worker.app, npu_worker.cli, npu_worker.engine.espeak_process, npu_worker.engine.espeak_process_engine;"
        "print(sorted(m for m in sys.modules if m.startswith('elftools')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
