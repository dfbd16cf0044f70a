"""The bench's inputs, read and checked before anything is sent: the texts file (a lecture JSON, a JSON
list of texts, or one text per line) and an engine baseline of those very texts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from npu_worker.bench.measure import figure

DEFAULT_TEXTS = Path(__file__).with_name("lecture_ko_39.json")
MAX_TEXTS_BYTES = 16 * 1024 * 1024  # the 39-slide lecture is 7 KB


def read_texts_file(path: Path, flag: str = "--texts", what: str = "a texts file") -> str:
    """The file's text, BOM or not; ValueError for more than MAX_TEXTS_BYTES (`--texts /dev/zero` read
    until memory ran out), for what is no UTF-8, or for a file that cannot be read (a missing one was
    `[Errno 2] No such file or directory: '...'`, naming no flag). `flag` and `what` name the file the
    caller gave: a missing `--engine-baseline` was refused as `cannot read --texts PATH`."""
    try:
        with path.open("rb") as source:
            raw = source.read(MAX_TEXTS_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {flag} {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_TEXTS_BYTES:
        raise ValueError(f"{path}: more than {MAX_TEXTS_BYTES // 2**20} MiB: not {what}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def json_of(path: Path, raw: str) -> Any:
    """`raw`, the text of `path`, as JSON; ValueError naming the file (json's own words lack its name),
    also for JSON nested too deeply to read (json's RecursionError)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError(f"{path}: the JSON is nested too deeply to read") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def load_texts(path: Path) -> tuple[tuple[str, ...], str | None]:
    """Texts from a lecture JSON (`sections[].text`, optional `lang`), a JSON list of texts, or one text
    per line. ValueError says what is wrong where (a missing 'text' was a KeyError's traceback)."""
    raw = read_texts_file(path)
    if path.suffix != ".json":
        return tuple(line.strip() for line in raw.splitlines() if line.strip()), None
    data = json_of(path, raw)
    sections = data.get("sections") if isinstance(data, dict) else data
    lang = data.get("lang") if isinstance(data, dict) else None
    if not isinstance(sections, list) or (lang is not None and not isinstance(lang, str)):
        raise ValueError(
            f"{path}: expected a list of texts, or an object with 'sections' (and a string 'lang')"
        )
    texts = []
    for position, item in enumerate(sections):
        text = item.get("text") if isinstance(item, dict) else item
        if not isinstance(text, str):
            raise ValueError(f"{path}: item {position} is neither a text nor a section with a string 'text'")
        if not text.strip():  # sent, each was EmptyText; fragments mode measured nothing and exited 0
            raise ValueError(f"{path}: item {position} is blank: every text must have something to speak")
        texts.append(text)
    return tuple(texts), lang


def texts_digest(texts: tuple[str, ...]) -> str:
    """What an engine baseline records of its texts, so that a run of other texts cannot use it."""
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode("utf-8")).hexdigest()


def read_baseline(path: Path, texts: tuple[str, ...]) -> dict[str, Any]:
    """An engine baseline (benchmarks/load/engine_first_chunk.py) of these very texts; ValueError before
    the run otherwise (a JSON that was no baseline was a traceback after the whole run, and one of other
    texts subtracted another text's time from each request, without a word)."""
    baseline = json_of(path, read_texts_file(path, "--engine-baseline", "an engine baseline"))
    keys = ("per_text_first_audible_ms", "per_text_whole_ms")
    if not isinstance(baseline, dict) or not all(isinstance(baseline.get(key), list) for key in keys):
        raise ValueError(f"{path}: not an engine baseline (no {' and '.join(keys)} lists)")
    if any(len(baseline[key]) != len(texts) for key in keys):
        raise ValueError(f"{path}: a baseline of {len(baseline[keys[0]])} texts; this run has {len(texts)}")
    if baseline.get("texts_sha256", texts_digest(texts)) != texts_digest(texts):
        raise ValueError(f"{path}: a baseline of other texts than this run's --texts")
    if not all(v is None or figure(v) is not None for key in keys for v in baseline[key]):
        raise ValueError(f"{path}: a baseline figure that is no number")
    return baseline
