"""A reader taking a long request's audio slowly, but all the while, is not dropped for a late pong
(ws_server/pong_wait.py): the ping waits behind the audio sent before it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import time
from pathlib import Path

from npu_worker.ws_server.pong_wait import bytes_acked
from tests.serve_process import ServeProcess
from tests.test_ws_message_deadline import masked_frame, upgrade
from tests.timing import seconds

REPO = Path(__file__).resolve().parent.parent

# The reader takes at most RATE bytes a second, in pieces of CHUNK, all the while. It read a piece after
# each sleep of 2 ms, so its pace was the machine's wake-up latency: ≈ 10 s for the 6.5 MB alone, but
# 13.8 ms a piece under CI's load (175 s for 512-byte pieces), and once past the 120 s bound at the
# start of a CI run (the two longest files' simulators and the a16w8 chain starting, the load average
# not yet risen). Paced by the clock, a late wake-up reads what the pace owes at once. The pong's
# lateness is what the reader has still to take when the ping goes out (≈ 3 MB, the worker's socket
# buffers) over RATE: seconds, against the 1 s a pong may take at `--heartbeat-interval 2`.
CHUNK = 2048
RATE = 1_000_000


class Reading:
    """How far the reader got: said when the request does not end in time."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.received = 0
        self.last_piece = self.started
        self.pcm = 0
        self.pings = 0
        self.events: list[dict] = []

    def __str__(self) -> str:
        now = time.monotonic()
        return (
            f"{self.received} bytes read in {now - self.started:.1f} s, the last {now - self.last_piece:.1f} s "
            f"ago; {self.pcm} bytes of audio, {self.pings} pings answered, events {self.events[-3:]}"
        )


async def read_slowly(sock: socket.socket, reading: Reading) -> tuple[int, list[dict]]:
    """The PCM bytes and events of one request, read a piece at a time at RATE at most, each ping
    answered as read (a browser's or a library's way); ends at `done` or when the connection goes."""
    loop = asyncio.get_running_loop()
    buf = b""

    async def need(size: int) -> bytes:
        nonlocal buf
        while len(buf) < size:
            ahead = reading.received / RATE - (time.monotonic() - reading.started)
            if ahead > 0:
                await asyncio.sleep(ahead)
            piece = await loop.sock_recv(sock, CHUNK)
            if not piece:
                raise EOFError(f"the connection ended: {reading}")
            buf += piece
            reading.received += len(piece)
            reading.last_piece = time.monotonic()
        out, buf = buf[:size], buf[size:]
        return out

    while b"\r\n\r\n" not in buf:  # the handshake's answer
        buf += await loop.sock_recv(sock, CHUNK)
    buf = buf.split(b"\r\n\r\n", 1)[1]
    while True:
        first, size = await need(2)
        size &= 0x7F
        if size >= 126:
            (size,) = struct.unpack("!H" if size == 126 else "!Q", await need(2 if size == 126 else 8))
        data = await need(size)
        opcode = first & 0x0F
        if opcode == 0x2:
            reading.pcm += len(data)
        elif opcode == 0x1:
            reading.events.append(json.loads(data))
            event = reading.events[-1]
            if event["event"] == "done" or (event["event"] == "error" and event["idx"] is None):
                return reading.pcm, reading.events  # a request-level error ends it: no done follows
        elif opcode == 0x9:  # a ping: its pong
            reading.pings += 1
            await loop.sock_sendall(sock, masked_frame(0x8A, data))
        elif opcode == 0x8:
            raise EOFError(f"closed {data!r}: {reading}")


async def test_a_slow_reader_that_reads_all_the_while_is_not_dropped_for_a_late_pong(tmp_path):
    """aiohttp dropped it (1006, no close frame, the request cut) once the pong had not come within half
    a heartbeat interval of the ping, which the reader had not reached yet: walk14 measured a reader of
    235 KB/s (5 × real time) answering its ping 11 s late, behind 4 MB, dropped 15 s into a request
    (with --heartbeat-interval 2: its first ping read 11 s late, behind 2.9 MB, and cut)."""
    args = ["--state-dir", str(tmp_path / "state"), "--heartbeat-interval", "2", "--cache-max-bytes", "0"]
    process = ServeProcess(args, {**os.environ, "PYTHONPATH": str(REPO)})
    text = "첫 번째 문장입니다. 두 번째 문장입니다. 세 번째 문장입니다. " * 24  # 135 s of audio, 6.5 MB
    try:
        # once /ready says so: before, a synth is answered Loading (CI, 2026-12-07: sent 9 ms early); no
        # log line says it ("jobs kept" comes before "engine ready" on an empty state dir)
        await asyncio.to_thread(process.wait_ready, seconds(60))
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the queue is the worker's side
            await upgrade(sock, process.port, "/ws")
            message = json.dumps({"type": "synth", "text": text, "lang": "ko"}).encode()
            await asyncio.get_running_loop().sock_sendall(sock, masked_frame(0x81, message))
            reading = Reading()
            try:
                pcm, events = await asyncio.wait_for(read_slowly(sock, reading), seconds(120))
            except TimeoutError:
                raise AssertionError(
                    f"no done in time: {reading}; the worker's log:\n{process.log()}"
                ) from None
    finally:
        process.kill()
    assert events[-1]["event"] == "done", (process.log(), events[-3:])
    ends = [event["samples"] * 2 for event in events if event["event"] == "audio_end"]
    assert pcm == sum(ends) > 6_000_000 and not events[-1]["cancelled"], (pcm, ends, events[-1])


class _Transport:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def get_extra_info(self, name: str) -> socket.socket | None:
        return self.sock if name == "socket" else None


def test_bytes_acked_counts_what_the_peer_took_and_is_none_off_tcp():
    """The offset read from TCP_INFO is tcpi_bytes_acked: it grows by what was sent and taken (a wrong
    offset read another field, a rate or a count of packets)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        sender = socket.create_connection(server.getsockname())
        receiver, _ = server.accept()
        with sender, receiver:
            before = bytes_acked(_Transport(sender))
            sender.sendall(b"x" * 100_000)
            got = 0
            while got < 100_000:
                got += len(receiver.recv(65536))
            for _ in range(200):  # the last ACK may be delayed (40 ms on Linux)
                after = bytes_acked(_Transport(sender))
                if after is None or before is None or after - before >= 100_000:
                    break
                time.sleep(0.01)
            assert before is not None and after is not None and 100_000 <= after - before <= 100_002
    left, right = socket.socketpair()
    with left, right:
        assert bytes_acked(_Transport(left)) is None and bytes_acked(None) is None
