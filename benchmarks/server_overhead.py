"""What the server adds on top of the engine: CPU per request, TTFA overhead, batch wall time.

One run, one machine: the espeak-ng engine alone in this process, then the same texts through a real
`npu-worker serve` subprocess over `/ws` and `/synth` (open-loop Poisson arrivals at each rate), then the
39 lecture sections as one `/synth_batch`. The server's CPU is read from /proc before and after each
phase, so it counts the whole worker process (event loop, engine thread, executor threads).

- `/ws` TTFA overhead: (send → first PCM frame) minus the engine alone's time until, after the same
  leading-silence trim the server applies, it has made the first frame's 40 ms (what no server with
  the default chunk schedule could send earlier).
- `/synth` overhead: (send → response) minus the engine alone's whole-sentence time.
- CPU overhead per request: the server's CPU per request minus the engine alone's CPU for that text
  (each text run again at once: warm); beside it (`/ws`, since stop 61) the same less the engine alone
  spaced as the arrivals come (`engine_alone.spaced_cpu_ms`: the same texts at the same times, one
  engine), and less the two lanes alone's CPU a request (two engines on the same arrivals, two at once
  where two overlap, as the worker's lanes and their children run);
  and the CPU per request of each of the worker's threads (named by `py-spy dump` when py-spy is
  installed), so the event loop's share and the engine thread's show apart.
- two lanes alone (`/ws` only): the first-frame overhead of two espeak instances on two threads of
  this process, fed the same arrivals just before the server gets them, each to the first free lane,
  with no server, socket or event loop: what the machine's cores and one GIL give the worker's two
  preview lanes, measured rather than modelled.
- one-engine floor: the wait an ideal server that runs one request at a time (first come, first
  served, each taking the engine alone's whole-sentence time) would impose on the same arrivals; the
  part of the overhead tail that no change outside the engine's own speed can remove.
- batch: wall time of the 39-section `/synth_batch` (NDJSON until `done`) over the engine alone on the
  same sections, measured just before each batch (so both see the same machine load); the median ratio.
- start: ms from starting the worker until its `/health` says the engine is loaded.

The engine alone runs the way the engine thread does: `stream_into` (on the calling thread) where the
engine has it, else its `stream` iterator (`engine.path` in the report); `engine_alone.py` measures it.

Run the "before" figures against another checkout by pointing PYTHONPATH at it: the script only uses
the engine factory, Settings and `LeadingSilenceTrimmer`, which both versions have.

    PYTHONPATH=. python benchmarks/server_overhead.py --out benchmarks/results/server_overhead_NAME_DATE.json

A narrower run to bisect one figure (about 40 s instead of 100): `--routes synth --rates 20
--batch-repeats 0` (the report then has no `batch`). `--only-ready N`: the start alone, N times (no
engine alone, no load): each start's ms to a `/health` that says loaded, the worker process's own CPU
then (its main process, the espeak children apart), the children's, and `/health`'s `load_seconds`
(the engine's load: how long it waited on its espeak child). The CPU is what to compare on a busy VM.
The measured checkout's bytecode is written first (`compile_checkout`), as an installed worker has it;
`--source-only` leaves it without (figures before 2026-12-06, stop 55, were taken that way on this VM).
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
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import websockets
from common import LECTURE, compile_checkout, free_port, percentiles, report_header, write_report
from engine_alone import (
    EngineFigures,
    arrival_offsets,
    engine_batch_ms,
    lanes_alone,
    measure_engine,
    single_engine_floor,
    spaced_cpu_ms,
)
from proc_cpu import per_thread, process_cpu_ms, process_cpu_ms_of, thread_cpu_ms


def lecture() -> list[str]:
    return [s["text"] for s in json.loads(LECTURE.read_text(encoding="utf-8"))["sections"]]


def preview_texts() -> list[str]:
    """The first sentence of each lecture section: what a player previews."""
    texts = []
    for text in lecture():
        first = text.replace("?", ".").split(".")[0].strip()
        if first:
            texts.append(first + ".")
    return texts


# -- the server ------------------------------------------------------------------------------------


def code_root() -> Path:
    """The checkout whose `npu_worker` this process imported (PYTHONPATH decides)."""
    import npu_worker

    return Path(npu_worker.__file__).resolve().parents[1]


def start_server(args: argparse.Namespace, port: int, root: Path) -> subprocess.Popen[bytes]:
    """A worker with its state in `root/state` and its outputs in `root/out` (a caller's path may not
    lie inside the state directory)."""
    command = [sys.executable]
    if args.py_spy:  # samples every thread (cProfile would see the event loop's thread only)
        spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        command = [spy, "record", "--threads", "--rate", "250", "-f", "raw", "-o", args.py_spy, "--"]
        command += [sys.executable]
    command += ["-m", "npu_worker.cli", "serve", "--port", str(port), "--state-dir", str(root / "state")]
    cache = str(getattr(args, "cache_max_bytes", 0))  # off unless a caller measures the cache fill
    command += ["--cache-max-bytes", cache, "--output-roots", str(root / "out"), "--log-level", "warning"]
    # `-m` puts the working directory first on sys.path: run in the measured checkout, not this one.
    return subprocess.Popen(command, cwd=code_root(), env={**os.environ, "PYTHONPATH": str(code_root())})


def server_pid(process: subprocess.Popen[bytes]) -> int:
    """The worker's pid: the process itself, or py-spy's child when sampled (the worker's own first
    child is its espeak child, started from its main thread since 2026-12-06, stop 52: not it)."""
    if not str(process.args[0]).endswith("py-spy"):  # type: ignore[index]
        return process.pid
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    found = children.read_text().split() if children.exists() else []
    return int(found[0]) if found else process.pid


class SocketPool:
    """Persistent /ws connections, one request at a time each, opened when all are busy."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.idle: list[Any] = []

    async def take(self) -> Any:
        return self.idle.pop() if self.idle else await websockets.connect(self.url, compression=None)

    def give(self, ws: Any) -> None:
        self.idle.append(ws)

    async def close(self) -> None:
        for ws in self.idle:
            await ws.close()


