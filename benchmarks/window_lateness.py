"""How late a lane's later-audio window reaches the event loop (issue 25, stop 58's review): `later`
lets a preview's audio past its first 0.5 s wait up to 3 ms (`LATER_AUDIO_SECONDS`, docs/protocol.md's
pacing) to share one drain; this measures, for each window a `later` call opens, the time from that
call to the start of the drain that runs it. The loop arms the window (a lane's wake-up, then its
timer); a variant where the espeak lane held the window and handed it over itself before blocking on
the child's pipe was measured with this script in stop 58 (later under load: it waited for the lane's
thread to be scheduled) and reverted (benchmarks/SERVER_OVERHEAD.md, 2026-12-07). Compare two commits
on the same VM, interleaved, as the load moves every figure.

The measured server runs under this script's `--wrapped OUT` wrapper (`LoopHandoff.later` and
`_drain` timed, nothing else changed; SIGUSR1 clears, SIGUSR2 writes OUT), started as
`npu-worker serve --cache-max-bytes 0` of the checkout `PYTHONPATH` names; 20 warm-up previews, then
`--previews` one after another over one `/ws` connection, each the first `--sentences` sentences of a
lecture section (several windows a preview).

    PYTHONPATH=<checkout> python benchmarks/window_lateness.py --previews 120 [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from call_counts import longer_previews
from common import free_port, report_header, write_report
from loop_cost import previews
from server_overhead import code_root, ready_ms

WARM_UP = 20


def wrapped(out: str, argv: list[str]) -> None:
    """Run `npu_worker.cli argv` with each window's lateness noted: from the `later` call that opens
    it (none queued, none due) to the drain that runs it, whichever call or timer brought that."""
    from npu_worker.jobs import loop_handoff

    handoff = loop_handoff.LoopHandoff
    delays: list[float] = []
    opened: dict[int, float] = {}  # a handoff's open window: when its first `later` came
    later, drain = handoff.later, handoff._drain

    def timed_later(self: Any, callback: Any, argument: Any, within: float) -> None:
        if not (self._scheduled or self._timed) and id(self) not in opened:
            opened[id(self)] = time.monotonic()
        later(self, callback, argument, within)

    def timed_drain(self: Any) -> None:
        since = opened.pop(id(self), None)
        if since is not None:
            delays.append(time.monotonic() - since)
        drain(self)

    handoff.later, handoff._drain = timed_later, timed_drain  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, lambda *_: delays.clear())
    signal.signal(signal.SIGUSR2, lambda *_: Path(out).write_text(json.dumps(delays)))
    sys.argv = ["npu_worker.cli", *argv]
    runpy.run_module("npu_worker.cli", run_name="__main__", alter_sys=True)


def summary(delays_s: list[float]) -> dict[str, Any]:
    """Percentiles of the windows' lateness, in ms, and how many passed 4 and 10 ms."""
    ms = sorted(1000 * d for d in delays_s)

    def at(share: float) -> float:
        return round(ms[min(len(ms) - 1, int(share * len(ms)))], 2)

    return {
        "windows": len(ms),
        "p50_ms": at(0.5),
        "p90_ms": at(0.9),
        "p99_ms": at(0.99),
        "max_ms": round(ms[-1], 2),
        "over_4_ms": sum(d > 4 for d in ms),
        "over_10_ms": sum(d > 10 for d in ms),
    }


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="window_lateness_"))
    out = root / "delays.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--wrapped", str(out), "--", "serve"]
    command += ["--port", str(port), "--state-dir", str(root / "state"), "--cache-max-bytes", "0"]
    command += ["--output-roots", str(root / "out"), "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": str(code_root())}
    server = subprocess.Popen(command, cwd=code_root(), env=env)
    try:
        async with aiohttp.ClientSession() as session:
            await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        texts = longer_previews(args.sentences)
        await previews(port, WARM_UP, texts)
        server.send_signal(signal.SIGUSR1)
        await asyncio.sleep(0.5)
        await previews(port, args.previews, texts)
        server.send_signal(signal.SIGUSR2)
        async with asyncio.timeout(30):
            while not out.exists():
                await asyncio.sleep(0.1)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)
    report = report_header(previews=args.previews, sentences=args.sentences, loadavg_start=args.load)
    report.update(summary(json.loads(out.read_text())))
    report["loadavg_end"] = list(os.getloadavg())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--previews", type=int, default=120)
    parser.add_argument("--sentences", type=int, default=3, help="sentences of a lecture section a preview")
    parser.add_argument("--out", help="write the report here too")
    parser.add_argument("--wrapped", help=argparse.SUPPRESS)  # (the wrapper the driver starts)
    args, rest = parser.parse_known_args()
    if args.wrapped:
        wrapped(args.wrapped, rest[1:] if rest[:1] == ["--"] else rest)
        return
    args.load = list(os.getloadavg())
    write_report(asyncio.run(measure(args)), args.out)


if __name__ == "__main__":
    main()
