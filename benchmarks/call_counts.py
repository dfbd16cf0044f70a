"""What a `/ws` preview costs each thread of the worker, counted by function (issue 25, stop 52): a
busy VM moves every timing, but the calls a preview makes, the loop's turns and its `send`s do not move
much, so two commits (or `serve` and a bare server) compare by counts.

The measured server runs under this script's `--profiled OUT` wrapper: cProfile on the thread-CPU
clock on every thread started after it (the engine lanes, the finisher) and, from the first snapshot,
on the main thread (the event loop); each SIGUSR1 or SIGUSR2 writes every thread's totals so far. The
driver starts it (`npu-worker serve --cache-max-bytes 0`, as `server_overhead.py` does; `--bare`: the
bare aiohttp server with two espeak lanes of `loop_owned_child.py --serve --threaded`), sends 30
previews to warm it, snapshots, sends `--previews` more one after another over one `/ws` connection
(the lecture's preview sentences in turn, as `loop_cost.py` does), snapshots again, and reports the
difference a preview, per thread: Python calls, time under cProfile (inflated by it: compare counts),
the loop's turns (`_run_once`) and `send` calls, and the functions with the most calls and time.

    PYTHONPATH=<checkout> python benchmarks/call_counts.py --previews 200 [--bare] [--out FILE]

`--sentences N` (stop 58): each preview the first N sentences of a lecture section, not its first one
(a longer preview: several batches of the espeak child's later frames).

`--batches N` (stop 60): N lecture batches (39 sections as one NDJSON `/synth_batch`, one after
another) instead of previews, every figure a section's: what the batch path costs each thread.

`--synths N` (stop 61): N `/synth` calls one after another over one kept-alive connection (the
preview sentences in turn, each wav written under the worker's output root, its own `seed`, as
`loop_cost.py --route synth` sends them) instead of previews, after 30 to warm; every figure a call's.

`--turns` (stop 55) also lists the loop's turns a preview by what each ran: the callbacks of one
`_run_once` in order (a task's step by its coroutine), so which turns `serve` takes that the bare server
does not can be read; its wrappers add their own calls, so compare the calls of runs without it.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import marshal
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
from common import free_port, report_header, write_report
from loop_cost import previews, synth_calls
from loop_owned_child import connected
from server_overhead import code_root, lecture, preview_texts, ready_ms

WARM_UP = 30


def callback_name(callback: Any) -> str:
    """A handle's callback as the turn's list names it: a task's step by its coroutine."""
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        return f"step:{owner.get_coro().__qualname__}"  # type: ignore[union-attr]
    name = getattr(callback, "__qualname__", None) or type(callback).__qualname__
    return f"{name}({owner.__qualname__})" if name == "Future.set_result" and owner else name


def longer_previews(sentences: int) -> list[str]:
    """The first `sentences` sentences of each lecture section, one preview a section."""
    texts = []
    for text in lecture():
        parts = [part.strip() for part in text.replace("?", ".").split(".") if part.strip()][:sentences]
        if parts:
            texts.append(". ".join(parts) + ".")
    return texts


async def batches(port: int, count: int, server: subprocess.Popen[bytes]) -> tuple[int, int]:
    """`--batches`: one lecture batch to warm, a snapshot, `count` batches one after another, and the
    sections they made (every figure is then a section's); no frames (0)."""
    from server_overhead import batch_request

    sections, base = lecture(), f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as session:
        await batch_request(session, base, sections)
        server.send_signal(signal.SIGUSR1)
        await asyncio.sleep(1.0)
        for _ in range(count):
            await batch_request(session, base, sections)
    return count * len(sections), 0


async def synths(port: int, count: int, server: subprocess.Popen[bytes], out: Path) -> tuple[int, int]:
    """`--synths`: 30 `/synth` calls to warm, a snapshot, `count` more one after another; no frames."""
    out.mkdir(parents=True, exist_ok=True)
    texts = preview_texts()
    await synth_calls(port, WARM_UP, texts, out, 0)
    server.send_signal(signal.SIGUSR1)
    await asyncio.sleep(1.0)
    await synth_calls(port, count, texts, out, WARM_UP)
    return count, 0


