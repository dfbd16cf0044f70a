"""`npu-worker prepare`: the NPU decoder compiled once, ahead of time, into a directory `serve` loads.

Without it the first `serve --device qnn` specialises every frame bucket of the decoder and compiles it
on the box itself (minutes on a phone's CPU, more on the x86 simulator). A prepared directory holds the
model's files plus, under `qnn/`, one EPContext model per bucket and the compiled QNN context binaries
they point to. With weight sharing (onnxruntime's `ep.share_ep_contexts`) all buckets' graphs go into
one context binary holding one copy of the weights instead of one per bucket; the x86 HTP simulator
writes such a binary but cannot load it (QNN_COMMON_ERROR_NOT_SUPPORTED or a crash of the process,
measured with onnxruntime-qnn 2.7), so sharing is on by default only when preparing on the device's own
architecture, and loading a shared directory on x86 is refused before QNN sees it.
`manifest.json` records what it was made from and for: the source files' hashes, the target SoC, the
runtime versions, buckets, precision, weight sharing, placement, sizes and times.

Loading checks the manifest against the files, the configured target and the installed runtime; any
mismatch is a ModelLoadError that says to run `prepare` again (nothing is silently recompiled).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import platform
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_worker.engine import providers, specialize
from npu_worker.engine.providers import RuntimeConfig, SessionPlacement
from npu_worker.protocol import ModelLoadError

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
CONTEXT_DIR = "qnn"
FORMAT = 1
SHARE = "ep.share_ep_contexts"
STOP_SHARE = "ep.stop_share_ep_contexts"
Progress = Callable[[str], None]  # what a load or prepare is doing now (/health `load_phase`)


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while chunk := stream.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def runtime_versions() -> dict[str, str]:
    """What a compiled context depends on besides the graph and the target."""
    versions = {}
    for package in ("onnxruntime", "onnxruntime-qnn"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "missing"
    return versions


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

    def placement(self, bucket: int) -> SessionPlacement:
        record = self.manifest["contexts"][str(bucket)]["placement"]
        return SessionPlacement("qnn", int(record["nodes"]), int(record["on_device"]))

    def check(self, decoder: Path, qnn_options: dict[str, str]) -> None:
        """ModelLoadError unless this directory was prepared for exactly this decoder, target, runtime."""
        again = f"run `npu-worker prepare` again for {self.directory}"
        made = self.manifest
        if made.get("format") != FORMAT:
            raise ModelLoadError(f"{self.directory / MANIFEST} has an unknown format; {again}")
        if made.get("decoder") != decoder.name:
            raise ModelLoadError(
                f"{self.directory} was prepared for {made.get('decoder')} (--precision {made.get('precision')}), "
                f"this worker loads {decoder.name}; serve with --precision {made.get('precision')} or {again}"
            )
        if made["target"]["provider_options"] != target_options(qnn_options):
            raise ModelLoadError(
                f"{self.directory} was prepared for QNN target {made['target']['provider_options']}, "
                f"this worker compiles for {target_options(qnn_options)} (--qnn-soc); {again}"
            )
        installed = runtime_versions()
        if made["runtime"] != installed:
            raise ModelLoadError(
                f"{self.directory} was prepared with {made['runtime']}, this worker runs {installed}; {again}"
            )
        if made["source"].get(decoder.name) != file_hash(decoder):
            raise ModelLoadError(f"{decoder} is not the decoder {self.directory} was prepared from; {again}")
        if made.get("weight_sharing") and platform.machine().lower() in providers.X86_MACHINES:
            raise ModelLoadError(
                f"{self.directory} holds one weight-shared context binary, which the x86 HTP simulator "
                "cannot load (it crashes the process); prepare with --weight-sharing off to serve here"
            )
        missing = [str(self.context(size)) for size in self.buckets if not self.context(size).is_file()]
        if missing:
            raise ModelLoadError(f"{', '.join(missing)} missing; {again}")


def target_options(qnn_options: dict[str, str]) -> dict[str, str]:
    """The provider options that decide what a context was compiled for."""
    return {key: qnn_options[key] for key in ("soc_model", "htp_arch") if key in qnn_options}


def find(model_dir: Path) -> PreparedModel | None:
    """The prepared model in `model_dir`, or None for a plain model directory."""
    path = model_dir / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        manifest["buckets"], manifest["contexts"]  # noqa: B018 - the keys loading needs
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(
            f"{path} is not a valid manifest ({exc}); run `npu-worker prepare` again"
        ) from exc
    return PreparedModel(model_dir, manifest)


def open_prepared_sessions(
    prepared: PreparedModel, decoder: Path, config: RuntimeConfig
) -> tuple[dict[int, Any], dict[int, SessionPlacement]]:
    """One session per bucket from the compiled contexts (no specialising, no compiling), once QNN is
    usable here and the directory fits `decoder`, the target and the runtime (`PreparedModel.check`)."""
    import onnxruntime as ort

    devices = providers.qnn_devices(config)
    prepared.check(decoder, config.qnn_provider_options())
    sessions, placements = {}, {}
    for size in prepared.buckets:
        options = providers.session_options(config)
        if prepared.manifest.get("weight_sharing"):  # (loading a shared binary without it crashes QNN)
            options.add_session_config_entry(SHARE, "1")
        options.add_provider_for_devices(devices, config.qnn_provider_options())
        try:
            sessions[size] = ort.InferenceSession(str(prepared.context(size)), sess_options=options)
        except Exception as exc:
            raise ModelLoadError(
                f"cannot load the compiled context {prepared.context(size)} ({exc}); "
                f"run `npu-worker prepare` again for {prepared.directory}"
            ) from exc
        placements[size] = prepared.placement(size)
    return sessions, placements


# ------------------------------------------------------------------------------------------ prepare


def _copy_model_files(source: Path, target: Path) -> dict[str, int]:
    """The source directory's files (not its folders) into `target`, hard-linked where possible."""
    sizes = {}
    for path in sorted(source.iterdir()):
        if not path.is_file() or path.name == MANIFEST:
            continue
        destination = target / path.name
        destination.unlink(missing_ok=True)
        try:
            os.link(path, destination)
        except OSError:
            shutil.copy2(path, destination)
        sizes[path.name] = path.stat().st_size
    return sizes


