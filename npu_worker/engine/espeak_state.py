"""espeak-ng's synthesis state that outlives an utterance, put back as it was at load before each one.

espeak-ng's wave generator keeps a few counters in C function statics (`wavegen.c`: the pitch flutter's
place in its table, `Flutter_ix`, the gain control, the harmonics' sign switch, the roughness cycle
count): they run on from one `espeak_Synth` to the next and nothing in the API resets them, not
`espeak_Initialize`, not `espeak_ng_SetRandSeed` (the random state is another, used by Klatt voices).
So the same text made other audio each time in one process: a few samples longer or shorter (the last
glottal cycle ends elsewhere) and different from the first sample of the first voiced sound, while each
fresh process made the same sequence again. A cache refill then differed from the first render.

The statics are not exported, but the wheel's library keeps its symbol table (`.symtab`): their
addresses are read from the file that was loaded, their bytes saved before espeak's first call, and
written back before each synthesis (`reset`). A library without those symbols (a stripped build) is
left as it was: its audio is not repeatable, as before (`repeatable` says which).

Nothing is read or written unless the file is the build loaded and every address is the library's own
writable memory: the file's GNU build id must be in memory where the file says (a file of another build
whose exported functions sat at the same offsets had its statics' offsets written to), each static
must lie inside its section and inside a writable mapping of /proc/self/maps (a symbol pointing
elsewhere had 4 bytes of code or another object written over). A build without a build id is left alone,
and so is a release of espeak-ng whose source was not read for these statics (`VERIFIED`).
"""

from __future__ import annotations

import ctypes
import functools
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (pyelftools is imported where a verified build is read: 30-40 ms a process that never is)
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import NoteSection

# The statics that carry over (function statics of `Wavegen` and `AdvanceParameters`: GCC names them
# "name.N", clang "function.name"); every one must be found, or none is reset.
CARRIED = ("Flutter_ix", "agc", "h_switch_sign", "cycle_count", "amplitude2", "maxh", "maxh2")
# The espeak-ng releases whose wavegen.c was read for what these statics do: each bounds a loop over a
# fixed table, indexes one after a range check, counts, or scales a sample, so its value at load is
# safe at any synthesis' start. Another release's statics of the same names (and size) may mean
# something else: they are left alone until its source is read too (the repeatability test says so).
VERIFIED = ("1.52.0",)
ALSO = ("espeak_rand_state",)  # common.c's generator (Klatt's noise): reset where the build has it
# Exported functions: each one's address in the process less its value in the file is where the file
# was loaded; they must agree (a file that is not the one loaded is left alone)
ANCHORS = ("espeak_Synth", "espeak_Initialize", "espeak_SetVoiceByName")


@dataclass(frozen=True)
class _Symbol:
    value: int
    size: int
    kind: str  # ("STT_OBJECT", "STT_FUNC", ...)
    writable: bool
    section: tuple[int, int]  # (address, size) of the section it is in: it must lie inside


def _symbols(path: str) -> tuple[dict[str, list[_Symbol]], tuple[int, bytes] | None]:
    """The symbol table (`.symtab`) of an ELF file, by name ({} when it has none), and its GNU build id
    (its address in the loaded image, its bytes). pyelftools raises `ELFError` on a file it cannot read.
    Shared between callers: read only."""
    with open(path, "rb") as file:
        return _read(file.read())


@functools.lru_cache(maxsize=2)
def _read(data: bytes) -> tuple[dict[str, list[_Symbol]], tuple[int, bytes] | None]:
    """`_symbols` of a file's bytes, once per process for the same bytes: pyelftools takes 50-160 ms
    over espeak's 1269 symbols, and each lane loads a private copy of the same file."""
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import NoteSection, SymbolTableSection

    elf = ELFFile(io.BytesIO(data))
    sections = list(elf.iter_sections())
    found: dict[str, list[_Symbol]] = {}
    build_id = None
    for section in sections:
        if isinstance(section, NoteSection) and section["sh_flags"] & SH_FLAGS.SHF_ALLOC:
            build_id = build_id or _build_id(elf, section)
        if not isinstance(section, SymbolTableSection) or section["sh_type"] != "SHT_SYMTAB":
            continue  # (.dynsym has the exported names only)
        for symbol in section.iter_symbols():
            index = symbol["st_shndx"]  # (a number, or "SHN_UNDEF", "SHN_ABS", ...)
            within = sections[index] if isinstance(index, int) and 0 < index < len(sections) else None
            writable = within is not None and bool(within["sh_flags"] & SH_FLAGS.SHF_WRITE)
            span = (within["sh_addr"], within["sh_size"]) if within is not None and writable else (0, 0)
            kind = symbol["st_info"]["type"]
            found.setdefault(symbol.name, []).append(
                _Symbol(symbol["st_value"], symbol["st_size"], kind, writable, span)
            )
    return found, build_id


