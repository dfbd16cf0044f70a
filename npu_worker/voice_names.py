"""What a named voice is: its name (never a path), its transcript and the header of its wav, as listed.

A voice lives as `<name>.wav` + `<name>.txt` (the same sidecar layout the ZipVoice engine reads). A name
never contains a path character, so a name can never reach outside its directory. No aiohttp here.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import soundfile

from .files import TooLarge, read_regular
from .other_writers import shared_with_others
from .protocol import BadRequest

DEFAULT_VOICE = "default"
INLINE_PREFIX = "inline-"  # voices made from a request's inline `ref_audio`, named by content hash
VOICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
TRANSCRIPT_READ_LIMIT = 64 * 1024  # a stored transcript is at most 1 000 characters; a read stops here


def is_voice_name(name: str) -> bool:
    """A bare name: letters, digits, `_ . -`, no path separators, no `..`, at most 64 characters."""
    return bool(VOICE_NAME.fullmatch(name)) and ".." not in name


def check_voice_name(name: str) -> str:
    if not is_voice_name(name):
        raise BadRequest(
            f"voice name {name[:80]!r} is not allowed: use 1-64 ASCII letters (A-Z, a-z), digits, '_', "
            "'.' or '-', the first a letter or digit, no '..' (no path characters)"
        )
    return name


def read_transcript(path: Path) -> str | None:
    """A voice's `.txt`, or None: never a read that waits on a FIFO or takes a huge file whole."""
    try:
        return read_regular(path, TRANSCRIPT_READ_LIMIT).decode("utf-8").strip() or None
    except (OSError, TooLarge, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class NamedVoice:
    """`wav_path=None`: the engine's built-in default (no --ref-wav)."""

    name: str
    wav_path: str | None
    text: str | None
    source: str  # "default", "uploaded" or "directory"

    def describe(self) -> dict[str, Any]:
        """The listing entry: name, source, transcript, duration and sample rate of the wav."""
        body: dict[str, Any] = {"name": self.name, "source": self.source, "ref_text": self.text}
        if self.wav_path is not None and self.text is None:  # --ref-wav's transcript beside it,
            folder = Path(self.wav_path).parent  # listed only where no one else can put a file (not /tmp:
            if shared_with_others(folder) is None:  # a link there would list any file the worker reads)
                body["ref_text"] = read_transcript(Path(self.wav_path).with_suffix(".txt"))
        if self.wav_path is not None:
            try:
                frames, rate = wav_header(self.wav_path)
                body["duration_sec"] = round(frames / rate, 3)
                body["sample_rate"] = rate
            except (OSError, RuntimeError):
                body["duration_sec"] = body["sample_rate"] = None
        return body


def wav_header(path: str) -> tuple[int, int]:
    """Frames and rate of the audio file at `path`, from its header; OSError for anything but a regular
    file, opened without blocking (--ref-wav in /tmp swapped for a FIFO held each listing for ever)."""
    with open(path, "rb", opener=lambda name, flags: os.open(name, flags | os.O_NONBLOCK)) as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        with soundfile.SoundFile(stream) as sound:
            return sound.frames, sound.samplerate
