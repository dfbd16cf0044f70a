"""The lecture file `npu-worker batch` reads: its JSON (a byte-order mark allowed) and its sections.

Kept apart from the command's flow so that what a lecture file may hold is told in one place, for the
argument's help and for every refusal of a file that is none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LECTURE_SHAPE = 'a lecture JSON, {"lang": "ko", "sections": [{"idx": 0, "text": "..."}]} or a list'
# The 39-slide lecture is 7 KB; 1 000 sections of 2 000 characters (serve's default bounds) in \u escapes
# are 12 MB. A larger file is no lecture a worker takes (its body bound is 8 MiB by default).
MAX_LECTURE_BYTES = 64 * 1024 * 1024


def load_lecture(path: str) -> tuple[list[dict[str, Any]], str | None]:
    """Sections (idx defaults to position; `null` too, as the worker reads it) and the lecture's
    language, from a dict or a bare list; ValueError names what is wrong where."""
    data = read_json(path)
    sections = data.get("sections") if isinstance(data, dict) else data
    if not isinstance(sections, list) or not all(isinstance(s, dict) and "text" in s for s in sections):
        raise ValueError("expected a list of sections with 'text' (or an object with 'sections')")
    lang = data.get("lang") if isinstance(data, dict) else None
    if lang is not None and not isinstance(lang, str):
        raise ValueError("'lang' must be a string")
    read = []
    for position, section in enumerate(sections):
        idx = section.get("idx")
        idx = position if idx is None else idx
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise ValueError(f"section {position}: 'idx' must be a non-negative integer, got {idx!r}")
        if not isinstance(section["text"], str):
            raise ValueError(f"section {position}: 'text' must be a string")
        read.append({"idx": idx, "text": section["text"]})
    return read, lang


def read_json(path: str | Path) -> Any:
    """A JSON file, UTF-8 with or without the byte-order mark Windows editors write (json refused
    it); ValueError (not json's RecursionError) for one nested too deeply to read, and one that says a
    lecture JSON is expected for a file that is none (a plain text gave the parser's words alone)."""
    try:
        return json.loads(read_bounded(path).decode("utf-8-sig"))
    except RecursionError:
        raise ValueError("the JSON is nested too deeply to read") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON ({exc}): {LECTURE_SHAPE} is expected") from None


def read_bounded(path: str | Path) -> bytes:
    """The file's bytes, ValueError past MAX_LECTURE_BYTES: `batch /dev/zero` (or a mistyped path to a
    disk image) read until the kernel killed the command for its memory, with no word said."""
    with open(path, "rb") as source:
        raw = source.read(MAX_LECTURE_BYTES + 1)
    if len(raw) > MAX_LECTURE_BYTES:
        raise ValueError(f"more than {MAX_LECTURE_BYTES // 2**20} MiB: {LECTURE_SHAPE} is expected")
    return raw
