"""The v1 HTTP/NDJSON contract on a real socket, with the tone test engine: a job by its id, `/jobs/{id}/…`
(its events replayed and followed, its result, its sections' audio, its cancel)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from npu_worker.app_keys import SCHEDULER_KEY
from tests.test_http_api import read_ndjson
from tests.timing import seconds, until
from tests.tone_engine import ToneEngine


async def test_events_replay_after_n_then_follow_until_done(worker):
    client = await worker()
    sections = [{"idx": i, "text": f"s{i}."} for i in range(3)]
    full = await read_ndjson(await client.post("/synth_batch", json={"sections": sections}))
    job_id = full[0]["job_id"]
    replay = await read_ndjson(await client.get(f"/jobs/{job_id}/events?after=2"))
    assert replay == full[2:]


async def test_a_head_of_the_events_answers_headers_only_and_the_connection_stays_in_step(served):
    """HEAD is routed with every GET: on `/jobs/{id}/events` it wrote the job's lines after the head
    (a HEAD answer has no body, so a kept-alive client read them as its next answer) and, for a running
    job, held the connection until the job's end."""
    engine = ToneEngine()
    engine.gate = threading.Event()  # the job stays running: HEAD must not wait for its end
    listener = await served(engine)
    reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
    try:
        body = json.dumps({"sections": [{"idx": 0, "text": "a."}]}).encode()
        writer.write(b"POST /synth_batch?async=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        writer.write(b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        async with asyncio.timeout(seconds(10)):
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            job_id = json.loads(await reader.readexactly(length))["job_id"]
            writer.write(f"HEAD /jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and b"application/x-ndjson" in head
            writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert (await reader.readuntil(b"\r\n")).startswith(b"HTTP/1.1 200")  # the next answer's
    finally:
        engine.gate.set()
        writer.close()


async def attached(client, job_id: str) -> None:  # noqa: ANN001
    """Until a listener follows the running job `job_id` live (a sleep let a late one replay the log)."""
    admission = client.app[SCHEDULER_KEY].admission
    await until(
        lambda: (job := admission.live_job(job_id)) is not None and job.subscribers, "a live listener"
    )


async def test_events_after_a_seq_not_yet_logged_skips_the_live_lines_up_to_it(worker):
    """A client that saw seq 1..N (say from another node) re-attaches with `after=N` while the log holds
    fewer: the live lines up to N are not sent again."""
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    sections = [{"idx": i, "text": f"s{i}."} for i in range(3)]
    job_id = (await (await client.post("/synth_batch?async=1", json={"sections": sections})).json())["job_id"]
    events = asyncio.ensure_future(client.get(f"/jobs/{job_id}/events?after=4"))
    await attached(client, job_id)  # while the log holds only `start`
    engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        lines = await read_ndjson(await events)
    assert [line["seq"] for line in lines] == list(range(5, lines[-1]["seq"] + 1))
    assert lines[-1]["event"] == "done"


async def test_events_after_past_a_live_done_ends_the_stream(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    job_id = (
        await (
            await client.post("/synth_batch?async=1", json={"sections": [{"idx": 0, "text": "a."}]})
        ).json()
    )["job_id"]
    events = asyncio.ensure_future(client.get(f"/jobs/{job_id}/events?after=50"))
    await attached(client, job_id)
    engine.gate.set()
    async with asyncio.timeout(seconds(10)):
        assert await read_ndjson(await events) == []


async def test_delete_cancels_the_sections_not_yet_started(worker):
    engine = ToneEngine()
    engine.gate = threading.Event()
    client = await worker(engine)
    response = await client.post(
        "/synth_batch?async=1", json={"sections": [{"idx": i, "text": "abc."} for i in range(5)]}
    )
    job_id = (await response.json())["job_id"]
    cancel = await client.delete(f"/jobs/{job_id}")
    assert cancel.status == 200
    engine.gate.set()
    events = await read_ndjson(await client.get(f"/jobs/{job_id}/events"))
    assert events[-1]["event"] == "done" and events[-1]["cancelled"] is True
    assert events[-1]["ok_count"] < 5
    result = await client.get(f"/jobs/{job_id}/result")
    assert result.status == 200 and (await result.json())["status"] == "cancelled"


async def test_unknown_job_is_404(worker):
    client = await worker()
    for path in ("/jobs/nope/status", "/jobs/nope/result", "/jobs/nope/events", "/jobs/../etc"):
        response = await client.get(path)
        assert response.status == 404, path
    assert (await client.delete("/jobs/nope")).status == 404


async def test_a_section_index_in_the_audio_url_is_read_as_written(worker):
    """One URL per section: `+0`, `00`, ` 0`, `0_0` or an Arabic-Indic zero are not section 0. The refusal
    says what the index must be: `-1` was told "must be an integer", which it is (and eleven digits are no idx either)."""
    client = await worker()
    body = {"sections": [{"idx": 0, "text": "a."}], "stream": False}
    job_id = (await (await client.post("/synth_batch", json=body)).json())["job_id"]
    assert (await client.get(f"/jobs/{job_id}/sections/0/audio")).status == 200
    for written in ("+0", "00", "-0", "-1", "12345678901", "%200", "0_0", "%D9%A0"):
        response = await client.get(f"/jobs/{job_id}/sections/{written}/audio")
        assert response.status == 400, written
        assert (
            (await response.json())["error"]
            == "BadRequest: the section index must be a section's idx in plain digits: 0, 1, 2 and on, at most 10 digits, with no sign or leading zero"
        )


async def test_a_section_the_job_does_not_have_is_said_so(worker):
    """`/sections/5/audio` of a two-section job said "no audio for section 5", as for a section not made
    yet: a caller's wrong index read as a wait."""
    client = await worker()
    body = {"sections": [{"idx": 0, "text": "a."}, {"idx": 1, "text": "b."}], "stream": False}
    job_id = (await (await client.post("/synth_batch", json=body)).json())["job_id"]
    response = await client.get(f"/jobs/{job_id}/sections/5/audio")
    assert response.status == 404
    assert (await response.json())["error"] == f"AudioNotFound: job {job_id} has no section 5"
    assert (await client.get(f"/jobs/{job_id}/sections/1/audio")).status == 200


def held_for_sending(client) -> int:
    """Bytes the server holds for its open connections, not yet taken by the clients."""
    handlers = client.server.runner.server.connections
    return sum(h.transport.get_write_buffer_size() for h in handlers if h.transport is not None)


async def test_a_section_wav_goes_out_in_pieces_to_callers_that_do_not_read(worker):
    """The wav was read whole and handed to the socket for each caller: a caller that never reads
    kept it all in the worker's memory (40 callers of a 28 MB section: 2 GB)."""
    client = await worker(ToneEngine(seconds_per_char=0.1))
    body = {"sections": [{"text": "가" * 2000}], "speed_factor": 0.25, "stream": False}
    job_id = (await (await client.post("/synth_batch", json=body)).json())["job_id"]
    size = int((await client.head(f"/jobs/{job_id}/sections/0/audio")).headers["Content-Length"])
    assert size > 30_000_000
    loop = asyncio.get_running_loop()
    request = b"GET /jobs/%s/sections/0/audio HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % job_id.encode()
    readers = []
    for _ in range(2):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.setblocking(False)
        await loop.sock_connect(reader, (client.host, client.port))
        await loop.sock_sendall(reader, request)
        readers.append(reader)
    try:
        await asyncio.sleep(seconds(1))  # every answer written as far as the sockets take it
        assert held_for_sending(client) < 2 * 1024 * 1024
    finally:
        for reader in readers:
            reader.close()
    whole = await client.get(f"/jobs/{job_id}/sections/0/audio")
    assert len(await whole.read()) == size


@pytest.mark.parametrize("after", ["1_000", " 1", "+1", "-1", "١", "1e3", "9" * 30, "1" + "0" * 19, ""])
async def test_events_after_must_be_a_plain_decimal_seq(worker, after):
    client = await worker()
    job = await (await client.post("/synth_batch?async=1", json={"sections": [{"text": "가."}]})).json()
    response = await client.get(f"/jobs/{job['job_id']}/events", params={"after": after})
    assert response.status == 400
    said = (await response.json())["error"]
    assert said.startswith("BadRequest: after must be")
    if after.isascii() and after.isdigit():  # it said `a non-negative decimal integer`, which 30 digits are
        assert said == f"BadRequest: after must be at most 18 digits (a seq), not {len(after)}"
