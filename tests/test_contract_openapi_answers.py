"""Every answer a live worker gives is one its OpenAPI document lists for that route: the status (or its
class, `4XX`, on the OpenAI routes), the `Retry-After` header where one comes, and which routes need the
token. Each route of the document is called as a caller may get it wrong (a disallowed origin, no token, a
body on a GET, a bad `Expect`), while the worker loads, with its queue full and as it shuts down, so a route
added later, or a refusal a route learns, is checked without a line here (a generated client treated an
answer its document did not list, the 202 of a batch at shutdown, as a broken server)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import aiohttp

from npu_worker import openapi
from npu_worker.app_keys import SCHEDULER_KEY
from npu_worker.http_compat.ndjson import end_streams
from tests.conftest import wait_until_loaded
from tests.openai_support import tone_wav
from tests.timing import seconds
from tests.tone_engine import ToneEngine

TOKEN = "contract-token-0123456789"
EVIL = {"Origin": "http://evil.example"}
PARAMS = {"{job_id}": "nope", "{idx}": "0", "{model}": "tts-1", "{name}": "nobody"}
BODIES: dict[str, Any] = {  # a plain call of each POST route
    "/synth": {"text": "가.", "output_path": "/nonexistent-root/x.wav"},
    "/synth_batch": {"sections": [{"text": "가."}], "stream": False},
    "/v1/audio/speech": {"input": "가.", "response_format": "pcm"},
    "/v1/audio/speech/batch": {"items": [{"input": "가."}]},
    "/v1/audio/voices": {},
}


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    document = openapi.document()
    return [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()]


def _url(path: str) -> str:
    if path == "/{name}":  # a player file's name (one with no extension is no route of the app's)
        return "/missing.js"
    for name, value in PARAMS.items():
        path = path.replace(name, value)
    return path


class Answers:
    """What the worker answered, by the route's path in the document."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int, dict[str, str], str]] = []

    async def call(
        self, client: Any, method: str, path: str, label: str, url: str | None = None, **kwargs: Any
    ) -> aiohttp.ClientResponse:
        if method == "post" and "json" not in kwargs and "data" not in kwargs:
            kwargs["json"] = BODIES.get(path, {})
        response = await client.request(method.upper(), url or _url(path), **kwargs)
        await response.read()
        said = {name: response.headers[name] for name in SAYING_HEADERS if name in response.headers}
        self.seen.append((path, method, response.status, said, label))
        return response

    def undocumented(self) -> list[str]:
        found = []
        for path, method, status, said, label in self.seen:
            responses = openapi.document()["paths"][path][method]["responses"]
            documented = responses.get(str(status)) or responses.get(f"{status // 100}XX")
            if documented is None:
                found.append(f"{method.upper()} {path} answered {status} ({label})")
                continue
            if "$ref" in documented:
                name = documented["$ref"].rsplit("/", 1)[1]
                documented = openapi.document()["components"]["responses"][name]
            for name, value in said.items():  # listed, with a value its schema allows
                schema = documented.get("headers", {}).get(name, {}).get("schema")
                if schema is None or not _allows(schema, value):
                    found.append(f"{method.upper()} {path} {status} carries {name}: {value} ({label})")
        return found