async def ws_request(pool: SocketPool, text: str) -> float:
    """ms from sending the request to the first binary PCM frame; the socket is reused after `done`."""
    ws = await pool.take()
    started = time.perf_counter()
    await ws.send(json.dumps({"type": "synth", "text": text}))
    first = None
    while True:
        message = await ws.recv()
        if isinstance(message, bytes):
            if first is None:
                first = (time.perf_counter() - started) * 1000
        elif json.loads(message).get("event") == "done":
            break
    pool.give(ws)
    return first if first is not None else float("nan")


async def synth_request(session: aiohttp.ClientSession, base: str, text: str, out: Path) -> float:
    started = time.perf_counter()
    async with session.post(base + "/synth", json={"text": text, "output_path": str(out)}) as response:
        body = await response.json()
    if body.get("status") != "ok":
        raise RuntimeError(f"/synth failed: {body}")
    return (time.perf_counter() - started) * 1000


async def open_loop(
    rate: float, count: int, send: Any, texts: list[str], seed: int
) -> list[tuple[str, float, float]]:
    """Poisson arrivals: each request starts at its scheduled time whatever the earlier ones do.
    Returns (text, the request's ms, when it was sent in seconds from the first arrival's schedule)."""
    tasks, loop_started = [], time.perf_counter()
    for i, offset in enumerate(arrival_offsets(rate, count, seed)):
        delay = loop_started + offset - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        text = texts[i % len(texts)]
        tasks.append((text, time.perf_counter() - loop_started, asyncio.ensure_future(send(text, i))))
    return [(text, await task, sent) for text, sent, task in tasks]


async def ready_ms(session: aiohttp.ClientSession, base: str, spawned: float, limit: float = 60) -> float:
    """ms from starting the worker process until its /health says the engine is loaded (polled every
    5 ms)."""
    while time.perf_counter() - spawned < limit:
        try:
            async with session.get(base + "/health") as response:
                if response.status == 200 and (await response.json()).get("loaded"):
                    return (time.perf_counter() - spawned) * 1000
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.005)
    raise RuntimeError(f"{base}/health did not say loaded within {limit:.0f} s")


async def batch_request(session: aiohttp.ClientSession, base: str, sections: list[str]) -> float:
    body = {"sections": [{"idx": i, "text": t} for i, t in enumerate(sections)]}
    started = time.perf_counter()
    async with session.post(base + "/synth_batch", json=body) as response:
        async for line in response.content:
            event = json.loads(line)
            if event.get("event") == "done":
                if event["ok_count"] != len(sections):
                    raise RuntimeError(f"batch failed: {event}")
                break
    return (time.perf_counter() - started) * 1000


