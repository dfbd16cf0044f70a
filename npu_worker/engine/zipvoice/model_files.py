"""Finding ZipVoice's files in a model directory (official export or sherpa-onnx release layout).

Every problem is a ModelLoadError that names the file at fault and what was looked for, so a user
who points the worker at the wrong directory reads which file is missing, not a stack trace.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from npu_worker.engine.file_stamp import content_stamp
from npu_worker.other_writers import shared_with_others
from npu_worker.protocol import ModelLoadError

ENCODER_NAMES = {
    "fp32": ("text_encoder.onnx", "encoder.onnx"),
    "int8": ("text_encoder_int8.onnx", "encoder.int8.onnx", "encoder_int8.onnx", "text_encoder.int8.onnx"),
}
DECODER_NAMES = {
    "fp32": ("fm_decoder.onnx", "decoder.onnx"),
    "int8": ("fm_decoder_int8.onnx", "decoder.int8.onnx", "decoder_int8.onnx", "fm_decoder.int8.onnx"),
}
VOCODER_NAMES = ("vocos_24khz.onnx", "vocos.onnx")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelFiles:
    directory: Path
    encoder: Path
    decoder: Path
    vocoder: Path
    tokens: Path
    config: dict[str, object]
    precision: str

    def model_id(self) -> str:
        """Directory name + decoder file: what /health reports as `model`."""
        return f"{self.directory.name}/{self.decoder.name}"

    def said(self) -> str:
        """Which files were chosen, in one line for the start-up log: a folder can hold both layouts
        and both precisions, and a vocoder found beside it was named nowhere (placement: its stem)."""
        inside = [path.name for path in (self.encoder, self.decoder, self.tokens)]
        vocoder = self.vocoder.name if self.vocoder.parent == self.directory else str(self.vocoder)
        return f"model files ({self.precision}) in {self.directory}: {', '.join(inside)}; vocoder {vocoder}"

    def fingerprint(self) -> str:
        """Each file's full path, size and content digest (`file_stamp`): `model_id` is the same for a
        folder of that name elsewhere or a re-exported decoder (a cache key part); size and mtime alone
        are the same for a re-export copied with its times kept, and inode and ctime change with a hard
        link from `prepare`, a `chmod` or a remount while the weights do not."""
        return ";".join(
            f"{path.resolve()}:{content_stamp(path)}"
            for path in (self.encoder, self.decoder, self.vocoder, self.tokens)
        )


def _find(directory: Path, names: tuple[str, ...], what: str, precision: str, instead: str | None) -> Path:
    for name in names:
        if (directory / name).is_file():
            return directory / name
    hint = instead or ("try --precision fp32" if precision == "int8" else "try --precision int8")
    raise ModelLoadError(
        f"{what} ({precision}) not found in {directory}: looked for {', '.join(names)} ({hint})"
    )


def home_expanded(path: str) -> Path:
    """`path` with `~` expanded where there is a home to expand to, else as written (then named in the
    missing file's ModelLoadError): Path.expanduser raised RuntimeError "Could not determine home
    directory." for `~nobody_here/`, which named no flag and no path."""
    return Path(os.path.expanduser(path))


def vocoder_candidates(directory: Path) -> list[Path]:
    """Where a vocoder is looked for by name when --vocoder is not given, in order: the model folder, then
    beside it too, but only in a folder no one else can put a file in (not /tmp): a vocoder found by name
    there would make every wav whoever planted it. (`paths.engine_files` keeps callers' outputs off them.)"""
    places = (directory,) if shared_with_others(directory.parent) else (directory, directory.parent)
    return [place / name for place in places for name in VOCODER_NAMES]


def _vocoder(directory: Path, explicit: str | None) -> Path:
    if explicit:
        path = home_expanded(explicit)
        if path.exists() and not path.is_file():  # (a folder, a FIFO, /dev/zero: "does not exist" was said)
            raise ModelLoadError(f"vocoder file {path} is not a regular file (--vocoder)")
        if not path.is_file():
            raise ModelLoadError(f"vocoder file {path} does not exist (--vocoder)")
        return path
    for path in vocoder_candidates(directory):
        if path.is_file():
            return path
    shared = shared_with_others(directory.parent)
    skipped = f" (not in {directory.parent}: {shared})" if shared else f" and {directory.parent}"
    raise ModelLoadError(
        f"vocoder not found: looked for {', '.join(VOCODER_NAMES)} in {directory}{skipped}; "
        "download vocos_24khz.onnx (sherpa-onnx release) or pass --vocoder"
    )


def locate(
    model_dir: str | None, precision: str, vocoder: str | None = None, instead: str | None = None
) -> ModelFiles:
    """All files of one model, for `precision` fp32 or int8; a file missing says `instead` (what to
    try: `prepare --precision a16w8` was told to try int8 files, which it cannot quantise), else to
    try the other precision."""
    if not model_dir:
        raise ModelLoadError("--model-dir is required for --backend zipvoice-onnx")
    # Absolute (links kept): the folder's name is the model's id and may say "distill"; `.` has none.
    directory = Path(os.path.abspath(home_expanded(model_dir)))
    if directory.exists() and not directory.is_dir():  # (it was said not to exist)
        raise ModelLoadError(
            f"model directory {directory} is not a directory: give the folder holding the model"
        )
    if not directory.is_dir():
        raise ModelLoadError(f"model directory {directory} does not exist")
    if precision not in ENCODER_NAMES:
        raise ModelLoadError(f"unknown precision {precision!r}; use fp32 or int8")
    tokens = directory / "tokens.txt"
    if not tokens.is_file():
        _refuse_dangling_links(directory)
        _refuse_no_model(directory)
        raise ModelLoadError(f"token table {tokens} does not exist")
    config: dict[str, object] = {}
    config_path = directory / "model.json"
    if config_path.is_file():
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"{config_path} is not valid JSON: {exc}") from exc
    files = ModelFiles(
        directory=directory,
        encoder=_find(directory, ENCODER_NAMES[precision], "text encoder", precision, instead),
        decoder=_find(directory, DECODER_NAMES[precision], "flow-matching decoder", precision, instead),
        vocoder=_vocoder(directory, vocoder),
        tokens=tokens,
        config=config,
        precision=precision,
    )
    for path in (files.encoder, files.decoder, files.vocoder, files.tokens):
        _check_readable(path)
    log.info("%s", files.said())
    return files


