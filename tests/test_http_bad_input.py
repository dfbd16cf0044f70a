"""Bad input never crashes or hangs: each mistake gets its 4xx and the fixed error body; nothing is written."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from tests.tone_engine import ToneEngine


def written_wavs(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.wav") if "state" not in p.parts]


def assert_error_body(body: dict, name: str) -> None:
    assert body["status"] == "fail"
    assert body["error"].startswith(f"{name}: ")
    assert "traceback" in body and "fallback" in body


@pytest.mark.parametrize(
    ("body", "name"),
    [
        (b"{not json", "BadRequest"),
        (b"[1, 2]", "BadRequest"),
        (b"\xff\xfe", "BadRequest"),
        (b'{"text": 5, "output_path": "/tmp/x.wav"}', "BadRequest"),
        (b'{"text": "hi"}', "BadRequest"),
        (b'{"output_path": "/tmp/x.wav"}', "BadRequest"),
        (b'{"text": "   ", "output_path": "OUT"}', "EmptyText"),
        (b'{"text": "hi", "output_path": "OUT", "speed_factor": "fast"}', "BadRequest"),
        (b'{"text": "hi", "output_path": "OUT", "speed_factor": 0}', "BadRequest"),
        (b'{"text": "hi", "output_path": "OUT", "speed_factor": true}', "BadRequest"),
        (b'{"text": "hi", "output_path": "OUT", "lang": 3}', "BadRequest"),
        (b'{"text": "hi", "output_path": "relative/x.wav"}', "OutputPathNotAllowed"),
        (b'{"text": "hi", "output_path": "/etc/x.wav"}', "OutputPathNotAllowed"),
        (b'{"text": "hi", "output_path": "ROOT/../../../etc/x.wav"}', "OutputPathNotAllowed"),
        (b'{"text": "hi", "output_path": "OUT", "ref_wav": "/etc/passwd"}', "RefWavNotAllowed"),
        (b'{"text": "hi", "output_path": "OUT", "ref_wav": "ROOT/missing.wav"}', "RefWavNotAllowed"),
        (b'{"text": "hi", "output_path": "OUT", "ref_wav": "nosuchvoice"}', "UnknownVoice"),
        (b'{"text": "hi", "output_path": "OUT", "ref_wav": "sub/x.wav"}', "RefWavNotAllowed"),
        (b'{"text": "hi", "output_path": "OUT", "ref_wav": "../x.wav"}', "RefWavNotAllowed"),
        (b'{"text": "hi", "output_path": "OUT", "ref_text": "' + "가".encode() * 1001 + b'"}', "BadRequest"),
    ],
)
async def test_bad_synth_requests_are_400_and_write_nothing(worker, tmp_path, body, name):
    client = await worker()
    out = str(tmp_path / "out.wav")
    payload = body.replace(b"OUT", out.encode()).replace(b"ROOT", str(tmp_path).encode())
    response = await client.post("/synth", data=payload, headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert_error_body(await response.json(), name)
    assert written_wavs(tmp_path) == []


async def test_too_long_text_on_synth_is_400(worker, tmp_path):
    client = await worker(max_text_chars=10)
    response = await client.post("/synth", json={"text": "x" * 11, "output_path": str(tmp_path / "a.wav")})
    assert response.status == 400
    assert_error_body(await response.json(), "TextTooLong")


async def test_symlink_escaping_the_roots_is_refused(worker, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    client = await worker()
    response = await client.post(
        "/synth", json={"text": "hi", "output_path": str(tmp_path / "link" / "x.wav")}
    )
    assert response.status == 400
    assert_error_body(await response.json(), "OutputPathNotAllowed")
    assert list(outside.iterdir()) == []


async def test_output_path_that_is_a_directory_is_refused(worker, tmp_path):
    client = await worker()
    response = await client.post("/synth", json={"text": "hi", "output_path": str(tmp_path)})
    assert response.status == 400


async def test_output_path_ending_in_a_slash_names_a_folder_and_is_refused(worker, tmp_path):
    """`/x/a.wav/` resolved to `/x/a.wav`, and the file was written under a name the caller gave as a folder."""
    client = await worker()
    for tail in ("/", "/.", "/.."):
        path = str(tmp_path / "a.wav") + tail
        response = await client.post("/synth", json={"text": "hi", "output_path": path})
        assert response.status == 400, path
        body = await response.json()
        assert_error_body(body, "OutputPathNotAllowed")
        assert "names a directory" in body["error"]
    assert list(tmp_path.glob("*.wav")) == []


async def test_a_nul_byte_in_an_output_path_is_named_as_such(worker, tmp_path):
    """An absolute path with a NUL byte was refused as "output_path must be an absolute path"."""
    client = await worker()
    for where in ("/synth", "/synth_batch"):
        path = str(tmp_path / "a\x00.wav")
        body = (
            {"text": "hi", "output_path": path}
            if where == "/synth"
            else {"sections": [{"text": "hi", "output_path": path}]}
        )
        response = await client.post(where, json=body)
        assert response.status == 400, where
        error = await response.json()
        assert_error_body(error, "OutputPathNotAllowed")
        assert error["error"] == "OutputPathNotAllowed: output_path contains a NUL byte", where
    assert written_wavs(tmp_path) == []


async def test_another_users_home_in_a_path_is_not_expanded(worker, tmp_path):
    """`~root/…` was expanded: the answer ("must be absolute" for a user name that does not exist,
    "outside the allowed roots" for one that does) told a caller which users the machine has."""
    client = await worker()
    said = []
    for user in ("root", "npu_worker_no_such_user"):
        for field in ("output_path", "ref_wav"):
            body = {"text": "hi", "output_path": str(tmp_path / "b.wav"), field: f"~{user}/a.wav"}
            response = await client.post("/synth", json=body)
            assert response.status == 400, (user, field)
            said.append((field, (await response.json())["error"].split(":", 2)[1]))
    assert said[:2] == said[2:]
    assert all("must be an absolute path" in error for _, error in said), said
    assert written_wavs(tmp_path) == []


async def test_output_path_that_is_a_fifo_is_refused_before_any_synthesis(worker, tmp_path):
    engine = ToneEngine()
    client = await worker(engine)
    os.mkfifo(tmp_path / "pipe.wav")
    response = await client.post("/synth", json={"text": "hi", "output_path": str(tmp_path / "pipe.wav")})
    assert response.status == 400
    body = await response.json()
    assert_error_body(body, "OutputPathNotAllowed")
    assert "not a regular file" in body["error"]
    assert engine.requests == []


@pytest.mark.parametrize(
    ("sections", "name"),
    [
        ([], "BadRequest"),
        ("nope", "BadRequest"),
        ([{"idx": 0, "text": "a"}, {"idx": 0, "text": "b"}], "DuplicateIndex"),
        ([{"idx": "0", "text": "a"}], "BadRequest"),
        ([{"idx": -1, "text": "a"}], "BadRequest"),
        ([{"idx": 2**31, "text": "a"}], "BadRequest"),  # above protocol.MAX_INDEX
        ([{"idx": 0}], "BadRequest"),
        ([{"idx": 0, "text": "a", "output_path": "/etc/x.wav"}], "OutputPathNotAllowed"),
        ([{"idx": i, "text": "a"} for i in range(6)], "TooManySections"),
    ],
)
async def test_bad_batches_are_400_and_create_no_job(worker, tmp_path, sections, name):
    client = await worker(max_sections=5)
    response = await client.post("/synth_batch", json={"sections": sections})
    assert response.status == 400
    assert_error_body(await response.json(), name)
    assert (await (await client.get("/jobs")).json())["jobs"] == []


@pytest.mark.parametrize("value", ["maybe", "2", "ja", "%00", "1 "])
async def test_an_async_flag_that_is_not_yes_or_no_is_400_and_creates_no_job(worker, tmp_path, value):
    client = await worker()
    body = {"sections": [{"idx": 0, "text": "a", "output_path": str(tmp_path / "a.wav")}]}
    response = await client.post(f"/synth_batch?async={value}", json=body)
    assert response.status == 400
    assert_error_body(await response.json(), "BadRequest")
    assert "async must be 1 or 0" in (await response.json())["error"]
    assert (await (await client.get("/jobs")).json())["jobs"] == []
    assert written_wavs(tmp_path) == []


@pytest.mark.parametrize(
    ("value", "queued"),
    [("1", True), ("TRUE", True), ("yes", True), ("0", False), ("False", False), ("off", False), ("", False)],
)
async def test_an_async_flag_in_any_documented_spelling_is_understood(worker, tmp_path, value, queued):
    client = await worker()
    body = {"sections": [{"idx": 0, "text": "a", "output_path": str(tmp_path / "a.wav")}], "stream": False}
    response = await client.post(f"/synth_batch?async={value}", json=body)
    assert response.status == 200
    answer = await response.json()
    assert answer["status"] == ("queued" if queued else "ok")


async def test_two_sections_writing_one_file_are_refused(worker, tmp_path):
    """The second would replace the first's audio, and both would be reported ok."""
    client = await worker()
    target = tmp_path / "out" / "same.wav"
    target.parent.mkdir()
    (tmp_path / "alias").symlink_to(target.parent)
    sections = [
        {"idx": 0, "text": "첫째.", "output_path": str(target)},
        {"idx": 1, "text": "둘째.", "output_path": str(tmp_path / "alias" / "same.wav")},  # the same file
    ]
    response = await client.post("/synth_batch", json={"sections": sections, "stream": False})
    assert response.status == 400
    body = await response.json()
    assert_error_body(body, "BadRequest")
    assert f"sections 0 and 1 both write {target}" in body["error"]
    assert not target.exists() and (await (await client.get("/jobs")).json())["jobs"] == []


