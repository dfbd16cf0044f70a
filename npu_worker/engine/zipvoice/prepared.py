"""`npu-worker prepare`: the NPU decoder compiled once, ahead of time, into a directory `serve` loads.
This module holds the directory's format and the manifest's checks; prepared_sessions.py opens its
compiled contexts; prepare.py compiles (bucket_compile.py, one bucket; prepare_out.py, the output folder).

Without it the first `serve --device qnn` specialises every frame bucket of the decoder and compiles it
on the box itself (minutes on a phone's CPU, more on the x86 simulator). A prepared directory holds the
model's files plus, under `qnn/`, one EPContext model per bucket and the compiled QNN context binaries
they point to. With weight sharing (onnxruntime's `ep.share_ep_contexts`) all buckets' graphs go into
one context binary holding one copy of the weights instead of one per bucket; the x86 HTP simulator
writes such a binary but cannot load it (QNN_COMMON_ERROR_NOT_SUPPORTED or a crash of the process,
measured with onnxruntime-qnn 2.7), so sharing is on by default only when preparing on the device's own
architecture, and loading a shared directory on x86 is refused before QNN sees it.
`manifest.json` records what it was made from and for: the source files' hashes, the target SoC, the
runtime versions, buckets, precision, weight sharing, placement, sizes and times; for a statically
quantised decoder (`--precision a16w8`/`a8w8`, qdq.py) also what it was calibrated on and how far each
bucket's compiled decoder is from the fp32 decoder on the CPU, on recorded calls it was not calibrated on.

Loading checks the manifest against the files, the configured target and the installed runtime; any
mismatch is a ModelLoadError that says to run `prepare` again (nothing is silently recompiled).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_worker.engine import qnn_targets, specialize
from npu_worker.engine.providers import SessionPlacement, runtime_versions
from npu_worker.engine.zipvoice import context_files
from npu_worker.files import read_regular
from npu_worker.other_writers import writable_by_others
from npu_worker.protocol import ModelLoadError

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
CONTEXT_DIR = "qnn"
TOKENS = "tokens.txt"  # the token table, hashed in the manifest as the model files are
LOCK = ".prepare.lock"  # held (flock) by the prepare writing the directory
STAGING = ".prepare-staging"  # where that prepare makes everything before moving it in
EARLIER = ".prepare-earlier.json"  # the earlier manifest while that prepare moves its files in
FORMAT = 2
MANIFEST_LIMIT = 1 << 20  # bytes; a 5-bucket manifest with calibration is a few KB
# --precision → (the model files it is made from: serve --precision, what /health `precision` says runs):
# HTP computes an fp32 graph in fp16 (QNN's default `enable_htp_fp16_precision`).
PRECISIONS = {
    "fp32": ("fp32", "fp16"),
    "int8": ("int8", "int8"),
    "a16w8": ("fp32", "a16w8"),
    "a8w8": ("fp32", "a8w8"),
}
SHARE = "ep.share_ep_contexts"
STOP_SHARE = "ep.stop_share_ep_contexts"
Progress = Callable[[str], None]  # what a load or prepare is doing now (/health `load_phase`)


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def context_name(decoder: Path, bucket: int) -> str:
    return f"{decoder.stem}@{bucket}_ctx.onnx"


@dataclass(frozen=True)
class PreparedModel:
    """A prepared directory's manifest, checked against the files and this runtime."""

    directory: Path
    manifest: dict[str, Any]

    @property
    def buckets(self) -> tuple[int, ...]:
        return tuple(int(size) for size in self.manifest["buckets"])

    def context(self, bucket: int) -> Path:
        return self.directory / self.manifest["contexts"][str(bucket)]["file"]

    def context_bytes(self, bucket: int) -> int:
        """The compiled files of one bucket: its EPContext model and the binary beside it."""
        stem = self.context(bucket).stem
        return sum(path.stat().st_size for path in self.context(bucket).parent.glob(f"{stem}*"))

    def placement(self, bucket: int) -> SessionPlacement:
        return SessionPlacement.from_dict(
            self.manifest["contexts"][str(bucket)]["placement"] | {"device": "qnn"}
        )

    @property
    def runs_as(self) -> str:
        """What the NPU computes the decoder in (/health `precision`)."""
        return str(self.manifest.get("runs_as", "unknown"))

    def check(
        self,
        decoder: Path,
        qnn_options: dict[str, str],
        encoder: Path | None = None,
        vocoder: Path | None = None,
    ) -> None:
        """ModelLoadError unless this directory was prepared for exactly this decoder, target, runtime,
        and from this text encoder (`encoder`) and vocoder (`vocoder`): the decoder's contexts with
        another export's encoder or vocoder spoke wrongly, in silence. By SHA-256, as the decoder is:
        4.2 M and 13.5 M parameters beside the decoder's 118.5 M (477 MB) hashed at each load, where
        size and mtime miss a re-export copied with its times kept (file_stamp.py)."""
        again = f"run `npu-worker prepare` again for {self.directory}"
        refuse_open_to_others(self.directory)
        made = self.manifest  # (its layout and format were checked by `find`)
        if made.get("decoder") != decoder.name:
            if _shadowed(self.directory, str(made.get("decoder")), decoder, str(made.get("files"))):
                raise ModelLoadError(
                    f"{self.directory} was prepared from {made.get('decoder')}, but this worker finds "
                    f"{decoder.name} beside it first (another layout's name for the same precision, no part "
                    f"of this prepare): remove {decoder.name} from the folder, or {again}"
                )
            raise ModelLoadError(
                f"{self.directory} was prepared from {made.get('decoder')} (prepare --precision "
                f"{made.get('precision')}), this worker loads {decoder.name}; serve with --precision "
                f"{made.get('files')} or {again}"
            )
        self._check_made_for(qnn_options, again)
        self._check_sources(decoder, encoder, vocoder, again)
        self._check_contexts(again)

    def _check_made_for(self, qnn_options: dict[str, str], again: str) -> None:
        """ModelLoadError unless it was compiled for this QNN target, by this runtime and specialiser."""
        made = self.manifest
        if made["target"]["provider_options"] != target_options(qnn_options):
            # prepared on an x86 host for a phone, served there with `auto`: the flag fixes it
            soc = qnn_targets.value_for(made["target"]["provider_options"])
            fix = f"serve with --qnn-soc {soc} (the chip it was compiled for) or {again}" if soc else again
            raise ModelLoadError(
                f"{self.directory} was prepared for QNN target {made['target']['provider_options']}, "
                f"this worker compiles for {target_options(qnn_options)} (--qnn-soc); {fix}"
            )
        installed = runtime_versions()
        if made["runtime"] != installed:
            raise ModelLoadError(
                f"{self.directory} was prepared with {made['runtime']}, this worker runs {installed}; {again}"
            )
        made_by = made.get("specialiser", specialize.VERSION)  # (recorded since it is checked)
        if made_by != specialize.VERSION:  # the graph it compiled is not the one this worker would
            raise ModelLoadError(
                f"{self.directory} holds graphs of specialiser version {made_by}, this worker writes "
                f"version {specialize.VERSION}; {again}"
            )

    def _check_sources(self, decoder: Path, encoder: Path | None, vocoder: Path | None, again: str) -> None:
        """ModelLoadError unless the decoder, text encoder, token table and vocoder served are the files
        (by SHA-256) it was prepared from."""
        made = self.manifest
        sizes = functools.partial(context_files.copied_size_said, self)  # (a copy cut short, say)
        if made["source"].get(decoder.name) != file_hash(decoder):
            raise ModelLoadError(
                f"{decoder} is not the decoder {self.directory} was prepared from{sizes(decoder)}; {again}"
            )
        if encoder is not None and made["source"].get(encoder.name) != file_hash(encoder):
            raise ModelLoadError(
                f"{encoder} is not the text encoder {self.directory} was prepared from (the compiled decoder "
                f"was trained with that one){sizes(encoder)}; put it back, or {again}"
            )
        _check_tokens(self.directory / TOKENS, made["source"], sizes, again)
        recorded = _vocoder_hash(made["source"], vocoder)
        if vocoder is not None and recorded is not None and recorded != file_hash(vocoder):
            raise ModelLoadError(
                f"{vocoder} is not the vocoder {self.directory} was prepared from (the compiled decoder's "
                f"features are that one's input){sizes(vocoder)}; put it back, or {again}"
            )

    def _check_contexts(self, again: str) -> None:
        """ModelLoadError unless every bucket's compiled files are here, whole, and loadable on this host."""
        made = self.manifest
        if made.get("weight_sharing") and qnn_targets.htp_is_simulated():
            raise ModelLoadError(
                f"{self.directory} holds one weight-shared context binary, which the x86 HTP simulator "
                "cannot load (it crashes the process); prepare with --weight-sharing off to serve here"
            )
        missing = [str(self.context(size)) for size in self.buckets if not self.context(size).is_file()]
        if missing:
            raise ModelLoadError(f"{', '.join(missing)} missing; {again}")
        fault = context_files.size_faults(self)
        if fault is not None:
            raise ModelLoadError(f"{fault}; copy the prepared folder again whole, or {again}")


