"""What the espeak child's yield after a listened request's first frame costs or saves, by where its reader
runs: one real child (`python -P -m npu_worker.engine.espeak_child`, the tree on PYTHONPATH) pinned to CPU 0
beside a busy loop on that CPU (another tenant's work, `--no-hog` for none), its reader (as a lane reads it)
pinned to CPU 0 (the lane on the child's core: the case the yield is for) or CPU 1 (on the other core:
the yield can only hand CPU 0 to the busy loop). Prints, per listened request, the ms from the request's
write to its first frame read, to its second, and to its `END` (p50 and p90).

    PYTHONPATH=<tree> python benchmarks/child_yield_cost.py --reader-cpu 1 --requests 300
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from npu_worker.engine.espeak_child import END, READY, REQUEST, read_frame, write_frame

TEXT = "첫 문장은 짧습니다. 두 번째 문장은 조금 더 길어서 여러 조각으로 나뉘어 전해집니다."
WARM_UP = 5  # the first requests (the child's caches warming) are not counted
GAP_SECONDS = 0.02  # between requests: the child idle, so each request's write wakes it


def marks_of_one_request(child: subprocess.Popen[bytes], request_id: int) -> list[float]:
    """Seconds from the request's write to each frame of its answer read back, its `END` last."""
    assert child.stdin is not None and child.stdout is not None
    request = {"id": request_id, "text": TEXT, "lang": "ko", "speed_factor": 1.0, "early_audio": True}
    started, marks = time.perf_counter(), []
    write_frame(child.stdin.fileno(), REQUEST, json.dumps(request).encode())
    while True:
        kind, _ = read_frame(child.stdout)
        marks.append(time.perf_counter() - started)
        if kind == END:
            return marks


def summary(values: list[float]) -> str:
    ranked = sorted(values)
    return f"p50 {statistics.median(ranked):.2f} p90 {ranked[int(0.9 * len(ranked))]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reader-cpu", type=int, choices=(0, 1), default=1)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--no-hog", action="store_true", help="no busy loop beside the child on CPU 0")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.reader_cpu})
    spin = "import os; os.sched_setaffinity(0, {0})\nwhile True: pass"
    hog = None if args.no_hog else subprocess.Popen([sys.executable, "-c", spin])
    child = subprocess.Popen(
        [sys.executable, "-P", "-m", "npu_worker.engine.espeak_child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
    )
    try:
        os.sched_setaffinity(child.pid, {0})
        assert child.stdout is not None and read_frame(child.stdout)[0] == READY
        firsts, seconds, ends = [], [], []
        for request_id in range(1, args.requests + WARM_UP + 1):
            marks = marks_of_one_request(child, request_id)
            if request_id > WARM_UP:
                firsts.append(marks[0] * 1e3)
                seconds.append(marks[1] * 1e3)
                ends.append(marks[-1] * 1e3)
            time.sleep(GAP_SECONDS)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(10)
        if hog is not None:
            hog.kill()
            hog.wait()
    load = open("/proc/loadavg", encoding="ascii").read().split()[0]
    print(
        f"reader on CPU {args.reader_cpu}, ms: first {summary(firsts)} | second {summary(seconds)} | "
        f"end {summary(ends)} | load {load}"
    )


if __name__ == "__main__":
    main()
