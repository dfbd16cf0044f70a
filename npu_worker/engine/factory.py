"""Backend name → engine module. Each module exposes `create(settings) -> Engine`; imports are lazy so
an unused backend's dependencies (onnxruntime for ZipVoice) are never required.
"""

from __future__ import annotations

import importlib

from ..config import Settings
from .base import Engine

BACKENDS = {
    "espeak": "npu_worker.engine.espeak",
    "sovits": "npu_worker.engine.sovits",
    "zipvoice-onnx": "npu_worker.engine.zipvoice.engine",
}


def create_engine(settings: Settings) -> Engine:
    try:
        module_name = BACKENDS[settings.backend]
    except KeyError:
        raise ValueError(
            f"unknown backend {settings.backend!r}; choose one of {', '.join(BACKENDS)}"
        ) from None
    return importlib.import_module(module_name).create(settings)
