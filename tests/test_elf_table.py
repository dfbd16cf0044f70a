"""`engine/elf_table.py` reads what pyelftools read of an ELF file (the symbol table, the GNU build id),
without pyelftools at an espeak process's load (its import and parse were 80-120 ms of CPU a process),
and a damaged file raises `ElfError` alone, never reads outside the file."""

from __future__ import annotations

import io
import random
import subprocess
import sys

import espeakng_loader
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection

from npu_worker.engine.elf_table import ElfError, read_symbols

TYPES = {"STT_NOTYPE": 0, "STT_OBJECT": 1, "STT_FUNC": 2, "STT_SECTION": 3, "STT_FILE": 4, "STT_TLS": 6}


def by_pyelftools(data: bytes) -> tuple[dict[str, list[tuple]], tuple[int, bytes] | None]:
    """What `espeak_state` read with pyelftools before `elf_table` (its code then, in tuples)."""
    elf = ELFFile(io.BytesIO(data))
    sections = list(elf.iter_sections())
    found: dict[str, list[tuple]] = {}
    build_id = None
    for section in sections:
        if isinstance(section, NoteSection) and section["sh_flags"] & 2 and build_id is None:
            for note in section.iter_notes():
                if note["n_type"] == "NT_GNU_BUILD_ID" and note["n_name"] == "GNU":
                    at = note["n_offset"] + elf.structs.Elf_Nhdr.sizeof() + (note["n_namesz"] + 3) // 4 * 4
                    build_id = (section["sh_addr"] + at - section["sh_offset"], bytes(note["n_descdata"]))
                    break
        if isinstance(section, SymbolTableSection) and section["sh_type"] == "SHT_SYMTAB":
            for symbol in section.iter_symbols():
                index = symbol["st_shndx"]
                within = sections[index] if isinstance(index, int) and 0 < index < len(sections) else None
                writable = within is not None and bool(within["sh_flags"] & 1)
                span = (within["sh_addr"], within["sh_size"]) if within is not None and writable else (0, 0)
                kind = TYPES.get(symbol["st_info"]["type"], symbol["st_info"]["type"])
                found.setdefault(symbol.name, []).append(
                    (symbol["st_value"], symbol["st_size"], kind, writable, span)
                )
    return found, build_id


@pytest.mark.parametrize("path", [espeakng_loader.get_library_path(), sys.executable])
def test_the_symbols_and_build_id_are_pyelftools_own(path):
    data = open(path, "rb").read()
    symbols, build_id = read_symbols(data)
    read = {
        name: [(s.value, s.size, s.kind, s.writable, s.section) for s in listed]
        for name, listed in symbols.items()
    }
    assert (read, build_id) == by_pyelftools(data)
    assert build_id is not None


def test_the_wheels_library_has_its_whole_symbol_table():
    symbols, _ = read_symbols(open(espeakng_loader.get_library_path(), "rb").read())
    assert sum(len(listed) for listed in symbols.values()) > 1000
    assert any(name.startswith("Flutter_ix") for name in symbols)


@pytest.mark.parametrize("data", [b"", b"\x7fELF", b"not an ELF file at all", b"\x7fELF\x03\x01" + bytes(60)])
def test_what_is_no_elf_file_is_an_elf_error(data):
    with pytest.raises(ElfError):
        read_symbols(data)


def test_damaged_bytes_raise_elf_error_alone():
    """Bytes of the header, the section headers, the symbol table and the notes flipped or the file cut:
    the table is read, or ElfError; nothing else is raised (no IndexError, struct.error, MemoryError)."""
    original = open(espeakng_loader.get_library_path(), "rb").read()
    elf = ELFFile(io.BytesIO(original))
    places = list(range(64)) + [elf["e_shoff"] + i for i in range(elf["e_shnum"] * elf["e_shentsize"])]
    for section in elf.iter_sections():
        if section["sh_type"] in ("SHT_NOTE", "SHT_SYMTAB"):
            places += range(section["sh_offset"], section["sh_offset"] + min(section["sh_size"], 480))
    chance = random.Random(55)
    for _ in range(600):
        data = bytearray(original)
        for at in chance.sample(places, 3):
            data[at] = chance.randrange(256)
        if chance.random() < 0.2:
            del data[chance.randrange(len(data)) :]
        try:
            read_symbols(bytes(data))
        except ElfError:
            pass


def test_an_espeak_load_imports_no_pyelftools():
    """pyelftools' import alone was 46-68 ms of CPU at each espeak process's load."""
    code = (
        "import sys\n"
        "from npu_worker.engine.espeak_lib import get_espeak\n"
        "assert get_espeak()._carried.repeatable\n"
        "print(sorted(name for name in sys.modules if name.startswith('elftools')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"
