"""docs/openapi.yaml is the served /openapi.json, and both list exactly the app's routes."""

from __future__ import annotations

from pathlib import Path

from npu_worker import openapi

DOC = Path(__file__).resolve().parents[1] / "docs" / "openapi.yaml"


def test_the_yaml_file_is_the_rendered_document():
    assert DOC.read_text(encoding="utf-8") == openapi.to_yaml(openapi.document()) + "\n", (
        "regenerate: python -m npu_worker.openapi > docs/openapi.yaml"
    )


def test_the_yaml_renderer_writes_nested_lists_and_dicts():
    rendered = openapi.to_yaml({"a": [{"b": 1, "c": [2]}, "x"], "e": {}})
    assert rendered == '"a":\n  - "b": 1\n    "c":\n      - 2\n  - "x"\n"e": {}'


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
