"""Trial (issue 25, stop 51): would the event loop reading the espeak child's frames itself, with no
preview lane thread, bring the `/ws` first-PCM overhead's p95 near the no-server floor?

The prototype (`--serve PORT`, started as a process of its own so its CPU is counted as the worker's
is): a bare aiohttp `/ws` route; each text frame parsed by the worker's own `parse_ws_message`; two
espeak children (`ChildEspeak`: the real child, its start and its `READY`) whose stdout the loop reads
non-blocking (`add_reader`); each read's frames go through the real path's steps on the loop (the
leading-silence trim, `to_pcm16`, `GrowingChunker` on the default schedule, the same events) and out
as one `Burst` per read. A preview waits, first come first served, for a free child. Not there: the
scheduler, the job log, cancel, the connection guard, the heartbeat, backpressure (a peer that stops
reading): what the prototype leaves out is what the real path would still have to carry.

One run compares, on the same Poisson arrivals and client as `server_overhead.py` (imported): two
espeak lanes alone (no server), the real `npu-worker serve`, and the prototype, at each rate, the two
servers' order alternating round by round; per server the first-PCM overhead (the engine alone's
first trimmed frame subtracted) and the CPU per preview of the process with its children.

    PYTHONPATH=. python benchmarks/loop_owned_child.py --rounds 3 --out benchmarks/results/trial_loop_owned_child_DATE.json
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import numpy as np
import websockets
from aiohttp import WSMsgType, web
from common import free_port, percentiles, report_header, write_report
from engine_alone import allocator_as_served, lanes_alone, measure_engine
from proc_cpu import process_cpu_ms
from server_overhead import (
    SocketPool,
    code_root,
    lecture,
    open_loop,
    preview_texts,
    ready_ms,
    start_server,
    ws_request,
)

from npu_worker.audio import LeadingSilenceTrimmer, to_pcm16
from npu_worker.config import Settings
from npu_worker.engine.espeak_child import AUDIO, END, HEADER, PIPE_BYTES, REQUEST, Request, write_frame
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.protocol import (
    AudioEnd,
    AudioStart,
    BatchRequest,
    Done,
    FirstAudio,
    Limits,
    Progress,
    Start,
)
from npu_worker.wire import encode_entry
from npu_worker.ws_messages import parse_ws_message
from npu_worker.ws_server.burst import Burst
from npu_worker.ws_server.chunking import GrowingChunker, schedule_sizes

RATE = 24000

# -- the prototype server ----------------------------------------------------------------------------


class LoopPreview:
    """One preview's frames, made on the loop from the child's: the real pump's steps, one burst a read."""

    def __init__(self, request: web.BaseRequest, text: str, params: Any, sizes: tuple[int, ...]) -> None:
        self.request, self.text, self.params = request, text, params
        self.received = time.perf_counter()
        self.trimmer = LeadingSilenceTrimmer(RATE)
        self.chunker = GrowingChunker(sizes, dtype="<i2")
        self.burst = Burst()
        self.sent = self.frames = 0
        self.onset: int | None = None  # stream position of the audible onset
        self.first_audio = self.opened = False
        self.burst.text(encode_entry(Start(1, "espeak-ng", "cpu", os.urandom(8).hex(), RATE), 1))
        self.burst.text(encode_entry(Progress(0, "synth"), 2))
        self.write()

    def write(self) -> None:
        if self.burst and self.request.transport is not None and not self.request.transport.is_closing():
            self.request.transport.write(self.burst.take())

    def audio(self, payload: bytearray) -> None:
        out = self.trimmer.feed(np.frombuffer(payload, dtype=np.float32))
        if out.size and self.onset is None and self.trimmer.onset_in_output is not None:
            self.onset = self.sent + self.chunker.pending_samples + self.trimmer.onset_in_output
        self._pcm(out)

    def _pcm(self, samples: np.ndarray) -> None:
        if not samples.size:
            return
        if not self.opened:
            self.opened = True
            self.burst.text(AudioStart(idx=0, sample_rate=RATE).encode())
        for frame in self.chunker.feed(to_pcm16(samples)):
            self._frame(frame)

    def _frame(self, frame: np.ndarray) -> None:
        self.burst.binary(frame.data)
        self.sent += frame.size
        self.frames += 1
        if not self.first_audio and self.onset is not None and self.onset < self.sent:
            self.first_audio = True
            ttfa = round((time.perf_counter() - self.received) * 1000, 1)
            self.burst.text(FirstAudio(idx=0, ttfa_ms=ttfa).encode())

    def end(self) -> None:
        self._pcm(self.trimmer.flush())
        rest = self.chunker.flush()
        if rest is not None:
            self._frame(rest)
        self.burst.text(AudioEnd(idx=0, samples=self.sent, chunks=self.frames).encode())
        elapsed = round(time.perf_counter() - self.received, 3)
        self.burst.text(
            encode_entry(Progress(0, "ok", duration_sec=round(self.sent / RATE, 3), elapsed_sec=elapsed), 3)
        )
        self.burst.text(encode_entry(Done(1, 1, 0, elapsed), 4))


