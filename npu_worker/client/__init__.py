"""Python client for the worker's pipeline API (PROTOCOL v1), honouring `TTS_WORKER_BASE`.

Synchronous calls (standard library only) are exported here under their plain names; the aiohttp
forms are the same names in `npu_worker.client.aio` and here with an `async_` prefix:

    from npu_worker.client import synth_batch_streaming
    result = synth_batch_streaming(sections, on_progress=lambda idx, event: print(idx, event["event"]))
    result["wav_paths"]     # ok sections in idx order, as the user's helper sketch returns them
    result["errors"]        # error events of failed sections (reported, never raised)
"""

from __future__ import annotations

import importlib
from typing import Any

from npu_worker.client.collector import BatchCollector
from npu_worker.client.common import BASE_ENV, DEFAULT_BASE, resolve_base
from npu_worker.client.errors import (
    ClientError,
    EngineFailed,
    InvalidArgument,
    NotConnected,
    Stalled,
    TransportError,
    WorkerHTTPError,
    WorkerProtocolError,
)
from npu_worker.client.sync import cancel_job, health, synth, synth_batch_polling, synth_batch_streaming


def __getattr__(name: str) -> Any:
    """`aio` and the `async_*` names load aiohttp on first use, so the sync client needs only stdlib."""
    if name == "aio" or name.startswith("async_"):
        aio = importlib.import_module("npu_worker.client.aio")
        return aio if name == "aio" else getattr(aio, name.removeprefix("async_"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BASE_ENV",
    "DEFAULT_BASE",
    "BatchCollector",
    "ClientError",
    "EngineFailed",
    "InvalidArgument",
    "NotConnected",
    "Stalled",
    "TransportError",
    "WorkerHTTPError",
    "WorkerProtocolError",
    "aio",
    "async_cancel_job",
    "async_health",
    "async_synth",
    "async_synth_batch_polling",
    "async_synth_batch_streaming",
    "cancel_job",
    "health",
    "resolve_base",
    "synth",
    "synth_batch_polling",
    "synth_batch_streaming",
]
