"""Which Snapdragon the QNN HTP backend compiles for (`--qnn-soc`), as QNN provider options.

`soc_model` is the SoC's number in the QAIRT SDK's `QnnSoc_Model` enum; `htp_arch` its Hexagon NPU
generation. Without a target the x86 HTP simulator fails to finalise real graphs
(QNN_COMMON_ERROR_MEM_ALLOC); with one they compile. On a device the backend can read the chip itself,
so `auto` names a target only on x86 (the simulator), where Snapdragon 8 Gen 3 stands in.
onnxruntime gives `soc_model` priority when both disagree, so `htp_arch` is only added where the
provider documents the value (68, 69, 73, 75).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class SocTarget:
    chip: str  # Qualcomm part number
    product: str  # marketing name
    soc_model: int  # QAIRT QnnSoc_Model value
    htp_arch: int | None  # Hexagon generation, where onnxruntime-qnn documents it


TARGETS = {
    "888": SocTarget("SM8350", "Snapdragon 888", 30, 68),
    "8gen1": SocTarget("SM8450", "Snapdragon 8 Gen 1", 36, 69),
    "8+gen1": SocTarget("SM8475", "Snapdragon 8+ Gen 1", 42, 69),
    "8gen2": SocTarget("SM8550", "Snapdragon 8 Gen 2", 43, 73),
    "8gen3": SocTarget("SM8650", "Snapdragon 8 Gen 3", 57, 75),
    "8elite": SocTarget("SM8750", "Snapdragon 8 Elite", 69, None),
    "8elite-gen5": SocTarget("SM8850", "Snapdragon 8 Elite Gen 5", 87, None),
    "8cx-gen3": SocTarget("SC8280X", "Snapdragon 8cx Gen 3", 37, None),
    "x-elite": SocTarget("SC8380XP", "Snapdragon X Elite", 60, None),
}
SIMULATOR_DEFAULT = "8gen3"
# onnxruntime-qnn 2.7 refuses an unknown soc_model below 2^31 (QNN_DEVICE_ERROR_INVALID_CONFIG) but
# compiled with 2^31 and above, for no target one could name, while the manifest recorded the number.
MAX_SOC_MODEL = 2**31 - 1
X86_MACHINES = ("x86_64", "amd64", "i386", "i686")


def htp_is_simulated(machine: str | None = None) -> bool:
    """On x86 the QNN HTP backend is the simulator (≈ 1000× slower than a CPU, never a real NPU)."""
    return (machine or platform.machine()).lower() in X86_MACHINES


def names() -> str:
    """The accepted values, for help texts and errors."""
    chips = ", ".join(f"{name} ({t.chip})" for name, t in TARGETS.items())
    return f"auto, none, {chips}, or a QAIRT soc_model number"


def resolve(value: str, machine: str | None = None) -> SocTarget | None:
    """The target for a `--qnn-soc` value (name, part number or soc_model number); None: let QNN pick."""
    key = value.strip().lower()
    if key == "auto":
        return TARGETS[SIMULATOR_DEFAULT] if htp_is_simulated(machine) else None
    if key in ("none", "0", ""):
        return None
    for name, target in TARGETS.items():
        if key in (name, target.chip.lower()):
            return target
    if key.isascii() and key.isdigit() and int(key) <= MAX_SOC_MODEL:
        return SocTarget(f"soc_model {key}", f"soc_model {key}", int(key), None)
    raise ValueError(f"unknown --qnn-soc {value!r}; use {names()}")


def provider_options(value: str, machine: str | None = None) -> dict[str, str]:
    """QNN provider options naming the target (empty when QNN should detect the chip)."""
    target = resolve(value, machine)
    if target is None:
        return {}
    options = {"soc_model": str(target.soc_model)}
    if target.htp_arch is not None:
        options["htp_arch"] = str(target.htp_arch)
    return options


def value_for(options: dict[str, str]) -> str | None:
    """The `--qnn-soc` value whose provider options are `options` on any machine (None: none is)."""
    if not options:
        return "none"
    for name in TARGETS:
        if provider_options(name) == options:
            return name
    number = options.get("soc_model", "")
    return number if set(options) == {"soc_model"} and number.isdigit() else None
