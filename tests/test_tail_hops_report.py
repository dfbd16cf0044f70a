"""benchmarks/tail_hops_report.py's figures read from requests' hops: each hop's own p95 over all requests
(which hop has the p95) and the requests whose lane got back from writing the request to its child only
after the child's first frame, stop 64. Read by the section "2026-12-08 (stop 64): the `/ws` first PCM's hops" of
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
    """A `/ws` request whose `to_lane` is `number` ms, whose `queue` is 100 ms for the last of 100 only,
    and whose lane got back from its write `number - 89` ms after the child's first frame (the last ten)."""
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
    found = {"total": sum(hops.values()), "hops": hops, "causes": causes, "run_queue": run_queue}
    late = float(
        number - 89
    )  # (the write's own time: its lateness plus 1 ms, three quarters on the run queue)
    return found | {"late_write_ms": late, "write_ms": late + 1, "write_run_queue_ms": 0.75 * (late + 1)}


def test_each_hop_has_its_own_p95_and_the_lanes_late_writes_are_counted():
    report = tail_hops_report()
    figures = report.attribute("ws", [row(number, report.WS_HOPS) for number in range(100)])
    assert figures["hops"]["to_lane"]["p95_ms"] == 95.0
    assert figures["hops"]["queue"]["p95_ms"] == 0.1  # one request's 100 ms is beyond its p95
    assert figures["hops"]["queue"]["median_ms"] == 0.1
    late = figures["lane_write_after_first_frame"]
    assert (late["count"], late["in_tail"]) == (10, 5)  # 1 to 10 ms late: the 90th to 99th
    assert (late["p50_ms"], late["p90_ms"]) == (6.0, 10.0)
    assert late["their_write_run_queue_share"] == 0.75
