"""The cyclic collections a `npu-worker serve` start makes before its `/health` says loaded, counted.

Starts the checkout on PYTHONPATH's `serve` (espeak, `--cache-max-bytes 0`, a fresh state dir) through a
small driver that tells it of every collection (`gc.callbacks`, any thread of the worker's process) and
runs `npu_worker.cli` as `python -m` does; once `/health` says loaded, SIGUSR1 makes the driver write what
it saw. Per start: the collections by generation, their CPU (the collecting thread's `thread_time`), the
worker process's CPU then (its espeak children apart) and its module count. Counts, which a busy VM does
not move; the CPU is the collecting thread's own, so the load moves it less than the wall clock.

    PYTHONPATH=<checkout> python benchmarks/start_collections.py --starts 3
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import compile_checkout, free_port

DRIVER = """
import gc, json, os, runpy, signal, sys, threading, time
seen, began = [], {}
def told(phase, info):
    me = threading.get_ident()
    if phase == "start":
        began[me] = time.thread_time()
    elif me in began:
        seen.append([info["generation"], (time.thread_time() - began.pop(me)) * 1000])
gc.callbacks.append(told)
def write(signum, frame):
    with open(os.environ["START_COLLECTIONS_OUT"], "w") as out:
        json.dump({"collections": seen, "cpu_ms": time.process_time() * 1000, "modules": len(sys.modules)}, out)
signal.signal(signal.SIGUSR1, write)
sys.argv = ["npu_worker.cli", *sys.argv[1:]]
runpy.run_module("npu_worker.cli", run_name="__main__", alter_sys=True)
"""


def code_root() -> Path:
    """The checkout whose `npu_worker` this process imports (PYTHONPATH decides)."""
    import npu_worker

    return Path(npu_worker.__file__).resolve().parents[1]


def loaded(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
            return bool(json.load(answer).get("loaded"))
    except (OSError, ValueError):
        return False


def one_start(root: Path, limit: float) -> dict[str, object]:
    """One start's collections up to a ready `/health`."""
    scratch, port = Path(tempfile.mkdtemp(prefix="start-collections-")), free_port()
    (scratch / "out").mkdir()
    command = [sys.executable, "-c", DRIVER, "serve", "--port", str(port)]
    command += [
        "--state-dir",
        str(scratch / "state"),
        "--cache-max-bytes",
        "0",
        "--output-roots",
        str(scratch / "out"),
        "--log-level",
        "warning",
    ]
    report = scratch / "collections.json"
    env = {**os.environ, "PYTHONPATH": str(root), "START_COLLECTIONS_OUT": str(report)}
    worker = subprocess.Popen(command, cwd=root, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + limit
        while not loaded(port):  # (no event to await from outside: polled, bounded)
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError(f"the worker's /health did not say loaded within {limit:.0f} s")
            time.sleep(0.01)
        os.kill(worker.pid, signal.SIGUSR1)
        while not report.exists() or not report.stat().st_size:
            if time.monotonic() > deadline:
                raise RuntimeError("the driver wrote no report")
            time.sleep(0.01)
        time.sleep(0.05)  # (its one write: whole by now)
        seen = json.loads(report.read_text())
    finally:
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    by_generation: dict[str, list[float]] = {}
    for generation, cpu_ms in seen["collections"]:
        count_and_cpu = by_generation.setdefault(str(generation), [0, 0.0])
        count_and_cpu[0] += 1
        count_and_cpu[1] = round(count_and_cpu[1] + cpu_ms, 2)
    return {
        "collections": by_generation,  # generation: [count, their CPU in ms]
        "collections_cpu_ms": round(sum(cpu for _, cpu in seen["collections"]), 1),
        "worker_cpu_ms": round(seen["cpu_ms"]),
        "modules": seen["modules"],
        "loadavg": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--limit", type=float, default=120.0, help="seconds a start may take")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    root = code_root()
    compile_checkout(root)
    starts = []
    for _ in range(args.starts):
        start = one_start(root, args.limit)
        print("start", json.dumps(start), flush=True)
        starts.append(start)
    if args.out:
        Path(args.out).write_text(json.dumps({"code": str(root), "starts": starts}, indent=1) + "\n")


if __name__ == "__main__":
    main()
