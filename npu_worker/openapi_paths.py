"""The hand-written half of the OpenAPI document (`openapi.py`): the table of the HTTP API's routes, each
with its parameters, bodies and answers, pointing at the component schemas generated from the Structs."""

from __future__ import annotations

from typing import Any

from .openapi_refusals import (
    COMMON_ERRORS,
    OPENAI_ERRORS,
    OPENAI_WEBSOCKET_REFUSAL,
    WEBSOCKET_REFUSAL,
    error_refs,
)

JSON = "application/json"
NDJSON = "application/x-ndjson"
REF = "#/components/schemas/{name}"


def ref(name: str) -> dict[str, str]:
    """A pointer at the component schema `name`."""
    return {"$ref": REF.format(name=name)}


def _json(schema: dict[str, Any], description: str, media: str = JSON) -> dict[str, Any]:
    return {"description": description, "content": {media: {"schema": schema}}}


def _body(name: str, media: str = JSON) -> dict[str, Any]:
    return {"required": True, "content": {media: {"schema": ref(name)}}}


def _one_of(*names: str) -> dict[str, Any]:
    return {"oneOf": [ref(name) for name in names]}


JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": {"type": "string"}}
# The player's files answer conditional and range requests as HTTP files do (no error body: these are
# HTTP's own answers, with no body or the bytes asked for).
WHOLE_FILE = (  # where a Range is ignored (RFC 9110 §14.2), and where If-Range does not name the file
    "; the whole file too for a `Range` of several ranges (`bytes=0-1,3-4`) or in a unit other than "
    "`bytes`, or with an `If-Range` that does not name it (or given twice, as a `Range` given twice)"
)
FILE_ANSWERS: dict[str, Any] = {
    "206": {
        "description": "the byte range a `Range` header asked for (`Content-Range` says which); with "
        "`If-Range`, only where it names the file's strong `ETag` or its `Last-Modified` date exactly "
        "(else the whole file, 200; as is a range in a unit other than `bytes`)"
    },
    "304": {
        "description": "not modified: `If-None-Match` names its `ETag` (or `*`), or, without it, it has not "
        "changed since `If-Modified-Since` (no body)"
    },
    "412": {
        "description": "`If-Match` names no `ETag` of it, or it changed since `If-Unmodified-Since` (no body)"
    },
    "416": {
        "description": "a `Range` it does not serve: past the file's end, a suffix of no bytes "
        "(`bytes=-0`), or one that does not parse (no body; `Content-Range: bytes */<size>`)"
    },
}

