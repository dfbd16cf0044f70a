"""Client mistakes found at the edge: an unknown `lang` is a 400 before anything queues; error texts say
the fix; /health names the protocol and the package version."""

from __future__ import annotations

import re
from pathlib import Path

from npu_worker import PROTOCOL_VERSION, __version__


async def test_unknown_lang_is_400_before_a_job_exists(worker, tmp_path: Path):
    client = await worker(engine=None)  # the configured backend: espeak-ng, as `serve` runs it
    out = str(tmp_path / "a.wav")
    response = await client.post("/synth", json={"text": "hi", "output_path": out, "lang": "xx-nowhere"})
    assert response.status == 400
    body = await response.json()
    assert body["error"].startswith("UnknownLanguage: ")
    assert "'xx-nowhere'" in body["error"] and " ko," in body["error"]  # says which languages exist
    batch = {"sections": [{"idx": 0, "text": "hi"}], "lang": "xx-nowhere", "stream": False}
    response = await client.post("/synth_batch", json=batch)
    assert response.status == 400
    assert (await response.json())["error"].startswith("UnknownLanguage: ")
    assert (await (await client.get("/jobs")).json())["jobs"] == []
    assert not Path(out).exists()


async def test_known_lang_aliases_are_served(worker, tmp_path: Path):
    client = await worker(engine=None)
    out = str(tmp_path / "a.wav")
    response = await client.post("/synth", json={"text": "Hello.", "output_path": out, "lang": "en_US"})
    assert response.status == 200
    assert (await response.json())["status"] == "ok"


async def test_an_output_path_outside_the_roots_names_the_setting_that_allows_it(worker, tmp_path: Path):
    """The advice is the caller's: it told the caller to "start the worker with --output-roots", which only
    the operator can; it now says to write under a root, or to ask the operator for that setting."""
    client = await worker()
    response = await client.post("/synth", json={"text": "hi", "output_path": "/etc/x.wav"})
    assert response.status == 400
    error = (await response.json())["error"]
    assert error.startswith("OutputPathNotAllowed: ") and "--output-roots" in error
    assert "use a path under one of them, or ask the worker's operator" in error, error
    assert "start the worker" not in error, error


async def test_health_names_the_protocol_and_the_package_version(worker):
    client = await worker()
    body = await (await client.get("/health")).json()
    assert body["version"] == PROTOCOL_VERSION == "v1.0"
    assert body["package_version"] == __version__


async def test_health_names_this_start_of_the_worker(worker):
    """`start_id`: the same at every answer of one start, another for the next start (a restart loaded
    again read as it did before: `bench` could not tell a run across it)."""
    first = await worker()
    said = [(await (await first.get("/health")).json())["start_id"] for _ in range(2)]
    again = (await (await (await worker()).get("/health")).json())["start_id"]
    assert said[0] == said[1] != again and re.fullmatch("[0-9a-f]{16}", said[0]), (said, again)


async def test_unknown_lang_on_the_websocket_is_an_error_event_and_the_connection_stays(worker):
    client = await worker(engine=None)
    async with client.ws_connect("/ws") as ws:
        await ws.send_json({"type": "synth", "text": "hi", "lang": "xx-nowhere"})
        event = await ws.receive_json()
        assert event["event"] == "error" and event["error"].startswith("UnknownLanguage: ")
        await ws.send_json({"type": "synth", "text": "안녕.", "lang": "ko"})  # the next request runs
        kinds = []
        while not kinds or kinds[-1] != "done":
            message = await ws.receive()
            if message.type.name == "TEXT":
                kinds.append(message.json()["event"])
        assert "error" not in kinds