def _check_tokens(tokens: Path, source: dict[str, Any], sizes: Callable[[Path], str], again: str) -> None:
    """ModelLoadError unless the folder's token table (the one the engine reads: model_files.locate
    takes `tokens.txt` from the folder served) is the one prepared with: it was not hashed, and a
    changed table gave the text encoder other ids before the compiled decoder, in silence. A manifest
    of an older prepare records none: nothing to check it against (it is not refused for that)."""
    recorded = source.get(TOKENS)
    if isinstance(recorded, str) and recorded != file_hash(tokens):
        raise ModelLoadError(
            f"{tokens} is not the token table {tokens.parent} was prepared from (the compiled decoder "
            f"was trained on its ids){sizes(tokens)}; put it back, or {again}"
        )


def _vocoder_hash(source: dict[str, Any], vocoder: Path | None) -> str | None:
    """The SHA-256 the manifest records for the vocoder served as `vocoder`: under its own name, else
    under the name `prepare` copies a vocoder in as (one given by `serve --vocoder` from elsewhere);
    None when the manifest records none."""
    if vocoder is None:
        return None
    from npu_worker.engine.zipvoice.model_files import VOCODER_NAMES

    for name in (vocoder.name, *VOCODER_NAMES):
        if isinstance(source.get(name), str):
            return str(source[name])
    return None


