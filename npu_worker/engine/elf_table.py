"""An ELF file's symbol table (`.symtab`) and GNU build id, read from its bytes with `struct` alone.

`espeak_state` needs these two things of espeak-ng's library at each espeak process's load. pyelftools
read them in 80-120 ms of CPU a process (its import ≈ 46-68 ms, its symbol objects ≈ 33-55 ms over the
1269 symbols; benchmarks/SERVER_OVERHEAD.md, 2026-12-06, stop 55), a tenth of an espeak child's start;
these few fixed layouts (the ELF header, section headers, symbols, notes; 32 or 64 bits, either byte
order) are read here in a few ms. Every offset and size comes from the file and is checked against
the file's length: a damaged or hostile file raises `ElfError`, never reads outside the bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SHT_SYMTAB, SHT_NOTE = 2, 7
SHF_WRITE, SHF_ALLOC = 0x1, 0x2
STT_OBJECT = 1
SHN_LORESERVE = 0xFF00  # section indexes from here on are special (SHN_ABS, SHN_COMMON, ...)
NT_GNU_BUILD_ID = 3


class ElfError(ValueError):
    """The bytes are not an ELF file this reader can read, or are damaged."""


@dataclass(frozen=True)
class Symbol:
    value: int
    size: int
    kind: int  # its type (st_info's low 4 bits): STT_OBJECT, STT_FUNC, ...
    writable: bool
    section: tuple[int, int]  # (address, size) of the writable section it is in; (0, 0) if none


@dataclass(frozen=True)
class _Layout:
    header: struct.Struct  # e_ident's 16 bytes, then the rest of the ELF header
    section: struct.Struct
    symbol: struct.Struct
    note: struct.Struct


def _layout(order: str, wide: bool) -> _Layout:
    if wide:
        return _Layout(
            struct.Struct(order + "16sHHIQQQIHHHHHH"),
            struct.Struct(order + "IIQQQQIIQQ"),
            struct.Struct(order + "IBBHQQ"),  # name, info, other, shndx, value, size
            struct.Struct(order + "III"),
        )
    return _Layout(
        struct.Struct(order + "16sHHIIIIIHHHHHH"),
        struct.Struct(order + "IIIIIIIIII"),
        struct.Struct(order + "IIIBBH"),  # name, value, size, info, other, shndx
        struct.Struct(order + "III"),
    )


_LAYOUTS = {(cls, data): _layout("<" if data == 1 else ">", cls == 2) for cls in (1, 2) for data in (1, 2)}


@dataclass(frozen=True)
class _Section:
    kind: int
    flags: int
    address: int
    offset: int
    size: int
    link: int
    entry_size: int


def _span(data: bytes, offset: int, size: int) -> memoryview:
    """data[offset:offset + size], or ElfError if that is not all inside the file."""
    if offset < 0 or size < 0 or offset + size > len(data):
        raise ElfError(f"{size} bytes at {offset} lie outside the file's {len(data)}")
    return memoryview(data)[offset : offset + size]


def _sections(data: bytes, layout: _Layout) -> list[_Section]:
    header = layout.header.unpack_from(_span(data, 0, layout.header.size))
    table_at, entry_size, count = header[6], header[11], header[12]
    if count == 0:
        return []  # (none; or more than 0xff00, counted elsewhere: no file espeak ships)
    if entry_size != layout.section.size:
        raise ElfError(f"section header size {entry_size}, not {layout.section.size}")
    table = _span(data, table_at, entry_size * count)
    sections = []
    for _name, kind, flags, address, offset, size, link, _info, _align, entry in layout.section.iter_unpack(
        table
    ):
        sections.append(_Section(kind, flags, address, offset, size, link, entry))
    return sections


def read_symbols(data: bytes) -> tuple[dict[str, list[Symbol]], tuple[int, bytes] | None]:
    """The symbol table (`.symtab`, not `.dynsym`'s exported names) by name ({} when there is none),
    and the GNU build id (its address in the loaded image, its bytes) of the first allocated note
    section that has one. ElfError for bytes that are not a readable ELF file."""
    if len(data) < 16 or data[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    layout = _LAYOUTS.get((data[4], data[5]))
    if layout is None:
        raise ElfError(f"ELF class {data[4]}, data encoding {data[5]}: not one this reader knows")
    sections = _sections(data, layout)
    build_id = None
    found: dict[str, list[Symbol]] = {}
    for section in sections:
        if section.kind == SHT_NOTE and section.flags & SHF_ALLOC and build_id is None:
            build_id = _build_id(data, layout, section)
        elif section.kind == SHT_SYMTAB:
            _add_symbols(data, layout, sections, section, found)
    return found, build_id


def _add_symbols(
    data: bytes, layout: _Layout, sections: list[_Section], table: _Section, found: dict[str, list[Symbol]]
) -> None:
    if table.entry_size != layout.symbol.size:
        raise ElfError(f"symbol entry size {table.entry_size}, not {layout.symbol.size}")
    if not 0 < table.link < len(sections):
        raise ElfError(f"symbol table's string table {table.link} is no section")
    strings = sections[table.link]
    names = bytes(_span(data, strings.offset, strings.size))
    entries = _span(data, table.offset, table.size - table.size % table.entry_size)
    wide = layout.symbol.format[-1] == "Q"
    for entry in layout.symbol.iter_unpack(entries):
        if wide:
            name_at, info, _other, index, value, size = entry
        else:
            name_at, value, size, info, _other, index = entry
        end = names.find(b"\0", name_at)
        if name_at >= len(names) or end < 0:
            raise ElfError(f"a symbol's name at {name_at} is not a string of its table")
        name = names[name_at:end].decode("utf-8", errors="replace")
        within = sections[index] if 0 < index < min(len(sections), SHN_LORESERVE) else None
        writable = within is not None and bool(within.flags & SHF_WRITE)
        span = (within.address, within.size) if within is not None and writable else (0, 0)
        found.setdefault(name, []).append(Symbol(value, size, info & 0xF, writable, span))


def _build_id(data: bytes, layout: _Layout, section: _Section) -> tuple[int, bytes] | None:
    """The GNU build id among a note section's notes (its address in memory, its bytes), or None."""
    notes = _span(data, section.offset, section.size)
    at = 0
    while at + layout.note.size < len(notes):
        name_size, desc_size, kind = layout.note.unpack_from(notes, at)
        name_at = at + layout.note.size
        desc_at = name_at + (name_size + 3) // 4 * 4
        if desc_at + desc_size > len(notes):
            raise ElfError("a note runs past its section")
        name = bytes(notes[name_at : name_at + name_size])
        if kind == NT_GNU_BUILD_ID and name == b"GNU\0":
            desc = bytes(notes[desc_at : desc_at + desc_size])
            return (section.address + desc_at, desc) if desc else None
        at = desc_at + (desc_size + 3) // 4 * 4
    return None
