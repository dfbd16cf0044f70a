"""What a 39-section `/synth_batch` costs the worker beyond the engine, in CPU and counts (issue 25, stop 60):
on a shared VM a batch's wall time moves with the other engineers' load, its CPU and its wake-ups much less.

The driver times the espeak-ng engine alone on the lecture's 39 sections in this process (CPU by
`time.process_time`, the way `server_overhead.py`'s engine alone runs), then starts a real
`npu-worker serve --cache-max-bytes 0` (the checkout PYTHONPATH names), sends one batch to warm it and
`--batches` more, one after another, reading each NDJSON answer to its `done`. Around each batch it
reads every thread's CPU and voluntary context switches (its sleeps: a wake-up each) from /proc, by
thread name (py-spy names Python's threads), the espeak child's among them; and, with `--strace`,
`strace -c -f` attached to the worker and its child for the measured batches (syscalls by name; strace
slows what it watches: compare its counts, not its times, and never with a run without it).

    PYTHONPATH=<checkout> python benchmarks/batch_cost.py --batches 5 [--strace] [--out FILE]

`--child-hold PAIRS` (no server): the sections through one espeak child (`Settings(backend="espeak")`, as
`serve`'s engine thread drives it) with `early_audio` false, the first frame held with the rest (what a
batch section asks since stop 59), against true (the first frame written at once), alternated PAIRS
times: each way's wall, this process's CPU and the child's, and the held way's wall over the other's a pair.

`--gaps` (stop 61): `strace -ttt -T -e trace=read,writev` on the espeak children alone (not the worker) for
the measured batches: each section's time in the child, from its request's `read` returning to the `writev`
that ends it, and the gap before it, from the previous section's last `writev` to that `read`'s return (the
child idle while the worker ends a section and sends the next: the finisher's hand-over, the admission, the
next request's making and its write); medians and sums a section. strace stretches the child's own syscalls,
so read the gap's share and its count, not its microseconds, and never beside a run without it. Since stop
63 a batch's next request goes to the child ahead, read while it makes the one before, and the gap as a
`read` of a request no longer shows: `child_request_waits` is the children's time blocked in reading stdin
a section (the gap, read the same way in every tree; each batch's first wait left out) and how many reads a section.

`--ahead-drop ROUNDS` (stop 63, no server): through one espeak child, a section made with the next one sent
ahead, then another text asked (what the admission picked instead: the one sent ahead is stopped and read
away first), against the same with the one sent ahead stopped as it went (a preview queued meanwhile:
`stop_ahead`) and with nothing sent ahead, in turn ROUNDS times: the other text's wall over nothing ahead's.

`--digest`: one more batch whose events (kind, section, status, in order) and 39 wavs (their bytes, read
from the `ok` events' `wav_path`) are hashed: the same output before and after a change.

Per section: the worker's CPU beyond the engine alone (worker and child, less the engine alone's), each
thread's CPU and sleeps, and the wall time over the engine alone's (medians of the batches).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from common import compile_checkout, free_port, report_header, write_report
from engine_alone import espeak_engine, sections_ms
from proc_cpu import child_pids, process_cpu_ms_of, sleeps, thread_cpu_ms, thread_names, voluntary_switches
from server_overhead import batch_request, code_root, lecture, ready_ms, start_server, stop_server


def engine_alone(sections: list[str], repeats: int) -> tuple[float, float]:
    """The engine alone on the sections in this process: (median CPU ms, median wall ms) of `repeats`."""
    engine = espeak_engine()
    cpus, walls = [], []
    try:
        sections_ms(engine, sections)  # warm: its first pass compiles the reader's patterns
        for _ in range(repeats):
            started = time.process_time()
            walls.append(sections_ms(engine, sections))
            cpus.append((time.process_time() - started) * 1000)
    finally:
        engine.close()
    return statistics.median(cpus), statistics.median(walls)


def child_hold(sections: list[str], pairs: int) -> dict[str, Any]:
    """`--child-hold`: the sections through one espeak child, `early_audio` false against true, alternated
    (which goes first alternates too)."""
    from engine_alone import allocator_as_served, run_engine

    from npu_worker.config import Settings
    from npu_worker.engine_options import build_engine

    allocator_as_served()
    engine = build_engine(Settings(backend="espeak"))
    engine.load()

    def children_ms() -> float:
        return sum(process_cpu_ms_of(Path(f"/proc/{child}/stat")) for child in child_pids(os.getpid()))

    def once(early: bool) -> tuple[float, float, float]:
        child, cpu, wall = children_ms(), time.process_time(), time.perf_counter()
        for text in sections:
            run_engine(engine, text, early, lambda chunk: None)
        return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, children_ms() - child

    try:
        once(False), once(True)  # warm
        runs: dict[bool, list[tuple[float, float, float]]] = {False: [], True: []}
        for pair in range(pairs):
            for early in (False, True) if pair % 2 == 0 else (True, False):
                runs[early].append(once(early))
    finally:
        engine.close()
    ratios = [held[0] / at_once[0] for held, at_once in zip(runs[False], runs[True], strict=True)]
    report: dict[str, Any] = {"pairs": pairs}
    for early, name in ((False, "held"), (True, "at_once")):
        report[name] = {
            what: round(statistics.median(run[i] for run in runs[early]), 1)
            for i, what in enumerate(("wall_ms", "parent_cpu_ms", "child_cpu_ms"))
        }
    report["held_over_at_once_median"] = round(statistics.median(ratios), 3)
    report["pairs_held_faster"] = sum(ratio < 1 for ratio in ratios)
    report["loadavg"] = os.getloadavg()
    return report


def ahead_drop(sections: list[str], pairs: int) -> dict[str, Any]:
    """`--ahead-drop` (stop 63): what other work picked over a batch's section sent ahead (a `/synth` the
    admission takes first) waits for it to be stopped and read away. Through one espeak child, as `serve`'s
    engine thread drives it: a section made with the next one sent ahead (stopped as it is sent, as a
    preview queued meanwhile has it, or not stopped), or with nothing ahead, then another text asked (the
    lecture's first section); the wall from that ask to its end, the three ways in turn, rotated a round."""
    from npu_worker.config import Settings
    from npu_worker.engine.base import SynthesisRequest
    from npu_worker.engine_options import build_engine

    engine: Any = build_engine(Settings(backend="espeak"))  # (`EspeakProcessEngine`)
    engine.load()
    other = SynthesisRequest(text=sections[0], early_audio=False)
    ways = ("nothing_ahead", "dropped", "stopped_then_dropped")

    def once(way: str, at: int) -> float:
        following = SynthesisRequest(text=sections[at + 1], early_audio=False)

        def sent() -> None:
            if way != "nothing_ahead":
                engine.send_ahead(following)
            if way == "stopped_then_dropped":
                engine.stop_ahead()

        engine.stream_into(SynthesisRequest(text=sections[at], early_audio=False), lambda chunk: True, sent)
        started = time.perf_counter()
        engine.stream_into(other, lambda chunk: True)
        return (time.perf_counter() - started) * 1000

    try:
        for way in ways:  # warm
            once(way, 1)
        runs: dict[str, list[float]] = {way: [] for way in ways}
        for round_ in range(pairs):
            at = 1 + round_ % (len(sections) - 2)
            for way in ways[round_ % 3 :] + ways[: round_ % 3]:
                runs[way].append(once(way, at))
    finally:
        engine.close()
    report: dict[str, Any] = {"rounds": pairs}
    for way in ways[1:]:
        extra = sorted(a - b for a, b in zip(runs[way], runs["nothing_ahead"], strict=True))
        report[f"{way}_ms_over_nothing_ahead_median"] = round(statistics.median(extra), 2)
        report[f"{way}_ms_over_nothing_ahead_p90"] = round(extra[int(len(extra) * 0.9)], 2)
    report["other_ms_median_nothing_ahead"] = round(statistics.median(runs["nothing_ahead"]), 2)
    report["loadavg"] = os.getloadavg()
    return report


def all_sleeps(pid: int) -> dict[int, int]:
    """Voluntary context switches of every thread of `pid` and of its child processes, by id."""
    counts = sleeps(pid, [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()])
    for child in child_pids(pid):
        switches = voluntary_switches(Path(f"/proc/{child}/status"))
        if switches is not None:
            counts[child] = switches
    return counts


def by_name(
    before: dict[int, float], after: dict[int, float], names: dict[int, str], per: int
) -> dict[str, float]:
    """What each thread (pools summed by name prefix) did between two reads, per section."""
    out: dict[str, float] = {}
    for tid, value in after.items():
        name = names.get(tid, f"tid {tid}")
        name = name.rsplit("_", 1)[0] if name.startswith(("asyncio_", "npu-worker-admit_")) else name
        out[name] = out.get(name, 0.0) + (value - before.get(tid, 0.0)) / per
    return {name: round(v, 3) for name, v in sorted(out.items(), key=lambda kv: -kv[1]) if v > 0}


def start_strace(pid: int, out: Path) -> subprocess.Popen[bytes]:
    targets = [str(pid), *map(str, child_pids(pid))]
    command = ["strace", "-c", "-f", "-o", str(out)]
    for target in targets:
        command += ["-p", target]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # strace attaches before the batches start (no event to await from outside it)
    return process


def start_gap_trace(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """`strace` on the espeak children only (the worker untraced), each `read` and `writev` timed."""
    command = ["strace", "-ttt", "-T", "-e", "trace=read,writev", "-o", str(out)]
    for child in child_pids(pid):
        command += ["-p", str(child)]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # strace attaches before the batches start (no event to await from outside it)
    return process


def section_gaps(path: Path, per_batch: int) -> dict[str, float]:
    """From `start_gap_trace`'s lines: a section's time in the child (its request's first `read` back to
    the last `writev` before the next request's) and the gap before it (that `writev`'s end to the next
    `read`'s return), ms; a batch's first section has no gap counted (the client's round trip is in it)."""
    busy: list[float] = []
    gaps: list[float] = []
    last_write: dict[str, float] = {}
    started: dict[str, float] = {}
    sections: dict[str, int] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        pid = fields.pop(0) if len(fields) > 1 and fields[0].isdigit() else ""
        if len(fields) < 3 or not fields[-1].startswith("<") or "unfinished" in line or "resumed" in line:
            continue
        end = float(fields[0]) + float(fields[-1].strip("<>"))
        if fields[1].startswith("writev("):
            last_write[pid] = end
        elif fields[1].startswith("read(0,") and last_write.get(pid, 0.0) >= started.get(pid, 0.0):
            if pid in started:  # the section before has ended: this read is the next one's request
                busy.append(last_write[pid] - started[pid])
                if sections[pid] % per_batch:
                    gaps.append(end - last_write[pid])
            started[pid], sections[pid] = end, sections.get(pid, 0) + 1
    if not gaps:
        return {}
    return {
        "sections": len(busy),
        "busy_ms_median": round(statistics.median(busy) * 1000, 3),
        "gap_ms_median": round(statistics.median(gaps) * 1000, 3),
        "gap_ms_p90": round(sorted(gaps)[int(len(gaps) * 0.9)] * 1000, 3),
        "gaps_over_busy": round(sum(gaps) / len(gaps) / (sum(busy) / len(busy)), 4),
    }


def request_waits(path: Path, sections: int, batches: int) -> dict[str, float]:
    """From `start_gap_trace`'s lines (stop 63): the children's time blocked reading stdin, a section.
    A child reads stdin for a request only when it has none: it waits there through the gap before a
    section (the worker ending one and sending the next) and, once a batch's next request is sent ahead
    (`engine/espeak_ahead.py`), it reads that request while it makes the current one, from a pipe that
    already holds it. Each batch's first wait (the client's round trip, the longest) is left out: the
    `batches` longest waits."""
    waits = []
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields and fields[0].isdigit():
            fields.pop(0)
        if len(fields) >= 3 and fields[1].startswith("read(0,") and fields[-1].startswith("<"):
            waits.append(float(fields[-1].strip("<>")) * 1000)
    if len(waits) <= batches:
        return {}
    waits = sorted(waits)[:-batches]
    return {
        "reads_per_section": round(len(waits) / sections, 2),
        "reads_over_0_5_ms_per_section": round(sum(w > 0.5 for w in waits) / sections, 3),
        "waited_ms_per_section": round(sum(waits) / sections, 3),
        "wait_ms_p99": round(waits[int(len(waits) * 0.99)], 3),
    }


def strace_counts(path: Path, per: int) -> dict[str, float]:
    """`strace -c`'s calls column by syscall, per section."""
    counts: dict[str, float] = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            calls = fields[3]
            counts[fields[-1]] = round(int(calls) / per, 2) if calls.isdigit() else 0.0
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


async def batch_digest(session: aiohttp.ClientSession, base: str, sections: list[str]) -> dict[str, Any]:
    """`--digest`: one batch's event kinds in order and its wavs' bytes, each hashed (sha256, 16 digits)."""
    body = {"sections": [{"idx": i, "text": t} for i, t in enumerate(sections)]}
    events: list[dict[str, Any]] = []
    async with session.post(base + "/synth_batch", json=body) as response:
        async for line in response.content:
            events.append(json.loads(line))
    kinds = [(e["event"], e.get("idx"), e.get("status")) for e in events]
    wavs = hashlib.sha256()
    for event in events:
        if event.get("status") == "ok":
            wavs.update(hashlib.sha256(Path(event["wav_path"]).read_bytes()).digest())
    return {
        "events": len(events),
        "event_kinds_sha256": hashlib.sha256(json.dumps(kinds).encode()).hexdigest()[:16],
        "wavs": sum(e.get("status") == "ok" for e in events),
        "wavs_sha256": wavs.hexdigest()[:16],
    }


async def measure(args: argparse.Namespace, sections: list[str]) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="batch-cost-"))
    (root / "out").mkdir()
    args.py_spy = None
    spawned = time.perf_counter()
    server = start_server(args, port, root)
    base, per = f"http://127.0.0.1:{port}", len(sections) * args.batches
    try:
        async with aiohttp.ClientSession() as session:
            await ready_ms(session, base, spawned)
            await batch_request(session, base, sections)  # warm
            digest = await batch_digest(session, base, sections) if args.digest else None
            pid, tracer = server.pid, None
            names = thread_names(pid)
            if args.strace:
                tracer = start_strace(pid, root / "strace.txt")
            elif args.gaps:
                tracer = start_gap_trace(pid, root / "gaps.txt")
            cpu_before, sleeps_before, walls = thread_cpu_ms(pid), all_sleeps(pid), []
            for _ in range(args.batches):
                walls.append(await batch_request(session, base, sections))
            cpu_after, sleeps_after = thread_cpu_ms(pid), all_sleeps(pid)
            if tracer is not None:
                tracer.send_signal(signal.SIGINT)
                tracer.wait(30)
        for child in child_pids(pid):
            names.setdefault(child, "espeak child")
        cpu = by_name(cpu_before, cpu_after, names, per)
        report: dict[str, Any] = {
            "wall_ms_per_batch": [round(w, 1) for w in walls],
            "cpu_ms_per_section": cpu,
            "cpu_ms_per_section_total": round(sum(cpu.values()), 3),
            "sleeps_per_section": by_name(sleeps_before, sleeps_after, names, per),  # type: ignore[arg-type]
            "loadavg": os.getloadavg(),
        }
        if digest is not None:
            report["digest"] = digest
        if tracer is not None and args.gaps:
            report["child_sections"] = section_gaps(root / "gaps.txt", len(sections))
            report["child_request_waits"] = request_waits(root / "gaps.txt", per, args.batches)
        elif tracer is not None:
            report["syscalls_per_section"] = strace_counts(root / "strace.txt", per)
        return report
    finally:
        stop_server(server, root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--engine-repeats", type=int, default=3)
    parser.add_argument("--strace", action="store_true")
    parser.add_argument(
        "--gaps", action="store_true", help="the child's time a section and the gap before it"
    )
    parser.add_argument("--digest", action="store_true", help="one batch's events and wavs hashed")
    parser.add_argument("--no-engine", action="store_true", help="skip the engine alone (counts only)")
    parser.add_argument(
        "--ahead-drop", type=int, default=0, metavar="ROUNDS", help="other work after a drop, or not"
    )
    parser.add_argument(
        "--child-hold", type=int, default=0, metavar="PAIRS", help="the child alone, held or not"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    compile_checkout(code_root())
    sections = lecture()
    report: dict[str, Any] = report_header()
    report["checkout"] = str(code_root())
    if args.child_hold:
        report["child_hold"] = child_hold(sections, args.child_hold)
    if args.ahead_drop:
        report["ahead_drop"] = ahead_drop(sections, args.ahead_drop)
        write_report(report, args.out)
        return
    if not args.no_engine:
        cpu, wall = engine_alone(sections, args.engine_repeats)
        report["engine_alone"] = {
            "cpu_ms_per_section": round(cpu / len(sections), 3),
            "wall_ms": round(wall, 1),
        }
    report["server"] = asyncio.run(measure(args, sections))
    if not args.no_engine and not args.strace and not args.gaps:
        server = report["server"]
        engine = report["engine_alone"]
        server["cpu_beyond_engine_ms_per_section"] = round(
            server["cpu_ms_per_section_total"] - engine["cpu_ms_per_section"], 3
        )
        server["wall_over_engine"] = round(
            statistics.median(server["wall_ms_per_batch"]) / engine["wall_ms"], 3
        )
    write_report(report, args.out)


if __name__ == "__main__":
    main()