def count_turns() -> Counter[tuple[str, ...]]:
    """Wrap the loop's turn and its handles' runs: each turn's callbacks, counted by their names."""
    import asyncio.base_events as base_events
    import asyncio.events as events

    turns: Counter[tuple[str, ...]] = Counter()
    ran: list[str] = []
    run_once, run = base_events.BaseEventLoop._run_once, events.Handle._run

    def counted_run_once(self: Any) -> None:
        ran.clear()
        run_once(self)
        turns[tuple(ran)] += 1

    def named_run(self: Any) -> None:
        ran.append(callback_name(self._callback))
        run(self)

    base_events.BaseEventLoop._run_once = counted_run_once  # type: ignore[method-assign]
    events.Handle._run = named_run  # type: ignore[method-assign]
    return turns


def profiled(out: str, module_or_script: list[str], turns_too: bool = False) -> None:
    """Run the server with every thread profiled; each SIGUSR1/SIGUSR2 snapshots them to OUT.<n>.<thread>."""
    turns = count_turns() if turns_too else None
    profiles: dict[int, tuple[threading.Thread, cProfile.Profile]] = {}

    def starter(frame: Any, event: str, arg: Any) -> None:
        thread = threading.current_thread()
        if thread.ident not in profiles:
            profile = cProfile.Profile(time.thread_time)
            profiles[thread.ident] = (thread, profile)  # type: ignore[index]
            profile.enable()  # (replaces this hook on its thread)

    main = threading.main_thread()
    main_profile = cProfile.Profile(time.thread_time)
    profiles[main.ident] = (main, main_profile)  # type: ignore[index]
    threading.setprofile(starter)
    taken = [0]

    def snapshot(signum: int, frame: Any) -> None:
        if taken[0] == 0:
            main_profile.enable()
        taken[0] += 1
        for thread, profile in list(profiles.values()):
            with open(f"{out}.{taken[0]}.{thread.name}", "wb") as file:
                marshal.dump(summed_stats(profile), file)
        if turns is not None:
            with open(f"{out}.{taken[0]}.turns", "wb") as file:
                marshal.dump(dict(turns), file)

    signal.signal(signal.SIGUSR1, snapshot)
    signal.signal(signal.SIGUSR2, snapshot)
    if module_or_script[0] == "-m":
        sys.argv = module_or_script[1:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = module_or_script
        sys.path.insert(0, str(Path(sys.argv[0]).resolve().parent))
        runpy.run_path(sys.argv[0], run_name="__main__")


def summed_stats(
    profile: cProfile.Profile,
) -> dict[tuple[str, int, str], tuple[int, int, float, float, None]]:
    """`profile.stats` as `snapshot_stats` makes it, but the functions that share a label summed, not
    the last one kept: every dataclass's generated `__init__` is `<string>:2(__init__)`, and pstats
    counted one of them (stop 56: a frozen dataclass made a chunk on the lane, unseen)."""
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, None]] = {}
    for entry in profile.getstats():
        code = entry.code
        key = (
            ("~", 0, code) if isinstance(code, str) else (code.co_filename, code.co_firstlineno, code.co_name)
        )
        cc, nc, tt, ct, _ = stats.get(key, (0, 0, 0.0, 0.0, None))
        calls = entry.callcount
        stats[key] = (
            cc + calls - entry.reccallcount,
            nc + calls,
            tt + entry.inlinetime,
            ct + entry.totaltime,
            None,
        )
    return stats


def per_preview(out: str, thread: str, count: int, top: int) -> dict[str, Any]:
    """The second snapshot less the first, a preview."""
    first = Path(f"{out}.1.{thread}")
    before = marshal.loads(first.read_bytes()) if first.exists() else {}
    after = marshal.loads(Path(f"{out}.2.{thread}").read_bytes())
    rows = []
    for key, (_, calls, own, _cumulative, _) in after.items():
        old = before.get(key, (0, 0, 0.0, 0.0, None))
        rows.append(((calls - old[1]) / count, (own - old[2]) * 1000 / count, key))

    def name(key: tuple[str, int, str]) -> str:
        path = key[0]
        path = path[path.find("npu_worker") :] if "npu_worker" in path else path.rsplit("/", 2)[-1]
        return f"{path}:{key[1]}({key[2]})"

    def calls_of(function: str) -> float:
        return round(sum(calls for calls, _, key in rows if key[2] == function), 2)

    by_calls = sorted(rows, key=lambda row: -row[0])[:top]
    by_time = sorted(rows, key=lambda row: -row[1])[:top]
    by_file: Counter[str] = Counter()
    for calls, _, key in rows:
        by_file[name(key).split(":")[0]] += calls
    return {
        "calls": round(sum(row[0] for row in rows), 1),
        "ms_under_cprofile": round(sum(row[1] for row in rows), 3),
        "loop_turns": calls_of("_run_once"),
        "sends": calls_of("<method 'send' of '_socket.socket' objects>"),
        "calls_by_file": {path: round(calls, 2) for path, calls in by_file.most_common(top)},
        "most_calls": {name(key): round(calls, 2) for calls, _, key in by_calls},
        "most_time_ms": {name(key): round(ms, 3) for _, ms, key in by_time},
    }


