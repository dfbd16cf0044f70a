"""The folder a synthetic model is built in (`zipvoice_model.build_model_dir`): the names a build writes,
each file written whole, and the claim on the folder before the first write.

Apart from the graphs because it is the file system's side, where the attacks are: a folder another
user can change (links planted at the names written), a build killed mid-write (a truncated `.onnx`
under its final name; `.part` temp files that made the rerun refuse the folder), a user's own files
beside ours (never removed: only the temp files of the names below are a build's own).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from npu_worker.files import write_atomic
from npu_worker.leftovers import PART_SUFFIX, remove_part_beneath
from npu_worker.other_writers import shared_with_others

REFERENCE_WAV = "reference_ko.wav"
SYNTHETIC_STAMP = "synthetic.json"
"""Written first as unfinished by `build_model_dir` (a stopped build's folder is still its own to
build again), last with size, variant and builder fingerprint (no real model has it)."""

FILE_NAMES = {
    "official": {"encoder": "text_encoder", "decoder": "fm_decoder", "int8": "_int8"},
    "sherpa": {"encoder": "encoder", "decoder": "decoder", "int8": ".int8"},
}


WHOLE_FILE_MODE = 0o644
"""Every file's mode, whatever the umask: a model folder is read by the service's user."""


def write_whole(path: Path, data: bytes) -> None:
    """`data` written aside and renamed onto `path`: a stop mid-write (make-test-model's SIGTERM) left
    a truncated `.onnx` under its final name, which an engine then read as a broken model."""
    write_atomic(path, data, durable=False, mode=WHOLE_FILE_MODE)


def built_names() -> list[str]:
    """Every name `build_model_dir` may write, in either layout: the only ones whose temp files
    (`.NAME.TOKEN.part`) a build removes; a user's own `.notes.part` beside them went too."""
    stems = [stem for names in FILE_NAMES.values() for stem in (names["encoder"], names["decoder"])]
    int8 = [f"{names[key]}{names['int8']}" for names in FILE_NAMES.values() for key in ("encoder", "decoder")]
    fixed = [SYNTHETIC_STAMP, "tokens.txt", "model.json", REFERENCE_WAV, Path(REFERENCE_WAV).stem + ".txt"]
    return fixed + [f"{stem}.onnx" for stem in [*stems, *int8, "vocos_24khz"]]


def is_leftover_part(entry: str) -> bool:
    """A temp file's name (`.NAME.TOKEN.part`) of a name a build writes: a build killed in its very
    first write left only such a file, and the folder was refused on the rerun as holding others'."""
    name, dot, _token = entry[1 : -len(PART_SUFFIX)].rpartition(".")
    return entry.startswith(".") and entry.endswith(PART_SUFFIX) and bool(dot) and name in built_names()


def remove_leftover_parts(out: Path) -> None:
    """The temp files (`.NAME.TOKEN.part`) of the names a build writes that a build killed mid-write
    (`kill -9`) left in `out`: this user's plain files only, never a link's target or a user's own
    `.notes.part` (every `.*.part` went); `out` is the folder just checked as its own."""
    folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for entry in os.listdir(folder):
            if is_leftover_part(entry):
                remove_part_beneath(folder, entry)
    finally:
        os.close(folder)


def claimed_folder(out: Path) -> Path:
    """`out`, made where missing and refused where another user could change it (a local user could plant
    links at the names written in it), its leftovers removed and stamped unfinished until it is whole."""
    out.mkdir(parents=True, exist_ok=True)
    shared = shared_with_others(out)  # after: someone may have made it first, in a shared folder
    if shared is not None:
        raise PermissionError(f"{out}: {shared}; use a folder only this user can change")
    remove_leftover_parts(out)
    write_whole(out / SYNTHETIC_STAMP, json.dumps({"finished": False}).encode() + b"\n")
    return out
