"""The OpenAPI 3 description of the HTTP API, served at `/openapi.json` and rendered to docs/openapi.yaml.

The document is data in this module (it ships in the wheel; docs/ does not), and
`python -m npu_worker.openapi > docs/openapi.yaml` writes the YAML copy; a test keeps both, and the
app's routes, in step.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from . import PROTOCOL_VERSION
from .protocol import error_names

JSON = "application/json"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): {"$ref": "#/components/responses/Error"} for code in codes}


COMMON_ERRORS = (400, 401, 403, 408, 413)
STRING = {"type": "string"}
NULLABLE_STRING = {"type": "string", "nullable": True}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["status", "error", "traceback", "fallback"],
        "additionalProperties": False,
        "properties": {
            "status": {"type": "string", "enum": ["fail"]},
            "error": {
                "type": "string",
                "description": "starts with a stable name: " + ", ".join(error_names()),
            },
            "traceback": {**NULLABLE_STRING, "description": "null on every 4xx"},
            "fallback": NULLABLE_STRING,
        },
    },
    "SynthParams": {
        "type": "object",
        "properties": {
            "lang": {"type": "string", "maxLength": 32, "default": "ko"},
            "speed_factor": {"type": "number", "minimum": 0.25, "maximum": 4.0, "default": 1.0},
            "ref_wav": {**NULLABLE_STRING, "description": "absolute path under the allowed roots"},
            "ref_text": NULLABLE_STRING,
            "seed": {"type": "integer", "nullable": True},
        },
    },
    "SynthRequest": {
        "allOf": [
            _ref("SynthParams"),
            {
                "type": "object",
                "required": ["text", "output_path"],
                "properties": {
                    "text": {"type": "string", "minLength": 1},
                    "output_path": {"type": "string", "description": "absolute path under the allowed roots"},
                },
            },
        ]
    },
    "SynthResult": {
        "type": "object",
        "required": ["status"],
        "properties": {
            "status": {"type": "string", "enum": ["ok", "fail"]},
            "output": STRING,
            "wav_path": STRING,
            "duration_sec": {"type": "number"},
            "sample_rate": {"type": "integer"},
            "elapsed_sec": {"type": "number"},
            "rtf": {"type": "number", "nullable": True},
            "engine": STRING,
            "device": STRING,
            "cached": {"type": "boolean"},
            "error": STRING,
        },
    },
    "Section": {
        "type": "object",
        "required": ["text"],
        "properties": {
            "idx": {"type": "integer", "minimum": 0},
            "text": STRING,
            "output_path": {**NULLABLE_STRING, "description": "default: <state>/outputs/<job_id>/sNN.wav"},
        },
    },
    "BatchRequest": {
        "allOf": [
            _ref("SynthParams"),
            {
                "type": "object",
                "required": ["sections"],
                "properties": {
                    "sections": {"type": "array", "minItems": 1, "items": _ref("Section")},
                    "stream": {"type": "boolean", "default": True},
                },
            },
        ]
    },
    "OpenAIError": {
        "type": "object",
        "required": ["error"],
        "description": "the error body of the /v1 routes, as OpenAI writes it",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "message": STRING,
                    "type": STRING,
                    "param": NULLABLE_STRING,
                    "code": NULLABLE_STRING,
                },
            }
        },
    },
    "Event": {
        "type": "object",
        "required": ["event"],
        "description": "one NDJSON line: start, progress, error, done or heartbeat",
        "properties": {"event": {"type": "string"}, "seq": {"type": "integer"}},
    },
    "JobStatus": {
        "type": "object",
        "required": ["job_id", "status"],
        "properties": {"job_id": STRING, "status": STRING, "total": {"type": "integer"}},
    },
    "Health": {
        "type": "object",
        "required": ["status", "loaded", "load_seconds", "backend", "device", "ref_wav", "version"],
        "properties": {
            "status": {"type": "string", "enum": ["ok", "loading", "fail"]},
            "loaded": {"type": "boolean"},
            "load_seconds": {"type": "number", "nullable": True},
            "backend": STRING,
            "device": NULLABLE_STRING,
            "ref_wav": NULLABLE_STRING,
            "version": STRING,
        },
    },
}

JOB_ID = {"name": "job_id", "in": "path", "required": True, "schema": STRING}
OPENAI_ERRORS = {
    "4XX": {"$ref": "#/components/responses/OpenAIError"},
    "5XX": {"$ref": "#/components/responses/OpenAIError"},
}

PATHS: dict[str, Any] = {
    "/health": {
        "get": {
            "summary": "readiness and live figures (no token needed)",
            "responses": {
                "200": _json(_ref("Health"), "loaded"),
                "500": _json(_ref("Health"), "the engine failed to load"),
                "503": _json(_ref("Health"), "still loading"),
                **_errors(403),
            },
        }
    },
    "/synth": {
        "post": {
            "summary": "one text to one wav",
            "requestBody": {"required": True, "content": {JSON: {"schema": _ref("SynthRequest")}}},
            "responses": {
                "200": _json(_ref("SynthResult"), "written, or status fail"),
                **_errors(*COMMON_ERRORS, 429, 500, 503),
            },
        }
    },
    "/synth_batch": {
        "post": {
            "summary": "many sections; NDJSON events, one JSON result, or a job id (?async=1)",
            "parameters": [{"name": "async", "in": "query", "schema": STRING}],
            "requestBody": {"required": True, "content": {JSON: {"schema": _ref("BatchRequest")}}},
            "responses": {
                "200": {
                    "description": "events as they happen (stream), the result, or the queued job",
                    "content": {
                        "application/x-ndjson": {"schema": _ref("Event")},
                        JSON: {"schema": {"type": "object"}},
                    },
                },
                **_errors(*COMMON_ERRORS, 429, 500, 503),
            },
        }
    },
    "/jobs": {
        "get": {
            "summary": "the 100 newest jobs",
            "responses": {"200": _json({"type": "object"}, "jobs"), **_errors(401, 403)},
        }
    },
    "/jobs/{job_id}": {
        "delete": {
            "summary": "cancel a job",
            "parameters": [JOB_ID],
            "responses": {"200": _json(_ref("JobStatus"), "cancel requested"), **_errors(401, 403, 404)},
        }
    },
    "/jobs/{job_id}/status": {
        "get": {
            "parameters": [JOB_ID],
            "responses": {"200": _json(_ref("JobStatus"), "status"), **_errors(401, 403, 404)},
        }
    },
    "/jobs/{job_id}/result": {
        "get": {
            "parameters": [JOB_ID],
            "responses": {
                "200": _json({"type": "object"}, "finished"),
                "202": _json(_ref("JobStatus"), "still running"),
                **_errors(401, 403, 404),
            },
        }
    },
    "/jobs/{job_id}/events": {
        "get": {
            "summary": "the job's events from `after`, then live",
            "parameters": [JOB_ID, {"name": "after", "in": "query", "schema": {"type": "integer"}}],
            "responses": {
                "200": {
                    "description": "NDJSON",
                    "content": {"application/x-ndjson": {"schema": _ref("Event")}},
                },
                **_errors(400, 401, 403, 404),
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
                **_errors(400, 401, 403, 404, 503),
            },
        }
    },
    "/ws": {
        "get": {
            "summary": "WebSocket channel (docs/protocol.md); a failed handshake is a 400 error body",
            "responses": {"101": {"description": "switching protocols"}, **_errors(400, 401, 403)},
        }
    },
    "/ready": {
        "get": {
            "summary": "200 only when a request would be served now (no token needed)",
            "responses": {
                "200": _json({"type": "object"}, "ready"),
                "503": _json({"type": "object"}, "not ready, with the reason"),
            },
        }
    },
    "/metrics": {
        "get": {
            "summary": "Prometheus metrics (text exposition format)",
            "responses": {"200": {"description": "text/plain; version=0.0.4"}, **_errors(401, 403)},
        }
    },
    "/v1/audio/speech": {
        "post": {
            "summary": "OpenAI-compatible speech: audio bytes as they are made, or SSE",
            "requestBody": {
                "required": True,
                "content": {JSON: {"schema": {"type": "object", "required": ["input"]}}},
            },
            "responses": {
                "200": {"description": "audio (wav, pcm, flac, mp3, opus) or text/event-stream"},
                **OPENAI_ERRORS,
            },
        }
    },
    "/v1/audio/speech/batch": {
        "post": {
            "summary": "many inputs; results with base64 audio or an error each",
            "requestBody": {
                "required": True,
                "content": {JSON: {"schema": {"type": "object", "required": ["items"]}}},
            },
            "responses": {"200": _json({"type": "object"}, "results"), **OPENAI_ERRORS},
        }
    },
    "/v1/audio/speech/stream": {
        "get": {
            "summary": "WebSocket: text fragments in, audio out (docs/protocol.md)",
            "responses": {"101": {"description": "switching protocols"}, **OPENAI_ERRORS},
        }
    },
    "/v1/models": {
        "get": {
            "summary": "the loaded model",
            "responses": {"200": _json({"type": "object"}, "models"), **OPENAI_ERRORS},
        }
    },
    "/v1/audio/voices": {
        "get": {
            "summary": "voices",
            "responses": {"200": _json({"type": "object"}, "voices"), **OPENAI_ERRORS},
        },
        "post": {
            "summary": "store a named voice (multipart: audio_sample, name, ref_text)",
            "requestBody": {
                "required": True,
                "content": {"multipart/form-data": {"schema": {"type": "object"}}},
            },
            "responses": {"200": _json({"type": "object"}, "the stored voice"), **OPENAI_ERRORS},
        },
    },
    "/v1/audio/voices/{name}": {
        "delete": {
            "summary": "remove an uploaded voice",
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": STRING}],
            "responses": {"200": _json({"type": "object"}, "deleted"), **OPENAI_ERRORS},
        }
    },
    "/openapi.json": {
        "get": {"summary": "this document", "responses": {"200": _json({"type": "object"}, "OpenAPI 3")}}
    },
    "/": {"get": {"summary": "the browser player", "responses": {"200": {"description": "text/html"}}}},
    "/{name}": {
        "get": {
            "summary": "the player's static files, by plain name",
            "parameters": [{"name": "name", "in": "path", "required": True, "schema": STRING}],
            "responses": {"200": {"description": "the file"}, **_errors(404)},
        }
    },
}


def document() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "npu-worker", "version": PROTOCOL_VERSION},
        "paths": PATHS,
        "components": {
            "schemas": SCHEMAS,
            "responses": {
                "Error": _json(_ref("Error"), "the fixed error body"),
                "OpenAIError": _json(_ref("OpenAIError"), "the error body of the /v1 routes"),
            },
        },
    }


def to_yaml(value: Any, indent: int = 0) -> str:
    """Block YAML for dicts, lists and JSON scalars (strings double-quoted, as JSON writes them)."""
    pad = "  " * indent
    if isinstance(value, dict) and value:
        lines = []
        for key, item in value.items():
            nested = isinstance(item, dict | list) and item
            lines.append(
                f"{pad}{json.dumps(key)}:"
                + ("\n" + to_yaml(item, indent + 1) if nested else f" {_scalar(item)}")
            )
        return "\n".join(lines)
    if isinstance(value, list) and value:
        lines = []
        for item in value:
            nested = isinstance(item, dict | list) and item
            body = to_yaml(item, indent + 1).lstrip() if nested else _scalar(item)
            lines.append(f"{pad}- {body}")
        return "\n".join(lines)
    return pad + _scalar(value)


def _scalar(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


if __name__ == "__main__":
    sys.stdout.write(to_yaml(document()) + "\n")
