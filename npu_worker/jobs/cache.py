"""Synthesis cache: a repeated section (same engine identity, text, lang, speed, voice, seed) is served
from disk instead of the engine. Bounded in bytes; least recently used entries go first.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..engine.base import EngineInfo, SynthesisRequest, Voice
from ..files import TooLarge, read_own, write_atomic
from ..state_dir import private_folder

log = logging.getLogger(__name__)

ROOM_SLACK = (
    64 << 10
)  # bytes given up beyond twice a write's own where it found no room (its blocks, a log line)


def whole_wav(data: bytes, rate: int) -> bool:
    """Whether `data` is what `audio.wav_bytes` writes at `rate`, not cut short: its one 44-byte header
    (16-bit mono PCM) with the sizes of this file. A header damaged where the sizes still agree made
    libsndfile fail the section (and its text, for as long as the entry stayed); another rate played it
    at the wrong speed."""
    size = len(data) - 44
    if size < 0 or size % 2:
        return False
    fields = (b"RIFF", 36 + size, b"WAVE", b"fmt ", 16, 1, 1, rate, 2 * rate, 2, 16, b"data", size)
    return data[:44] == struct.pack("<4sI4s4sIHHIIHH4sI", *fields)


def cache_key(info: EngineInfo, request: SynthesisRequest, default_voice: Voice | None = None) -> str:
    """`default_voice`: what the engine speaks with when the request names no voice (ZipVoice's
    `--ref-wav`), so a restart with another one is another key."""
    voice = request.voice if request.voice.ref_wav is not None or default_voice is None else default_voice
    parts = [
        info.identity(),
        request.text,
        request.lang,
        repr(float(request.speed_factor)),
        voice.identity(),
        repr(request.seed),
        repr(request.early_audio),
    ]
    # JSON, not a separator: a text may hold any character ("안녕\x1f" + "ko" was "안녕" + "\x1fko")
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


class SynthesisCache:
    """Wav files named by key under `<state>/cache`; used from the scheduler thread.

    The directory is scanned once (on first use); after that an in-memory index, kept in
    least-recently-used order, tracks sizes, so a put never re-lists the directory.
    """

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = Path(directory)
        self.max_bytes: Final = max_bytes
        # Read by the engine lane three times a section: an attribute, not a property (a Python call
        # each; benchmarks/SERVER_OVERHEAD.md, stop 56). `max_bytes` is fixed, so it stays true.
        self.enabled: Final = max_bytes > 0
        self._lock = threading.Lock()
        self._index: OrderedDict[str, int] | None = None  # key → bytes, oldest first
        self._total = 0
        self._given = 0  # the entries given up for room so far (`give_room`): another write's drop seen

    def prepare(self) -> None:
        """Create the directory (blocking I/O: at start-up, off the loop)."""
        if self.enabled:
            private_folder(self.directory)

    def key_for(
        self, info: EngineInfo, request: SynthesisRequest, default_voice: Callable[[], Voice] | None
    ) -> str:
        """The request's key (`cache_key`; `default_voice`: the engine's, if it has one); none with the
        cache off, where nothing is looked up or kept by it: it was a JSON dump, a sha256 and, for a
        named voice, two `stat`s a section on the engine thread (benchmarks/SERVER_OVERHEAD.md,
        2026-12-06, stop 52)."""
        if not self.enabled:
            return ""
        return cache_key(info, request, default_voice() if callable(default_voice) else None)

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.wav"

    def _entries(self) -> OrderedDict[str, int]:
        if self._index is None:
            found = []
            try:
                with os.scandir(self.directory) as listing:
                    for entry in listing:
                        try:  # the worker's own files only: a link (a loop) or a folder is no entry
                            if entry.name.endswith(".wav") and entry.is_file(follow_symlinks=False):
                                stat = entry.stat(follow_symlinks=False)
                                found.append((stat.st_mtime, entry.name[:-4], stat.st_size))
                        except OSError:
                            continue
            except OSError as exc:
                log.warning("the synthesis cache could not be listed: %s", exc)
            self._index = OrderedDict((key, size) for _, key, size in sorted(found))
            self._total = sum(self._index.values())
            self._fit(self._index)  # a restart with a smaller bound: within it now, not at the next put
        return self._index

    def give_room(self, path: str, needed: int | None = None) -> bool:
        """Drop the least recently used entries, twice the `needed` bytes and 64 KiB more (None: every
        one), when the cache lies on the disk of `path`, where a write found no room: the cache is an
        aid, a section's file is what its caller asked for (walk33: the cache had filled a small state
        disk, and every default output after it failed `WriteFailed`). Not every entry for any write: at
        the disk's capacity each put filled it again, and the next record or wav emptied the cache. True
        when something was dropped, so the write is worth one more try."""
        if not self.enabled or not same_disk(self.directory, path):
            return False
        with self._lock:
            entries = self._entries()
            had = len(entries)
            self._fit(entries, bound=0 if needed is None else self._total - 2 * needed - ROOM_SLACK)
            dropped = had - len(entries)
            self._given += dropped
        if dropped:
            log.warning("the synthesis cache gave up %d entries: no room left to write %s", dropped, path)
        return dropped > 0

    def making_room(self, path: str, write: Callable[[], object], needed: int) -> None:
        """`write()` of the file at `path` (`needed` bytes); once more where its disk was full and the
        cache gave up room there, and where that was not enough, once more after it gave up all: a
        section's wav (`Runner`, `ClusterRunner`), a batch's record (`LocalJournal.create`: every batch
        was a 503 `StateUnavailable` while the cache held the state disk)."""
        given = self._given
        try:
            write()
            return
        except OSError as exc:
            # nothing left to drop, but another write had the cache drop some after this one failed:
            # the room is there (that write's 503 or WriteFailed on a disk with room again)
            if not no_room(exc) or (not self.give_room(path, needed) and self._given == given):
                raise
        try:
            write()
        except OSError as exc:  # the disk filled again meanwhile, or the entries were small: all of them
            if not no_room(exc) or not self.give_room(path):
                raise
            write()

    def _fit(self, entries: OrderedDict[str, int], bound: int | None = None) -> None:
        """Drop the least recently used entries until the rest fit the bound (`max_bytes`)."""
        while self._total > (self.max_bytes if bound is None else bound) and entries:
            oldest, size = entries.popitem(last=False)
            self._total -= size
            try:
                self._path(oldest).unlink(missing_ok=True)
            except OSError as exc:  # put runs after the section's `ok`: it must not fail it
                log.warning("the synthesis cache could not drop an entry: %s", exc)

    def get(self, key: str, rate: int) -> bytes | None:
        """The entry's wav, if it is one of ours made at `rate` (the engine's); else a miss."""
        if not self.enabled:
            return None
        path = self._path(key)
        try:
            data = read_own(path, self.max_bytes)
            if not whole_wav(data, rate):
                raise OSError(
                    errno.EINVAL, "not a whole wav of this engine's (cut short or damaged)", str(path)
                )
            os.utime(path)  # recency survives a restart
        except FileNotFoundError:
            return None
        except (OSError, TooLarge) as exc:  # the cache is an aid: a section never fails because of it
            log.warning("the synthesis cache could not be read: %s", exc)
            return None
        with self._lock:
            entries = self._entries()
            if key in entries:
                entries.move_to_end(key)
        return data

    def holds(self, key: str) -> bool:
        """`key` has an entry, by the index alone (no file read): a batch's next section that is a hit
        is not sent ahead to the engine (`Runner`: made for nothing)."""
        if not self.enabled:
            return False
        with self._lock:
            return key in self._entries()

    def put(self, key: str, wav: bytes) -> None:
        if not self.enabled or len(wav) > self.max_bytes:
            return
        with self._lock:
            entries = self._entries()
            try:
                write_atomic(self._path(key), wav)
            except OSError as exc:  # a full state disk: the section it came from is still ok
                log.warning("the synthesis cache could not keep a section: %s", exc)
                return
            self._total += len(wav) - entries.pop(key, 0)
            entries[key] = len(wav)
            self._fit(entries)


def no_room(error: OSError) -> bool:
    return error.errno in (errno.ENOSPC, errno.EDQUOT)


def same_disk(folder: Path, path: str) -> bool:
    """`folder` and `path` (or its nearest existing folder: a write that found no room may not have
    made its own) are on one filesystem."""
    place = os.path.dirname(path)
    while True:
        try:
            return os.stat(folder).st_dev == os.stat(place).st_dev
        except FileNotFoundError:
            if place == os.path.dirname(place):
                return False
            place = os.path.dirname(place)
        except OSError:
            return False
