"""What one `/ws` peer's write of many small messages does to everyone else on the worker's loop.

Against a running `npu-worker serve --port PORT`: one connection writes N masked 1-byte text frames in
one write (each answered with an `error` event, which it reads), while another client asks `GET /health`
every 10 ms; printed: /health's latency before (max) and during and after the flood (max, median), and
how many answers came. Before `MESSAGES_A_TURN` (ws_server/message_deadline.py) the handler answered
them all in one stretch of the loop, /health waiting the whole time. Figures, not a test: they follow
the machine's load.

    python benchmarks/message_flood.py --port 7768 --messages 37000
"""

from __future__ import annotations

import argparse
import asyncio
import time

HANDSHAKE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
ONE_BYTE_MESSAGE = bytes([0x81, 0x81]) + b"\0\0\0\0" + b"x"  # masked (a zero mask), FIN, text "x"


async def health_latencies(port: int, stop: asyncio.Event, latencies: list[float]) -> None:
    while not stop.is_set():
        started = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await writer.drain()
        await reader.read()
        writer.close()
        latencies.append(time.monotonic() - started)
        await asyncio.sleep(0.01)


async def main(port: int, count: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(HANDSHAKE)
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    stop, latencies = asyncio.Event(), []
    probe = asyncio.create_task(health_latencies(port, stop, latencies))
    await asyncio.sleep(0.5)
    before = len(latencies)
    answers = 0

    async def read_answers() -> None:
        nonlocal answers
        while data := await reader.read(1 << 20):
            answers += data.count(b'"event"')

    reading = asyncio.create_task(read_answers())
    writer.write(ONE_BYTE_MESSAGE * count)
    await writer.drain()
    await asyncio.sleep(max(3.0, count / 5000))
    stop.set()
    await probe
    reading.cancel()
    writer.close()
    during = sorted(latencies[before:])
    print(
        f"{count} messages in one write: /health before max {max(latencies[:before]) * 1000:.0f} ms;"
        f" during and after max {during[-1] * 1000:.0f} ms, median {during[len(during) // 2] * 1000:.0f} ms"
        f" ({len(during)} asked); answers read {answers}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=7768)
    parser.add_argument("--messages", type=int, default=37000)
    args = parser.parse_args()
    asyncio.run(main(args.port, args.messages))
