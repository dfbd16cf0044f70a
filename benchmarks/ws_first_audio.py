"""First audio of lecture slide 0 over `/ws`, from a real `npu-worker serve` process on a ZipVoice model.

Starts the worker (zipvoice-onnx, CPU, `--threads`, synthesis cache off so every request is synthesised),
waits until it is ready, then sends slide 0 as a WebSocket `synth` request `--runs` times (a new seed each
time) and prints, per run and as the median: the first PCM frame's arrival (client side, from sending)
and the worker's own `ttfa_ms`. The first request after the worker is ready is reported apart
(`cold_first_pcm_s`): it pays whatever start-up left undone; the median is over the warm runs. Load average is printed with the figures: on a shared machine they move.

    python benchmarks/ws_first_audio.py --model-dir DIR --runs 5 [--extra-flags "--first-segment-seconds 1.0"]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from common import LECTURE, REPO, listening_port, report_header, wait_until_ok, write_report


def start_worker(args: argparse.Namespace, state_dir: str) -> subprocess.Popen:
    """`serve --port 0` (the port it chose: `listening_port`)."""
    command = [sys.executable, "-m", "npu_worker.cli", "serve", "--backend", "zipvoice-onnx",
               "--model-dir", args.model_dir, "--precision", args.precision, "--device", "cpu",
               "--threads", str(args.threads), "--num-steps", str(args.steps), "--port", "0",
               "--ref-wav", str(Path(args.model_dir) / "reference_ko.wav"), "--cache-max-bytes", "0",
               "--state-dir", state_dir, "--log-level", "warning", *shlex.split(args.extra_flags)]  # fmt: skip
    return subprocess.Popen(command, cwd=REPO)


async def one_request(session: aiohttp.ClientSession, base: str, text: str, seed: int) -> dict:
    """Seconds from sending `synth` to the first PCM frame, the worker's ttfa, and the whole time."""
    out: dict = {"seed": seed}
    async with session.ws_connect(base + "/ws") as ws:
        sent = time.perf_counter()
        await ws.send_str(json.dumps({"type": "synth", "text": text, "lang": "ko", "seed": seed}))
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY and "first_pcm_s" not in out:
                out["first_pcm_s"] = round(time.perf_counter() - sent, 3)
            elif message.type == aiohttp.WSMsgType.TEXT:
                event = json.loads(message.data)
                if event.get("event") == "first_audio":
                    out["worker_ttfa_s"] = round(event.get("ttfa_ms", 0) / 1000.0, 3)
                if event.get("event") in ("done", "error"):
                    out["end"] = event.get("event")
                    break
            elif message.type != aiohttp.WSMsgType.BINARY:
                break
    out["total_s"] = round(time.perf_counter() - sent, 3)
    return out


async def measure(args: argparse.Namespace, base: str, text: str) -> list[dict]:
    async with aiohttp.ClientSession() as session:
        await wait_until_ok(session, base + "/ready", 300, interval=0.2)
        # The first request after /ready is measured on its own (a cold one: whatever the worker did not
        # do at start-up, it pays here); the runs after it are the warm figures.
        cold = await one_request(session, base, text, 999)
        cold["load_average_1m"] = round(os.getloadavg()[0], 2)
        print(json.dumps({"cold": cold}), file=sys.stderr, flush=True)
        runs = [cold]
        for index in range(args.runs):
            run = await one_request(session, base, text, index)
            run["load_average_1m"] = round(os.getloadavg()[0], 2)
            print(json.dumps(run), file=sys.stderr, flush=True)
            runs.append(run)
        return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--slide", type=int, default=0)
    parser.add_argument(
        "--extra-flags", default="", help="more `serve` flags, e.g. '--first-segment-seconds 1'"
    )
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    text = json.loads(LECTURE.read_text(encoding="utf-8"))["sections"][args.slide]["text"]
    with tempfile.TemporaryDirectory(prefix="ws-first-audio-") as state_dir:
        worker = start_worker(args, state_dir)
        try:
            port = listening_port(worker)  # (it binds before its engine loads)
            runs = asyncio.run(measure(args, f"http://127.0.0.1:{port}", text))
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    cold, runs = runs[0], runs[1:]
    firsts = [r["first_pcm_s"] for r in runs if "first_pcm_s" in r]
    report = {
        **report_header(),
        "median_first_pcm_s": statistics.median(firsts) if firsts else None,
        "min_first_pcm_s": min(firsts) if firsts else None,
        "cold_first_pcm_s": cold.get("first_pcm_s"),
        "cold": cold,
        "runs": runs,
    }
    write_report(report, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