def _shadowed(directory: Path, prepared_decoder: str, found: Path, files: str) -> bool:
    """Whether the prepared decoder is in the folder but another file of the same precision, named as
    another layout names it, is found before it: "serve with --precision X" was the advice, X being
    the precision already served."""
    from npu_worker.engine.zipvoice.model_files import DECODER_NAMES

    names = DECODER_NAMES.get(files, ())
    return found.name in names and prepared_decoder in names and (directory / prepared_decoder).is_file()


def refuse_open_to_others(directory: Path) -> None:
    """ModelLoadError when another user could change what the NPU would run: the prepared folder, its
    `qnn/` or a file in either writable by others (a directory prepared on a host and unpacked or
    pushed to the device with loose modes, or chmod-ed; `prepare` refuses to write such a folder)."""
    for folder in (directory, directory / CONTEXT_DIR):
        if not folder.is_dir():
            continue
        for path in (folder, *sorted(folder.iterdir())):
            try:
                info = path.stat()
            except OSError:  # gone, or a dangling link: not loaded either
                continue
            shown = path == folder or stat.S_ISREG(info.st_mode)
            if shown and writable_by_others(info, os.path.realpath(path)):
                raise ModelLoadError(
                    f"{path} can be changed by other users (mode {info.st_mode & 0o7777:o}), who would "
                    f"choose what the NPU runs; `chmod -R go-w {directory}` or prepare it again"
                )


def target_options(qnn_options: dict[str, str]) -> dict[str, str]:
    """The provider options that decide what a context was compiled for."""
    return {key: qnn_options[key] for key in ("soc_model", "htp_arch") if key in qnn_options}


