"""Server settings → the chosen engine's config: the one place that knows both sides.

The engine package takes explicit inputs (model files, runtime choice, synthesis options) and never
imports the server's `Settings`; this module maps one onto the other, so `serve` can build and validate
the engine before it listens.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .config import Settings
from .engine.base import Engine, Voice
from .engine.factory import create_engine


def engine_config(settings: Settings) -> object:
    """The config object `create_engine(settings.backend, ...)` expects."""
    if settings.backend == "espeak":
        from .engine.espeak import EspeakConfig

        return EspeakConfig(process=settings.espeak_process)
    if settings.backend == "sovits":
        from .engine.sovits import SovitsConfig

        return SovitsConfig(settings.sovits_base)
    if settings.backend == "zipvoice-onnx":
        return zipvoice_config(settings)
    raise ValueError(f"unknown backend {settings.backend!r}")


def zipvoice_config(settings: Settings):  # noqa: ANN201 - the import stays lazy (numpy, model code)
    """`ZipVoiceConfig` from the server flags (--model-dir, --precision, --device, --prompt-*, ...)."""
    from .engine.providers import RuntimeConfig
    from .engine.zipvoice.options import ZipVoiceConfig, ZipVoiceOptions
    from .engine.zipvoice.prompt import PromptOptions

    prompt = PromptOptions(
        max_seconds=settings.prompt_max_seconds,
        first_max_seconds=settings.first_prompt_max_seconds,
        max_pause_s=settings.prompt_max_pause_seconds,
    )
    options = ZipVoiceOptions(
        segment_seconds=settings.segment_seconds,
        first_segment_seconds=settings.first_segment_seconds,
        first_segment_min_seconds=min(0.8, settings.first_segment_seconds),
        first_segment_steps=settings.first_segment_steps,
        trim_edge_silence=settings.trim_edge_silence,
        prompt=prompt,
    )
    runtime = RuntimeConfig(
        threads=settings.threads,
        allow_htp_simulator=settings.allow_htp_simulator,
        cache_dir=Path(settings.resolved_state_dir()) / "qnn-cache",
        qnn_soc=settings.qnn_soc,
    )
    return ZipVoiceConfig(
        model_dir=settings.model_dir or "",
        precision=settings.precision,
        vocoder=settings.vocoder,
        device=settings.device,
        runtime=runtime,
        fixed_shapes=settings.fixed_shapes,
        tokenizer=settings.tokenizer,
        num_steps=settings.num_steps,
        guidance_scale=settings.guidance_scale,
        seed=settings.seed,
        default_voice=Voice(settings.ref_wav, settings.ref_text),
        options=options,
    )


def build_engine(settings: Settings) -> Engine:
    """The configured engine, its options validated (ValueError naming the bad value); not loaded yet."""
    return create_engine(settings.backend, engine_config(settings))


def check_engine_settings(settings: Settings) -> None:
    """ValueError naming every engine setting that cannot work; opens no model (cheap, before `serve`)."""
    config = engine_config(settings)
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()


ZIPVOICE_FILES = ("model_dir", "vocoder")  # the model files only --backend zipvoice-onnx loads
# What else only it reads (`zipvoice_config`): another backend takes `--num-steps 0` and runs on.
ZIPVOICE_OPTIONS = (
    "precision",
    "device",
    "allow_htp_simulator",
    "fixed_shapes",
    "qnn_soc",
    "tokenizer",
    "num_steps",
    "guidance_scale",
    "prompt_max_seconds",
    "first_prompt_max_seconds",
    "prompt_max_pause_seconds",
    "segment_seconds",
    "first_segment_seconds",
    "first_segment_steps",
    "trim_edge_silence",
)


def unused_model_settings(settings: Settings) -> list[str]:
    """A warning per ZipVoice model file named to another backend, and one for its other settings
    given: `serve --model-dir M` without `--backend zipvoice-onnx` served espeak without a word, and the
    operator took espeak's voice for the model's. Not refused: an env file may keep
    NPU_WORKER_MODEL_DIR (or NPU_WORKER_NUM_STEPS) while the backend is switched."""
    if settings.backend == "zipvoice-onnx":
        return []
    warnings = [
        f"--{name.replace('_', '-')} {getattr(settings, name)} is not loaded: --backend is "
        f"{settings.backend} (the model files are for --backend zipvoice-onnx)"
        for name in ZIPVOICE_FILES
        if getattr(settings, name)
    ]
    defaults = {f.name: f.default for f in dataclasses.fields(Settings)}
    given = [name for name in ZIPVOICE_OPTIONS if getattr(settings, name) != defaults[name]]
    if given:
        shown = ", ".join(f"--{name.replace('_', '-')} {_shown(getattr(settings, name))}" for name in given)
        warnings.append(
            f"{shown}: not used, --backend is {settings.backend} (ZipVoice's settings, for --backend "
            "zipvoice-onnx; not checked either)"
        )
    return warnings + unused_voice_settings(settings)


def unused_voice_settings(settings: Settings) -> list[str]:
    """A warning for `--ref-wav`/`--ref-text` given to espeak, which speaks its own voices and never reads
    a reference wav: the operator took espeak's voice for theirs. (`--ref-wav` still counts for the
    path policy: callers cannot replace it.) The transcript is named, never shown: it may be long.
    None on an api node, which speaks nothing: its `--ref-wav` is the voice `default` it sends its
    engine nodes, whose backend is theirs."""
    if settings.backend != "espeak" or settings.role == "api":  # (sovits sends `default`'s --ref-wav on)
        return []
    given = [f"--ref-wav {settings.ref_wav}"] if settings.ref_wav is not None else []
    given += ["--ref-text"] if settings.ref_text is not None else []
    if not given:
        return []
    return [
        f"{', '.join(given)}: not used, --backend is espeak (it speaks its own voices, never a reference "
        "wav; --ref-wav is still kept from callers' output_path)"
    ]


def _shown(value: object) -> str:
    """A value as its env var may give it (`off`, not `False`)."""
    return ("on" if value else "off") if isinstance(value, bool) else str(value)