def turns_per_preview(out: str, count: int, top: int) -> dict[str, float]:
    """The loop's turns a preview by what they ran, the most frequent first."""
    before = marshal.loads(Path(f"{out}.1.turns").read_bytes())
    after = marshal.loads(Path(f"{out}.2.turns").read_bytes())
    rows = {" | ".join(turn) or "(nothing)": (n - before.get(turn, 0)) / count for turn, n in after.items()}
    return {turn: round(n, 3) for turn, n in sorted(rows.items(), key=lambda row: -row[1])[:top] if n}


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="call_counts_"))
    out = str(root / "profile")
    command = [sys.executable, str(Path(__file__).resolve()), "--profiled", out]
    command += ["--turns", "--"] if args.turns else ["--"]
    if args.bare:
        command += [
            str(Path(__file__).resolve().parent / "loop_owned_child.py"),
            "--serve",
            str(port),
            "--threaded",
        ]
    else:
        command += ["-m", "npu_worker.cli", "serve", "--port", str(port), "--state-dir", str(root / "state")]
        command += ["--cache-max-bytes", "0", "--output-roots", str(root / "out"), "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": str(code_root())}
    server = subprocess.Popen(command, cwd=code_root(), env=env)
    try:
        if args.bare:
            await connected(f"ws://127.0.0.1:{port}/ws")
        else:
            async with aiohttp.ClientSession() as session:
                await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        if args.batches:
            count, frames = await batches(port, args.batches, server)
        elif args.synths:
            count, frames = await synths(port, args.synths, server, root / "out")
        else:
            texts = preview_texts() if args.sentences == 1 else longer_previews(args.sentences)
            await previews(port, WARM_UP, texts)
            server.send_signal(signal.SIGUSR1)
            await asyncio.sleep(1.0)
            count, frames = args.previews, await previews(port, args.previews, texts)
        await asyncio.sleep(0.2)
        server.send_signal(signal.SIGUSR2)
        await asyncio.sleep(1.0)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)
    threads = sorted({path.name.split(".", 2)[2] for path in root.glob("profile.2.*")} - {"turns"})
    report = report_header(server="bare" if args.bare else "serve", previews=args.previews)
    report["sentences"] = args.sentences
    report["batches"] = args.batches  # (then every figure is a section's, not a preview's)
    report["synths"] = args.synths  # (then every figure is a /synth call's)
    report["loadavg_start"] = args.load
    report["frames_per_preview"] = round(frames / count, 2)
    report["threads"] = {thread: per_preview(out, thread, count, args.top) for thread in threads}
    if args.turns:
        report["turns"] = turns_per_preview(out, count, args.top)
    report["loadavg_end"] = list(os.getloadavg())
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--previews", type=int, default=200)
    parser.add_argument("--bare", action="store_true", help="the bare server of loop_owned_child.py")
    parser.add_argument("--top", type=int, default=15, help="functions listed a thread")
    parser.add_argument("--out", help="write the report here too")
    parser.add_argument("--turns", action="store_true", help="the loop's turns by what they ran")
    parser.add_argument("--sentences", type=int, default=1, help="sentences of a lecture section a preview")
    parser.add_argument("--batches", type=int, default=0, help="lecture batches instead of previews")
    parser.add_argument("--synths", type=int, default=0, help="/synth calls instead of previews")
    parser.add_argument("--profiled", help=argparse.SUPPRESS)  # (the wrapper the driver starts)
    args, rest = parser.parse_known_args()
    if args.profiled:
        profiled(args.profiled, rest[1:] if rest[:1] == ["--"] else rest, args.turns)
        return
    args.load = list(os.getloadavg())
    write_report(asyncio.run(measure(args)), args.out)


if __name__ == "__main__":
    main()