def sharing_by_default(machine: str | None = None) -> bool:
    """Weight sharing unless on x86, where the HTP backend is the simulator that cannot load it."""
    return (machine or platform.machine()).lower() not in providers.X86_MACHINES


def prepare(
    decoder: Path,
    sources: Sequence[Path],
    out: Path,
    config: RuntimeConfig,
    buckets: Sequence[int],
    precision: str,
    weight_sharing: bool,
    progress: Progress = print,
) -> dict[str, Any]:
    """Compile `decoder` for every bucket into `out` (a copy of the model directory); the manifest."""
    from npu_worker.engine.zipvoice.runtime import bucket_dims

    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)  # a half-prepared directory must not look prepared
    contexts_dir = out / CONTEXT_DIR
    shutil.rmtree(contexts_dir, ignore_errors=True)
    contexts_dir.mkdir()
    sizes = _copy_model_files(decoder.parent, out)
    shapes = bucket_dims(decoder, tuple(buckets))
    buckets = tuple(shapes)
    devices = providers.qnn_devices(config)
    contexts: dict[str, Any] = {}
    started = time.monotonic()
    for index, (size, dims) in enumerate(shapes.items()):
        last = index == len(buckets) - 1
        contexts[str(size)] = _compile_bucket(
            decoder, size, dims, contexts_dir, config, devices, share=weight_sharing, last=last
        )
        done = time.monotonic() - started
        left = done / (index + 1) * (len(buckets) - index - 1)
        record = contexts[str(size)]
        progress(
            f"bucket {size} ({index + 1}/{len(buckets)}): {record['placement']['on_device']} of "
            f"{record['placement']['nodes']} nodes on QNN, specialised in {record['specialise_seconds']} s, "
            f"compiled in {record['compile_seconds']} s; about {left:.0f} s left"
        )
    compiled = {path.name: path.stat().st_size for path in sorted(contexts_dir.iterdir())}
    manifest = {
        "format": FORMAT,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "decoder": decoder.name,
        "precision": precision,
        "buckets": list(buckets),
        "target": {
            "qnn_soc": config.qnn_soc,
            "provider_options": target_options(config.qnn_provider_options()),
        },
        "runtime": runtime_versions(),
        "weight_sharing": weight_sharing,
        "source": {path.name: file_hash(path) for path in sources},
        "contexts": contexts,
        "sizes": {"model_files": sizes, "compiled": compiled},
        "seconds": round(time.monotonic() - started, 1),
    }
    temp = out / f".{MANIFEST}.part"
    temp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(temp, out / MANIFEST)  # last: only a complete directory has a manifest
    return manifest


def _compile_bucket(
    decoder: Path,
    size: int,
    dims: dict[str, int],
    contexts_dir: Path,
    config: RuntimeConfig,
    devices: list[Any],
    share: bool,
    last: bool,
) -> dict[str, Any]:
    """Specialise and compile one bucket into the shared context; its record for the manifest."""
    import onnxruntime as ort

    name = context_name(decoder, size)
    options = providers.fixed_shape_options(config, dims)
    options.add_provider_for_devices(devices, config.qnn_provider_options())
    options.add_session_config_entry("ep.context_enable", "1")
    options.add_session_config_entry("ep.context_file_path", str(contexts_dir / name))
    options.add_session_config_entry("ep.context_embed_mode", "0")
    if share:
        options.add_session_config_entry(SHARE, "1")
        if last:
            options.add_session_config_entry(STOP_SHARE, "1")
    started = time.monotonic()
    with specialize.static_graph(decoder, dims, contexts_dir) as graph:
        specialised = time.monotonic()
        try:
            session = ort.InferenceSession(
                str(graph),
                sess_options=options,
                disabled_optimizers=list(providers.FIXED_SHAPE_DISABLED_OPTIMIZERS),
            )
        except Exception as exc:
            raise ModelLoadError(f"QNN could not compile {decoder.name} for {size} frames: {exc}") from exc
    placed = SessionPlacement.of(session, "qnn")
    del session
    return {
        "file": f"{CONTEXT_DIR}/{name}",
        "placement": placed.to_dict(),
        "specialise_seconds": round(specialised - started, 1),
        "compile_seconds": round(time.monotonic() - specialised, 1),
    }
