"""Every frame a real `serve` sends over `/ws` for fixed previews, as one digest a scenario, so two trees
compare byte for byte (issue 25, stop 56: a change to the loop's turns must keep every event and frame, in
order, with the same bytes).

Starts `npu-worker serve --cache-max-bytes 0` (espeak-ng) from the checkout that PYTHONPATH names, then
records, over real sockets: three short previews, a long two-section one, one with `audio: false`, one
cancelled after its third binary frame (only its `start`, `error` and `done` lines: how many frames go out
before a cancel lands is timing), a slow reader (10 ms a frame), a short one after them, and a long and
a short on two sockets at once. Text frames are kept with their timing and id fields blanked (`ttfa_ms`,
the elapsed and synthesis times, the job's id); binary frames by size and SHA-1. Prints `scenario frames digest` a line.

    PYTHONPATH=<tree> python <tree>/benchmarks/ws_frames_digest.py [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from common import free_port
from server_overhead import code_root, ready_ms

BLANKED = {
    "ttfa_ms",
    "elapsed_sec",
    "elapsed_total_sec",
    "synth_sec",
    "rtf",
    "id",
    "job_id",
    "created_at",
}  # time, ids
SHORT = {"type": "synth_batch", "sections": [{"idx": 0, "text": "안녕하세요."}]}
LONG = {
    "type": "synth_batch",
    "sections": [
        {"idx": 0, "text": "오늘은 날씨가 맑고 바람이 조금 붑니다. " * 6},
        {"idx": 1, "text": "두 번째 문단입니다, 조금 더 깁니다."},
    ],
}
QUIET = {"type": "synth_batch", "sections": [{"idx": 0, "text": "소리 없이 이벤트만."}], "audio": False}


def text_line(data: str) -> str:
    body = json.loads(data)
    return "T " + json.dumps({k: "*" if k in BLANKED else v for k, v in body.items()}, sort_keys=True)


async def transcript(
    ws: aiohttp.ClientWebSocketResponse, request: dict[str, Any], cancel_after: int = 0, delay: float = 0.0
) -> list[str]:
    """One request's frames to its `done` (or a request-level `error`)."""
    await ws.send_str(json.dumps(request))
    lines, binaries = [], 0
    while True:
        message = await ws.receive(timeout=60)
        if delay:
            await asyncio.sleep(delay)
        if message.type == aiohttp.WSMsgType.TEXT:
            lines.append(text_line(message.data))
            body = json.loads(message.data)
            if body.get("event") == "done" or (body.get("event") == "error" and body.get("idx") is None):
                return lines
        elif message.type == aiohttp.WSMsgType.BINARY:
            binaries += 1
            lines.append(f"B {len(message.data)} {hashlib.sha1(message.data).hexdigest()[:12]}")
            if binaries == cancel_after:
                await ws.send_str(json.dumps({"type": "cancel"}))
        else:
            return [*lines, f"X {message.type}"]


async def scenarios(port: int) -> dict[str, list[str]]:
    url, found = f"ws://127.0.0.1:{port}/ws", {}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url) as ws:
            for i in range(3):
                found[f"short{i}"] = await transcript(ws, SHORT)
            found["long"] = await transcript(ws, LONG)
            found["quiet"] = await transcript(ws, QUIET)
            cancelled = await transcript(ws, LONG, cancel_after=3)
            found["cancelled"] = [
                x for x in cancelled if any(f'"{e}"' in x for e in ("start", "error", "done"))
            ]
            found["slow_reader"] = await transcript(ws, LONG, delay=0.01)
            found["after"] = await transcript(ws, SHORT)
        async with session.ws_connect(url) as first, session.ws_connect(url) as second:
            found["concurrent_long"], found["concurrent_short"] = await asyncio.gather(
                transcript(first, LONG), transcript(second, SHORT)
            )
    return found


async def main(out: str | None) -> None:
    port, root = free_port(), Path(tempfile.mkdtemp(prefix="ws_frames_"))
    command = [
        sys.executable,
        "-m",
        "npu_worker.cli",
        "serve",
        "--port",
        str(port),
        "--state-dir",
        str(root / "s"),
    ]
    command += ["--cache-max-bytes", "0", "--output-roots", str(root / "o"), "--log-level", "error"]
    server = subprocess.Popen(command, cwd=code_root(), env={**os.environ, "PYTHONPATH": str(code_root())})
    try:
        async with aiohttp.ClientSession() as session:
            await ready_ms(session, f"http://127.0.0.1:{port}", time.perf_counter())
        found = await scenarios(port)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)
    for name, lines in found.items():
        print(name, len(lines), hashlib.sha1("\n".join(lines).encode()).hexdigest()[:12])
    if out:
        Path(out).write_text(json.dumps(found, indent=0, ensure_ascii=False))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write every scenario's lines here too")
    asyncio.run(main(parser.parse_args().out))
