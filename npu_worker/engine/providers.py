"""Execution providers: which device runs a model, chosen from a table and verified by real placement.

`auto` tries QNN (the Qualcomm NPU, through the onnxruntime-qnn plugin), then CUDA, then CPU, and says
why it passed over each one; an explicitly requested device that cannot run is a ModelLoadError. A
device only counts as used when the session really assigned graph nodes to it: onnxruntime lists a
provider in `get_providers()` even when it took nothing (QNN takes no nodes of a dynamic-shape graph).
A QNN session is compiled, and kept in the context cache, by qnn_cache.py.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import platform
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npu_worker.engine import qnn_targets
from npu_worker.protocol import ModelLoadError, WorkerError

log = logging.getLogger(__name__)

DEVICES = ("qnn", "cuda", "cpu")
EP_NAMES = {"qnn": "QNNExecutionProvider", "cuda": "CUDAExecutionProvider", "cpu": "CPUExecutionProvider"}
AUTO_ORDER = ("qnn", "cuda", "cpu")
QNN_OPTIONS = {"backend_type": "htp", "htp_performance_mode": "burst"}
X86_MACHINES = qnn_targets.X86_MACHINES
# onnxruntime's ExpandElimination drops an Expand whose constant target shape has a 0 where the input
# has 1 (it only refuses targets > 1), so a zero-row pad becomes one row; fixed shapes make such targets
# constant (the decoder's downsampling pads zero rows at even frame counts). Off for fixed shapes.
FIXED_SHAPE_DISABLED_OPTIMIZERS = ("ExpandElimination",)


class DeviceUnavailable(Exception):
    """A device cannot run this model here; the message is the reason shown in /health."""


@dataclass(frozen=True)
class RuntimeConfig:
    """What the session factory needs from Settings (threads, simulator opt-in, cache directory)."""

    threads: int = 0
    allow_htp_simulator: bool = False
    cache_dir: Path | None = None
    qnn_options: dict[str, str] = field(default_factory=lambda: dict(QNN_OPTIONS))
    qnn_soc: str = "auto"

    def qnn_provider_options(self) -> dict[str, str]:
        """The QNN provider options with the target SoC (see qnn_targets.py)."""
        return dict(self.qnn_options) | qnn_targets.provider_options(self.qnn_soc)

    def intra_op_threads(self) -> int:
        return self.threads if self.threads > 0 else physical_cores()


def physical_cores() -> int:
    """Physical cores (hyper-threads excluded), the measured best intra-op thread count."""
    try:
        cores = set()
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            physical = core = None
            for line in info:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    physical = value.strip()
                elif key == "core id":
                    core = value.strip()
                elif not line.strip() and core is not None:
                    cores.add((physical, core))
                    physical = core = None
            if core is not None:
                cores.add((physical, core))
        if cores:
            return len(cores)
    except OSError:
        pass
    return max(1, (os.cpu_count() or 2) // (2 if platform.machine().lower() in X86_MACHINES else 1))


def session_options(config: RuntimeConfig, spinning: bool = True) -> Any:
    """Intra-op = physical cores, inter-op 1, sequential, all graph optimisations (measured best).

    `spinning=False`: the session's worker threads sleep as soon as a run ends instead of spinning
    for more work. For a session run once between calls of another one (ZipVoice's text encoder and
    vocoder around the decoder's steps) a spinning pool only takes the cores the next session needs.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = config.intra_op_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def placement(session: Any) -> Counter[str]:
    """Nodes per execution provider, as really assigned in this session."""
    counts: Counter[str] = Counter()
    try:
        for subgraph in session.get_provider_graph_assignment_info():
            counts[subgraph.ep_name] += len(subgraph.get_nodes())
    except Exception:  # older runtimes lack the API: trust the first listed provider
        counts[session.get_providers()[0]] += 1
    return counts


@dataclass(frozen=True)
class SessionPlacement:
    """Where one session's nodes run: `on_device` of `nodes` on `device` (the rest on the CPU).

    A session loaded from a compiled QNN context holds one EPContext node per partition; its
    placement is the one recorded when the context was compiled (`qnn_cache.recorded_placement`).
    """

    device: str
    nodes: int
    on_device: int
    boundary: int = 0  # of the rest, a QDQ graph's input Quantize / output Dequantize nodes (qdq.py)

    @classmethod
    def of(cls, session: Any, device: str, boundary: int = 0) -> SessionPlacement:
        counts = placement(session)
        return cls(device, sum(counts.values()), counts.get(EP_NAMES[device], 0), boundary)

    @property
    def complete(self) -> bool:
        """Every node on the device, except the float↔fixed-point conversions at a QDQ graph's edges."""
        return self.on_device + self.boundary == self.nodes

    def to_dict(self) -> dict[str, Any]:
        record = {"device": self.device, "nodes": self.nodes, "on_device": self.on_device}
        return record | ({"boundary": self.boundary} if self.boundary else {})

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> SessionPlacement:
        return cls(
            str(record["device"]),
            int(record["nodes"]),
            int(record["on_device"]),
            int(record.get("boundary", 0)),
        )


def qnn_devices(config: RuntimeConfig) -> list[Any]:
    """QNN EP devices after registering the plugin; raises DeviceUnavailable with the reason."""
    import onnxruntime as ort

    try:
        import onnxruntime_qnn
    except ImportError as exc:
        raise DeviceUnavailable(
            "onnxruntime-qnn is not installed (pip install '.[qnn]' in the npu-worker checkout)"
        ) from exc
    # libQnnHtp.so and libHtpPrepare.so export libffi symbols of their own: a cffi module first loaded
    # after them (soundfile, which reads reference voices) fails with "ffi_prep_closure(): bad
    # user_data". Loading soundfile before the plugin binds it to the system's libffi.
    import soundfile  # noqa: F401

    if qnn_targets.htp_is_simulated() and not config.allow_htp_simulator:
        raise DeviceUnavailable(
            f"QNN on {platform.machine()} is the HTP simulator (~1000x slower than CPU); "
            "it runs only with --allow-htp-simulator, whether named or tried by --device auto"
        )
    try:
        if not any(d.ep_name == EP_NAMES["qnn"] for d in ort.get_ep_devices()):
            ort.register_execution_provider_library(EP_NAMES["qnn"], onnxruntime_qnn.get_library_path())
        devices = [d for d in ort.get_ep_devices() if d.ep_name == EP_NAMES["qnn"]]
    except Exception as exc:
        raise DeviceUnavailable(f"the QNN plugin could not be registered: {exc}") from exc
    if not devices:
        raise DeviceUnavailable("the QNN plugin reports no device")
    return devices


def runtime_versions() -> dict[str, str]:
    """What a compiled context depends on besides the graph and the target."""
    versions = {}
    for package in ("onnxruntime", "onnxruntime-qnn"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "missing"
    return versions


def fixed_shape_options(config: RuntimeConfig, fixed_dims: dict[str, int], spinning: bool = True) -> Any:
    """Session options with every named free dimension fixed (QNN and bucketed sessions)."""
    options = session_options(config, spinning)
    for name, value in fixed_dims.items():
        options.add_free_dimension_override_by_name(name, value)
    return options


# ------------------------------------------------------------------------------------------ CUDA


def cuda_reason() -> str | None:
    """None when CUDA can run here, else why not."""
    import onnxruntime as ort

    try:
        importlib.metadata.version("onnxruntime-gpu")
    except importlib.metadata.PackageNotFoundError:
        return (
            "onnxruntime-gpu is not the installed runtime (pip install '.[cuda]' in the npu-worker checkout)"
        )
    if EP_NAMES["cuda"] not in ort.get_available_providers():
        return "onnxruntime-gpu is installed but reports no CUDA provider (driver/CUDA libraries?)"
    return None


# ------------------------------------------------------------------------------------------ open


def open_session(*args: Any, **kwargs: Any) -> Any:
    """`open_placed_session`'s session alone (same arguments)."""
    return open_placed_session(*args, **kwargs)[0]


def open_placed_session(
    model_path: Path,
    device: str,
    config: RuntimeConfig,
    fixed_dims: dict[str, int] | None = None,
    min_share: float = 0.5,
    graph: bytes | None = None,
    spinning: bool = True,
) -> tuple[Any, SessionPlacement]:
    """A session on `device`, verified to run nodes there, and where its nodes run; raises
    DeviceUnavailable otherwise.

    `fixed_dims` (free-dimension name → size) makes every shape static, which QNN needs;
    `min_share` is the least share of the graph's nodes the device must take; `graph`: a serialised
    rewrite of the file to run instead on CUDA/CPU (zipvoice/swoosh.py); QNN always compiles the file.
    `spinning`: see `session_options` (CPU and CUDA sessions).
    """
    import onnxruntime as ort

    if device == "qnn":
        from npu_worker.engine.qnn_cache import qnn_session  # (it builds on this module)

        session, placed = qnn_session(model_path, config, fixed_dims or {})
    else:
        options = fixed_shape_options(config, fixed_dims or {}, spinning)
        if device == "cuda":
            reason = cuda_reason()
            if reason:
                raise DeviceUnavailable(reason)
            providers = [EP_NAMES["cuda"], EP_NAMES["cpu"]]
        else:
            providers = [EP_NAMES["cpu"]]
        disabled = list(FIXED_SHAPE_DISABLED_OPTIMIZERS) if fixed_dims else []
        session = ort.InferenceSession(
            graph or str(model_path), sess_options=options, providers=providers, disabled_optimizers=disabled
        )
        placed = SessionPlacement.of(session, device)
    if device != "cpu":
        check_placement(placed, model_path.name, min_share)
    return session, placed


def check_placement(placed: SessionPlacement, name: str, min_share: float) -> None:
    """Raise DeviceUnavailable unless the device runs at least `min_share` of the session's nodes.

    A few static scalar nodes on the accelerator with the frame-sized work left on the CPU is not
    running on the accelerator, so "took some nodes" is not enough; `min_share=1.0` asks for all.
    """
    ep = EP_NAMES[placed.device]
    if placed.on_device == 0:
        raise DeviceUnavailable(f"{ep} took no nodes of {name} (of {placed.nodes})")
    if placed.on_device + placed.boundary < min_share * placed.nodes:
        raise DeviceUnavailable(
            f"{ep} took only {placed.on_device} of {placed.nodes} nodes of {name}: "
            f"{placed.nodes - placed.on_device - placed.boundary} would run on the CPU between its partitions"
        )


def candidates(requested: str) -> tuple[str, ...]:
    """Devices to try, in order: the table for `auto`, else only the one asked for."""
    if requested == "auto":
        return AUTO_ORDER
    if requested not in DEVICES:
        raise ModelLoadError(f"unknown device {requested!r}; use auto, {', '.join(DEVICES)}")
    return (requested,)


def explain(reasons: list[str]) -> str | None:
    return "; ".join(reasons) or None


def require(device: str, requested: str, error: DeviceUnavailable) -> WorkerError:
    """The ModelLoadError for an explicitly requested device that cannot run."""
    return ModelLoadError(f"--device {requested}: {device} cannot run here: {error}", fallback="cpu")
