"""The JSON answers of the OpenAI routes, as msgspec Structs: the error body, models, voices, batch.

A field that is not always there defaults to UNSET (left off the wire). Pure code; `openapi.py`
documents these classes.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType


class ErrorDetail(msgspec.Struct):
    """OpenAI's error object."""

    message: str
    type: Annotated[str, Meta(description="invalid_request_error, not_found_error, server_error, ...")]
    param: Annotated[str | None, Meta(description="the request field at fault")]
    code: Annotated[str | None, Meta(description="the stable error name (docs/protocol.md)")]


class OpenAIError(msgspec.Struct):
    """The body of a failed /v1 request, as OpenAI writes it (its SDKs raise their usual errors)."""

    error: ErrorDetail


class Model(msgspec.Struct):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "npu-worker"


class ModelList(msgspec.Struct, kw_only=True):
    """GET /v1/models: the loaded model's id first, then the backend name and OpenAI's speech models."""

    object: Literal["list"] = "list"
    data: list[Model]


class VoiceEntry(msgspec.Struct, kw_only=True):
    """A voice of GET /v1/audio/voices (and the answer to an upload)."""

    name: str
    source: Annotated[str, Meta(description="default, uploaded, directory or espeak")]
    ref_text: str | None | UnsetType = UNSET
    duration_sec: float | None | UnsetType = UNSET
    sample_rate: int | None | UnsetType = UNSET
    description: str | UnsetType = UNSET


class VoiceList(msgspec.Struct, kw_only=True):
    object: Literal["list"] = "list"
    voices: list[str]
    data: list[VoiceEntry]


class CreatedVoice(VoiceEntry, kw_only=True):
    """The answer to an upload: the entry, and the fields of OpenAI's voice object (its SDK reads them)."""

    id: Annotated[str, Meta(description='the voice\'s name: what `voice` (or `{"id": ...}`) names')]
    object: Literal["audio.voice"] = "audio.voice"
    type: Literal["audio_sample"] = "audio_sample"
    created_at: Annotated[int, Meta(description="Unix time of the upload")]


class VoiceDeleted(msgspec.Struct, kw_only=True):
    id: str
    name: str
    object: Literal["audio.voice.deleted"] = "audio.voice.deleted"
    deleted: bool = True


class SpeechItem(msgspec.Struct, kw_only=True):
    """One item's outcome: its audio (`success`) or its error (`error`)."""

    index: int
    status: Literal["success", "error"]
    format: str | UnsetType = UNSET
    sample_rate: int | UnsetType = UNSET
    duration_sec: float | UnsetType = UNSET
    audio_data: Annotated[str | UnsetType, Meta(description="base64 of the whole file in `format`")] = UNSET
    error: ErrorDetail | UnsetType = UNSET


class SpeechBatchResult(msgspec.Struct, kw_only=True):
    """POST /v1/audio/speech/batch (200 even when items fail)."""

    object: Literal["list"] = "list"
    results: list[SpeechItem]
    total: int
    succeeded: int
    failed: int
