"""The `serve` command `npu-worker prepare` prints at its end: the one that loads the folder it prepared,
on this machine or, for what only the device can load, on the device."""

from __future__ import annotations

import os
import shlex

from .engine import qnn_targets

__all__ = ["device_paths_said", "serve_command", "serve_said"]


def serve_command(
    out: str,
    precision: str,
    voice: tuple[str, str | None] | None = None,
    qnn_soc: str = "auto",
    on_device: bool = False,
) -> str:
    """The `serve` that loads the prepared folder: on x86, where QNN's HTP is the simulator, with
    --allow-htp-simulator (without it serve refuses the device, which it runs only when allowed); a
    calibrated folder with the voice it was calibrated with, `--ref-wav` (and `--ref-text` if given;
    without them serve refused every request that named no voice). Each word quoted for the shell, and a name beginning with a
    dash (`--out=-x`) as `./-x`: serve took it for a flag (`--model-dir: expected one argument`); the
    transcript as `--ref-text=...` for the same reason (a dialogue line "-네")
    A target named by `--qnn-soc` is named to serve too: with its default, auto, serve refused the
    folder as compiled for another target ("serve with --qnn-soc 8gen2"). `on_device`: the line for
    the device, from x86: no --allow-htp-simulator, and the target by name (auto is 8gen3 on x86, the
    chip itself on a device)."""
    simulator = " --allow-htp-simulator" if qnn_targets.htp_is_simulated() and not on_device else ""
    if on_device:
        qnn_soc = qnn_targets.value_for(qnn_targets.provider_options(qnn_soc)) or qnn_soc
    target = f" --qnn-soc {shlex.quote(qnn_soc)}" if qnn_soc.strip().lower() != "auto" else ""
    folder = os.path.join(".", out) if out.startswith("-") else out
    wav, text = voice or (None, None)
    ref_wav = f" --ref-wav {shlex.quote(wav)}" if wav is not None else ""
    ref_wav += f" --ref-text={shlex.quote(text)}" if text is not None else ""  # (`=`: "-네" is no flag)
    return (
        f"npu-worker serve --backend zipvoice-onnx --model-dir {shlex.quote(folder)} --device qnn "
        f"--precision {precision}{ref_wav}{target}{simulator}"
    )


def serve_said(
    out: str, precision: str, voice: tuple[str, str | None] | None, qnn_soc: str, shared: bool
) -> str:
    """The result line's `serve` advice. A weight-shared binary of several buckets made on x86 is for
    the device only (the simulator cannot load it, and `serve` refuses it there): the line said "serve
    it with ... --allow-htp-simulator", which serve then refused."""
    if shared and qnn_targets.htp_is_simulated():
        return (
            "the x86 HTP simulator cannot load a weight-shared binary of several buckets: "
            f"{device_paths_said(out, voice)}; serve it on the device with: "
            f"{serve_command(out, precision, voice, qnn_soc, on_device=True)}"
        )
    return f"serve it with: {serve_command(out, precision, voice, qnn_soc)}"


def device_paths_said(out: str, voice: tuple[str, str | None] | None) -> str:
    """What the operator changes in the device's `serve` line: its paths are this host's (the folder
    prepared here, the voice calibrated with), which the line named as if the device had them."""
    wav = voice[0] if voice is not None else None
    inside = wav is None or os.path.dirname(wav) == out
    copied = shlex.quote(out) if inside else f"{shlex.quote(out)} and {shlex.quote(str(wav))}"
    flags = "--model-dir" if wav is None else "--model-dir and --ref-wav"
    return f"copy {copied} onto the device, and give {flags} there as the device's paths (below: this host's)"
