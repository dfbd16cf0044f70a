"""The WebSocket `/ws` messages of PROTOCOL v1 (client to server) as msgspec Structs, and what they mean.

Pure code, split from `protocol.py` (which keeps the events, the HTTP bodies and the request objects):
a text frame decodes straight into its Struct (`wire.load`), then into the `BatchRequest` or
`CancelRequest` the session hands the job core.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from . import wire
from .protocol import (
    BadRequest,
    BatchBody,
    BatchRequest,
    CancelRequest,
    Limits,
    ParamsBody,
    SectionBody,
    SectionRequest,
    UnknownMessage,
)

# /ws writes no file without an output path: its `null` is no default file (`refusals._empty_hint` reads
# `extra`).
WsOutputPath = Annotated[
    str,
    Meta(
        min_length=1,
        pattern=r"\S",
        description="an absolute path under the allowed roots, where the wav is also written; "
        "null or absent: no file is written (the audio comes over the socket only)",
        extra={"null": "to write no file"},
    ),
]


class WsSynth(ParamsBody, kw_only=True, tag_field="type", tag="synth"):
    """WebSocket: one text, listened to (a one-section preview)."""

    text: str
    output_path: WsOutputPath | None = None
    audio: bool | None = True


class WsSectionBody(SectionBody, kw_only=True):
    """A /ws batch's section: without `output_path` no file is written."""

    output_path: WsOutputPath | None = None


class WsSynthBatch(BatchBody, kw_only=True, tag_field="type", tag="synth_batch"):
    """WebSocket: a batch, listened to section by section (`stream` is ignored)."""

    sections: Annotated[Sequence[WsSectionBody], Meta(min_length=1)]


class WsCancel(msgspec.Struct, tag_field="type", tag="cancel"):
    """WebSocket: stop the running request."""


WsMessage = WsSynth | WsSynthBatch | WsCancel
WS_TYPES = frozenset(("synth", "synth_batch", "cancel"))


def unknown_type(value: Any) -> str:
    """What an object of no known `type` is told: one with none says so ("unknown message type None"
    named a type the caller never sent)."""
    if value is None:
        return "the message has no type"
    return f"unknown message type {value[:40] if isinstance(value, str) else value!r}"


def parse_ws_message(body: bytes | str | Any, limits: Limits) -> BatchRequest | CancelRequest:
    """A client→server WebSocket text message (PROTOCOL §6)."""
    try:
        message: WsSynth | WsSynthBatch | WsCancel = wire.load(body, WsMessage)
    except BadRequest:
        found = wire.tag_of(body, "type")
        if found is not None and found[0] and found[1] not in WS_TYPES:  # an object of no known type
            raise UnknownMessage(unknown_type(found[1])) from None
        raise
    if isinstance(message, WsCancel):
        return CancelRequest()
    if isinstance(message, WsSynthBatch):
        return message.request(limits)
    section = SectionRequest(0, message.text, message.output_path)
    return BatchRequest(sections=(section,), params=message.params(), audio=message.audio is not False)
