"""An NDJSON stream writes the lines one wake-up brought in one write (issue 25, stop 60): each line was a
`wait_for` task's turn of the loop and a `send` of its own (a batch section's `ok` and the next one's
`synth` come together). Read on a real socket, HTTP chunk by HTTP chunk (one a write)."""

from __future__ import annotations

import json

from npu_worker.http_compat import ndjson

BURST_BYTES = 64 * 1024  # ndjson.BURST_BYTES: aiohttp's own bound on what a write leaves unsent


async def http_chunks(response) -> list[bytes]:
    """The body as the worker wrote it: one piece an HTTP chunk (aiohttp writes one a `write`)."""
    chunks, piece = [], b""
    async for data, end in response.content.iter_chunks():
        piece += data
        if end and piece:
            chunks.append(piece)
            piece = b""
    if piece:
        chunks.append(piece)
    return chunks


async def finished_batch(client, sections: int) -> tuple[str, list[bytes]]:
    """A batch run to its `done` over a stream: its job id and its lines (heartbeats left out)."""
    body = {"sections": [{"idx": i, "text": f"문장 {i}."} for i in range(sections)]}
    response = await client.post("/synth_batch", json=body)
    lines = [line for line in (await response.read()).splitlines() if b'"heartbeat"' not in line]
    assert json.loads(lines[-1])["event"] == "done"
    return json.loads(lines[0])["job_id"], lines


async def test_a_finished_jobs_events_come_in_one_write(worker):
    client = await worker()
    job_id, streamed = await finished_batch(client, 3)
    chunks = await http_chunks(await client.get(f"/jobs/{job_id}/events"))
    assert b"".join(chunks).splitlines() == streamed  # the same lines, byte for byte, in order
    assert len(chunks) == 1, [chunk.count(b"\n") for chunk in chunks]  # was one write a line (8)


async def test_a_long_replay_is_written_in_bounded_bursts(worker, monkeypatch):
    monkeypatch.setattr(ndjson, "BURST_LINES", 3)
    client = await worker()
    job_id, streamed = await finished_batch(client, 4)  # start, synth and ok a section, done: 10 lines
    chunks = await http_chunks(await client.get(f"/jobs/{job_id}/events?after=1"))
    assert b"".join(chunks).splitlines() == streamed[1:]
    assert [chunk.count(b"\n") for chunk in chunks] == [3, 3, 3]


async def test_a_burst_of_long_lines_is_bounded_in_bytes_too(worker, tmp_path):
    """256 lines of a job whose `wav_path`s are long (a caller picks them: up to a path's 4 096 bytes) were
    one write of up to ≈ 1 MiB, which a slow reader's connection holds whole (aiohttp waits for the socket
    to drain only past 64 KiB, after the write): 16 times what a line at a time held, and a caller may open
    hundreds of such connections."""
    folder = tmp_path / ("d" * 200) / ("e" * 200)
    folder.mkdir(parents=True)
    client = await worker()
    sections = [
        {"idx": i, "text": f"문장 {i}.", "output_path": str(folder / f"{i:03d}{'f' * 200}.wav")}
        for i in range(130)
    ]
    response = await client.post("/synth_batch", json={"sections": sections})
    streamed = [line for line in (await response.read()).splitlines() if b'"heartbeat"' not in line]
    job_id = json.loads(streamed[0])["job_id"]
    chunks = await http_chunks(await client.get(f"/jobs/{job_id}/events"))
    assert b"".join(chunks).splitlines() == streamed
    assert sum(map(len, streamed[:256])) > BURST_BYTES  # (lines of ≈ 800 bytes: 256 of them ≈ 105 KiB)
    over = [
        len(chunk)
        for chunk in chunks
        if len(chunk) - len(chunk.rstrip(b"\n").rsplit(b"\n", 1)[-1]) > BURST_BYTES
    ]
    assert not over, over  # what precedes a write's last line is within the bound (was 107 KiB: 256 lines)
