"""Slow readers of a finished job against a real `npu-worker serve`: the worker's RSS while they wait.

Starts the worker (espeak engine; extra `serve` flags after `--`) and makes one finished batch of 1 000
sections of 2 000 characters (8 MiB bodies' worth of text): for `--route audio`, Hangul, cancelled once
section 0 is made (its wav is 2.6 MB); for `--route events`, '…' runs, which espeak finds no speech in
(every section an `error`: a 300 KB replay). Then N connections, `--spacing` seconds apart, each ask for
section 0's wav or the events and read nothing (a 4 KiB receive buffer); the worker's RSS is printed
before and once they all wait. Each waiting answer held the job read whole from its folder (4.2 MiB)
until stop 58.

    python tools/slow_readers.py --route audio --readers 100 --spacing 0.15
    python tools/slow_readers.py --route events --readers 100 --spacing 0.15
    python tools/slow_readers.py --route audio --readers 50 --spacing 0.1 -- --queue redis://127.0.0.1:6379/0
    python tools/slow_readers.py --route result --readers 20

`--route result` times instead N GETs of the finished batch's result (the events job: 1 000 finals),
one after another, each read whole: its median and slowest, and the worker's CPU time for all N.

On a `--queue redis://` node (a redis-server of its own, emptied before each run) a waiting wav answer
held Redis's whole copy of the wav, and an events replay the job read whole from Redis, until stop 58.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_process import ServeProcess  # noqa: E402
from tools.cut_bodies import ready, rss_mib  # noqa: E402

SECTIONS = 1000


def call(port: int, method: str, path: str, body: object = None) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    data = None if body is None else json.dumps(body, ensure_ascii=False).encode()
    connection.request(method, path, data, {"Content-Type": "application/json"})
    answer = json.loads(connection.getresponse().read())
    connection.close()
    return answer


def finished_job(port: int, route: str) -> str:
    """A finished batch's id: one wav made (audio) or every section an `error` (events)."""
    if route == "events":
        body = {"lang": "ko", "stream": False, "sections": [{"text": "…" * 2000}] * SECTIONS}
        return str(call(port, "POST", "/synth_batch", body)["job_id"])
    text = ("가나다라마바사아자차카타파하 " * 150)[:2000]
    body = {"lang": "ko", "sections": [{"text": text}] * SECTIONS}
    job_id = str(call(port, "POST", "/synth_batch?async=1", body)["job_id"])
    while call(port, "GET", f"/jobs/{job_id}/status")["done"] < 1:
        time.sleep(0.05)
    call(port, "DELETE", f"/jobs/{job_id}")
    while call(port, "GET", f"/jobs/{job_id}/status")["status"] not in ("done", "cancelled"):
        time.sleep(0.1)
    return job_id


def slow_readers(port: int, path: str, readers: int, spacing: float) -> list[socket.socket]:
    held = []
    for _ in range(readers):
        reader = socket.socket()
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        reader.connect(("127.0.0.1", port))
        reader.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        held.append(reader)
        time.sleep(spacing)
    return held


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_results(port: int, pid: int, job_id: str, count: int) -> None:
    """`count` GETs of the job's result one after another: each one's time, and the worker's CPU."""
    times, cpu = [], cpu_seconds(pid)
    for _ in range(count):
        began = time.perf_counter()
        call(port, "GET", f"/jobs/{job_id}/result")
        times.append((time.perf_counter() - began) * 1000)
    cpu = cpu_seconds(pid) - cpu
    print(
        f"{count} GETs of the result, one after another: median {statistics.median(times):.1f} ms, "
        f"slowest {max(times):.1f} ms; the worker's CPU {cpu * 1000 / count:.1f} ms a GET"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--route", choices=("audio", "events", "result"), default="audio")
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--spacing", type=float, default=0.15, help="seconds between two readers")
    parser.add_argument("serve_args", nargs="*", help="more `serve` flags (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        process = ServeProcess(["--state-dir", state, *args.serve_args], echo_from="ERROR", cwd=ROOT)
        held: list[socket.socket] = []
        try:
            port = process.port
            while not ready(port):
                time.sleep(0.2)
            job_id = finished_job(port, "events" if args.route == "result" else args.route)
            time.sleep(1)
            if args.route == "result":
                timed_results(port, process.pid, job_id, args.readers)
                return
            before = rss_mib(process.pid)
            print(f"worker pid {process.pid}, job {job_id} finished: RSS {before} MiB")
            path = f"/jobs/{job_id}/sections/0/audio" if args.route == "audio" else f"/jobs/{job_id}/events"
            held = slow_readers(port, path, args.readers, args.spacing)
            time.sleep(3)
            now = rss_mib(process.pid)
            print(
                f"{args.readers} readers of {args.route} that read nothing: RSS {now} MiB (+{now - before})"
            )
        finally:
            for reader in held:
                reader.close()
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
