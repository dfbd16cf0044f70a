"""Scale-out through Redis: sections per second with 1, 2, 4 engine nodes, and what Redis adds.

Every node is a real `npu-worker` process on loopback (this script in `--serve` mode), all sharing one
redis-server started here (no persistence). The engine is a stand-in that MODELS AN NPU: it holds
each section for a fixed time (the host thread waits while the device works, so the host CPU stays
free, as with a real accelerator), then yields a short tone. Nodes therefore compete only for what
the server itself costs (Redis, HTTP, file writes), which is what this benchmark measures.

1. Throughput: one `api` node accepts a batch; N `engine` nodes take its sections. sections/s vs N,
   against the goal N × single-node × 0.9.
2. Per-event latency: one script appends an event; another connection, blocked in XREAD like a
   follower on another node, receives it. p50/p95 of that hop.
3. First audio, with `--queue local`, with `--queue redis` on one `both` node, and split (an `api`
   node and an `engine` node, separate processes on their own Redis database: every chunk and event
   crosses Redis), all running and the requests alternating between them (so all see the same machine
   load); the difference from the local node is what the shared queue adds:
   - `/synth` of one section: send → answer (the file written, `ok` logged);
   - a `/ws` preview of one section: send → the first binary PCM frame on the client (its audio is
     streamed from the engine node as it is made), the `first_audio` figure the server reports, and
     send → `done` (the engine node logs the `ok` of a section with no file itself).

    python benchmarks/scale_out.py --out benchmarks/results/scale_out_DATE.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from common import free_port, listening_port, percentile, report_header, write_report

from npu_worker.engine.base import EngineInfo, SynthesisRequest


class HoldEngine:
    """Models an NPU: each section takes `hold` seconds of device time (a wait on the host)."""

    def __init__(self, hold: float) -> None:
        self.hold = hold

    @property
    def info(self) -> EngineInfo:
        return EngineInfo("npu-standin", "npu-model", "fp32", 24000, f"hold-{self.hold}s")

    def load(self) -> None:
        pass

    def stream(self, request: SynthesisRequest) -> Iterator[np.ndarray]:
        time.sleep(self.hold)
        t = np.arange(int(0.5 * 24000)) / 24000
        yield (0.3 * np.sin(2 * np.pi * 330.0 * t)).astype(np.float32)

    def close(self) -> None:
        pass


def serve(args: argparse.Namespace) -> None:
    from aiohttp import web

    from npu_worker.app import build_app
    from npu_worker.config import Settings

    settings = Settings(
        port=args.port,
        state_dir=args.state_dir,
        output_roots=(str(Path(args.state_dir).parent / "out"),),  # never the state dir itself
        cache_max_bytes=0,
        queue=args.queue,
        role=args.role,
        log_level="warning",
    )
    app = build_app(settings, engine=HoldEngine(args.hold))
    web.run_app(app, host="127.0.0.1", port=args.port, print=None)


def get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def post(url: str, body: Any) -> dict[str, Any]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


class Cluster:
    def __init__(self, work: Path, hold: float) -> None:
        self.work, self.hold = work, hold
        self.processes: list[subprocess.Popen[bytes]] = []
        self.redis_port = free_port()  # redis-server cannot bind port 0 (`--port 0` turns TCP off)
        self.url = f"redis://127.0.0.1:{self.redis_port}/0"

    def start_redis(self) -> None:
        command = ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.work)]
        self.processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL))
        time.sleep(0.3)

    def node(self, name: str, role: str, queue: str | None = None, wait: bool = True) -> int:
        command = [sys.executable, __file__, "--serve", "--port", "0", "--role", role]
        command += [
            "--state-dir",
            str(self.work / name),
            "--queue",
            queue or self.url,
            "--hold",
            str(self.hold),
        ]
        self.processes.append(subprocess.Popen(command))
        port = listening_port(self.processes[-1])  # the port it chose (one picked free may be taken)
        deadline = time.monotonic() + 60
        while wait and time.monotonic() < deadline:
            try:
                if get(f"http://127.0.0.1:{port}/health").get("loaded"):
                    return port
            except OSError:
                pass
            time.sleep(0.1)
        if wait:
            raise SystemExit(f"node {name} did not start")
        return port

    def stop_nodes(self, keep_redis: bool = True) -> None:
        for process in self.processes[1 if keep_redis else 0 :]:
            process.terminate()
            process.wait()
        self.processes = self.processes[:1] if keep_redis else []


def wait_engines(api_port: int, count: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if get(f"http://127.0.0.1:{api_port}/health")["cluster"]["engines_alive"] >= count:
                return
        except (OSError, KeyError):
            pass
        time.sleep(0.1)
    raise SystemExit("engine nodes did not join")


def throughput(cluster: Cluster, engines: int, sections: int) -> float:
    api = cluster.node(f"api{engines}", "api", wait=False)
    for index in range(engines):
        cluster.node(f"engine{engines}-{index}", "engine")
    wait_engines(api, engines)
    body = {"sections": [{"idx": i, "text": f"section {i} of the lecture"} for i in range(sections)]}
    started = time.monotonic()
    job = post(f"http://127.0.0.1:{api}/synth_batch?async=1", body)
    with urllib.request.urlopen(f"http://127.0.0.1:{api}/jobs/{job['job_id']}/events", timeout=120) as stream:
        last = [json.loads(line) for line in stream][-1]
    elapsed = time.monotonic() - started
    assert last["event"] == "done" and last["ok_count"] == sections, last
    cluster.stop_nodes()
    return sections / elapsed


async def event_hop_ms(url: str, count: int) -> list[float]:
    """Append (script) → a blocked XREAD on another connection wakes with it."""
    from npu_worker.jobs.cluster.store import RedisJobs
    from npu_worker.jobs.model import Job, Section
    from npu_worker.protocol import Progress, Start, SynthParams

    writer, reader = RedisJobs(url), RedisJobs(url)
    job = Job("hop", SynthParams(), [Section(0, "x", None)])
    await writer.create(job, "bench", Start(1, "b", "cpu", "hop", 24000), max_queue=10**6, window=0)
    hops, seq = [], 1
    for _ in range(count):
        waiting = asyncio.create_task(reader.read_log("hop", seq, block_ms=5000))
        await asyncio.sleep(0.002)  # the reader is blocked in XREAD, as a follower is
        sent = time.perf_counter()
        seq = await writer.append("hop", Progress(0, "synth"))
        await waiting
        hops.append((time.perf_counter() - sent) * 1000)
    await writer.close()
    await reader.close()
    return hops


def synth_ms(port: int, directory: Path, count: int, first: int = 0) -> list[float]:
    times = []
    for index in range(first, first + count):
        body = {"text": f"first audio {index}", "output_path": str(directory / f"s{index}.wav")}
        started = time.perf_counter()
        answer = post(f"http://127.0.0.1:{port}/synth", body)
        assert answer["status"] == "ok", answer
        times.append((time.perf_counter() - started) * 1000)
    return times


async def ws_first_audio(ports: dict[str, int], count: int) -> dict[str, dict[str, list[float]]]:
    """Alternating /ws previews on each node: send → first PCM frame (client), and `first_audio.ttfa_ms`."""
    import aiohttp

    found: dict[str, dict[str, list[float]]] = {key: {"frame": [], "ttfa": [], "done": []} for key in ports}
    async with aiohttp.ClientSession() as session:
        sockets = {key: await session.ws_connect(f"ws://127.0.0.1:{port}/ws") for key, port in ports.items()}
        for index in range(count):
            for key, ws in sockets.items():
                sent = time.perf_counter()
                await ws.send_json({"type": "synth", "text": f"first audio {index}"})
                while True:
                    message = await ws.receive(timeout=30)
                    if message.type == aiohttp.WSMsgType.BINARY and len(found[key]["frame"]) <= index:
                        found[key]["frame"].append((time.perf_counter() - sent) * 1000)
                    elif message.type == aiohttp.WSMsgType.TEXT:
                        event = json.loads(message.data)
                        if event["event"] == "first_audio":
                            found[key]["ttfa"].append(float(event["ttfa_ms"]))
                        elif event["event"] == "done":
                            assert event["ok_count"] == 1, event
                            found[key]["done"].append((time.perf_counter() - sent) * 1000)
                            break
                    elif message.type != aiohttp.WSMsgType.BINARY:
                        raise SystemExit(f"/ws on the {key} node ended: {message.type}")
        for ws in sockets.values():
            await ws.close()
    return found


def first_audio(cluster: Cluster, work: Path, args: argparse.Namespace, results: dict[str, Any]) -> None:
    """`/synth` and `/ws` on a local node and a one-node Redis cluster, requests alternating."""
    split_queue = cluster.url.rsplit("/", 1)[0] + "/1"  # its own database: the both node takes none of it
    ports = {
        "local": cluster.node("fa-local", "both", queue="local"),
        "redis": cluster.node("fa-redis", "both"),
        "split": cluster.node("fa-split-api", "api", queue=split_queue, wait=False),
    }
    cluster.node("fa-split-engine", "engine", queue=split_queue, wait=False)
    wait_engines(ports["redis"], 1)
    wait_engines(ports["split"], 1)
    for key, port in ports.items():
        synth_ms(port, work / "out" / key, 5)  # warm-up
    times: dict[str, list[float]] = {key: [] for key in ports}
    for index in range(args.synths):
        for key, port in ports.items():
            times[key] += synth_ms(port, work / "out" / key, 1, first=index)
    asyncio.run(ws_first_audio(ports, 5))  # warm-up
    ws = asyncio.run(ws_first_audio(ports, args.synths))
    cluster.stop_nodes()
    for key in ports:
        results[f"synth_ms_{key}"] = summary(times[key])
        results[f"ws_first_frame_ms_{key}"] = summary(ws[key]["frame"])
        results[f"ws_ttfa_ms_{key}"] = summary(ws[key]["ttfa"])
        results[f"ws_done_ms_{key}"] = summary(ws[key]["done"])
    for name, label in (
        ("synth_ms", "/synth send → answer"),
        ("ws_first_frame_ms", "/ws send → first PCM frame"),
        ("ws_done_ms", "/ws send → done"),
    ):
        for key in ports:
            row = results[f"{name}_{key}"]
            print(f"{label}, --queue {key}: p50 {row['p50']} ms, p95 {row['p95']} ms")
    for setup, suffix in (("redis", ""), ("split", "_split")):
        results[f"first_audio_added_ms{suffix}"] = added(results, "synth_ms", times, setup)
        for name, key in (("ws_first_audio", "frame"), ("ws_ttfa", "ttfa"), ("ws_done", "done")):
            source = {"frame": "ws_first_frame_ms", "ttfa": "ws_ttfa_ms", "done": "ws_done_ms"}[key]
            values = {queue: ws[queue][key] for queue in ports}
            results[f"{name}_added_ms{suffix}"] = added(results, source, values, setup)
        for name in (
            "first_audio_added_ms",
            "ws_first_audio_added_ms",
            "ws_ttfa_added_ms",
            "ws_done_added_ms",
        ):
            row = results[name + suffix]
            print(
                f"Redis adds ({name}, {setup}): p50 {row['p50']} ms, p95 {row['p95']} ms;"
                f" paired: p50 {row['paired_p50']} ms, p95 {row['paired_p95']} ms"
            )


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50), "p95": percentile(values, 95), "count": len(values)}


def added(results: dict[str, Any], name: str, values: dict[str, list[float]], setup: str) -> dict[str, float]:
    """The difference of the percentiles of `setup` and the local queue, and the percentiles of the
    paired differences (request i on `setup` minus request i on the local queue, sent one after the other)."""
    pairs = [r - q for q, r in zip(values["local"], values[setup], strict=True)]
    diff = {q: round(results[f"{name}_{setup}"][q] - results[f"{name}_local"][q], 2) for q in ("p50", "p95")}
    return {**diff, "paired_p50": percentile(pairs, 50), "paired_p95": percentile(pairs, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--state-dir", default="", help=argparse.SUPPRESS)
    parser.add_argument("--queue", default="local", help=argparse.SUPPRESS)
    parser.add_argument("--role", default="both", help=argparse.SUPPRESS)
    parser.add_argument("--hold", type=float, default=0.1, help="seconds the stand-in NPU holds a section")
    parser.add_argument("--sections", type=int, default=80, help="sections per throughput run")
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--synths", type=int, default=100, help="/synth and /ws requests per queue")
    parser.add_argument("--skip-throughput", action="store_true", help="only the latency parts")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return
    if shutil.which("redis-server") is None:
        raise SystemExit("needs redis-server (apt-get install redis-server)")
    print(
        f"engine stand-in: models an NPU holding each section {args.hold * 1000:.0f} ms (host thread waits)"
    )
    work = Path(tempfile.mkdtemp(prefix="scale-out-"))
    (work / "out").mkdir()
    cluster = Cluster(work, args.hold)
    results: dict[str, Any] = {
        **report_header(),
        "hold_s": args.hold,
        "sections": args.sections,
        "throughput": {},
    }
    try:
        cluster.start_redis()
        for engines in () if args.skip_throughput else (1, 2, 4):
            rate = throughput(cluster, engines, args.sections)
            results["throughput"][str(engines)] = round(rate, 2)
            single = results["throughput"]["1"]
            print(
                f"{engines} engine node(s): {rate:6.2f} sections/s ({rate / single:.2f} × single; goal ≥ {0.9 * engines:.1f})"
            )
        hops = asyncio.run(event_hop_ms(cluster.url, args.events))
        results["event_hop_ms"] = summary(hops)
        print(
            f"Redis hop per event (append → a blocked reader has it): p50 {percentile(hops, 50)} ms, p95 {percentile(hops, 95)} ms"
        )
        first_audio(cluster, work, args, results)
    finally:
        cluster.stop_nodes(keep_redis=False)
        shutil.rmtree(work, ignore_errors=True)
    write_report(results, args.out, echo=False)


if __name__ == "__main__":
    main()