async def test_batch_with_a_good_and_a_forbidden_path_writes_nothing(worker, tmp_path):
    client = await worker()
    sections = [
        {"idx": 0, "text": "a", "output_path": str(tmp_path / "ok.wav")},
        {"idx": 1, "text": "b", "output_path": "/etc/nope.wav"},
    ]
    response = await client.post("/synth_batch", json={"sections": sections})
    assert response.status == 400
    assert written_wavs(tmp_path) == []


async def test_body_too_large_is_413(worker, tmp_path):
    client = await worker(max_body_bytes=1000)
    response = await client.post("/synth", json={"text": "x" * 2000, "output_path": str(tmp_path / "a.wav")})
    assert response.status == 413
    assert_error_body(await response.json(), "BodyTooLarge")


async def test_unknown_endpoint_and_wrong_method_get_error_bodies(worker):
    client = await worker()
    missing = await client.get("/nope")
    assert missing.status == 404
    wrong = await client.get("/synth")
    assert wrong.status == 405 and wrong.headers["Allow"] == "POST"
    assert (await wrong.json())["status"] == "fail"
    openai = await client.get("/v1/audio/speech")
    assert openai.status == 405 and openai.headers["Allow"] == "POST"


async def test_a_get_of_a_job_points_to_its_status_and_result(worker):
    """`GET /jobs/{id}` (DELETE's route alone) said only `GET is not allowed on /jobs/…`."""
    client = await worker()
    job = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "가."}]})).json()
    path = f"/jobs/{job['job_id']}"
    wrong = await client.get(path)
    assert wrong.status == 405 and wrong.headers["Allow"] == "DELETE"
    said = f"BadRequest: GET is not allowed on {path}: a job's state is GET {path}/status, its result GET {path}/result"
    assert (await wrong.json())["error"] == said
    assert (await client.get(f"{path}/status")).status == 200  # where it points is there
    other = await client.post(path, json={})
    assert (await other.json())["error"] == f"BadRequest: POST is not allowed on {path}"