async def measure_server(
    args: argparse.Namespace, engine: EngineFigures, previews: list[str]
) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="server-overhead-"))
    out = root / "out"
    out.mkdir()
    spawned = time.perf_counter()
    server = start_server(args, port, root)
    base = f"http://127.0.0.1:{port}"
    results: dict[str, Any] = {name: {} for name in args.routes}
    try:
        async with aiohttp.ClientSession() as session:
            results["health_ready_ms"] = round(await ready_ms(session, base, spawned), 1)
        pid = server_pid(server)
        pool = SocketPool(f"ws://127.0.0.1:{port}/ws")
        async with aiohttp.ClientSession() as session:
            await synth_request(session, base, previews[0], out / "warm.wav")  # warm-up
            for rate in args.rates:
                count = max(args.min_requests, int(rate * args.seconds))
                for name, send in (
                    ("ws", lambda text, i: ws_request(pool, text)),
                    ("synth", lambda text, i: synth_request(session, base, text, out / f"p{i % 50}.wav")),
                ):
                    if name not in args.routes:
                        continue
                    if name == "ws":  # just before, on the same arrivals: no server, the same load
                        lanes_cpu: list[float] = []
                        alone = await asyncio.to_thread(
                            lanes_alone, previews, rate, count, int(rate), engine.first_audio_ms, 2, lanes_cpu
                        )
                        spaced = await asyncio.to_thread(spaced_cpu_ms, previews, rate, count, int(rate))
                    cpu_before, threads_before = process_cpu_ms(pid), thread_cpu_ms(pid)
                    done = await open_loop(rate, count, send, previews, seed=int(rate))
                    cpu = (process_cpu_ms(pid) - cpu_before) / count
                    threads = per_thread(pid, threads_before, count)
                    reference = engine.first_audio_ms if name == "ws" else engine.whole_ms
                    overheads = [ms - reference[text] for text, ms, _ in done]
                    engine_cpu = statistics.mean(engine.cpu_ms[text] for text, _, _ in done)
                    floor = single_engine_floor([(text, at) for text, _, at in done], engine.whole_ms)
                    results[name][str(rate)] = {
                        "requests": count,
                        "latency_ms": percentiles([ms for _, ms, _ in done]),
                        "overhead_ms": percentiles(overheads),
                        "single_engine_floor_ms": percentiles(floor),
                        **({"two_lanes_alone_overhead_ms": percentiles(alone)} if name == "ws" else {}),
                        "server_cpu_ms_per_request": round(cpu, 2),
                        "engine_cpu_ms_per_request": round(engine_cpu, 2),
                        "cpu_overhead_ms_per_request": round(cpu - engine_cpu, 2),
                        **(
                            {
                                "engine_cpu_spaced_ms_per_request": round(spaced, 2),
                                "cpu_overhead_spaced_ms_per_request": round(cpu - spaced, 2),
                                "engine_cpu_two_lanes_ms_per_request": round(statistics.mean(lanes_cpu), 2),
                                "cpu_overhead_two_lanes_ms_per_request": round(
                                    cpu - statistics.mean(lanes_cpu), 2
                                ),
                            }
                            if name == "ws"
                            else {}
                        ),
                        "thread_cpu_ms_per_request": threads,
                        "loadavg": os.getloadavg(),
                    }
                    print(name, rate, json.dumps(results[name][str(rate)]), flush=True)
            await pool.close()
            walls, engines, cpus, ratios, sections = [], [], [], [], lecture()
            for _ in range(args.batch_repeats):  # engine alone and server in turn: both see the same load
                engines.append(await asyncio.to_thread(engine_batch_ms, sections))
                cpu_before = process_cpu_ms(pid)
                walls.append(await batch_request(session, base, sections))
                cpus.append(process_cpu_ms(pid) - cpu_before)
                ratios.append(walls[-1] / engines[-1])
            if not ratios:  # --batch-repeats 0: the rates only
                return results
            results["batch"] = {
                "sections": len(sections),
                "wall_ms": [round(w, 1) for w in walls],
                "engine_ms": [round(e, 1) for e in engines],
                "wall_over_engine": round(statistics.median(ratios), 3),
                "wall_over_engine_each": [round(r, 3) for r in ratios],
                "server_cpu_ms": [round(c, 1) for c in cpus],
                "loadavg": os.getloadavg(),
            }
            print("batch", json.dumps(results["batch"]), flush=True)
    finally:
        stop_server(server, root)
    return results


