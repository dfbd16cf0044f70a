"""Where a request may write or read: output_path and ref_wav must lie under the allowed roots, and
never inside the worker's state directory.

Two checks, for two moments. At admission the caller's path is resolved (as os.path.realpath does,
`planted_links.resolve_unplanted`: `..` and links pointing outside, or planted by another user, are
refused early, with a clear 400). At write (or synthesis) time the stored
real path is opened again component by component without following any link (files.py), because the
filesystem may have changed in between — a swapped directory, or a restart.

The state dir holds the worker's own files (job records, the synthesis cache, default outputs); a
caller who could name them could poison the cache or destroy a job record, so it is refused even when
a root contains it. Default outputs (a section without output_path) go to `<state>/outputs/<job>/`,
written by the worker under its own name; callers may not name that folder either, so one caller
cannot overwrite another job's default output.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .config import Settings
from .engine.zipvoice.model_files import vocoder_candidates
from .files import (
    TEMP_NAME_EXTRA,
    check_file_under_roots,
    lies_in,
    open_beneath_checked,
    read_regular,
    regular_file,
    write_under_roots,
)
from .own_log import is_own_log
from .planted_links import UnfollowedLink, resolve_unplanted
from .protocol import MAX_REFERENCE_BYTES, OutputPathNotAllowed, RefWavNotAllowed
from .reference_reads import read_callers_file
from .state_dir import private_folder

OUTPUTS_DIR = "outputs"
JOBS_DIR = "jobs"
LEGACY_OUTPUT = re.compile(r"s\d+\.wav")
VOICES_DIR = "voices"  # uploaded voices (voices.py), the worker's own files


def is_under(path: str, roots: Sequence[str]) -> bool:
    """Whether `path` (a real path) lies in one of `roots`: by its spelling, or by identity where a
    folder it lies in is a root under another name (`alias_under`)."""
    return any(spelled_under(path, root) for root in roots) or alias_under(path, roots) is not None


def spelled_under(path: str, root: str) -> bool:
    """`path` lies in `root` as both are written: the only test for a path the worker stored at
    admission (already in the roots' spelling), which may have changed since. `alias_under` stats the
    folders a path goes through, following links: true of a folder a caller replaced with a link to
    the root, it let a check that allows (a stored voice, read with links followed) pass."""
    return lies_in(path, root)


def alias_under(path: str, roots: Sequence[str]) -> str | None:
    """`path` spelt beneath the root it lies in, where the folder of `path` that is that root has
    another name: on a case-insensitive file system (macOS's default, a FAT or casefolded disk)
    `/data/STATE/jobs` is `/data/state/jobs`, which realpath leaves as written, as it leaves a bind
    mount. Compared by identity (device and inode) with the folders `path` goes through that exist;
    None where none is a root. A check by spelling alone let a caller name the state dir, or an
    operator's voice, in other letters, and refused a root's own files named so."""
    wanted = []
    for root in roots:
        with contextlib.suppress(OSError):
            wanted.append((root, os.stat(root)))
    if not wanted:
        return None
    # From the top, stopping at the first folder that cannot be statted (none below it can be): a
    # caller's path is mostly folders not made yet, each stat once (leaf upwards, every one was tried).
    parts, deepest = path.split(os.sep), None
    for depth in range(1, len(parts) + 1):
        try:
            found = os.stat(os.sep.join(parts[:depth]) or os.sep)
        except OSError:
            break
        for root, info in wanted:
            if os.path.samestat(found, info):
                deepest = os.path.join(root, *parts[depth:])
    return deepest


def same_file_as_any(path: str, paths: Sequence[str]) -> bool:
    """`path` is one of `paths`, by spelling or (both existing) by identity: another case, a bind mount."""
    if not paths:
        return False  # (nothing to compare with: no stat of `path`, 3 a `/synth`'s write and admission)
    if path in paths:
        return True
    try:
        found = os.stat(path)
    except OSError:
        return False
    for other in paths:
        with contextlib.suppress(OSError):
            if os.path.samestat(found, os.stat(other)):
                return True
    return False


PATH_MAX = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096  # bytes, with the NUL
NAME_MAX = os.pathconf("/", "PC_NAME_MAX") if hasattr(os, "pathconf") else 255


def too_long(real: str, *, written: bool = False) -> str | None:
    """Why the system could not open `real` by name (longer than PATH_MAX, or a component longer than
    NAME_MAX), or None. The worker writes component by component, so it could create such a file, but
    the caller could not open it by the path it gave. `written`: a file the worker writes, through a
    temp file whose name is TEMP_NAME_EXTRA bytes longer (a name of 237 to 255 bytes was accepted, then
    every write of it failed, "File name too long", once the engine had made its audio).

    Asked of the path as given too, before it is resolved: the system opens no such path either, and
    resolving costs time that grows faster than the path (a 200 kB `output_path` held a thread 13 s, and
    a request may carry 1000 of them)."""
    encoded = os.fsencode(real)
    if len(encoded) >= PATH_MAX:
        return f"is {len(encoded)} bytes long; the system's limit is {PATH_MAX - 1}"
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        return f"has a component of {len(longest)} bytes; the system's limit is {NAME_MAX}"
    name = encoded.rsplit(b"/", 1)[-1]
    if written and len(name) > NAME_MAX - TEMP_NAME_EXTRA:
        return (
            f"has a file name of {len(name)} bytes; at most {NAME_MAX - TEMP_NAME_EXTRA} leave room for the "
            f"temp file it is written through (the system's limit is {NAME_MAX})"
        )
    return None


def spelled_as_roots(real: str, roots: Sequence[str]) -> str:
    """`real` as the roots spell it where it lies in one under another name (`alias_under`): the file is
    written beneath the root, found by its spelling, and its path is said back to the caller so."""
    if any(spelled_under(real, root) for root in roots):
        return real
    return alias_under(real, roots) or real


# The caller's next step, not the operator's: a path under one of the roots, or the operator's setting to ask for.
OUTSIDE_HINT = (
    "use a path under one of them, or ask the worker's operator to allow another directory "
    "(--output-roots, NPU_WORKER_OUTPUT_ROOTS)"
)


def own_home(path: str) -> str:
    """A caller's `~` or `~/…` as the worker's own home; any other `~name` is left as written (so refused
    as not absolute): expanding another user's home told a caller which user names exist on the machine
    ("must be absolute" for one that does not, "outside the allowed roots" for one that does)."""
    return os.path.expanduser(path) if path == "~" or path.startswith("~/") else path


def resolve_output_path(path: str, roots: Sequence[str], forbidden: Sequence[str] = ()) -> str:
    """The real absolute path to write under `roots` (never under `forbidden`), or OutputPathNotAllowed."""
    if "\x00" in path:
        raise OutputPathNotAllowed("output_path contains a NUL byte")
    expanded = own_home(path)
    if not os.path.isabs(expanded):
        raise OutputPathNotAllowed(f"output_path must be an absolute path: {path!r}")
    if path.endswith(("/", "/.", "/..")):  # names a folder: realpath would write the file it ends in
        raise OutputPathNotAllowed(f"output_path names a directory, not a file: {path!r}")
    if (why := too_long(expanded)) is not None:  # as given, before resolving: see `too_long`
        raise OutputPathNotAllowed(f"output_path {why}")
    try:
        real = spelled_as_roots(resolve_unplanted(expanded), roots)
    except UnfollowedLink as refused:
        raise OutputPathNotAllowed(f"output_path {refused}") from None
    if (why := too_long(real, written=True)) is not None:
        raise OutputPathNotAllowed(f"output_path {why}")
    if is_under(real, forbidden):
        raise OutputPathNotAllowed(f"{path} is inside the worker's state directory")
    if not is_under(real, roots):
        raise OutputPathNotAllowed(
            f"{path} is outside the allowed roots ({', '.join(roots)}); {OUTSIDE_HINT}"
        )
    try:
        existing = os.stat(real).st_mode
    except OSError:  # not there yet (or unreadable: the write says why); what is above must be a folder
        above = os.path.dirname(real)
        while not os.path.lexists(above):
            above = os.path.dirname(above)
        if not os.path.isdir(above):  # every section failed its write after its synthesis
            raise OutputPathNotAllowed(f"{path}: {above} is a file, not a folder") from None
        return real
    if stat.S_ISDIR(existing):
        raise OutputPathNotAllowed(f"{path} is a directory")
    if not stat.S_ISREG(existing):  # a FIFO or a device: refused now, not after the synthesis
        raise OutputPathNotAllowed(f"{path} is not a regular file")
    return real


def resolve_ref_wav(path: str, roots: Sequence[str], forbidden: Sequence[str] = ()) -> str:
    """The real path of an existing reference wav under `roots` (not `forbidden`), or RefWavNotAllowed."""
    if "\x00" in path:
        raise RefWavNotAllowed("ref_wav contains a NUL byte")
    expanded = own_home(path)
    if not os.path.isabs(expanded):  # never resolved against the worker's own folder
        raise RefWavNotAllowed(f"ref_wav must be an absolute path or a stored voice's name: {path!r}")
    if (why := too_long(expanded)) is not None:  # as given, before resolving: see `too_long`
        raise RefWavNotAllowed(f"ref_wav {why}")
    try:
        real = spelled_as_roots(resolve_unplanted(expanded), roots)
    except UnfollowedLink as refused:
        raise RefWavNotAllowed(f"ref_wav {refused}") from None
    if (why := too_long(real)) is not None:
        raise RefWavNotAllowed(f"ref_wav {why}")
    if is_under(real, forbidden):
        raise RefWavNotAllowed(f"{path} is inside the worker's state directory")
    if not is_under(real, roots):
        raise RefWavNotAllowed(f"{path} is outside the allowed roots ({', '.join(roots)}); {OUTSIDE_HINT}")
    if (info := regular_file(real)) is None:  # one stat: a file removed meanwhile is this 400, not a 500
        raise RefWavNotAllowed(f"{path} does not exist or is not a file")
    if info.st_nlink > 1:  # see files.one_name_only
        raise RefWavNotAllowed(f"{path} has {info.st_nlink} names (hard links); a reference must have one")
    if (size := info.st_size) > MAX_REFERENCE_BYTES:
        raise RefWavNotAllowed(
            f"{path} is {size} bytes; a reference voice is a few seconds of speech "
            f"(at most {MAX_REFERENCE_BYTES} bytes)"
        )
    return real


@dataclass(frozen=True)
class PathPolicy:
    """The allowed roots (real paths) and the state dir they never include."""

    roots: tuple[str, ...]
    state_dir: str
    voice_dirs: tuple[str, ...] = ()  # the operator's read-only voice directories (--voices-dir)
    voice_files: tuple[str, ...] = ()  # the operator's default voice (--ref-wav), as given and real
    engine_files: tuple[str, ...] = ()  # the operator's model folder and vocoder (--model-dir, --vocoder)

    @classmethod
    def from_settings(cls, settings: Settings) -> PathPolicy:
        return cls(
            settings.resolved_output_roots(),
            os.path.realpath(settings.resolved_state_dir()),
            tuple(os.path.realpath(os.path.expanduser(d)) for d in settings.voices_dir),
            (settings.ref_wav, os.path.realpath(settings.ref_wav)) if settings.ref_wav else (),
            engine_files(settings.model_dir, settings.vocoder),
        )

    @property
    def voices_root(self) -> str:
        return os.path.join(self.state_dir, VOICES_DIR)

    @functools.cached_property
    def outputs_root(self) -> str:
        """Worked out once (the state dir is fixed): `write_output` read it five times a section."""
        return os.path.join(self.state_dir, OUTPUTS_DIR)

    def resolve_output_path(self, path: str) -> str:
        """At admission: the real absolute path to write, or OutputPathNotAllowed."""
        real = resolve_output_path(path, self.roots, forbidden=(self.state_dir,))
        self._check_not_operators(real, path)
        return real

    def resolve_ref_wav(self, path: str) -> str:
        """At admission: the real path of an existing reference wav, or RefWavNotAllowed."""
        return resolve_ref_wav(path, self.roots, forbidden=(self.state_dir,))

    def write_output(self, path: str, data: bytes) -> None:
        """At write time (a fresh or a resumed job): atomically, no link followed, never into the
        worker's own files; a default output only into the outputs folder."""
        roots = self._output_roots(path)
        if roots is None:
            raise OutputPathNotAllowed(f"{path} is outside the allowed roots")
        if roots == self.roots:  # a caller's path; a default output is the worker's own file
            self._check_not_operators(path, path)
        if roots == (self.outputs_root,):
            private_folder(self.outputs_root)
        # A default output is the worker's own file (served back by GET .../audio): no one else writes it.
        write_under_roots(path, data, roots, private=roots == (self.outputs_root,))

    def open_output(self, path: str, limit: int) -> BinaryIO:
        """A section's wav as the worker wrote it (`write_output`'s roots, no link followed, still the
        worker's own single-link file), open for reading: OSError or TooLarge otherwise
        (`files.open_beneath_checked`)."""
        roots = self._output_roots(path)
        if roots is None:
            raise OSError(errno.EPERM, "outside the allowed roots", path)
        return open_beneath_checked(path, roots, limit, own=True)

    def _check_not_operators(self, real: str, given: str) -> None:
        """OutputPathNotAllowed for the operator's voices (--ref-wav and its transcript, a --voices-dir's
        files) and model files (--model-dir, --vocoder) when an output root holds them: every caller
        speaks with those, and one batch replaced them (`--ref-wav /tmp/voice.wav` under the default
        root, the temp dir), or left a model the next start could not load."""
        operators = (*self.voice_dirs, *self.engine_files)
        inside = [root for root in self.roots if is_under(root, operators)]  # the operator made it a root
        voices = self._default_voice(real) or self._operators_own(real, self.voice_dirs, inside)
        if voices or self._linked_voice(real):
            raise OutputPathNotAllowed(
                f"{given} is one of the worker's voices (--ref-wav, --voices-dir); callers cannot replace it"
            )
        if self._operators_own(real, self.engine_files, inside):
            raise OutputPathNotAllowed(
                f"{given} is one of the worker's model files (--model-dir, --vocoder); callers cannot replace it"
            )
        if is_own_log(real):
            raise OutputPathNotAllowed(f"{given} is the worker's own log (its standard output or error)")

    @staticmethod
    def _operators_own(real: str, folders: Sequence[str], inside: Sequence[str]) -> bool:
        """A file directly in one of the operator's folders (what the engine loads or the voices list
        shows, even where a root is that folder itself: `--model-dir /data --output-roots /data`
        replaced the model), or deeper in one, unless a root the operator put there holds it."""
        beside = same_file_as_any(os.path.dirname(real), folders)
        return beside or (is_under(real, folders) and not is_under(real, inside))

    def _linked_voice(self, real: str) -> bool:
        """The file a link in a --voices-dir points at, or the transcript beside it: the voice is spoken
        from there (voices.py resolves the link), so replacing it replaced the voice for every caller."""
        for folder in self.voice_dirs:
            try:
                with os.scandir(folder) as entries:
                    links = [entry.path for entry in entries if entry.is_symlink()]
            except OSError:  # not there (yet): no voice is found there either
                continue
            for link in links:
                target = os.path.realpath(link)
                if same_file_as_any(real, (target, os.path.splitext(target)[0] + ".txt")):
                    return True
        return False

    def _output_roots(self, path: str) -> tuple[str, ...] | None:
        """The roots an output at `path` is written beneath (and read back from); None: nowhere."""
        if spelled_under(path, self.outputs_root):  # by spelling: see `spelled_under`
            return (self.outputs_root,)
        if self._legacy_default_output(path):
            return (os.path.join(self.state_dir, JOBS_DIR),)
        if is_under(path, (self.state_dir,)) or not any(spelled_under(path, root) for root in self.roots):
            return None
        return self.roots

    def _legacy_default_output(self, path: str) -> bool:
        """`<state>/jobs/<id>/sNN.wav`: where default outputs went before `outputs/` (an interrupted job
        recorded then still resumes). Callers could never name it, and no worker file has that name."""
        jobs_root = os.path.join(self.state_dir, JOBS_DIR)
        relative = os.path.relpath(path, jobs_root) if spelled_under(path, jobs_root) else ""
        parts = relative.split(os.sep)
        return len(parts) == 2 and parts[0].isalnum() and LEGACY_OUTPUT.fullmatch(parts[1]) is not None

    def check_ref_wav(self, path: str) -> None:
        """At synthesis time: the reference is still a regular file reached without links (a clear
        `RefWavNotAllowed` for the section; the engine then reads it through `read_reference`)."""
        if self._stored_voice(path):
            return
        if is_under(path, (self.state_dir,)):
            raise RefWavNotAllowed(f"{path} is inside the worker's state directory")
        check_file_under_roots(path, self.roots)

    def read_reference(self, path: str, limit: int) -> bytes:
        """How the engine reads a reference wav and its transcript: a caller's beneath the allowed roots
        with no link followed (`files.read_beneath`), so a swap after `check_ref_wav` reads nothing else;
        a stored voice as it is (`files.read_regular`). Bounded, never waiting on a FIFO."""
        if self._stored_voice(path):
            return read_regular(path, limit)
        if is_under(path, (self.state_dir,)):
            raise OSError(errno.EPERM, "inside the worker's state directory", path)
        return read_callers_file(path, self.roots, limit)

    def _stored_voice(self, path: str) -> bool:
        """The worker's own voice store, or the operator's --ref-wav / --voices-dir (and their sidecars),
        by spelling only: such a voice is read with links followed, and a caller's folder replaced with
        a link to a voice folder after admission was taken for one (a link flipped between that folder
        and another read any file the worker can, outside every root)."""
        stem = os.path.splitext(path)[0]
        named = path in self.voice_files or f"{stem}.wav" in self.voice_files
        return named or any(spelled_under(path, folder) for folder in (self.voices_root, *self.voice_dirs))

    def _default_voice(self, path: str) -> bool:
        """The operator's --ref-wav, or the transcript beside it that the engine reads."""
        transcripts = [os.path.splitext(wav)[0] + ".txt" for wav in self.voice_files]
        return same_file_as_any(path, [*self.voice_files, *transcripts])


def engine_files(model_dir: str | None, vocoder: str | None) -> tuple[str, ...]:
    """The operator's model folder and vocoder, real: --vocoder, or where none is given the vocoders the
    engine finds by name beside the model folder too (its parent, where no one else can write: the
    sherpa-onnx layout), which a root holding that parent let a batch replace."""
    files = [os.path.realpath(os.path.expanduser(f)) for f in (model_dir, vocoder) if f]
    if model_dir and not vocoder:  # the parent as the engine takes it: of the folder as named, links kept
        folder = Path(os.path.abspath(os.path.expanduser(model_dir)))
        files += [os.path.realpath(path) for path in vocoder_candidates(folder)]
    return tuple(files)