class LoopChild:
    """An espeak child whose answers the loop reads itself: no thread, no blocking read."""

    def __init__(self, lanes: Lanes, threaded: bool) -> None:
        self.lanes, self.child, self.ids = lanes, ChildEspeak(), itertools.count(1)
        self.out = self.child._process.stdout.fileno()  # noqa: SLF001 - (its READY was read whole)
        self.held = bytearray()
        self.preview: LoopPreview | None = None
        loop = asyncio.get_running_loop()
        if threaded:  # the control: a lane thread blocks in `read` and hands each read to the loop
            threading.Thread(target=self.lane, args=(loop,), daemon=True).start()
            return
        os.set_blocking(self.out, False)
        loop.add_reader(self.out, self.readable)

    def lane(self, loop: asyncio.AbstractEventLoop) -> None:
        while data := os.read(self.out, PIPE_BYTES):
            loop.call_soon_threadsafe(self.take, data)

    def begin(self, preview: LoopPreview) -> None:
        self.preview = preview
        frame = Request(next(self.ids), preview.text, preview.params.lang, preview.params.speed_factor)
        write_frame(self.child._requests, REQUEST, msgspec.json.encode(frame))  # noqa: SLF001

    def readable(self) -> None:
        data = os.read(self.out, PIPE_BYTES)
        if not data:
            asyncio.get_running_loop().remove_reader(self.out)
            return
        self.take(data)

    def take(self, data: bytes) -> None:
        """One read's frames through the preview's steps, on the loop; its burst written once."""
        self.held += data
        held, at, ended = self.held, 0, False
        preview = self.preview
        assert preview is not None
        while len(held) - at >= HEADER.size:
            kind, length = HEADER.unpack_from(held, at)
            if len(held) - at - HEADER.size < length:
                break
            payload = held[at + HEADER.size : at + HEADER.size + length]  # a copy, as `read_frame`'s
            at += HEADER.size + length
            if kind == AUDIO:
                preview.audio(payload)
            elif kind == END:
                preview.end()
                ended = True
            else:
                raise RuntimeError(f"the child sent {kind!r}")
        del self.held[:at]
        preview.write()
        if ended:
            self.preview = None
            self.lanes.free(self)


class Lanes:
    """Two loop-owned children; a preview waits for a free one, first come first served."""

    def __init__(self, count: int, threaded: bool) -> None:
        self.idle = [LoopChild(self, threaded) for _ in range(count)]
        self.waiting: collections.deque[LoopPreview] = collections.deque()

    def submit(self, preview: LoopPreview) -> None:
        if self.idle:
            self.idle.pop().begin(preview)
        else:
            self.waiting.append(preview)

    def free(self, child: LoopChild) -> None:
        if self.waiting:
            child.begin(self.waiting.popleft())
        else:
            self.idle.append(child)


