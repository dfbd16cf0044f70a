"""The event loop's own cost per `/ws` preview or `/synth` call, counted rather than timed under load.

A real `npu-worker serve` (as `server_overhead.py` starts it), a warm-up, then N requests one after
another (the lecture's preview sentences in turn): `--route ws` (the default), previews over one `/ws`
connection; `--route synth`, `/synth` calls over one kept-alive HTTP connection, each writing its wav
under the worker's output root and naming its own `seed` (a new cache key: with `--cache-max-bytes`
above 0 every call fills the synthesis cache, as a new sentence does; espeak-ng ignores the seed).
Reported per request: the loop thread's CPU (the worker's main thread, from /proc, 10 ms ticks over
the whole run), the worker's other threads' (engine lanes, finisher, executor), the espeak children's,
the worker's in all, the frames the client received (`/ws`), and with `--strace` the loop thread's
syscalls by name and, for `/synth`, the other threads' too (`strace -f -p`, which slows the worker: its
CPU figures are then not comparable). Sequential requests leave the engine lanes idle between them, so
the figures move far less from run to run than the open-loop rates of `server_overhead.py` do.

    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --previews 300 [--strace]
    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --route synth --previews 300 [--strace]
        [--cache-max-bytes 536870912]

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
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import websockets
from common import free_port, report_header, write_report
from proc_cpu import child_pids, process_cpu_ms, thread_cpu_ms
from server_overhead import preview_texts, ready_ms, start_server

TRACED = "sendto,recvfrom,read,write,epoll_wait,futex,getpid"
TRACED_SYNTH = (
    TRACED
    + ",openat,close,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,newfstatat,fstat,mkdirat,lseek,ioctl,fchmod"
)


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


STREAMS = {"ws": previews, "speech": utterances}  # `--route synth` is synth_calls


async def synth_calls(port: int, count: int, texts: list[str], out: Path, first_seed: int) -> list[float]:
    """`count` `/synth` calls one after another over one connection, seeds from `first_seed`; each
    call's ms from sending to the whole answer (any answer but `ok` stops the run: a failure is no
    cost figure)."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=1)
    times = []
    async with aiohttp.ClientSession(connector=connector) as session:
        for i in range(count):
            started = time.perf_counter()
            body = {
                "text": texts[i % len(texts)],
                "output_path": str(out / f"p{i % 50}.wav"),
                "seed": first_seed + i,
            }
            async with session.post(f"http://127.0.0.1:{port}/synth", json=body) as response:
                answer = await response.json()
            times.append((time.perf_counter() - started) * 1000)
            if answer.get("status") != "ok":
                raise RuntimeError(f"/synth failed: {answer}")
    return times


def loop_syscalls(trace: Path, loop_tid: int, others: bool = False) -> Counter[str]:
    """Syscalls of the loop's thread in `strace -f -o` output (a call strace split in two counted once);
    `others`: those of every other traced thread instead."""
    calls: Counter[str] = Counter()
    for line in trace.read_text().splitlines():
        tid, _, rest = line.partition(" ")
        rest = rest.strip()
        if (tid == str(loop_tid)) != others and "(" in rest and not rest.startswith("<..."):
            calls[rest.split("(", 1)[0]] += 1
    return calls


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="loop-cost-"))
    (root / "out").mkdir()
    server = start_server(argparse.Namespace(py_spy=None, cache_max_bytes=args.cache_max_bytes), port, root)
    tracer = None
    synth = args.route == "synth"
    try:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        texts = preview_texts()
        if synth:
            await synth_calls(port, args.warmup, texts, root / "out", 0)
        else:
            await STREAMS[args.route](port, args.warmup, texts)
        pid = server.pid
        if args.strace:
            tasks = ",".join(p.name for p in Path(f"/proc/{pid}/task").iterdir())
            traced = TRACED_SYNTH if synth else TRACED
            command = ["strace", "-f", "-e", f"trace={traced}", "-o", str(root / "trace"), "-p", tasks]
            tracer = subprocess.Popen(command, stderr=subprocess.DEVNULL)
            await asyncio.sleep(1.0)  # attached
        threads_before, all_before = thread_cpu_ms(pid), process_cpu_ms(pid)
        if synth:
            times = await synth_calls(port, args.previews, texts, root / "out", args.warmup)
        else:
            frames = await STREAMS[args.route](port, args.previews, texts)
        threads, all_ms = thread_cpu_ms(pid), process_cpu_ms(pid) - all_before
        children = set(child_pids(pid))
        spent = {tid: ms - threads_before.get(tid, 0.0) for tid, ms in threads.items()}
        loop_ms = spent[pid]
        children_ms = sum(ms for tid, ms in spent.items() if tid in children)
        unit = "call" if synth else "preview"
        result: dict[str, Any] = {"route": args.route, "requests": args.previews}
        if synth:  # the wall time is the busy VM's: a figure beside the counts, not a claim
            result["call_ms_p50"] = round(statistics.median(times), 2)
        else:
            result["frames_per_preview"] = round(frames / args.previews, 2)
        result |= {
            f"loop_cpu_ms_per_{unit}": round(loop_ms / args.previews, 3),
            f"other_threads_cpu_ms_per_{unit}": round((all_ms - loop_ms - children_ms) / args.previews, 3),
            f"espeak_children_cpu_ms_per_{unit}": round(children_ms / args.previews, 3),
            f"worker_cpu_ms_per_{unit}": round(all_ms / args.previews, 3),
        }
        if tracer is not None:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=30)
            tracer = None
            for key, others in (("loop", False), ("other_threads", True)) if synth else (("loop", False),):
                calls = loop_syscalls(root / "trace", pid, others)
                result[f"{key}_syscalls_per_{unit}"] = {
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
    parser.add_argument(
        "--route", choices=(*sorted(STREAMS), "synth"), default="ws", help="/ws, the speech socket or /synth"
    )
    parser.add_argument("--previews", type=int, default=300, help="requests measured (previews or calls)")
    parser.add_argument(
        "--cache-max-bytes", type=int, default=0, help="the worker's synthesis cache (0: off, as before)"
    )
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--strace", action="store_true", help="count the loop thread's syscalls")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    report = {**report_header(), "loadavg_start": os.getloadavg(), **asyncio.run(measure(args))}
    report["loadavg_end"] = os.getloadavg()
    write_report(report, args.out)


if __name__ == "__main__":
    main()