# what a client acts on
SAYING_HEADERS = ("Retry-After", "WWW-Authenticate", "x-should-retry", "Sec-WebSocket-Version")
SOCKET_PATHS = ("/ws", "/v1/audio/speech/stream")
FILE_REQUESTS = {
    "a range": {"Range": "bytes=0-0"},
    "unchanged": {"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"},
    "changed": {"If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"},
    "a range past the end": {"Range": "bytes=999999999-"},
}
OLD_WEBSOCKET = {
    "Upgrade": "websocket",
    "Connection": "Upgrade",
    "Sec-WebSocket-Version": "8",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


def _allows(schema: dict[str, Any], value: str) -> bool:
    """A header's text fits its documented schema (an integer's enum, a string's const)."""
    if schema["type"] == "integer":
        return value.isdigit() and int(value) in schema.get("enum", [int(value)])
    return value == schema.get("const", value)


async def test_every_refusal_of_every_route_is_documented(worker, monkeypatch):
    from npu_worker.openai_compat import load_wait

    monkeypatch.setattr(load_wait, "LOAD_WAIT_SECONDS", 0.0)  # the speech routes' answer past their wait
    answers = Answers()
    engine = ToneEngine()
    engine.load_gate = threading.Event()
    client = await worker(engine, wait_loaded=False)
    for path, method, _ in _operations():  # while the engine loads
        await answers.call(client, method, path, "loading")
    engine.load_gate.set()
    await wait_until_loaded(client)
    for path, method, _ in _operations():
        await answers.call(client, method, path, "plain")
        await answers.call(client, method, path, "a disallowed origin", headers=EVIL)
        # (every route: one without an Expect handler of its own was aiohttp's undocumented text/plain 417)
        await answers.call(client, method, path, "a bad Expect", headers={"Expect": "nothing"})
        if method != "post":
            await answers.call(client, method, path, "a body on a GET", data=b"{}")
    upload = aiohttp.FormData()  # the worker's own voice's name: 409 VoiceExists, x-should-retry: false
    upload.add_field("audio_sample", tone_wav(), filename="v.wav", content_type="audio/wav")
    upload.add_field("name", "default")
    upload.add_field("ref_text", "하나")
    await answers.call(client, "post", "/v1/audio/voices", "a voice that exists", data=upload)
    for path in SOCKET_PATHS:  # a version not spoken: the 400 names the one spoken (undocumented before)
        await answers.call(client, "get", path, "a WebSocket version refused", headers=OLD_WEBSOCKET)
    said = [
        (status, headers) for _, _, status, headers, label in answers.seen if label == "a voice that exists"
    ]
    assert said == [(409, {"x-should-retry": "false"})]
    for label, asked in FILE_REQUESTS.items():  # the player's page answers as an HTTP file does
        await answers.call(client, "get", "/", label, headers=asked)
    said_for_files = {label: status for _, _, status, _, label in answers.seen if label in FILE_REQUESTS}
    assert said_for_files == {"a range": 206, "unchanged": 304, "changed": 412, "a range past the end": 416}
    refused = [(status, headers) for _, _, status, headers, label in answers.seen if "version" in label]
    assert refused == [(400, {"Sec-WebSocket-Version": "13"})] * len(SOCKET_PATHS), refused
    assert not answers.undocumented(), answers.undocumented()


async def test_the_routes_that_need_the_token_are_the_documents(worker):
    client = await worker(token=TOKEN)
    answers = Answers()
    document = openapi.document()
    for path, method, operation in _operations():
        answer = await answers.call(client, method, path, "no token")
        needs_token = operation.get("security", document["security"]) != []
        assert (answer.status == 401) == needs_token, (method, path, answer.status)
    assert not answers.undocumented(), answers.undocumented()


async def test_a_full_queue_and_a_shutdown_answer_as_documented(worker, tmp_path):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine, max_queue=2)
    answers = Answers()
    sections = {"sections": [{"text": "먼저."}, {"text": "다음."}], "stream": False}
    waiting = asyncio.ensure_future(
        answers.call(client, "post", "/synth_batch", "at shutdown", json=sections)
    )
    try:
        async with asyncio.timeout(seconds(5)):
            while not engine.calls:
                await asyncio.sleep(0.01)
        job_id = (await (await client.get("/jobs")).json())["jobs"][0]["job_id"]
        await answers.call(client, "get", "/jobs/{job_id}/result", "running", url=f"/jobs/{job_id}/result")
        one = {"text": "가.", "output_path": str(tmp_path / "a.wav")}
        await answers.call(client, "post", "/synth", "queue full", json=one)
        await answers.call(client, "post", "/synth_batch", "queue full", json={"sections": [{"text": "가."}]})
        await answers.call(client, "post", "/v1/audio/speech", "queue full")
        scheduler = client.app[SCHEDULER_KEY]
        drain = asyncio.ensure_future(scheduler.drain(grace=seconds(10)))
        async with asyncio.timeout(seconds(5)):
            while not scheduler.admission.stopping:
                await asyncio.sleep(0.01)
    finally:
        engine.gate.set()  # the running section finishes in the drain; the other waits for the restart
    await drain
    end_streams(client.app)  # as the shutdown does after the drain
    async with asyncio.timeout(seconds(5)):
        shutdown = await waiting
    assert shutdown.status == 202  # the batch's result so far: it resumes at the restart
    statuses = {(path, status) for path, _, status, _, _ in answers.seen}
    assert {("/synth", 429), ("/synth_batch", 429), ("/jobs/{job_id}/result", 202)} <= statuses
    assert not answers.undocumented(), answers.undocumented()


FILE_CONDITIONS = {  # a header a request for the player's page may carry, and the answer it brings
    ("Range", "bytes=0-0"): 206,
    ("Range", "bytes=999999999-"): 416,
    ("Range", "bytes=0-0,2-3"): 200,  # several ranges: ignored, the whole file (one range is served)
    ("Range", "bytes=abc"): 416,  # one that does not parse
    ("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT"): 304,
    ("If-None-Match", "*"): 304,
    ("If-Unmodified-Since", "Thu, 01 Jan 1970 00:00:00 GMT"): 412,
    ("If-Match", '"another"'): 412,
}


async def test_each_file_answer_is_documented_with_the_header_that_brings_it(worker):
    """The player's 412 was documented for `If-Unmodified-Since` only, its 304 for `If-Modified-Since`
    only, and its 416 for a Range past the end only: `If-Match`, `If-None-Match` and a Range that does
    not parse or asks for several bring them too."""
    client = await worker()
    responses = openapi.document()["paths"]["/"]["get"]["responses"]
    for (header, value), status in FILE_CONDITIONS.items():
        response = await client.get("/", headers={header: value})
        assert response.status == status, (header, value, response.status)
        assert f"`{header}`" in responses[str(status)]["description"], (header, status)
