"""Before/after table from `server_overhead.py` JSON results: the median over repeated runs per figure.

python benchmarks/compare_overhead.py --before b1.json b2.json --after a1.json a2.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def median(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value[key]
        values.append(value if not isinstance(value, list) else min(value))
    return round(statistics.median(values), 2)


def table(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    rows = ["| figure | before | after |", "|---|---|---|"]

    def row(name: str, *path: str) -> None:
        rows.append(f"| {name} | {median(before, *path)} | {median(after, *path)} |")

    row("`import npu_worker.app` (ms, best of 5)", "import_app_ms")
    if all("import_app_own_ms" in run for run in (*before, *after)):
        row("... of which not aiohttp's own import (ms)", "import_app_own_ms")
    for transport, label in (("ws", "/ws first PCM frame"), ("synth", "/synth response")):
        for rate in before[0][transport]:
            for stat in ("p50", "p95", "p99"):
                row(
                    f"{label} overhead {stat} (ms) at {float(rate):g} req/s",
                    transport,
                    rate,
                    "overhead_ms",
                    stat,
                )
            row(
                f"{label}: server CPU per request (ms) at {float(rate):g} req/s",
                transport,
                rate,
                "server_cpu_ms_per_request",
            )
            row(
                f"{label}: server CPU beyond the engine (ms) at {float(rate):g} req/s",
                transport,
                rate,
                "cpu_overhead_ms_per_request",
            )
    row("39-section /synth_batch wall (ms, best run)", "batch", "wall_ms")
    row("39 sections, engine alone (ms, best run)", "batch", "engine_ms")
    row("batch wall / engine (median of runs)", "batch", "wall_over_engine")
    row("batch server CPU (ms, least)", "batch", "server_cpu_ms")
    row("load average (1 min) at the batch", "batch", "loadavg")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", nargs="+", required=True)
    parser.add_argument("--after", nargs="+", required=True)
    args = parser.parse_args()
    load = [json.loads(Path(p).read_text(encoding="utf-8")) for p in (*args.before, *args.after)]
    print(table(load[: len(args.before)], load[len(args.before) :]))


if __name__ == "__main__":
    main()