async def prototype_ws(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(max_msg_size=1 << 20)
    await ws.prepare(request)
    lanes, sizes = request.app["lanes"], request.app["sizes"]
    async for message in ws:
        if message.type != WSMsgType.TEXT:
            continue
        parsed = parse_ws_message(message.data, Limits())
        if isinstance(parsed, BatchRequest):
            lanes.submit(LoopPreview(request, parsed.sections[0].text, parsed.params, sizes))
    return ws


async def serve_prototype(port: int, threaded: bool) -> None:
    allocator_as_served()
    app = web.Application()
    app["lanes"] = Lanes(2, threaded)
    app["sizes"] = schedule_sizes(Settings().chunk_schedule_ms, RATE)
    app.router.add_get("/ws", prototype_ws)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    stopping = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stopping.set)
    await stopping.wait()
    for child in app["lanes"].idle:
        child.child.close()
    await runner.cleanup()


# -- the comparison ----------------------------------------------------------------------------------


async def connected(url: str, limit: float = 60.0) -> None:
    """Waits until `url` takes a WebSocket and answers a preview (the engine loaded)."""
    started = time.perf_counter()
    while True:
        try:
            pool = SocketPool(url)
            for text in preview_texts()[:6]:  # warm-up
                await ws_request(pool, text)
            await pool.close()
            return
        except (OSError, websockets.WebSocketException):
            if time.perf_counter() - started > limit:
                raise
            await asyncio.sleep(0.05)


async def load(pid: int, url: str, rate: float, count: int, engine: Any) -> dict[str, Any]:
    pool, previews = SocketPool(url), preview_texts()
    cpu_before = process_cpu_ms(pid)
    done = await open_loop(rate, count, lambda text, i: ws_request(pool, text), previews, seed=int(rate))
    cpu = (process_cpu_ms(pid) - cpu_before) / count
    await pool.close()
    overheads = [ms - engine.first_audio_ms[text] for text, ms, _ in done]
    return {"overhead_ms": percentiles(overheads), "cpu_ms_per_preview": round(cpu, 2)}


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def prototype(port: int, threaded: bool) -> subprocess.Popen[bytes]:
    script = [sys.executable, str(Path(__file__).resolve()), "--serve", str(port)]
    script += ["--threaded"] if threaded else []
    return subprocess.Popen(script, cwd=code_root(), env={**os.environ, "PYTHONPATH": str(code_root())})


COLUMNS = ("alone", "serve", "loop_owned", "lane_thread")


async def one_round(args: argparse.Namespace, engine: Any, number: int) -> dict[str, Any]:
    """Every column once per rate, in an order turned by one each round (the VM's load drifts)."""
    root = Path(tempfile.mkdtemp(prefix="loop-owned-"))
    (root / "out").mkdir()
    ports = {name: free_port() for name in COLUMNS[1:]}
    servers = {
        "serve": start_server(argparse.Namespace(py_spy=None, cache_max_bytes=0), ports["serve"], root),
        "loop_owned": prototype(ports["loop_owned"], threaded=False),
        "lane_thread": prototype(ports["lane_thread"], threaded=True),
    }
    order = list(COLUMNS[number % 4 :] + COLUMNS[: number % 4])
    figures: dict[str, Any] = {"order": order}
    try:
        async with aiohttp.ClientSession() as session:  # the real worker refuses previews until loaded
            await ready_ms(session, f"http://127.0.0.1:{ports['serve']}", time.perf_counter())
        for port in ports.values():
            await connected(f"ws://127.0.0.1:{port}/ws")
        for rate in args.rates:
            count = max(10, int(rate * args.seconds))
            cell: dict[str, Any] = {}
            for name in order:
                if name == "alone":
                    alone = await asyncio.to_thread(
                        lanes_alone, preview_texts(), rate, count, int(rate), engine.first_audio_ms
                    )
                    cell[name] = {"overhead_ms": percentiles(alone), "loadavg": os.getloadavg()}
                    continue
                # (its own pid: `server_pid` would take a prototype's first espeak child, started by
                # its main thread; the real worker starts its children on the engine threads)
                pid, url = servers[name].pid, f"ws://127.0.0.1:{ports[name]}/ws"
                cell[name] = {**await load(pid, url, rate, count, engine), "loadavg": os.getloadavg()}
            figures[str(rate)] = cell
            print(number, rate, json.dumps(cell), flush=True)
    finally:
        for process in servers.values():
            stop(process)
        shutil.rmtree(root, ignore_errors=True)
    return figures


