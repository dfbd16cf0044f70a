"""ONNX sessions of one ZipVoice model on the chosen device: text encoder, decoder, vocoder.

The decoder is the only model worth moving to the NPU (≈96 % of the time); QNN needs static shapes,
so on QNN it runs as one session per frame-count bucket: inputs are padded up to the bucket and the
output cut back (`BucketedDecoder`, decoders.py, with the sessions' call wrappers). The text encoder
(its output length is computed inside the graph) and the vocoder stay on the CPU there. CUDA and CPU
run all three with dynamic shapes.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_worker.engine import providers, qnn_cache
from npu_worker.engine.interruptible import Calls, GuardedSession
from npu_worker.engine.providers import DeviceUnavailable, RuntimeConfig, SessionPlacement
from npu_worker.engine.zipvoice import prepared_sessions, swoosh
from npu_worker.engine.zipvoice.decoders import (
    DEFAULT_BUCKETS,
    BucketedDecoder,
    Decoder,
    TextEncoder,
    check_buckets,
)
from npu_worker.engine.zipvoice.graph_inputs import declared_inputs
from npu_worker.engine.zipvoice.prepared import PreparedModel, Progress
from npu_worker.engine.zipvoice.vocoder import check_mels
from npu_worker.engine.zipvoice.vocoder import check_signature as check_vocoder
from npu_worker.protocol import ModelLoadError

log = logging.getLogger(__name__)


def metadata(session: Any) -> dict[str, str]:
    return dict(session.get_modelmeta().custom_metadata_map)


def frame_dim_names(model_path: Path) -> tuple[str | None, str | None]:
    """Symbolic (batch, frames) dimension names of the decoder's `x` input, for free-dim overrides,
    read from its graph (`graph_inputs.py`: a CPU session on the whole decoder was opened for them);
    ModelLoadError naming the file when it is no decoder (a truncated copy: `prepare` ended in an
    INVALID_PROTOBUF traceback)."""
    try:
        inputs = declared_inputs(model_path)
        shape = inputs[1][1]
    except Exception as exc:  # (protobuf's DecodeError, an OSError, or a graph with one input)
        raise ModelLoadError(f"cannot load {model_path} as the decoder: {exc}") from exc
    names = [d if isinstance(d, str) else None for d in shape[:2]]
    return (names + [None, None])[0], (names + [None, None])[1]


def bucket_dims(path: Path, buckets: tuple[int, ...]) -> dict[int, dict[str, int]]:
    """Free-dimension sizes fixing the decoder `path` to each bucket (batch 1), in bucket order."""
    batch, frames = frame_dim_names(path)
    if frames is None:
        raise DeviceUnavailable(f"{path.name} has no symbolic frame dimension to fix")
    return {size: {frames: size} | ({batch: 1} if batch else {}) for size in check_buckets(buckets)}


@dataclass
class LoadedModels:
    encoder: TextEncoder
    decoder: Decoder | BucketedDecoder
    vocoder_session: Any
    encoder_metadata: dict[str, str]
    decoder_metadata: dict[str, str]
    vocoder_metadata: dict[str, str]
    device: str
    fallback_reason: str | None
    placement: dict[str, SessionPlacement]  # "fm_decoder@383", "text_encoder", ...: see /health
    precision: str = "fp32"  # what the decoder is computed in (/health): fp32, int8, fp16, a16w8, a8w8


# `auto` keeps QNN only if it runs the whole decoder: a partitioned graph makes a CPU round trip between
# partitions at every call, which on a phone can be slower than the CPU alone. CUDA keeps the general
# rule (most nodes): onnxruntime places small shape nodes on the CPU on purpose there. An explicitly
# requested device starts with whatever share it takes (it must take some), and says so.
AUTO_DECODER_SHARE = {"qnn": 1.0, "cuda": 0.5, "cpu": 0.0}
EXPLICIT_DECODER_SHARE = 0.0


def decoder_share(requested: str, device: str) -> float:
    return AUTO_DECODER_SHARE[device] if requested == "auto" else EXPLICIT_DECODER_SHARE


def open_bucketed_decoder(
    path: Path,
    device: str,
    config: RuntimeConfig,
    buckets: tuple[int, ...],
    graph: bytes | None = None,
    min_share: float = AUTO_DECODER_SHARE["qnn"],
    placed: dict[str, SessionPlacement] | None = None,
    ready: PreparedModel | None = None,
    progress: Progress | None = None,
    encoder: Path | None = None,
    vocoder: Path | None = None,
) -> BucketedDecoder:
    """One fixed-shape session per bucket on `device`, a dynamic CPU session for longer inputs
    (`graph`: the rewritten decoder for CPU/CUDA sessions; QNN compiles the file, or loads what
    `npu-worker prepare` compiled when `ready` is given, from `encoder`'s and `vocoder`'s model). Each session's
    placement goes into `placed` as `<file stem>@<bucket>` (the overflow session: `<file stem>`)."""
    placed = {} if placed is None else placed
    if device == "qnn":  # QNN unusable here (no plugin, the x86 simulator) says so before any progress
        providers.qnn_devices(config)  # line: each start off the NPU logged "specialising and compiling"
    if device == "qnn" and ready is not None:
        sessions, placements = prepared_sessions.open_prepared_sessions(
            ready, path, config, progress, encoder, vocoder
        )
        for size, where in placements.items():
            providers.check_placement(where, path.name, min_share)
            placed[f"{path.stem}@{size}"] = where
    else:
        sessions = _compile_buckets(path, device, config, buckets, graph, min_share, placed, progress)
    overflow, placed[path.stem] = providers.open_placed_session(path, "cpu", config, graph=graph)
    return BucketedDecoder(sessions, Decoder(overflow))


def _compile_buckets(
    path: Path,
    device: str,
    config: RuntimeConfig,
    buckets: tuple[int, ...],
    graph: bytes | None,
    min_share: float,
    placed: dict[str, SessionPlacement],
    progress: Progress | None = None,
) -> dict[int, Any]:
    sessions = {}
    shapes = bucket_dims(path, buckets)
    for index, (size, dims) in enumerate(shapes.items()):
        if progress is not None:
            work = "specialising and compiling" if device == "qnn" else "opening"
            if device == "qnn" and _cached(config, path, dims):  # a later start: seconds, not minutes
                work = "loading the cached compiled"
            progress(f"{work} {path.stem}@{size} for {device} ({index + 1}/{len(shapes)})")
        sessions[size], placed[f"{path.stem}@{size}"] = providers.open_placed_session(
            path, device, config, dims, min_share, graph=graph
        )
    return sessions


def _cached(config: RuntimeConfig, path: Path, dims: dict[str, int]) -> bool:
    cached = qnn_cache.context_cache_path(config, path, dims)
    return cached is not None and cached.is_file()


def decoder_graph(path: Path) -> bytes | None:
    """The decoder with its Swoosh overflow guards rewritten (same outputs, less CPU work: swoosh.py),
    or None to open the file as it is (nothing to rewrite, no `onnx` package, a graph it cannot read).
    Reading and rewriting takes ≈ 1.3 s for the full-size int8 decoder, 2.5 s for fp32, and holds the
    graph in memory twice meanwhile (≈ 1.4 GB peak for fp32), so QNN, which compiles the file, skips it."""
    try:
        return swoosh.rewritten_model(path)
    except Exception as exc:  # the session load below reports a broken file properly
        log.warning("decoder %s opened as exported: the guard rewrite failed: %s", path.name, exc)
        return None


def open_models(
    encoder: Path,
    decoder: Path,
    vocoder: Path,
    requested: str,
    config: RuntimeConfig,
    buckets: tuple[int, ...] = DEFAULT_BUCKETS,
    fixed_shapes: bool = False,
    ready: PreparedModel | None = None,
    progress: Progress | None = None,
    files: str = "fp32",
) -> LoadedModels:
    """Sessions on the first device of the table that really runs the decoder (`files`: the precision
    of the model files, fp32 or int8).

    QNN always runs the decoder bucketed; `fixed_shapes` runs it bucketed on CUDA and CPU too (the
    same padding and sessions as on the NPU, so tests and benchmarks exercise that path anywhere).
    `ready`: the model directory was prepared (`npu-worker prepare`): QNN loads its compiled buckets.
    """
    buckets = ready.buckets if ready is not None else buckets
    reasons: list[str] = []
    rewritten = functools.cache(lambda: decoder_graph(decoder))  # once, only for CPU/CUDA (QNN: the file)
    for device in providers.candidates(requested):
        share = decoder_share(requested, device)
        graph = None if device == "qnn" else rewritten()
        placed: dict[str, SessionPlacement] = {}
        try:
            if device == "qnn" or fixed_shapes:
                dec: Decoder | BucketedDecoder = open_bucketed_decoder(
                    decoder, device, config, buckets, graph, share, placed, ready, progress, encoder, vocoder
                )
            else:
                session, placed[decoder.stem] = providers.open_placed_session(
                    decoder, device, config, min_share=share, graph=graph
                )
                dec = Decoder(session)
        except DeviceUnavailable as exc:
            if requested != "auto":
                raise providers.require(device, requested, exc) from exc
            reasons.append(f"{device}: {exc}")
            log.info("device %s not used: %s", device, exc)
            continue
        except ModelLoadError:
            raise
        except Exception as exc:  # a model onnxruntime cannot load at all is the file's fault
            raise ModelLoadError(f"cannot load {decoder}: {exc}") from exc
        told = (providers.explain(reasons), computed_in(device, files, ready))  # (fallback_reason, precision)
        return _around_decoder(dec, device, (encoder, vocoder), config, placed, told)
    raise ModelLoadError("no device can run the model: " + "; ".join(reasons))


def _around_decoder(
    dec: Decoder | BucketedDecoder,
    device: str,
    paths: tuple[Path, Path],
    config: RuntimeConfig,
    placed: dict[str, SessionPlacement],
    told: tuple[str | None, str],
) -> LoadedModels:
    """The text encoder and vocoder opened beside the decoder `device` runs (on the CPU beside QNN's),
    the vocoder checked against the decoder's features; `told`: /health's fallback reason and
    precision."""
    warn_partial(placed)
    encoder, vocoder = paths
    others = "cpu" if device == "qnn" else device
    enc_session, placed[encoder.stem] = _open_plain(encoder, others, config)
    voc_session, placed[vocoder.stem] = _open_plain(vocoder, others, config)
    check_vocoder(voc_session, vocoder)
    first = dec.decoders[dec.buckets[0]].session if isinstance(dec, BucketedDecoder) else dec.session
    check_mels(voc_session, vocoder, first)
    return LoadedModels(
        encoder=TextEncoder(enc_session),
        decoder=dec,
        vocoder_session=voc_session,
        encoder_metadata=metadata(enc_session),
        decoder_metadata=metadata(first),
        vocoder_metadata=metadata(voc_session),
        device=device,
        fallback_reason=told[0],
        placement=placed,
        precision=told[1],
    )


def guard_sessions(models: LoadedModels, calls: Calls) -> None:
    """Route every session's runs through `calls`, so another thread can stop the one in flight; a
    decoder call is restartable (the sampler runs the step again: interruptible.py)."""
    models.encoder.session = GuardedSession(models.encoder.session, calls)
    models.vocoder_session = GuardedSession(models.vocoder_session, calls)
    decoder = models.decoder
    plain = (
        [*decoder.decoders.values(), decoder.overflow] if isinstance(decoder, BucketedDecoder) else [decoder]
    )
    for each in plain:
        if each is not None:
            each.session = GuardedSession(each.session, calls, restartable=True)


def computed_in(device: str, files: str, ready: PreparedModel | None) -> str:
    """The decoder's arithmetic: a prepared directory says what it was compiled to; HTP computes an
    fp32 graph in fp16 (QNN's default); elsewhere the files' own precision."""
    if device == "qnn":
        if ready is not None:
            return ready.runs_as
        return "fp16" if files == "fp32" else files
    return files


def warn_partial(placed: dict[str, SessionPlacement]) -> None:
    """An explicitly requested device that leaves decoder nodes on the CPU starts, but says so."""
    for name, where in placed.items():
        if where.device != "cpu" and not where.complete:
            log.warning(
                "%s: %s runs %d of %d nodes; %d run on the CPU between its partitions (/health placement)",
                name,
                where.device,
                where.on_device,
                where.nodes,
                where.nodes - where.on_device,
            )


def _open_plain(path: Path, device: str, config: RuntimeConfig) -> tuple[Any, SessionPlacement]:
    """Text encoder / vocoder: one run per segment between the decoder's, so their worker threads do
    not spin after it (a spinning pool took the cores of the decoder's first step: about 50 ms more
    on that step, on 2 cores; benchmarks/ENGINE_RTF.md)."""
    try:
        return providers.open_placed_session(path, device, config, spinning=False)
    except DeviceUnavailable:
        return providers.open_placed_session(path, "cpu", config, spinning=False)
    except Exception as exc:
        raise ModelLoadError(f"cannot load {path}: {exc}") from exc