async def test_token_is_required_when_configured(worker, tmp_path):
    client = await worker(token="s3cret")
    body = {"text": "hi", "output_path": str(tmp_path / "a.wav")}
    denied = await client.post("/synth", json=body)
    assert denied.status == 401
    assert (
        denied.headers["WWW-Authenticate"] == 'Bearer realm="npu-worker"'
    )  # RFC 9110: a 401 names its scheme
    assert_error_body(await denied.json(), "Unauthorized")
    allowed = await client.post("/synth", json=body, headers={"Authorization": "Bearer s3cret"})
    assert allowed.status == 200
    assert (await client.get("/health")).status == 200


async def test_foreign_browser_origin_is_refused_unless_allowed(worker, tmp_path):
    client = await worker()
    foreign = await client.get("/health", headers={"Origin": "https://evil.example"})
    assert foreign.status == 403
    local = await client.get("/health", headers={"Origin": "http://localhost:8080"})
    assert local.status == 200 and local.headers["Access-Control-Allow-Origin"] == "http://localhost:8080"


async def test_a_write_failure_is_an_error_event_and_the_batch_goes_on(worker, tmp_path):
    """A folder replaced by a file after admission fails that section's write only (a path under a file
    from the start, which this test used, is refused at admission since walk10)."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    (tmp_path / "folder").mkdir()
    sections = [
        {"idx": 0, "text": "a", "output_path": str(tmp_path / "folder" / "x.wav")},
        {"idx": 1, "text": "b", "output_path": str(tmp_path / "fine.wav")},
    ]
    posted = asyncio.create_task(client.post("/synth_batch", json={"sections": sections, "stream": False}))
    async with asyncio.timeout(30):
        while not engine.calls:  # admitted: its synthesis began
            await asyncio.sleep(0.01)
    (tmp_path / "folder").rmdir()
    (tmp_path / "folder").write_text("not a directory")
    engine.gate.set()
    result = await (await posted).json()
    assert result["fail_count"] == 1 and result["ok_count"] == 1
    assert result["sections"][0]["error"].startswith("WriteFailed:")
    assert (tmp_path / "fine.wav").exists()


async def test_the_player_page_loads_for_any_origin_but_the_api_stays_guarded(worker):
    client = await worker(allowed_origins=("https://studio.example",))
    own = {"Origin": str(client.make_url("/")).rstrip("/")}
    assert (await client.get("/main.js", headers=own)).status == 200
    assert (await client.get("/health", headers=own)).status == 403
    assert (await client.get("/health", headers={"Origin": "https://studio.example"})).status == 200


async def test_the_player_page_and_its_files_cannot_be_framed_or_sniffed(worker):
    client = await worker()
    for path in ("/", "/index.html", "/main.js", "/socket.worker.js", "/pcm-player.worklet.js", "/style.css"):
        response = await client.get(path)
        assert response.status == 200, path
        headers = response.headers
        assert headers["X-Frame-Options"] == "DENY", path
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert headers["Referrer-Policy"] == "no-referrer", path
        policy = dict(d.strip().split(" ", 1) for d in headers["Content-Security-Policy"].split(";"))
        assert policy["frame-ancestors"] == "'none'", path
        assert policy["default-src"] == "'self'" and policy["base-uri"] == "'none'", path
        assert policy["object-src"] == "'none'", path
        assert {"http:", "https:", "ws:", "wss:"} <= set(policy["connect-src"].split()), path


@pytest.mark.parametrize(
    ("method", "path", "name"),
    [
        ("POST", "/synth_batch?async=0&async=1", "async"),
        ("GET", "/jobs/JOB/events?after=1&after=2", "after"),
        ("GET", "/jobs?token=s3cret&token=s3cret", "token"),
        ("GET", "/jobs/JOB/events?token=s3cret&after=0&token=other", "token"),
    ],
)
async def test_a_query_parameter_given_twice_is_a_400_naming_it(worker, method, path, name):
    """`?after=1&after=2` silently took the first value; every parameter a route reads is read once."""
    client = await worker(token="s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    queued = await client.post("/synth_batch?async=1", json={"sections": [{"text": "a."}]}, headers=auth)
    job_id = (await queued.json())["job_id"]
    body = {"sections": [{"text": "b."}]} if method == "POST" else None
    headers = {} if name == "token" else auth
    response = await client.request(method, path.replace("JOB", job_id), json=body, headers=headers)
    assert response.status == 400
    assert_error_body(await response.json(), "BadRequest")
    error = (await response.json())["error"]
    assert error == f"BadRequest: the query parameter {name} is given 2 times; give it once"
    jobs = await (await client.get("/jobs", headers=auth)).json()
    assert [job["job_id"] for job in jobs["jobs"]] == [job_id]  # a refused batch made no job


async def test_a_token_given_twice_on_an_openai_route_is_a_400_in_openais_shape(worker):
    client = await worker(token="s3cret")
    response = await client.get("/v1/models?token=s3cret&token=s3cret")
    assert response.status == 400
    error = (await response.json())["error"]
    assert "token is given 2 times" in error["message"], error
