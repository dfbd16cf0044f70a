"""benchmarks/tail_hops_report.py's figures read from requests' hops: each hop's own p95 over all requests
(which hop has the p95) and `to_lane`'s part off the run queue (the woken lane on a core, or asleep on the
GIL), stop 64. Read by the section "2026-12-08 (stop 64): the `/ws` first PCM's hops" of
benchmarks/SERVER_OVERHEAD.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def tail_hops_report() -> ModuleType:
    """The report's module as the scripts import it (no other module of benchmarks/ needed)."""
    spec = importlib.util.spec_from_file_location(
        "tail_hops_report", REPO / "benchmarks" / "tail_hops_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def row(number: int, names: tuple[str, ...]) -> dict[str, Any]:
    """A `/ws` request whose `to_lane` is `number` ms, `number / 4` of it runnable without a core, and
    whose `queue` is 100 ms for the last of 100 only."""
    hops = {name: 0.5 for name in names} | {"to_lane": float(number), "queue": 100.0 if number == 99 else 0.1}
    causes = {
        "worker_gc": False,
        "worker_gc_gen2": False,
        "child_gc": False,
        "slow_callbacks": False,
        "queued_over_1ms": False,
        "queued_with_lane_idle": False,
        "lane_idle_at_arrival": True,
        "to_lane_off_run_queue_over_1ms": False,
        "worker_gc_ms": 0.0,
        "slow_callback_ms": 0.0,
        "thread": "npu-worker-engine",
        "arrived_to": "engine thread idle",
        "taker_waited_ms": None,
    }
    run_queue = {"to_child": 0.0, "child": 0.0, "to_lane": number / 4, "to_loop": 0.0, "engine": 0.0}
    return {"total": sum(hops.values()), "hops": hops, "causes": causes, "run_queue": run_queue}


def test_each_hop_has_its_own_p95_and_to_lane_its_part_off_the_run_queue():
    report = tail_hops_report()
    figures = report.attribute("ws", [row(number, report.WS_HOPS) for number in range(100)])
    assert figures["hops"]["to_lane"]["p95_ms"] == 95.0
    assert figures["hops"]["queue"]["p95_ms"] == 0.1  # one request's 100 ms is beyond its p95
    assert figures["hops"]["queue"]["median_ms"] == 0.1
    off = figures["to_lane_off_run_queue"]
    assert (off["p50_ms"], off["p90_ms"], off["p95_ms"]) == (37.5, 67.5, 71.25)
    assert off["over_1ms"] == 98  # 2 ms and up: three quarters of each is over 1 ms