def _check_layout(manifest: Any) -> None:
    """The keys loading reads, of the types it reads them as (a damaged or hand-edited manifest is
    refused here, not met as an OverflowError or KeyError deep in the loading); every context a plain
    file name inside the directory's `qnn/` folder (a manifest is a file too: it never names a path
    elsewhere)."""
    if manifest.get("format") != FORMAT:
        raise ValueError(f"format {manifest.get('format')!r}, this worker reads format {FORMAT}")
    for key in ("target", "runtime", "source", "contexts"):
        if not isinstance(manifest[key], dict):
            raise ValueError(f"{key} is not an object")
    if not isinstance(manifest["target"]["provider_options"], dict):
        raise ValueError("target.provider_options is not an object")
    buckets = manifest["buckets"]
    if not isinstance(buckets, list) or not buckets or any(type(size) is not int for size in buckets):
        raise ValueError(f"buckets {buckets!r} are not a list of frame counts")
    for size in buckets:
        record = manifest["contexts"][str(size)]
        name = record["file"]
        folder, _, file = str(name).partition("/")
        if folder != CONTEXT_DIR or not file or "/" in file or file in (".", "..") or "\0" in file:
            raise ValueError(f"bucket {size}'s context {name!r} is not a file in {CONTEXT_DIR}/")
        placed = SessionPlacement.from_dict(record["placement"] | {"device": "qnn"})
        if not 0 <= placed.on_device + placed.boundary <= placed.nodes:
            raise ValueError(f"bucket {size}'s placement {record['placement']!r} does not add up")


def find(model_dir: Path) -> PreparedModel | None:
    """The prepared model in `model_dir`, or None for a plain model directory."""
    path = model_dir / MANIFEST
    if not path.is_file():
        refuse_unfinished(model_dir)
        return None
    try:
        manifest = json.loads(read_manifest(model_dir))
        _check_layout(manifest)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        raise ModelLoadError(
            f"{path} is not a valid manifest ({exc}); run `npu-worker prepare` again"
        ) from exc
    return PreparedModel(model_dir, manifest)


def read_manifest(model_dir: Path, name: str = MANIFEST) -> str:
    """The manifest's text: a regular file of at most MANIFEST_LIMIT bytes, else OSError or ValueError.
    Every model folder's is read (`prepared_from`, for Distill), and a FIFO of that name in a plain
    one held the load for ever (/dev/zero behind a link: its memory)."""
    return read_regular(model_dir / name, MANIFEST_LIMIT).decode("utf-8")


def prepared_from(model_dir: Path) -> str:
    """The name of the model folder `model_dir` was prepared from ("" for a plain model folder or an
    older manifest): the name that said "distill" when the prepared folder's own does not
    (`model_files.is_distill`; `--out /opt/tts/model` served a Distill model with 16 steps, guidance 1)."""
    try:
        name = json.loads(read_manifest(model_dir)).get("model_dir")
    except (OSError, ValueError, AttributeError, RecursionError):
        return ""
    return name if isinstance(name, str) else ""


def refuse_unfinished(model_dir: Path) -> None:
    """ModelLoadError for a prepare's output without its manifest (written last): a prepare into it was
    killed, failed, or is writing it now. Served as a plain model directory, QNN compiled every bucket
    again on this box, unasked (minutes), and a re-prepare cut short had replaced only some model files.
    Known by the lock file every prepare makes first (a model's own `qnn/` folder says nothing) and
    leaves; with the manifest beside it the prepare finished, and a missing or unreadable file there is
    that file's error, not 'did not finish'."""
    state = unfinished(model_dir)
    if state is None:
        return
    raise ModelLoadError(
        f"{model_dir} has no {MANIFEST}: the `npu-worker prepare` into it {state}; run it again, "
        "or serve the model directory it prepares from"
    )


def unfinished(model_dir: Path) -> str | None:
    """How the prepare into `model_dir` stands when it has a prepare's lock but no manifest ("is
    writing it now", "did not finish ..."); None for a finished prepare's folder or a plain one."""
    if not os.path.lexists(model_dir / LOCK) or os.path.lexists(model_dir / MANIFEST):
        return None
    return "is writing it now" if _being_prepared(model_dir) else "did not finish (killed, or it failed)"


def _being_prepared(model_dir: Path) -> bool:
    """Whether a live prepare holds the directory's lock (one of another user's cannot be opened: no)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(model_dir / LOCK, flags)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)
    return False