def summary(rounds: list[dict[str, Any]], rates: list[float]) -> dict[str, Any]:
    """Per rate and figure, each round's value for every column side by side, and the ratios to
    `serve` of the same round (what counts on a busy VM)."""
    out: dict[str, Any] = {}
    for rate in rates:
        cells = [r[str(rate)] for r in rounds]
        table: dict[str, Any] = {}
        for figure in ("p50", "p95", "p99"):
            table[figure] = {name: [c[name]["overhead_ms"][figure] for c in cells] for name in COLUMNS}
        table["cpu_ms_per_preview"] = {
            name: [c[name]["cpu_ms_per_preview"] for c in cells] for name in COLUMNS[1:]
        }
        table["p95_over_serve"] = {
            name: [round(c[name]["overhead_ms"]["p95"] / c["serve"]["overhead_ms"]["p95"], 2) for c in cells]
            for name in ("alone", "loop_owned", "lane_thread")
        }
        out[str(rate)] = table
    return out


async def alone(args: argparse.Namespace, threaded: bool) -> dict[str, Any]:
    """One prototype by itself on the rate's arrivals: its latency to the first PCM (no engine
    subtracted), optionally its loop on core 0 and its children on core 1 (`--pin`, this client on core
    1) or its children at another nice value (`--children-nice`)."""
    port = free_port()
    server = prototype(port, threaded)
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        await connected(url)
        children = [
            int(c) for c in Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        ]
        if args.pin:
            for thread in os.listdir(f"/proc/{server.pid}/task"):
                os.sched_setaffinity(int(thread), {0})
        for child in children:
            if args.pin:
                os.sched_setaffinity(child, {1})
            if args.children_nice is not None:
                os.setpriority(os.PRIO_PROCESS, child, args.children_nice)
        pool, rate = SocketPool(url), args.rates[0]
        count = max(10, int(rate * args.seconds))
        done = await open_loop(
            rate, count, lambda text, i: ws_request(pool, text), preview_texts(), int(rate)
        )
        await pool.close()
    finally:
        stop(server)
    name = "lane_thread" if threaded else "loop_owned"
    latency = percentiles([ms for _, ms, _ in done])
    return {name: latency, "pid": server.pid, "children": children, "loadavg": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--serve", type=int, help="run the prototype server on this port (the trial starts it)"
    )
    parser.add_argument("--threaded", action="store_true", help="with --serve: the control, lane threads")
    parser.add_argument("--rates", type=float, nargs="+", default=[20.0, 40.0])
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of arrivals per rate")
    parser.add_argument("--rounds", type=int, default=4, help="the columns' order turns each round")
    parser.add_argument("--engine-repeats", type=int, default=5)
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument(
        "--alone-pairs", type=int, help="instead: each prototype by itself, loop then control"
    )
    parser.add_argument(
        "--pin", action="store_true", help="with --alone-pairs: the loop on core 0, children on 1"
    )
    parser.add_argument("--children-nice", type=int, help="with --alone-pairs: the children's nice value")
    args = parser.parse_args()
    if args.alone_pairs:
        if args.pin:
            os.sched_setaffinity(0, {1})
        for _ in range(args.alone_pairs):
            for threaded in (False, True):
                print(json.dumps(asyncio.run(alone(args, threaded))), flush=True)
        return
    if args.serve:
        asyncio.run(serve_prototype(args.serve, args.threaded))
        return
    report: dict[str, Any] = {**report_header(), "cpus": os.cpu_count(), "loadavg_start": os.getloadavg()}
    engine = measure_engine(preview_texts(), lecture(), args.engine_repeats)
    rounds = [asyncio.run(one_round(args, engine, number)) for number in range(args.rounds)]
    report.update(rounds=rounds, summary=summary(rounds, args.rates), loadavg_end=os.getloadavg())
    print(json.dumps(report["summary"], indent=1))
    write_report(report, args.out, echo=False)


if __name__ == "__main__":
    main()
