"""What a `/ws` preview (or a `/synth` call, a speech utterance) costs the worker, counted rather than
timed under load: the event loop's CPU, the engine lanes', the espeak children's, and their syscalls.

A real `npu-worker serve` (as `server_overhead.py` starts it), a warm-up, then N requests one after
another (the lecture's preview sentences in turn): `--route ws` (the default), previews over one `/ws`
connection; `--route synth`, `/synth` calls over one kept-alive HTTP connection, each writing its wav
under the worker's output root and naming its own `seed` (a new cache key: with `--cache-max-bytes`
above 0 every call fills the synthesis cache, as a new sentence does; espeak-ng ignores the seed);
`--route speech`, one-sentence utterances of `WS /v1/audio/speech/stream` over one socket (`input.text`
with the sentence, `input.done`, until `session.done`); `--route openai`, `POST /v1/audio/speech`
calls (`response_format: pcm`, streamed) over one kept-alive connection.
Reported per request, from /proc (10 ms ticks over the whole run): the loop thread's CPU (the worker's
main thread), the engine lanes' (`npu-worker-engine*`, named by `py-spy dump` where it is installed),
the worker's other threads' (finisher, executor; the lanes too without py-spy), the espeak children's,
the worker's in all; the loop thread's sleeps (voluntary context switches: an `epoll_wait` that slept, a
wait for the GIL that did; stop 62), the frames the client received (the sockets), a call's median wall time (HTTP);
with `--strace`, the syscalls by name of each of those groups (`strace -f` on every thread and child,
which slows the worker: its CPU figures are then not comparable).

`--gap-ms G` waits G ms after each request before the next: requests spaced as arrivals at a rate are,
never overlapping. The same work costs more CPU spaced out than back to back (caches and the CPU's
state go cold between requests; the engine alone too), so a server's figure at a rate is compared with
the engine's at the same spacing: `--engine` measures the engine alone in this process afterwards (espeak
on this thread, `stream_into`, as `server_overhead.py` does), the same texts with the same gap, and
reports the worker's CPU beyond it. Sequential requests leave the engine lanes idle between them, so
the figures move far less from run to run than the open-loop rates of `server_overhead.py` do.

    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --previews 300 [--strace] [--gap-ms 50 --engine]
    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --route synth --previews 300 [--strace]
        [--cache-max-bytes 536870912]
    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --route openai --previews 300
    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --cancel-first --previews 150

`--cancel-first` (`/ws`): each preview is every preview sentence in one text, cancelled at its first
binary frame; reports the ms from the `cancel` to the `done` (the lane free again) beside the CPU.

`--beside-batch`: the lecture's 39 sections as one NDJSON `/synth_batch` after another for as long as
the measured requests run, so the engine thread is busy with a queued batch and the previews go to the
preview lane; each engine thread's CPU, its sleeps (voluntary context switches: each wait for work,
for the GIL or for a read that slept, woken once) and, with `--strace`, its `futex` calls are reported
apart, the idle lane's wake-ups for the batch's arrivals and section ends among them.

    PYTHONPATH=<checkout> python benchmarks/loop_cost.py --beside-batch --gap-ms 20 --previews 150 --strace
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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import websockets
from common import free_port, report_header, write_report
from proc_cpu import child_pids, sleeps, thread_cpu_ms, thread_names
from server_overhead import preview_texts, ready_ms, start_server

TRACED = "sendto,recvfrom,read,write,writev,pselect6,select,poll,epoll_wait,futex,getpid,wait4"
TRACED_SYNTH = (
    TRACED
    + ",openat,close,fsync,fdatasync,rename,renameat,renameat2,unlink,unlinkat,newfstatat,fstat,mkdirat,lseek,ioctl,fchmod"
)
GROUPS = ("loop", "lanes", "other_threads", "espeak_children")


async def pause(gap_ms: float) -> None:
    if gap_ms > 0:
        await asyncio.sleep(gap_ms / 1000)


async def sequential(
    url: str,
    opening: list[dict[str, Any]],
    asks: Any,
    last: tuple[str, str],
    count: int,
    gap_ms: float = 0.0,
) -> int:
    """`opening`, then `count` requests one after another over one socket (`asks(i)`: the messages of
    the i-th), each read until a message whose `last[0]` is `last[1]`, then `gap_ms` of quiet; how
    many frames came back."""
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
            await pause(gap_ms)
    return frames


async def previews(port: int, count: int, texts: list[str], gap_ms: float = 0.0) -> int:
    """`count` `/ws` previews one after another; how many frames (text and binary) came back."""
    url = f"ws://127.0.0.1:{port}/ws"
    return await sequential(
        url,
        [],
        lambda i: [{"type": "synth", "text": texts[i % len(texts)]}],
        ("event", "done"),
        count,
        gap_ms,
    )


async def utterances(port: int, count: int, texts: list[str], gap_ms: float = 0.0) -> int:
    """`count` one-sentence utterances one after another on the speech stream socket; frames back."""
    url = f"ws://127.0.0.1:{port}/v1/audio/speech/stream"
    config = [{"type": "session.config", "voice": "default"}]  # answered by session.configured

    def asks(i: int) -> list[dict[str, Any]]:
        return [{"type": "input.text", "text": texts[i % len(texts)]}, {"type": "input.done"}]

    return await sequential(url, config, asks, ("type", "session.done"), count, gap_ms)


async def cancelled_previews(port: int, count: int, texts: list[str], gap_ms: float = 0.0) -> list[float]:
    """`count` `/ws` previews of a long text (every preview sentence in one), each cancelled at its
    first binary frame; each one's ms from sending the `cancel` to its `done`, which the worker sends
    once the lane has left the section (espeak's child stopped and its pipe read to the `END`)."""
    text = " ".join(texts)
    waits = []
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", compression=None, max_size=None) as ws:
        for _ in range(count):
            await ws.send(json.dumps({"type": "synth", "text": text}))
            while not isinstance(await ws.recv(), bytes):
                pass
            await ws.send(json.dumps({"type": "cancel"}))
            cancelled = time.perf_counter()
            while True:
                frame = await ws.recv()
                if isinstance(frame, str) and json.loads(frame).get("event") == "done":
                    waits.append((time.perf_counter() - cancelled) * 1000)
                    break
            await pause(gap_ms)
    return waits


STREAMS = {"ws": previews, "speech": utterances}  # the HTTP routes are CALLS


async def batches_beside(port: int) -> int:
    """The lecture's sections as one NDJSON `/synth_batch` after another until cancelled: the engine
    thread stays busy with a queued batch; how many batches ended."""
    import aiohttp
    from server_overhead import batch_request, lecture

    made, sections = 0, lecture()
    async with aiohttp.ClientSession() as session:
        while True:
            await batch_request(session, f"http://127.0.0.1:{port}", sections)
            made += 1


async def http_calls(
    count: int, send: Callable[[Any, int], Awaitable[None]], gap_ms: float = 0.0
) -> list[float]:
    """`count` calls one after another over one kept-alive connection (`send(session, i)` makes the
    i-th and reads its whole answer); each call's ms from sending to the whole answer."""
    import aiohttp

    times = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as session:
        for i in range(count):
            started = time.perf_counter()
            await send(session, i)
            times.append((time.perf_counter() - started) * 1000)
            await pause(gap_ms)
    return times


async def synth_calls(
    port: int, count: int, texts: list[str], out: Path, first_seed: int, gap_ms: float = 0.0
) -> list[float]:
    """`count` `/synth` calls, seeds from `first_seed` (any answer but `ok` stops the run: a failure
    is no cost figure)."""

    async def send(session: Any, i: int) -> None:
        body = {
            "text": texts[i % len(texts)],
            "output_path": str(out / f"p{i % 50}.wav"),
            "seed": first_seed + i,
        }
        async with session.post(f"http://127.0.0.1:{port}/synth", json=body) as response:
            answer = await response.json()
        if answer.get("status") != "ok":
            raise RuntimeError(f"/synth failed: {answer}")

    return await http_calls(count, send, gap_ms)


async def speech_calls(port: int, count: int, texts: list[str], gap_ms: float = 0.0) -> list[float]:
    """`count` `POST /v1/audio/speech` calls (pcm, streamed as made; anything but a 200 stops the run)."""

    async def send(session: Any, i: int) -> None:
        body = {"input": texts[i % len(texts)], "voice": "default", "response_format": "pcm"}
        async with session.post(f"http://127.0.0.1:{port}/v1/audio/speech", json=body) as response:
            audio = await response.read()
        if response.status != 200 or not audio:
            raise RuntimeError(f"/v1/audio/speech failed: {response.status} {audio[:200]!r}")

    return await http_calls(count, send, gap_ms)


def group_of(tid: int, pid: int, children: set[int], names: dict[int, str]) -> str:
    """Which of GROUPS a thread or child process belongs to."""
    if tid == pid:
        return "loop"
    if tid in children:
        return "espeak_children"
    return "lanes" if names.get(tid, "").startswith("npu-worker-engine") else "other_threads"


def traced_syscalls(trace: Path, group: Callable[[int], str]) -> dict[str, Counter[str]]:
    """Syscalls by name of each group in `strace -f -o` output (a call strace split in two counted once)."""
    calls: dict[str, Counter[str]] = {}
    for line in trace.read_text().splitlines():
        tid, _, rest = line.partition(" ")
        rest = rest.strip()
        if tid.isdigit() and "(" in rest and not rest.startswith(("<...", "---", "+++")):
            calls.setdefault(group(int(tid)), Counter())[rest.split("(", 1)[0]] += 1
    return calls


def engine_alone_cpu_ms(texts: list[str], count: int, gap_ms: float) -> float:
    """The espeak engine alone in this process (`engine_alone.espeak_engine`, `stream_into` on this
    thread), the same `count` texts in turn with the same gap: its CPU a request (thread time)."""
    from engine_alone import espeak_engine, run_engine

    engine = espeak_engine()
    try:
        for text in texts[:5]:  # the server's warm-up's share
            run_engine(engine, text, True, lambda chunk: None)
        spent = 0.0
        for i in range(count):
            started = time.thread_time()
            run_engine(engine, texts[i % len(texts)], True, lambda chunk: None)
            spent += time.thread_time() - started
            if gap_ms > 0:
                time.sleep(gap_ms / 1000)
        return spent * 1000 / count
    finally:
        engine.close()


async def lanes_loaded(pid: int, children: int = 2, timeout: float = 15.0) -> None:
    """Wait until the worker's espeak children (one a lane, 2 by default) have started and gone idle:
    `/health` says loaded once the engine thread's instance is, and a preview lane's child that
    started during the measured requests counted its start-up (≈ 500 reads, ≈ 0.3 s of CPU) as theirs."""
    deadline, last = time.monotonic() + timeout, -1.0
    while time.monotonic() < deadline:
        found = child_pids(pid)
        spent = sum(ms for tid, ms in thread_cpu_ms(pid).items() if tid in found)
        if len(found) >= children and spent == last:
            return
        last = spent
        await asyncio.sleep(0.2)


async def run_requests(
    args: argparse.Namespace, port: int, count: int, texts: list[str], out: Path, first: int
) -> Any:
    if args.route == "synth":
        return await synth_calls(port, count, texts, out, first, args.gap_ms)
    if args.route == "openai":
        return await speech_calls(port, count, texts, args.gap_ms)
    if args.cancel_first:
        return await cancelled_previews(port, count, texts, args.gap_ms)
    return await STREAMS[args.route](port, count, texts, args.gap_ms)


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="loop-cost-"))
    (root / "out").mkdir()
    server = start_server(argparse.Namespace(py_spy=None, cache_max_bytes=args.cache_max_bytes), port, root)
    tracer = None
    streams = args.route in STREAMS
    try:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        texts = preview_texts()
        await lanes_loaded(server.pid)
        quick = argparse.Namespace(**{**vars(args), "gap_ms": 0.0})
        await run_requests(quick, port, args.warmup, texts, root / "out", 0)
        pid = server.pid
        names = thread_names(pid)  # (before strace attaches: py-spy cannot then)
        if args.strace:
            traced = [p.name for p in Path(f"/proc/{pid}/task").iterdir()] + [str(c) for c in child_pids(pid)]
            calls = TRACED_SYNTH if args.route == "synth" else TRACED
            command = [
                "strace",
                "-f",
                "-e",
                f"trace={calls}",
                "-o",
                str(root / "trace"),
                "-p",
                ",".join(traced),
            ]
            tracer = subprocess.Popen(command, stderr=subprocess.DEVNULL)
            await asyncio.sleep(1.0)  # attached
        beside = asyncio.create_task(batches_beside(port)) if args.beside_batch else None
        if beside is not None:
            await asyncio.sleep(0.5)  # the first batch is queued and its sections run
        engine_tids = [tid for tid, name in names.items() if name.startswith("npu-worker-engine")]
        before, slept = thread_cpu_ms(pid), sleeps(pid, [*engine_tids, pid])
        made = await run_requests(args, port, args.previews, texts, root / "out", args.warmup)
        after, children = thread_cpu_ms(pid), set(child_pids(pid))
        woken = sleeps(pid, [*engine_tids, pid])
        if beside is not None:
            beside.cancel()
            await asyncio.gather(beside, return_exceptions=True)
        spent: Counter[str] = Counter()
        for tid, ms in after.items():
            spent[group_of(tid, pid, children, names)] += ms - before.get(tid, 0.0)
        unit = "preview" if args.route == "ws" else "request"
        result: dict[str, Any] = {"route": args.route, "requests": args.previews, "gap_ms": args.gap_ms}
        if args.cancel_first:  # wall times: figures beside the counts, not a claim
            result["cancel_to_done_ms_p50"] = round(statistics.median(made), 2)
            result["cancel_to_done_ms_p90"] = round(statistics.quantiles(made, n=10)[-1], 2)
            result["cancel_to_done_ms_max"] = round(max(made), 2)
        elif streams:
            result[f"frames_per_{unit}"] = round(made / args.previews, 2)
        else:  # the wall time is the VM's: a figure beside the counts, not a claim
            result["call_ms_p50"] = round(statistics.median(made), 2)
        if not names:
            result["lanes"] = "counted with the other threads (py-spy is not installed)"
        for group in GROUPS:
            result[f"{group}_cpu_ms_per_{unit}"] = round(spent[group] / args.previews, 3)
        if names:  # each engine thread apart: the engine thread's and each preview lane's
            result[f"engine_threads_cpu_ms_per_{unit}"] = {
                names[tid]: round((ms - before.get(tid, 0.0)) / args.previews, 3)
                for tid, ms in sorted(after.items())
                if names.get(tid, "").startswith("npu-worker-engine")
            }
            result[f"engine_threads_sleeps_per_{unit}"] = {
                names[tid]: round((woken[tid] - slept[tid]) / args.previews, 2)
                for tid in sorted(woken)
                if tid != pid
            }
        if pid in woken:  # the loop's: each `epoll_wait` that slept, and each wait for the GIL that did
            result[f"loop_sleeps_per_{unit}"] = round((woken[pid] - slept[pid]) / args.previews, 2)
        worker_ms = sum(spent.values()) / args.previews
        result[f"worker_cpu_ms_per_{unit}"] = round(worker_ms, 3)
        if tracer is not None:
            tracer.send_signal(signal.SIGINT)
            tracer.wait(timeout=30)
            tracer = None
            traced_calls = traced_syscalls(root / "trace", lambda tid: group_of(tid, pid, children, names))
            for group in GROUPS:
                result[f"{group}_syscalls_per_{unit}"] = {
                    name: round(n / args.previews, 2)
                    for name, n in sorted(traced_calls.get(group, Counter()).items())
                }
            if names:
                by_thread = traced_syscalls(root / "trace", lambda tid: names.get(tid, "other"))
                result[f"engine_threads_futex_per_{unit}"] = {
                    name: round(calls["futex"] / args.previews, 2)
                    for name, calls in sorted(by_thread.items())
                    if name.startswith("npu-worker-engine")
                }
        result["worker_cpu_ms"] = worker_ms
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
        "--route",
        choices=(*sorted(STREAMS), "synth", "openai"),
        default="ws",
        help="/ws, the speech socket, /synth or POST /v1/audio/speech",
    )
    parser.add_argument("--previews", type=int, default=300, help="requests measured (previews or calls)")
    parser.add_argument(
        "--cache-max-bytes", type=int, default=0, help="the worker's synthesis cache (0: off, as before)"
    )
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--gap-ms", type=float, default=0.0, help="quiet after each request (ms)")
    parser.add_argument(
        "--engine",
        action="store_true",
        help="also the engine alone here, same texts and gap, and the CPU beyond it",
    )
    parser.add_argument(
        "--cancel-first",
        action="store_true",
        help="/ws: previews of a long text, each cancelled at its first binary frame (cancel → done ms)",
    )
    parser.add_argument(
        "--beside-batch",
        action="store_true",
        help="/synth_batch after /synth_batch on the engine thread while the requests run",
    )
    parser.add_argument("--strace", action="store_true", help="count each thread group's syscalls")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    report = {**report_header(), "loadavg_start": os.getloadavg(), **asyncio.run(measure(args))}
    worker_ms = report.pop("worker_cpu_ms")
    if args.engine:
        engine_ms = engine_alone_cpu_ms(preview_texts(), args.previews, args.gap_ms)
        report["engine_alone_cpu_ms_per_request"] = round(engine_ms, 3)
        report["cpu_beyond_the_engine_ms_per_request"] = round(worker_ms - engine_ms, 3)
    report["loadavg_end"] = os.getloadavg()
    write_report(report, args.out)


if __name__ == "__main__":
    main()
