"""What writing a wav over an existing one costs the writing thread (issue 25, stop 64).

A `/synth`'s engine thread writes its wav (`files.write_under_roots`, the worker's one output write)
before it logs `ok`, so the caller waits for that write. This times the call alone, on this process's
thread, as the worker makes it: `--files` wavs of `--bytes` each written once (new names), then
`--writes` more over them in turn (each replacing the one written `--files` writes before, as a
benchmark's `p{i % 50}.wav` or a lecture made again does), `--gap-ms` apart (a quiet disk between
writes, as at 20 req/s). Printed: the new names' and the replacing writes' p50/p90/p95/p99/max in ms,
and the load average. Run the "before" tree by pointing PYTHONPATH at it (both trees have
`write_under_roots`); after each run the folder is removed, and with it every file it held.

    PYTHONPATH=<checkout> python benchmarks/replace_cost.py [--writes 400] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from common import percentiles, report_header, write_report

QS = (50, 90, 95, 99, 100)


def timed_writes(folder: Path, names: list[str], data: bytes, gap_s: float) -> list[float]:
    """ms of each `write_under_roots` call, in the order of `names`."""
    from npu_worker.files import write_under_roots

    roots = (str(folder),)
    times = []
    for name in names:
        started = time.perf_counter()
        write_under_roots(str(folder / name), data, roots)
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(gap_s)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=50, help="distinct names written in turn")
    parser.add_argument("--writes", type=int, default=400, help="writes over an existing file timed")
    parser.add_argument("--bytes", type=int, default=140_000, help="a wav's size (≈ 2.9 s at 24 kHz)")
    parser.add_argument("--gap-ms", type=float, default=20.0, help="quiet after each write (ms)")
    parser.add_argument(
        "--dir", help="the folder's parent (default: the temp dir, as the benchmarks' outputs)"
    )
    parser.add_argument("--out", help="write the report as JSON here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="replace_cost_", dir=args.dir))
    data = os.urandom(args.bytes)
    try:
        new = timed_writes(folder, [f"p{i}.wav" for i in range(args.files)], data, args.gap_ms / 1000)
        names = [f"p{i % args.files}.wav" for i in range(args.writes)]
        replacing = timed_writes(folder, names, data, args.gap_ms / 1000)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    import npu_worker

    report = report_header(
        checkout=str(Path(npu_worker.__file__).resolve().parents[1]),
        loadavg=os.getloadavg(),
        new_ms=percentiles(new, QS),
        replacing_ms=percentiles(replacing, QS),
    )
    print(f"new names ({len(new)}): {report['new_ms']}")
    print(f"replacing ({len(replacing)}): {report['replacing_ms']}")
    write_report(report, args.out, echo=False)


if __name__ == "__main__":
    main()
