"""Where the `/ws` and `/synth` tail comes from, request by request (issue 25, stop 59).

`server_overhead.py` measures each request's time and the engine alone's; this splits each request of
the same open-loop Poisson runs (`--rates`, `--seconds` of arrivals each, over `/ws` then `/synth`)
into hops, from the benchmark's send to its first PCM frame (`/ws`) or its response (`/synth`), with
the probes of `tail_hops_probes.py` in the worker and its espeak children (the hops are listed in
`tail_hops_report.py`), and prints, for each route and rate, each hop's median over all requests and
over the slowest 5 %, and its share of the difference; then how many of the slowest and of all met
each candidate cause: a collection in the worker (gen 2 apart) or in its child, a loop callback over
1 ms, a wait in the queue (with a lane idle when it came), the lane off the run queue yet not running
at its first frame (the GIL), and which engine thread took it. In the hops that wait on one thread, the
part that thread was runnable without a core (its schedstat's run-queue wait); each thread's CPU and
run-queue wait a request over each phase, read from /proc by this process.

The worker is `npu-worker serve --cache-max-bytes 0` of the checkout `PYTHONPATH` names (its bytecode
written first, as server_overhead.py does), under this script's `--wrapped DIR`; ten warm-up previews
and a `/synth`, then the notes are cleared and the runs go. The probes cost the worker a clock read
and a call at each hop, two `thread_time` a loop callback, ≈ 6 schedstat reads a preview in the worker
and ≈ 7 in the child (≈ 35 µs each at load 16): compare two checkouts with this script, interleaved,
not its totals with server_overhead.py's. `--raw RAW` keeps the requests and every process's notes
(≈ 1 MB a run); `--from-raw RAW` reads the report from them again, with no run.

    PYTHONPATH=<checkout> python benchmarks/tail_hops.py [--rates 20 40] [--out FILE] [--raw RAW]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import websockets
from common import compile_checkout, free_port, report_header, write_report
from engine_alone import arrival_offsets
from server_overhead import code_root, preview_texts, ready_ms, stop_server
from tail_hops_probes import CHILD_HOOK, wrapped
from tail_hops_report import print_summary, report

WARM_UP = 10


def start_worker(port: int, root: Path, notes: Path) -> subprocess.Popen[bytes]:
    """The worker under the probes; its children find the hook through `PYTHONPATH`."""
    (notes / "sitecustomize.py").write_text(CHILD_HOOK)
    command = [sys.executable, str(Path(__file__).resolve()), "--wrapped", str(notes), "--"]
    command += ["serve", "--port", str(port), "--state-dir", str(root / "state"), "--cache-max-bytes", "0"]
    command += ["--output-roots", str(root / "out"), "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": f"{code_root()}{os.pathsep}{notes}", "TAIL_HOPS_DIR": str(notes)}
    return subprocess.Popen(command, cwd=code_root(), env=env)


def children_of(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def thread_schedstats(pid: int) -> dict[str, tuple[float, float]]:
    """CPU and run-queue wait (ms) so far of each thread of the worker and of its children, by name
    (`espeak-child-PID` for a child's main thread)."""
    found: dict[str, tuple[float, float]] = {}
    for process in (pid, *children_of(pid), os.getpid()):
        for task in Path(f"/proc/{process}/task").iterdir():
            try:
                ran, waited, _ = (task / "schedstat").read_text().split()
            except OSError:
                continue
            key = f"tid-{task.name}" if process == pid else f"espeak-child-{process}"
            key = "loop" if task.name == str(pid) else key
            key = "benchmark" if process == os.getpid() else key
            old = found.get(key, (0.0, 0.0))
            found[key] = (old[0] + int(ran) / 1e6, old[1] + int(waited) / 1e6)
    return found


def per_request(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]], count: int
) -> dict[str, Any]:
    """Each thread's CPU and run-queue wait a request over a phase, in ms (the threads that ran)."""
    found = {}
    for name, (ran, waited) in after.items():
        old = before.get(name, (0.0, 0.0))
        if ran - old[0] > 0.01 * count:
            found[name] = {
                "cpu_ms": round((ran - old[0]) / count, 3),
                "run_queue_ms": round((waited - old[1]) / count, 3),
            }
    return found


def signal_all(pid: int, signum: int) -> list[int]:
    """`signum` to the worker and its espeak children; the children's pids."""
    children = children_of(pid)
    for each in (pid, *children):
        os.kill(each, signum)
    return children


def read_notes(
    notes: Path, children: list[int], limit: float = 30.0
) -> tuple[dict[str, Any], dict[int, Any]]:
    """The notes each process wrote on SIGUSR2, each renamed into place once whole (polled with a
    deadline: a signal's handler in another process has no event to await here)."""
    wanted = [notes / "worker.json", *(notes / f"child-{pid}.json" for pid in children)]
    deadline = time.monotonic() + limit
    while not all(path.exists() for path in wanted):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no notes from {[str(p) for p in wanted if not p.exists()]}")
        time.sleep(0.05)
    worker = json.loads(wanted[0].read_text())
    return worker, {pid: json.loads(path.read_text()) for pid, path in zip(children, wanted[1:], strict=True)}


