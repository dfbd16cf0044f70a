"""docs/openapi.yaml is the served /openapi.json, both list exactly the app's routes, and their schemas
are the ones the wire model validates with."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from npu_worker import openapi

DOC = Path(__file__).resolve().parents[1] / "docs" / "openapi.yaml"


def test_the_yaml_file_is_the_rendered_document():
    assert DOC.read_text(encoding="utf-8") == openapi.render_yaml(), (
        "regenerate: python -m npu_worker.openapi > docs/openapi.yaml"
    )
    assert yaml.safe_load(DOC.read_text(encoding="utf-8")) == openapi.document()


async def test_served_document_lists_exactly_the_apps_routes(worker):
    client = await worker()
    served = await (await client.get("/openapi.json")).json()
    assert served == openapi.document()
    routes = {
        (route.method.lower(), route.resource.canonical)
        for route in client.app.router.routes()
        if route.method != "HEAD" and route.resource is not None
    }
    documented = {(method, path) for path, item in served["paths"].items() for method in item}
    assert routes == documented


def test_every_reference_resolves():
    document = openapi.document()
    schemas = document["components"]["schemas"]
    responses = document["components"]["responses"]
    found: list[str] = []

    def walk(value):
        if isinstance(value, dict):
            if "$ref" in value:
                found.append(value["$ref"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(document)
    assert found
    for ref in found:
        kind, name = ref.removeprefix("#/components/").split("/")
        assert name in (schemas if kind == "schemas" else responses), ref


def test_the_schemas_carry_the_constraints_the_decoder_checks():
    schemas = openapi.document()["components"]["schemas"]
    speed = schemas["SynthBody"]["properties"]["speed_factor"]["anyOf"][0]
    assert (speed["minimum"], speed["maximum"]) == (0.25, 4.0)
    seed = schemas["SynthBody"]["properties"]["seed"]["anyOf"][0]
    assert (seed["minimum"], seed["maximum"]) == (0, 2**32 - 1)
    assert schemas["BatchBody"]["properties"]["sections"]["minItems"] == 1
    assert set(schemas["SynthBody"]["required"]) == {"text", "output_path"}
    assert schemas["SpeechBody"]["properties"]["stream_format"]["anyOf"][0]["enum"] == ["audio", "sse"]
    events = {ref["$ref"].rsplit("/", 1)[1] for ref in schemas["Event"]["anyOf"]}
    assert events == {
        "Start",
        "Progress",
        "SectionError",
        "Done",
        "Heartbeat",
        "AudioStart",
        "AudioEnd",
        "FirstAudio",
    }
    assert schemas["Event"]["discriminator"]["propertyName"] == "event"
    assert "TextTooLong" in schemas["ErrorBody"]["properties"]["error"]["description"]


def _declared(schema: dict, event: str) -> set[str]:
    """The fields the document declares for an `event` line under `schema` (allOf and the Event
    union's discriminator resolved)."""
    schemas = openapi.document()["components"]["schemas"]
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        if "discriminator" in schemas[name]:
            return _declared({"$ref": schemas[name]["discriminator"]["mapping"][event]}, event)
        return _declared(schemas[name], event)
    fields = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        fields |= _declared(part, event)
    return fields


async def test_every_field_of_a_streamed_line_is_documented(worker, tmp_path):
    """Every NDJSON line carries `seq` (added outside the event Structs): the document must say so,
    on the batch stream and on the re-attach stream alike."""
    client = await worker()
    sections = [{"text": "하나.", "output_path": str(tmp_path / "s0.wav")}, {"text": " "}]
    streamed = await client.post("/synth_batch", json={"sections": sections})
    lines = [json.loads(line) for line in (await streamed.read()).splitlines()]
    job_id = lines[0]["job_id"]
    replayed = await client.get(f"/jobs/{job_id}/events")
    lines += [json.loads(line) for line in (await replayed.read()).splitlines()]
    assert {line["event"] for line in lines} >= {"start", "progress", "error", "done"}
    paths = openapi.document()["paths"]
    for path, method in (("/synth_batch", "post"), ("/jobs/{job_id}/events", "get")):
        schema = paths[path][method]["responses"]["200"]["content"]["application/x-ndjson"]["schema"]
        for line in lines:
            assert set(line) <= _declared(schema, line["event"]), (path, line)


def test_a_routes_own_header_words_name_only_statuses_it_answers():
    """`/ready`'s 503 said its Retry-After was "5 on a 429 QueueFull" (the refusals' generic wording),
    yet `/ready` never answers 429: a route's own header descriptions name only its own statuses."""
    found = []
    for path, item in openapi.document()["paths"].items():
        for method, operation in item.items():
            answered = {status for status in operation["responses"] if status.isdigit()}
            for status, response in operation["responses"].items():
                for name, header in response.get("headers", {}).items():
                    named = set(re.findall(r"\b[1-5]\d\d\b", header.get("description", "")))
                    found += [f"{method} {path} {status} {name}: {n}" for n in sorted(named - answered)]
    assert found == []


def test_every_output_path_says_what_it_takes():
    """`/ws`'s `output_path` (WsSynth, WsSectionBody) had no description, where /synth's and a batch
    section's say what they take: a reader of the document could not tell that null writes no file."""
    schemas = openapi.document()["components"]["schemas"]
    said = {}
    for name, schema in schemas.items():
        field = schema.get("properties", {}).get("output_path")
        if field is not None and field.get("type") != "null" and "readOnly" not in field:
            said[name] = field.get("description") or next(
                (part["description"] for part in field.get("anyOf", []) if "description" in part), None
            )
    assert {"WsSynth", "WsSectionBody", "SynthBody"} <= set(said), said
    assert all(said.values()), said
    assert "no file" in said["WsSynth"] and said["WsSynth"] == said["WsSectionBody"], said
