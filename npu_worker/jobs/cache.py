"""Synthesis cache: a repeated section (same engine identity, text, lang, speed, voice, seed) is served
from disk instead of the engine. Bounded in bytes; least recently used entries go first.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path

from ..engine.base import EngineInfo, SynthesisRequest
from ..files import write_atomic

log = logging.getLogger(__name__)


def cache_key(info: EngineInfo, request: SynthesisRequest) -> str:
    parts = [
        info.identity(),
        request.text,
        request.lang,
        repr(float(request.speed_factor)),
        request.voice.identity(),
        repr(request.seed),
        repr(request.early_audio),
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


class SynthesisCache:
    """Wav files named by key under `<state>/cache`; used from the scheduler thread."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        if self.enabled:
            self.directory.mkdir(parents=True, exist_ok=True)

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.wav"

    def get(self, key: str) -> bytes | None:
        if not self.enabled:
            return None
        path = self._path(key)
        try:
            data = path.read_bytes()
            os.utime(path)  # mark as recently used
            return data
        except FileNotFoundError:
            return None

    def put(self, key: str, wav: bytes) -> None:
        if not self.enabled or len(wav) > self.max_bytes:
            return
        with self._lock:
            write_atomic(self._path(key), wav)
            self._evict()

    def _evict(self) -> None:
        entries = []
        for path in self.directory.glob("*.wav"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
