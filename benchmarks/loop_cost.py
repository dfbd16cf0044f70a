"""The event loop's own cost per `/ws` preview, counted rather than timed under load.

A real `npu-worker serve` (as `server_overhead.py` starts it), a warm-up, then N previews one after
another over one `/ws` connection (the lecture's preview sentences in turn). Reported per preview: the
loop thread's CPU (the worker's main thread, from /proc, 10 ms ticks over the whole run), the worker's
CPU (every thread and the espeak children), the frames the client received, and with `--strace` the
loop thread's syscalls by name (`strace -f -p`, which slows the worker: its CPU figures are then not
comparable). Sequential previews leave the engine lanes idle between requests, so the figures move far
less from run to run than the open-loop rates of `server_overhead.py` do.

    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --previews 300 [--strace]

`--route speech`: the same texts as utterances of `WS /v1/audio/speech/stream` instead (over one socket:
`input.text` with the sentence, `input.done`, until `session.done`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import websockets
from common import free_port, report_header, write_report
from proc_cpu import process_cpu_ms, thread_cpu_ms
from server_overhead import preview_texts, ready_ms, start_server

TRACED = "sendto,recvfrom,read,write,epoll_wait,futex,getpid"


async def sequential(
    url: str, opening: list[dict[str, Any]], asks: Any, last: tuple[str, str], count: int
) -> int:
    """`opening`, then `count` requests one after another over one socket (`asks(i)`: the messages of
    the i-th), each read until a message whose `last[0]` is `last[1]`; how many frames came back."""
    frames = 0
    async with websockets.connect(url, compression=None, max_size=None) as ws:
        for message in opening:
            await ws.send(json.dumps(message))
            await ws.recv()
        for i in range(count):
            for message in asks(i):
                await ws.send(json.dumps(message))
            while True:
                frame = await ws.recv()
                frames += 1
                if isinstance(frame, str) and json.loads(frame).get(last[0]) == last[1]:
                    break
    return frames


async def previews(port: int, count: int, texts: list[str]) -> int:
    """`count` `/ws` previews one after another; how many frames (text and binary) came back."""
    url = f"ws://127.0.0.1:{port}/ws"
    return await sequential(
        url, [], lambda i: [{"type": "synth", "text": texts[i % len(texts)]}], ("event", "done"), count
    )


async def utterances(port: int, count: int, texts: list[str]) -> int:
    """`count` one-sentence utterances one after another on the speech stream socket; frames back."""
    url = f"ws://127.0.0.1:{port}/v1/audio/speech/stream"
    config = [{"type": "session.config", "voice": "default"}]  # answered by session.configured

    def asks(i: int) -> list[dict[str, Any]]:
        return [{"type": "input.text", "text": texts[i % len(texts)]}, {"type": "input.done"}]

    return await sequential(url, config, asks, ("type", "session.done"), count)


ROUTES = {"ws": previews, "speech": utterances}


def loop_syscalls(trace: Path, loop_tid: int) -> Counter[str]:
    """Syscalls of the loop's thread in `strace -f -o` output (a call strace split in two counted once)."""
    calls: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        tid, _, rest = line.partition(" ")
        rest = rest.strip()
        if tid == str(loop_tid) and "(" in rest and not rest.startswith("<..."):
            calls[rest.split("(", 1)[0]] += 1
    return calls


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="loop-cost-"))
    (root / "out").mkdir()
    server = start_server(argparse.Namespace(py_spy=None), port, root)
    tracer = None
    try:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        texts = preview_texts()
        run = ROUTES[args.route]
        await run(port, args.warmup, texts)
        pid = server.pid
        if args.strace:
            tasks = ",".join(p.name for p in Path(f"/proc/{pid}/task").iterdir())
            command = ["strace", "-f", "-e", f"trace={TRACED}", "-o", str(root / "trace"), "-p", tasks]
            tracer = subprocess.Popen(command, stderr=subprocess.DEVNULL)
            await asyncio.sleep(1.0)  # attached
        loop_before, all_before = thread_cpu_ms(pid)[pid], process_cpu_ms(pid)
        frames = await run(port, args.previews, texts)
        loop_ms, all_ms = thread_cpu_ms(pid)[pid] - loop_before, process_cpu_ms(pid) - all_before
        result: dict[str, Any] = {
            "route": args.route,
            "previews": args.previews,
            "frames_per_preview": round(frames / args.previews, 2),
            "loop_cpu_ms_per_preview": round(loop_ms / args.previews, 3),
            "worker_cpu_ms_per_preview": round(all_ms / args.previews, 3),
        }
        if tracer is not None:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=30)
            tracer = None
            calls = loop_syscalls(root / "trace", pid)
            result["loop_syscalls_per_preview"] = {
                name: round(n / args.previews, 2) for name, n in sorted(calls.items())
            }
        return result
    finally:
        if tracer is not None:
            tracer.kill()
        os.kill(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--previews", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--route", choices=sorted(ROUTES), default="ws", help="/ws, or the speech socket")
    parser.add_argument("--strace", action="store_true", help="count the loop thread's syscalls")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    report = {**report_header(), "loadavg_start": os.getloadavg(), **asyncio.run(measure(args))}
    report["loadavg_end"] = os.getloadavg()
    write_report(report, args.out)


if __name__ == "__main__":
    main()