async def ws_request(pool: list[Any], url: str, text: str) -> dict[str, Any]:
    """The send's and the first PCM frame's `time.monotonic()`, and the job's id (its `start`)."""
    ws = pool.pop() if pool else await websockets.connect(url, compression=None)
    sent = time.monotonic()
    await ws.send(json.dumps({"type": "synth", "text": text}))
    first, job_id = None, None
    while True:
        message = await ws.recv()
        if isinstance(message, bytes):
            first = first or time.monotonic()
            continue
        event = json.loads(message)
        job_id = job_id or event.get("job_id")
        if event.get("event") == "done":
            break
    pool.append(ws)
    return {"sent": sent, "done": first, "job_id": job_id}


async def synth_request(session: aiohttp.ClientSession, base: str, text: str, out: Path) -> dict[str, Any]:
    sent = time.monotonic()
    async with session.post(base + "/synth", json={"text": text, "output_path": str(out)}) as response:
        body = await response.json()
    if body.get("status") != "ok":
        raise RuntimeError(f"/synth failed: {body}")
    return {"sent": sent, "done": time.monotonic(), "output": out.name}


async def synth_to(
    session: aiohttp.ClientSession, base: str, folder: Path, text: str, i: int
) -> dict[str, Any]:
    """A `/synth` of `text` into `folder`'s `i`.wav (its name finds its job in the worker's notes)."""
    folder.mkdir(exist_ok=True)
    return await synth_request(session, base, text, folder / f"{folder.name}-{i}.wav")


async def open_loop(rate: float, count: int, send: Any, texts: list[str]) -> list[dict[str, Any]]:
    """Poisson arrivals (server_overhead.py's, the same seed a rate): each at its time whatever the
    earlier ones do."""
    tasks, started = [], time.perf_counter()
    for i, offset in enumerate(arrival_offsets(rate, count, int(rate))):
        delay = started + offset - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(send(texts[i % len(texts)], i)))
    return [await task for task in tasks]


async def load(
    args: argparse.Namespace, port: int, out: Path, pid: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    base, url, texts, pool = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws", preview_texts(), []
    requests: list[dict[str, Any]] = []
    phases: dict[str, Any] = {}
    async with aiohttp.ClientSession() as session:
        for i in range(WARM_UP):
            await ws_request(pool, url, texts[i])
        await synth_request(session, base, texts[0], out / "warm.wav")
        signal_all(pid, signal.SIGUSR1)
        for rate in args.rates:
            count = max(10, int(rate * args.seconds))
            for route in args.routes:
                before = thread_schedstats(pid)
                if route == "ws":
                    done = await open_loop(rate, count, lambda t, i: ws_request(pool, url, t), texts)
                else:
                    send = functools.partial(synth_to, session, base, out / f"r{rate:g}")
                    done = await open_loop(rate, count, send, texts)
                phases[f"{route}@{rate:g}"] = {
                    "threads": per_request(before, thread_schedstats(pid), count),
                    "loadavg": os.getloadavg(),
                }
                requests += [{**r, "route": route, "rate": rate} for r in done]
                print(
                    route, rate, len(done), "requests:", json.dumps(phases[f"{route}@{rate:g}"]), flush=True
                )
    for ws in pool:
        await ws.close()
    return requests, phases


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="tail-hops-"))
    notes = root / "notes"
    for folder in (root / "out", notes):
        folder.mkdir()
    worker = start_worker(port, root, notes)
    try:
        async with aiohttp.ClientSession() as session:
            await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        loadavg_start = os.getloadavg()
        requests, phases = await load(args, port, root / "out", worker.pid)
        children = signal_all(worker.pid, signal.SIGUSR2)
        worker_notes, children_notes = read_notes(notes, children)
    finally:
        stop_server(worker, root)
    names = {f"tid-{tid}": name for name, tid in worker_notes["thread_ids"].items()}
    for phase in phases.values():
        phase["threads"] = {names.get(key, key): figures for key, figures in phase["threads"].items()}
    if args.raw:
        kept = {"loadavg_start": loadavg_start, "loadavg_end": os.getloadavg(), "phases": phases}
        body = {"requests": requests, "worker": worker_notes, "children": children_notes}
        Path(args.raw).write_text(json.dumps({**body, **kept, "code": str(code_root())}))
    result = report(requests, worker_notes, children_notes)
    for key, phase in phases.items():
        print(key, json.dumps(phase))
    return {"loadavg_start": loadavg_start, "loadavg_end": os.getloadavg(), "phases": phases, **result}


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--wrapped":  # the worker's side
        wrapped(sys.argv[2], sys.argv[4:])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rates", type=float, nargs="+", default=[20.0, 40.0])
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of arrivals per rate and route")
    parser.add_argument("--routes", nargs="+", choices=("ws", "synth"), default=["ws", "synth"])
    parser.add_argument("--out", help="write the report as JSON here")
    parser.add_argument("--raw", help="write the requests and the processes' notes here (JSON)")
    parser.add_argument("--from-raw", help="no run: read the report from a `--raw` file")
    args = parser.parse_args()
    if args.from_raw:
        raw = json.loads(Path(args.from_raw).read_text())
        children = {int(pid): notes for pid, notes in raw["children"].items()}
        result = report(raw["requests"], raw["worker"], children)
        print_summary(result)
        kept = {key: raw[key] for key in ("loadavg_start", "loadavg_end", "phases", "code") if key in raw}
        write_report({**report_header(from_raw=args.from_raw), **kept, **result}, args.out, echo=False)
        return
    compile_checkout(code_root())
    result = asyncio.run(measure(args))
    print_summary(result)
    write_report(
        {**report_header(), "code": str(code_root()), "rates": args.rates, **result}, args.out, echo=False
    )


if __name__ == "__main__":
    main()