PATHS: dict[str, Any] = {
    "/health": {
        "get": {
            "summary": "readiness and live figures (no token needed)",
            "responses": {
                "200": _json(ref("Health"), "loaded"),
                "500": _json(ref("Health"), "the engine failed to load"),
                "503": _json(ref("Health"), "still loading, or the shared queue is unreachable"),
                **error_refs(403),
            },
        }
    },
    "/synth": {
        "post": {
            "summary": "one text to one wav",
            "requestBody": _body("SynthBody"),
            "responses": {
                "200": _json(_one_of("SynthResult", "SynthFailed"), "written, or status fail"),
                "404": {
                    "$ref": "#/components/responses/Error",
                    "description": "JobNotFound: with --queue redis, Redis lost the job; send it again",
                },
                **error_refs(*COMMON_ERRORS, 417, 429, 500, 501, 503),
            },
        }
    },
    "/synth_batch": {
        "post": {
            "summary": "many sections; NDJSON events, one JSON result, or a job id (?async=1)",
            "parameters": [
                {
                    "name": "async",
                    "in": "query",
                    "description": "1/true/yes/on: answer with the queued job at once; 0/false/no/off or "
                    "absent: stream (or wait); anything else is a 400",
                    "schema": {"type": "string"},
                }
            ],
            "requestBody": _body("BatchBody"),
            "responses": {
                "200": {
                    "description": "events as they happen (stream), the result, or the queued job",
                    "content": {
                        NDJSON: {"schema": ref("LogLine")},
                        JSON: {"schema": _one_of("JobResult", "Queued")},
                    },
                },
                "202": _json(
                    ref("JobResult"),
                    "stream: false, and the worker shut down before the batch ended: its result so far "
                    "(status running or queued); the job resumes at the restart, poll /jobs/{job_id}/result",
                ),
                "404": {
                    "$ref": "#/components/responses/Error",
                    "description": "JobNotFound (stream: false): with --queue redis, Redis lost the job",
                },
                **error_refs(*COMMON_ERRORS, 417, 429, 500, 501, 503),
            },
        }
    },
    "/jobs": {
        "get": {
            "summary": "the 100 newest jobs",
            "responses": {"200": _json(ref("JobList"), "jobs"), **error_refs(401, 403, 503)},
        }
    },
    "/jobs/{job_id}": {
        "delete": {
            "summary": "cancel a job",
            "parameters": [JOB_ID],
            "responses": {
                "200": _json(ref("Cancelled"), "cancel requested"),
                **error_refs(401, 403, 404, 503),
            },
        }
    },
    "/jobs/{job_id}/status": {
        "get": {
            "parameters": [JOB_ID],
            "responses": {"200": _json(ref("JobStatus"), "status"), **error_refs(401, 403, 404, 500, 503)},
        }
    },
    "/jobs/{job_id}/result": {
        "get": {
            "parameters": [JOB_ID],
            "responses": {
                "200": _json(ref("JobResult"), "finished"),
                "202": _json(ref("JobStatus"), "still running"),
                **error_refs(401, 403, 404, 500, 503),
            },
        }
    },
    "/jobs/{job_id}/events": {
        "get": {
            "summary": "the job's events from `after`, then live",
            "parameters": [
                JOB_ID,
                {"name": "after", "in": "query", "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"}},
            ],
            "responses": {
                "200": _json(ref("LogLine"), "NDJSON", NDJSON),
                **error_refs(400, 401, 403, 404, 500, 503),
            },
        }
    },
    "/jobs/{job_id}/sections/{idx}/audio": {
        "get": {
            "summary": "a finished section's wav (from its file, or from Redis on a shared queue)",
            "parameters": [
                JOB_ID,
                {"name": "idx", "in": "path", "required": True, "schema": {"type": "integer"}},
            ],
            "responses": {
                "200": {"description": "wav", "content": {"audio/wav": {"schema": {"type": "string"}}}},
                "206": {
                    "description": "the one byte range a `Range` header asked for (`Content-Range` says "
                    "which); several ranges, a unit other than `bytes` or any `If-Range`: the whole wav, 200"
                },
                "416": FILE_ANSWERS["416"],
                **error_refs(400, 401, 403, 404, 503),
            },
        }
    },
    "/ws": {
        "get": {
            "summary": "WebSocket channel (docs/protocol.md): WsMessage frames in; Event frames and PCM out",
            "responses": {
                "101": {"description": "switching protocols"},
                **error_refs(401, 403),
                "400": dict(WEBSOCKET_REFUSAL),
            },
        }
    },
    "/ready": {
        "get": {
            "summary": "200 only when a request would be served now (no token needed)",
            "responses": {
                "200": _json(ref("Ready"), "ready"),
                "503": _json(ref("Ready"), "not ready, with the reason"),
            },
        }
    },
    "/metrics": {
        "get": {
            "summary": "Prometheus metrics (text exposition format)",
            "responses": {"200": {"description": "text/plain; version=0.0.4"}, **error_refs(401, 403)},
        }
    },
    "/v1/audio/speech": {
        "post": {
            "summary": "OpenAI-compatible speech: audio bytes as they are made, or SSE",
            "requestBody": _body("SpeechBody"),
            "responses": {
                "200": {
                    "description": "audio (wav, pcm, flac, mp3, opus), or SpeechEvent as server-sent events",
                    "content": {"text/event-stream": {"schema": ref("SpeechEvent")}},
                },
                **OPENAI_ERRORS,
            },
        }
    },
    "/v1/audio/speech/batch": {
        "post": {
            "summary": "many inputs; results with base64 audio or an error each",
            "requestBody": _body("SpeechBatchBody"),
            "responses": {"200": _json(ref("SpeechBatchResult"), "results"), **OPENAI_ERRORS},
        }
    },
    "/v1/audio/speech/stream": {
        "get": {
            "summary": "WebSocket (docs/protocol.md): StreamClientMessage frames in; StreamServerMessage and PCM out",
            "responses": {
                "101": {"description": "switching protocols"},
                "400": dict(OPENAI_WEBSOCKET_REFUSAL),
                **OPENAI_ERRORS,
            },
        }
    },
    "/v1/models": {
        "get": {
            "summary": "the loaded model",
            "responses": {"200": _json(ref("ModelList"), "models"), **OPENAI_ERRORS},
        }
    },
    "/v1/models/{model}": {
        "get": {
            "summary": "one served model (404 for another)",
            "parameters": [{"name": "model", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": _json(ref("Model"), "the model"), **OPENAI_ERRORS},
        }
    },
    "/v1/audio/voices": {
        "get": {
            "summary": "voices",
            "responses": {"200": _json(ref("VoiceList"), "voices"), **OPENAI_ERRORS},
        },
        "post": {
            "summary": "store a named voice (multipart: audio_sample, name, ref_text; consent, type ignored)",
            "requestBody": {
                "required": True,
                "content": {"multipart/form-data": {"schema": {"type": "object"}}},
            },
            "responses": {"201": _json(ref("CreatedVoice"), "the stored voice"), **OPENAI_ERRORS},
        },
    },
    "/v1/audio/voices/{name}": {
        "delete": {
            "summary": "remove an uploaded voice",
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": _json(ref("VoiceDeleted"), "deleted"), **OPENAI_ERRORS},
        }
    },
    "/openapi.json": {
        "get": {"summary": "this document", "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")}}
    },
    "/": {
        "get": {
            "summary": "the browser player",
            "responses": {"200": {"description": f"text/html{WHOLE_FILE}"}, **FILE_ANSWERS},
        }
    },
    "/{name}": {
        "get": {
            "summary": "the player's static files, by plain name",
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": f"the file{WHOLE_FILE}"}, **FILE_ANSWERS, **error_refs(404)},
        }
    },
}
