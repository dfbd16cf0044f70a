"""Backend name + that backend's config → engine. Each backend module exposes `create(config) -> Engine`,
which validates the config first; imports are lazy so an unused backend's dependencies (onnxruntime for
ZipVoice) are never required. The configs are built by the server from its settings
(npu_worker/engine_options.py); the engine package never sees those settings.
"""

from __future__ import annotations

import importlib

from .base import Engine

BACKENDS = {
    "espeak": "npu_worker.engine.espeak",
    "sovits": "npu_worker.engine.sovits",
    "zipvoice-onnx": "npu_worker.engine.zipvoice.engine",
}
# What `EngineInfo.backend` (/health, `start` events) names each backend once loaded, where it differs
# from the setting: /health says the same before the engine has loaded, or after it failed to.
REPORTED_NAMES = {"espeak": "espeak-ng"}


def reported_backend(backend: str) -> str:
    return REPORTED_NAMES.get(backend, backend)


def create_engine(backend: str, config: object) -> Engine:
    """ValueError for an unknown backend or an invalid config, with the reason."""
    try:
        module_name = BACKENDS[backend]
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}") from None
    return importlib.import_module(module_name).create(config)
