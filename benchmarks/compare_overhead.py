"""Before/after table from `server_overhead.py` JSON results: the median over repeated runs per figure.

python benchmarks/compare_overhead.py --before b1.json b2.json --after a1.json a2.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def value_at(run: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = run
    for key in path:
        value = value[key]
    return value


def median(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        value = value_at(run, path)
        values.append(value if not isinstance(value, list) else min(value))
    return round(statistics.median(values), 2)


def has(runs: list[dict[str, Any]], *path: str) -> bool:
    try:
        for run in runs:
            value_at(run, path)
    except (KeyError, TypeError):
        return False
    return True


# the engine thread, the preview lane's (since #25) and espeak's own thread (before #25)
ENGINE_THREADS = ("npu-worker-engine", "npu-worker-engine-2", "espeak-owner")
FINISHER = ("npu-worker-finisher",)  # file-only jobs' section ends, beside the engine thread (since #25)
LOOP = ("MainThread",)


def thread_median(runs: list[dict[str, Any]], transport: str, rate: str, names: tuple[str, ...]) -> float:
    """Median over runs of the CPU per request of the named threads together."""
    values = [
        sum(ms for name, ms in run[transport][rate]["thread_cpu_ms_per_request"].items() if name in names)
        for run in runs
    ]
    return round(statistics.median(values), 2)


def table(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    rows = ["| figure | before | after |", "|---|---|---|"]
    both = [*before, *after]

    def row(name: str, *path: str) -> None:
        if has(both, *path):
            rows.append(f"| {name} | {median(before, *path)} | {median(after, *path)} |")

    row("`import npu_worker.app` (ms, best of 5)", "import_app_ms")
    row("... of which not aiohttp's own import (ms)", "import_app_own_ms")
    row("start → /health says loaded (ms)", "health_ready_ms")
    for transport, label in (("ws", "/ws first PCM frame"), ("synth", "/synth response")):
        for rate in before[0][transport]:
            at = f"at {float(rate):g} req/s"
            for stat in ("p50", "p95", "p99"):
                row(f"{label} overhead {stat} (ms) {at}", transport, rate, "overhead_ms", stat)
            row(
                f"{label}: one-engine floor p95 (ms) {at}",
                transport,
                rate,
                "single_engine_floor_ms",
                "p95",
            )
            for stat in ("p50", "p95"):
                row(
                    f"{label}: two lanes alone, no server, {stat} (ms) {at}",
                    transport,
                    rate,
                    "two_lanes_alone_overhead_ms",
                    stat,
                )
            row(f"{label}: server CPU per request (ms) {at}", transport, rate, "server_cpu_ms_per_request")
            row(
                f"{label}: engine alone CPU per request (ms) {at}",
                transport,
                rate,
                "engine_cpu_ms_per_request",
            )
            row(
                f"{label}: server CPU beyond the engine (ms) {at}",
                transport,
                rate,
                "cpu_overhead_ms_per_request",
            )
            if has(both, transport, rate, "thread_cpu_ms_per_request"):
                threads = (ENGINE_THREADS, "engine thread(s)"), (FINISHER, "finisher"), (LOOP, "event loop")
                for names, what in threads:
                    rows.append(
                        f"| {label}: {what} CPU per request (ms) {at} | "
                        f"{thread_median(before, transport, rate, names)} | "
                        f"{thread_median(after, transport, rate, names)} |"
                    )
    row("39-section /synth_batch wall (ms, best run)", "batch", "wall_ms")
    row("39 sections, engine alone (ms, best run)", "batch", "engine_ms")
    row("batch wall / engine (median of runs)", "batch", "wall_over_engine")
    row("batch server CPU (ms, least)", "batch", "server_cpu_ms")
    row("load average (1 min) at the start", "loadavg_start")
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