def _build_id(elf: ELFFile, section: NoteSection) -> tuple[int, bytes] | None:
    """The GNU build id among a section's notes (its address in memory, its bytes), or None."""
    for note in section.iter_notes():
        if note["n_type"] == "NT_GNU_BUILD_ID" and note["n_name"] == "GNU":
            desc = bytes(note["n_descdata"])
            # (the note's header, then its name padded to 4 bytes, then the id)
            desc_at = note["n_offset"] + elf.structs.Elf_Nhdr.sizeof() + (note["n_namesz"] + 3) // 4 * 4
            address = section["sh_addr"] + desc_at - section["sh_offset"]
            return (address, desc) if len(desc) == note["n_descsz"] > 0 else None
    return None


def _mappings() -> list[tuple[int, int, str]]:
    """This process's mappings: (start, end, permissions), from /proc/self/maps ([] without it)."""
    try:
        with open("/proc/self/maps") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        span, permissions = line.split()[:2]
        start, end = span.split("-")
        found.append((int(start, 16), int(end, 16), permissions))
    return found


def _mapped(mappings: list[tuple[int, int, str]], address: int, length: int, mode: str) -> bool:
    """[address, address + length) lies in one mapping that allows `mode` ("r", "rw")."""
    return any(
        start <= address and address + length <= end and permissions.startswith(mode)
        for start, end, permissions in mappings
    )


def _static(symbols: dict[str, list[_Symbol]], wanted: str) -> _Symbol | None:
    """The one writable 4-byte object named `wanted` ("wanted", "wanted.N", "function.wanted")."""
    matches = [
        symbol
        for name, listed in symbols.items()
        if wanted in (name, name.split(".", 1)[0], name.rsplit(".", 1)[-1])
        for symbol in listed
        if symbol.kind == "STT_OBJECT"
        and symbol.size == 4
        and symbol.writable
        and symbol.section[0] <= symbol.value
        and symbol.value + 4 <= sum(symbol.section)  # inside its section
    ]
    return matches[0] if len(matches) == 1 else None


def _loaded_at(library: ctypes.CDLL, name: str, symbols: dict[str, list[_Symbol]]) -> int | None:
    """Where the library file was loaded, by the exported function `name`; None if it has no value."""
    values = {symbol.value for symbol in symbols.get(name, ()) if symbol.value}
    address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
    return address - values.pop() if len(values) == 1 and address else None


class CarriedState:
    """The carried statics of one loaded espeak-ng library, saved before its first call."""

    def __init__(self, library: ctypes.CDLL, path: str) -> None:
        self._saved: list[tuple[int, bytes]] = []
        info = library.espeak_Info(None)  # (the version string, before any other call: it reads no state)
        if not isinstance(info, bytes) or info.decode("ascii", "replace").strip() not in VERIFIED:
            return
        # (a file missing, not ELF, or damaged: pyelftools raises ELFError, ELFParseError among them,
        # its construct's own errors where it parses unwrapped, as a note's name that never ends, and
        # ValueError or OverflowError for an offset past what a stream can seek to)
        from elftools.common.exceptions import ELFError
        from elftools.construct import ConstructError

        try:
            symbols, build_id = _symbols(path)
        except (OSError, ValueError, OverflowError, ELFError, ConstructError):
            return
        bases = {_loaded_at(library, name, symbols) for name in ANCHORS}
        if len(bases) != 1 or None in bases or build_id is None:
            return
        base = bases.pop()
        assert base is not None
        found = {name: _static(symbols, name) for name in CARRIED + ALSO}
        if any(found[name] is None for name in CARRIED):
            return
        # The build loaded (its build id in memory where the file has it), and every static in its
        # own writable memory: anything else is another file's word for where they are
        mappings, (where, expected) = _mappings(), build_id
        if not _mapped(mappings, base + where, len(expected), "r"):
            return
        if ctypes.string_at(base + where, len(expected)) != expected:
            return
        addresses = sorted(base + symbol.value for symbol in found.values() if symbol is not None)
        if not all(_mapped(mappings, at, 4, "rw") for at in addresses):
            return
        for at in addresses:
            value = ctypes.string_at(at, 4)
            if self._saved and self._saved[-1][0] + len(self._saved[-1][1]) == at:  # one span, one call
                self._saved[-1] = (self._saved[-1][0], self._saved[-1][1] + value)
            else:
                self._saved.append((at, value))

    @property
    def repeatable(self) -> bool:
        """The statics were found: the same text makes the same audio, call after call."""
        return bool(self._saved)

    def reset(self) -> None:
        """Under the library's lock, before a synthesis: the statics as they were at load."""
        for address, value in self._saved:
            ctypes.memmove(address, value, len(value))