MODEL_MARKS = ("tokens.txt", *(name for names in DECODER_NAMES.values() for name in names))
LOOKED_AT = 1000  # entries of a wrong folder read for the model folders in it (a home may hold many)


def _refuse_dangling_links(directory: Path) -> None:
    """ModelLoadError for a model folder whose files are links naming nothing (a Hugging Face cache's
    snapshot, `tokens.txt -> ../../blobs/<hash>`, copied by `cp -r` without the blobs): `ls` lists
    every file, and the worker said the folder held "no tokens.txt, no decoder"."""
    names = (*MODEL_MARKS, *(name for names in ENCODER_NAMES.values() for name in names), *VOCODER_NAMES)
    dangling = [name for name in names if (directory / name).is_symlink() and not (directory / name).exists()]
    if dangling:
        first = directory / dangling[0]
        raise ModelLoadError(
            f"{', '.join(dangling)} in {directory} are links to files that are not there ({first} -> "
            f"{os.readlink(first)}): copy the folder again with the files its links name (`cp -rL`), or "
            "serve the folder it was copied from"
        )


def _refuse_no_model(directory: Path) -> None:
    """ModelLoadError for a folder holding none of a model's files (the folder above the model, say),
    naming the folders in it that hold one: it said only that `tokens.txt` did not exist there."""
    if any((directory / name).is_file() for name in MODEL_MARKS):
        return  # a model folder missing a file: that file's own error
    found = []
    try:
        with os.scandir(directory) as entries:
            for index, entry in enumerate(entries):
                if index >= LOOKED_AT:
                    break
                if entry.is_dir() and any(os.path.isfile(Path(entry.path) / n) for n in MODEL_MARKS):
                    found.append(entry.name)
    except OSError:
        pass
    hint = (
        f"; the folders in it that hold one: {', '.join(sorted(found)[:5])} (give one as --model-dir)"
        if found
        else "; give the folder holding tokens.txt and the .onnx files"
    )
    raise ModelLoadError(f"{directory} holds no ZipVoice model (no tokens.txt, no decoder){hint}")


def _check_readable(path: Path) -> None:
    """A file the worker's user may not read, named with its owner, mode and the fix: `prepare` keeps
    a copy's bits at most its source's, so a 0600 file prepared as root is root's alone, and the
    service user's start said only `[Errno 13] Permission denied` once the sessions opened."""
    try:
        with open(path, "rb"):
            pass
    except PermissionError:
        info = path.stat()
        raise ModelLoadError(
            f"cannot read {path} (mode {stat.S_IMODE(info.st_mode):04o}, owner uid {info.st_uid}; "
            f"this worker runs as uid {os.geteuid()}): let the worker's user read it "
            f"(`chmod a+r {path}`, or `chown`), or prepare the folder as that user"
        ) from None


def is_distill(files: ModelFiles, decoder_metadata: dict[str, str]) -> bool:
    """Distill models want 8 steps and guidance 3.0; the export metadata does not say, so look around.

    A `distill` metadata key wins; else the directory name (also of the folder a link such as
    `current -> zipvoice_distill-v2` names, and of the folder a prepared directory was prepared from),
    the decoder's comment or model.json mentioning distill.
    """
    from npu_worker.engine.zipvoice.prepared import prepared_from

    flag = decoder_metadata.get("distill") or decoder_metadata.get("is_distill")
    if flag is not None:
        return str(flag).strip().lower() in ("1", "true", "yes")
    real = Path(os.path.realpath(files.directory)).name
    names = f"{files.directory.name} {real} {prepared_from(files.directory)}"
    if "distill" in names.lower() or "distill" in decoder_metadata.get("comment", "").lower():
        return True
    return "distill" in json.dumps(files.config).lower()


METADATA_INT_LIMIT = 1 << 20  # past any sample rate, FFT size or feature count an export has


def metadata_int(metadata: dict[str, str], key: str, default: int, model: str) -> int:
    """A whole-number field of a model's ONNX metadata, its default where absent. One that is no positive
    whole number up to METADATA_INT_LIMIT is the export's fault, said by name: `int()`'s bare ValueError
    failed the load with no word of which file or field (and `sample_rate=0` divided by zero later)."""
    said = metadata.get(key)
    if said is None:
        return default
    try:
        value = int(said)
    except ValueError:
        value = 0
    if not 0 < value <= METADATA_INT_LIMIT:
        raise ModelLoadError(
            f"the {model}'s metadata gives {key}={said[:40]!r}, no positive whole number up to "
            f"{METADATA_INT_LIMIT}; export the model again"
        )
    return value
