"""A section's wav cut short in place while it is sent (`: > out.wav` by the caller's shell, another
writer of the same user): the answer's `Content-Length` was the size when it was opened, the reads
ended early, and the worker ended the answer as if whole on a connection it kept open, so the client
waited for bytes that never came, until the connection's idle timeout. The connection now closes with
the answer, so the client sees the body cut short at once."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

from tests.test_section_audio_ranges import finished_section
from tests.timing import seconds
from tests.tone_engine import ToneEngine


async def test_a_wav_cut_short_while_sent_ends_its_connection(worker):
    client = await worker(ToneEngine(seconds_per_char=30.0))  # 1.4 MB a character: a 10 MB wav
    path, wav = await finished_section(client)
    job_id = path.split("/")[2]
    wav_path = (await (await client.get(f"/jobs/{job_id}/result")).json())["wav_paths"][0]
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the worker's sends wait on this reader
    raw.setblocking(False)
    await asyncio.get_running_loop().sock_connect(raw, ("127.0.0.1", client.port))
    reader, writer = await asyncio.open_connection(sock=raw, limit=4096)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), seconds(10))
    assert f"Content-Length: {len(wav)}".encode() in head, head
    await asyncio.to_thread(os.truncate, Path(wav_path), 1000)  # while most of it is still to be read
    got = 0
    async with asyncio.timeout(seconds(20)):  # (it waited for aiohttp's keepalive_timeout, 75 s)
        while chunk := await reader.read(65536):
            got += len(chunk)
    writer.close()
    assert got < len(wav)  # the body ended short, with the connection: not read as whole
