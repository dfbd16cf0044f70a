"""The OpenAPI 3.1 description of the HTTP API, served at `/openapi.json` and rendered to docs/openapi.yaml.

Every schema is generated from the msgspec Structs that decode the requests and encode the answers
(`msgspec.json.schema_components`), so the document cannot drift from what the code accepts and
sends; only the table of routes (`openapi_paths.py`) and `LogLine` (the `seq` a log line adds) are
written by hand; the refusals every route can answer, and the headers they carry, are
`openapi_refusals.py`'s.
It ships in the wheel (docs/ does not); `python -m npu_worker.openapi > docs/openapi.yaml` writes the
YAML copy (PyYAML), and tests/test_openapi.py keeps it, the served document and the app's routes in step.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import msgspec

from . import PROTOCOL_VERSION, wire
from .openapi_paths import PATHS, REF, ref
from .openapi_refusals import (
    refusal_responses,
    with_request_ids,
    with_route_refusals,
    with_status_waits,
)


def _types() -> dict[str, Any]:
    """Each documented type under its component name. The views' modules import this one (for the
    route), so their classes are read when the document is first built, not at import."""
    from .errors import ErrorBody
    from .http_compat import bodies as v1
    from .openai_compat import bodies as oa
    from .openai_compat import messages, request
    from .protocol import AnyEvent, BatchBody, SynthBody
    from .ws_messages import WsMessage

    return {
        "ErrorBody": ErrorBody,
        "SynthBody": SynthBody,
        "BatchBody": BatchBody,
        "SynthResult": v1.SynthResult,
        "SynthFailed": v1.SynthFailed,
        "Queued": v1.Queued,
        "JobStatus": v1.JobStatus,
        "Cancelled": v1.Cancelled,
        "JobList": v1.JobList,
        "JobResult": v1.JobResult,
        "Health": v1.Health,
        "Ready": v1.Ready,
        "Event": AnyEvent,
        "WsMessage": WsMessage,
        "SpeechBody": request.SpeechBody,
        "SpeechBatchBody": request.SpeechBatchBody,
        "SpeechBatchResult": oa.SpeechBatchResult,
        "OpenAIError": oa.OpenAIError,
        "ModelList": oa.ModelList,
        "Model": oa.Model,
        "VoiceList": oa.VoiceList,
        "VoiceEntry": oa.VoiceEntry,
        "CreatedVoice": oa.CreatedVoice,
        "VoiceDeleted": oa.VoiceDeleted,
        "SpeechEvent": messages.SseEvent,
        "StreamClientMessage": messages.ClientMessage,
        "StreamServerMessage": messages.SocketMessage,
    }


def schemas() -> dict[str, Any]:
    """The component schemas: every Struct's, and the unions (events, messages) under their names."""
    types = _types()
    inline, components = msgspec.json.schema_components(list(types.values()), ref_template=REF)
    for name, schema in zip(types, inline, strict=True):
        if schema != ref(name):  # a union: its own component, pointing at its members
            components[name] = schema
    components["LogLine"] = LOG_LINE
    return dict(sorted(components.items()))


# An NDJSON line (and a /ws text frame) of the job's log is its event with the log position appended
# (`wire.encode_entry`), outside the Structs: documented here by hand.
LOG_LINE = {
    "description": "an event of the job's log; every line but `heartbeat` carries `seq`",
    "allOf": [
        ref("Event"),
        {
            "type": "object",
            "properties": {
                "seq": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "the position in the job's log, from 1; re-attach with ?after=<seq>",
                }
            },
        },
    ],
}


SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "the worker's --token, when it runs with one (else any or none is accepted)",
    },
    "query_token": {
        "type": "apiKey",
        "in": "query",
        "name": "token",
        "description": "the same token in the URL, for a browser's WebSocket handshake",
    },
}


@functools.cache
def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "npu-worker", "version": PROTOCOL_VERSION},
        "security": [{"bearer": []}, {"query_token": []}],
        "paths": with_request_ids(with_status_waits(with_route_refusals(PATHS))),
        "components": {
            "schemas": schemas(),
            "responses": refusal_responses(),
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


@functools.cache
def document_json() -> bytes:
    """What `/openapi.json` serves (built once)."""
    return wire.encode(document())


def render_yaml() -> str:
    """docs/openapi.yaml: the same document in the document's own key order (read back from its JSON,
    so no part is shared and PyYAML writes no anchors). PyYAML loads here: the server never needs it."""
    import yaml

    return yaml.safe_dump(
        msgspec.json.decode(document_json()), sort_keys=False, allow_unicode=True, width=110
    )


if __name__ == "__main__":
    sys.stdout.write(render_yaml())
