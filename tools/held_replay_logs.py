"""Slow readers of a finished job's events, each further apart than the shared copy's linger: how many
copies of its log the worker holds while they wait, and the memory traced meanwhile.

`tools/slow_readers.py --route events` cannot see it: its 300 KB replay lies whole in each connection's
kernel send buffer, so no reader holds a log once it is written. Here the worker runs in this process
(a tone engine, `build_app` as `serve` builds it) with an 8 KiB send buffer on its listening socket, a
batch whose replay is long (each section's output path is 3 750 characters), and the copies' linger cut
to 0.2 s; the readers come 0.6 s apart and read nothing (a 4 KiB receive buffer). Each log held is one
the readers did not share.

    python tools/held_replay_logs.py --readers 8 --sections 400
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import socket
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from npu_worker.app import build_app  # noqa: E402
from npu_worker.app_keys import SCHEDULER_KEY  # noqa: E402
from npu_worker.config import Settings  # noqa: E402
from npu_worker.jobs.model import Job, KeptJob  # noqa: E402
from npu_worker.jobs.shared_copies import SharedCopies  # noqa: E402
from npu_worker.server import listen  # noqa: E402
from tests.tone_engine import ToneEngine  # noqa: E402

LINGER = 0.2  # the copies' linger here; readers come SPACING apart, further than it
SPACING = 0.6


def logs_of(job_id: str) -> set[int]:
    """The logs of `job_id` held in memory, by identity."""
    gc.collect()
    return {id(o.log) for o in gc.get_objects() if isinstance(o, Job) and o.id == job_id and o.log}


async def until(check, what: str, timeout: float = 60.0) -> None:  # noqa: ANN001
    """Poll `check` (no event to await: a socket's bytes, a job's state) until true or `timeout`."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        await asyncio.sleep(0.01)


def answer_begun(client: socket.socket) -> bool:
    try:
        return bool(client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
    except BlockingIOError:
        return False


async def slow_reader(port: int, job_id: str) -> socket.socket:
    """A connection that asks for the job's events and reads nothing once its answer has begun."""
    loop = asyncio.get_running_loop()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.setblocking(False)
    await loop.sock_connect(client, ("127.0.0.1", port))
    await loop.sock_sendall(client, f"GET /jobs/{job_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await until(lambda: answer_begun(client), "the replay to begin")
    return client


async def finished_batch(port: int, folder: Path, sections: int) -> str:
    outputs = folder.joinpath(*["d" * 250] * 15)
    outputs.mkdir(parents=True)
    body = {
        "sections": [
            {"idx": i, "text": "가", "output_path": str(outputs / f"{i}.wav")} for i in range(sections)
        ],
        "stream": False,
    }
    async with aiohttp.ClientSession() as session:
        async with session.post(f"http://127.0.0.1:{port}/synth_batch", json=body) as answer:
            if answer.status != 200:
                raise SystemExit(f"the batch was refused: {await answer.text()}")
            return str((await answer.json())["job_id"])


async def measure(readers: int, sections: int, folder: Path) -> None:
    settings = Settings(state_dir=str(folder / "state"), output_roots=(str(folder),), cache_max_bytes=0)
    app = await asyncio.to_thread(build_app, settings, ToneEngine())
    listener = await listen(app, settings, host="127.0.0.1", port=0)
    clients: list[socket.socket] = []
    try:
        scheduler = app[SCHEDULER_KEY]
        await until(lambda: scheduler.loaded, "the engine to load")
        job_id = await finished_batch(listener.port, folder, sections)
        await until(lambda: isinstance(scheduler.registry.get(job_id), KeptJob), "the job kept as its status")
        listener.server.sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)
        scheduler.copies = SharedCopies(linger=LINGER)
        held_anyway = logs_of(job_id)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(readers):
            clients.append(await slow_reader(listener.port, job_id))
            await asyncio.sleep(SPACING)  # further apart than the linger (the point of the measure)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        held = len(logs_of(job_id) - held_anyway)
        print(
            f"{readers} readers of a {sections}-section batch's events, {SPACING} s apart: {held} logs held, "
            f"{traced / 2**20:.1f} MiB traced while they wait"
        )
    finally:
        for client in clients:
            client.close()
        await listener.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--sections", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="held-replay-") as folder:
        asyncio.run(measure(args.readers, args.sections, Path(folder)))


if __name__ == "__main__":
    main()