def stop_server(server: subprocess.Popen[bytes], root: Path) -> None:
    """SIGINT the worker (a drain), kill it after 30 s, and remove its state dir."""
    os.kill(server_pid(server), signal.SIGINT)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
    shutil.rmtree(root, ignore_errors=True)


async def measure_starts(args: argparse.Namespace) -> dict[str, Any]:
    """`--only-ready`: start the worker `args.only_ready` times, each with a fresh state dir."""
    starts = []
    for _ in range(args.only_ready):
        port, root = free_port(), Path(tempfile.mkdtemp(prefix="server-overhead-"))
        (root / "out").mkdir()
        spawned = time.perf_counter()
        server = start_server(args, port, root)
        base = f"http://127.0.0.1:{port}"
        try:
            async with aiohttp.ClientSession() as session:
                ready = await ready_ms(session, base, spawned)
                pid = server_pid(server)
                worker_cpu = process_cpu_ms_of(Path(f"/proc/{pid}/stat"))
                children_cpu = process_cpu_ms(pid) - worker_cpu
                async with session.get(base + "/health") as response:
                    load_seconds = (await response.json()).get("load_seconds")
        finally:
            stop_server(server, root)
        start = {
            "health_ready_ms": round(ready, 1),
            "worker_cpu_ms": round(worker_cpu),
            "children_cpu_ms": round(children_cpu),
            "load_seconds": load_seconds,
            "loadavg": os.getloadavg(),
        }
        print("start", json.dumps(start), flush=True)
        starts.append(start)
    return {"starts": starts}


def import_time_ms(after: str = "", repeats: int = 5) -> float:
    """Best of `repeats` fresh interpreters importing npu_worker.app (after running `after` first)."""
    best = float("inf")
    timed = "import time; t = time.perf_counter(); import npu_worker.app; print(time.perf_counter() - t)"
    code = f"{after}\n{timed}" if after else timed
    for _ in range(repeats):
        output = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=code_root()
        )
        best = min(best, float(output.stdout) * 1000)
    return round(best, 1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rates", type=float, nargs="+", default=[1.0, 10.0, 20.0, 40.0])
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of arrivals per rate")
    parser.add_argument("--min-requests", type=int, default=10)
    parser.add_argument("--engine-repeats", type=int, default=3)
    parser.add_argument("--batch-repeats", type=int, default=3)
    parser.add_argument(
        "--routes", nargs="+", choices=("ws", "synth"), default=["ws", "synth"], help="which routes to load"
    )
    parser.add_argument("--py-spy", help="run the server under `py-spy record` (raw stacks to this file)")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument(
        "--only-ready", type=int, metavar="N", help="only the start to a ready /health, N times"
    )
    parser.add_argument(
        "--source-only",
        action="store_true",
        help="leave the checkout without bytecode (a worker then compiles its modules at each start)",
    )
    args = parser.parse_args()
    if not args.source_only:
        compile_checkout(code_root())
    if args.only_ready:
        report = {**report_header(), "code": str(code_root()), "cpus": os.cpu_count()}
        report["bytecode"] = not args.source_only
        report.update(asyncio.run(measure_starts(args)))
        write_report(report, args.out, echo=False)
        return
    previews = preview_texts()
    report: dict[str, Any] = {
        **report_header(),
        "code": str(code_root()),
        "cpus": os.cpu_count(),
        "bytecode": not args.source_only,
        "loadavg_start": os.getloadavg(),
        "import_app_ms": import_time_ms(),
        "import_app_own_ms": import_time_ms(after="import aiohttp.web"),  # aiohttp already loaded
    }
    engine = measure_engine(previews, lecture(), args.engine_repeats)
    report["engine"] = {
        "first_audio_ms": percentiles(list(engine.first_audio_ms.values())),
        "whole_sentence_ms": percentiles(list(engine.whole_ms.values())),
        "cpu_ms": percentiles(list(engine.cpu_ms.values())),
        "batch_ms": round(engine.batch_ms, 1),
        "path": engine.path,
    }
    print("engine", json.dumps(report["engine"]), "import_app_ms", report["import_app_ms"], flush=True)
    report.update(asyncio.run(measure_server(args, engine, previews)))
    report["loadavg_end"] = os.getloadavg()
    write_report(report, args.out, echo=False)


if __name__ == "__main__":
    main()
