"""First audio of `/ws` previews from a real `npu-worker serve` (ZipVoice ONNX): cold, idle, after an
abandoned preview, and during a `/synth_batch`; and the batch's wall time with and without previews.

First audio = seconds from sending the `synth` message to the first binary PCM frame (client side).
Situations, all in one worker process (synthesis cache off, so every request is synthesised):
  cold      the first preview after /health says loaded (slide 1's text); --cold-starts N more
            fresh workers add one cold preview each
  idle      --previews previews (slides 1..N; every situation uses these texts), --gap s apart, read to the end
  abandon   --previews previews, each sent at once after the previous was abandoned at its first frame
            (alternately socket closed and `cancel` sent); the very first abandoned one is not counted
  batch     a --slides-section /synth_batch alone (wall time), then again with --batch-previews previews
            spread over its length; their first audio, and wall time vs alone + the previews' engine time
Ratios are to the idle median of the same run. Goals: abandon <= 1.2x, batch <= 1.5x, cold <= 1.2x,
batch with previews <= alone + previews' engine time x 1.05.

    python benchmarks/preview_latency.py --model-dir /tmp/zv-tiny --json benchmarks/results/preview_latency_tiny.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from common import listening_port  # benchmarks/ is on sys.path when this script runs

from npu_worker.bench.cli import DEFAULT_TEXTS
from npu_worker.bench.load import health, wait_idle
from npu_worker.bench.report import load_average, machine_info
from npu_worker.bench.stats import summarize

LECTURE = DEFAULT_TEXTS  # the bundled 39-slide lecture
GOALS = {"cold": 1.2, "abandon": 1.2, "batch": 1.5}


def serve_command(args: argparse.Namespace, tmp: Path) -> list[str]:
    """`serve --port 0` (the port it chose: `listening_port`)."""
    return [sys.executable, "-m", "npu_worker.cli", "serve", "--backend", "zipvoice-onnx",
            "--model-dir", args.model_dir, "--precision", args.precision, "--device", "cpu",
            "--num-steps", str(args.num_steps), "--threads", str(args.threads), "--port", "0",
            "--state-dir", str(tmp / "state"), "--output-roots", str(tmp), "--cache-max-bytes", "0",
            "--ref-wav", str(Path(args.model_dir) / "reference_ko.wav"), "--log-level", "warning"]  # fmt: skip


async def wait_loaded(session: aiohttp.ClientSession, base: str, limit: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        try:
            body = await health(session, base)
            if body.get("loaded"):
                return time.monotonic() - started
            if body.get("status") == "fail":
                raise SystemExit(f"the worker failed to load: {body.get('error')}")
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise SystemExit("the worker did not load in time")


async def drain(ws: aiohttp.ClientWebSocketResponse, out: dict[str, Any]) -> None:
    """Read events until `done` (or the socket ends): audio bytes, engine time, errors; then close."""
    async for message in ws:
        if message.type == aiohttp.WSMsgType.BINARY:
            out["bytes"] = out.get("bytes", 0) + len(message.data)
            continue
        if message.type != aiohttp.WSMsgType.TEXT:
            break
        event = json.loads(message.data)
        kind = event.get("event")
        if kind == "first_audio":
            out["worker_ttfa_ms"] = event.get("ttfa_ms")
        elif kind == "progress" and event.get("status") == "ok":
            out["engine_s"] = out.get("engine_s", 0.0) + float(event.get("elapsed_sec") or 0.0)
        elif kind == "error":
            out["error"] = event.get("error")
        elif kind == "done":
            out["cancelled"] = event.get("cancelled")
            break
    out["end_s"] = round(time.perf_counter() - out.pop("_sent"), 3)
    await ws.close()


async def preview(
    session: aiohttp.ClientSession, base: str, text: str, abandon: str | None = None
) -> dict[str, Any]:
    """One `/ws` synth. abandon: None (read to the end), "close" or "cancel" at the first PCM frame;
    after a `cancel` the rest is read in the background (returned as "_tail") while the caller moves on."""
    out: dict[str, Any] = {"abandon": abandon}
    ws = await session.ws_connect(base + "/ws")
    out["_sent"] = sent = time.perf_counter()
    await ws.send_str(json.dumps({"type": "synth", "text": text, "lang": "ko"}))
    async for message in ws:
        if message.type == aiohttp.WSMsgType.BINARY:
            out["first_audio_s"] = round(time.perf_counter() - sent, 3)
            out["bytes"] = len(message.data)
            break
        if message.type != aiohttp.WSMsgType.TEXT:
            break
        if (event := json.loads(message.data)).get("event") in ("error", "done"):
            out["error"] = event.get("error") or "done before any audio"
            break
    if abandon == "close" or "first_audio_s" not in out:
        out.pop("_sent")
        await ws.close()
        return out
    if abandon == "cancel":
        await ws.send_str(json.dumps({"type": "cancel"}))
        out["_tail"] = asyncio.create_task(drain(ws, out))
        return out
    await drain(ws, out)
    return out


async def batch(
    session: aiohttp.ClientSession, base: str, sections: list[dict], started: asyncio.Event
) -> dict[str, Any]:
    """POST /synth_batch (NDJSON); wall time from sending to `done`; `started` set at the first `synth`."""
    sent = time.perf_counter()
    out: dict[str, Any] = {"section_engine_s": 0.0}
    async with session.post(base + "/synth_batch", json={"sections": sections, "lang": "ko"}) as r:
        async for line in r.content:
            event = json.loads(line) if line.strip() else {}
            if event.get("status") == "synth":
                started.set()
            elif event.get("status") == "ok":
                out["section_engine_s"] += float(event.get("elapsed_sec") or 0.0)
            elif event.get("event") == "done":
                out.update(ok=event["ok_count"], fail=event["fail_count"], done=event)
    out["wall_s"] = round(time.perf_counter() - sent, 3)
    out["section_engine_s"] = round(out["section_engine_s"], 3)
    return out


async def batch_with_previews(
    session: aiohttp.ClientSession, base: str, sections: list[dict], texts: list[str], gap: float
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    started = asyncio.Event()
    job = asyncio.create_task(batch(session, base, sections, started))
    await started.wait()
    runs, start = [], time.monotonic()
    for i, text in enumerate(texts):  # at fixed offsets from the batch's first section
        await asyncio.sleep(max(0.0, start + (i + 1) * gap - time.monotonic()))
        if job.done():
            break
        runs.append(await preview(session, base, text))
        runs[-1]["batch_running_at_end"] = not job.done()
    return await job, runs


async def measure(args: argparse.Namespace, base: str, tmp: Path) -> dict[str, Any]:
    slides = [s["text"] for s in json.loads(Path(args.lecture).read_text(encoding="utf-8"))["sections"]]
    texts = slides[1 : 1 + args.previews]  # the same texts in every situation: medians comparable

    def sections(tag: str) -> list[dict]:
        return [{"idx": i, "text": t, "output_path": str(tmp / tag / f"s{i:02d}.wav")}
                for i, t in enumerate(slides[: args.slides])]  # fmt: skip

    res: dict[str, Any] = {"anomalies": [], "load_average": {}}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1800)) as session:
        res["load_s"] = round(await wait_loaded(session, base, args.load_timeout), 2)
        res["cold"] = [await preview(session, base, texts[0])]
        res["load_average"]["cold"] = load_average()
        res["idle"] = []
        for text in texts:
            await asyncio.sleep(args.gap)
            res["idle"].append(await preview(session, base, text))
        res["load_average"]["idle"] = load_average()
        runs = []
        for i, text in enumerate([texts[-1], *texts]):
            runs.append(await preview(session, base, text, abandon=("close", "cancel")[i % 2]))
        for run in runs:
            if "_tail" in run:
                await asyncio.wait_for(run.pop("_tail"), 120)
        res["abandon_first"], res["abandon"] = runs[0], runs[1:]
        if problem := await wait_idle(session, base, 120):
            res["anomalies"].append(f"{problem} after abandoning: {await health(session, base)}")
        res["load_average"]["abandon"] = load_average()
        res["jobs_running_after_abandon"] = (await health(session, base)).get("jobs_running")
        await asyncio.sleep(args.gap)
        res["batch_alone"] = await batch(session, base, sections("alone"), asyncio.Event())
        res["load_average"]["batch_alone"] = load_average()
        await asyncio.sleep(args.gap)
        spread = res["batch_alone"]["wall_s"] / (args.batch_previews + 1)
        res["batch_with"], res["batch"] = await batch_with_previews(
            session,
            base,
            sections("with"),
            [texts[i % len(texts)] for i in range(args.batch_previews)],
            spread,
        )
        res["load_average"]["batch_with"] = load_average()
    for name in ("cold", "idle", "abandon", "batch"):
        for run in res[name]:
            if run.get("error") or "first_audio_s" not in run:
                res["anomalies"].append(f"{name}: {run}")
            if run["abandon"] == "cancel" and run.get("cancelled") is not True:
                res["anomalies"].append(f"{name}: a cancelled preview ended without done cancelled=true: {run}")  # fmt: skip
    for name in ("batch_alone", "batch_with"):
        if res[name].get("fail") or res[name].get("ok") != args.slides:
            res["anomalies"].append(f"{name}: {res[name].get('done')}")
    return res


async def with_worker(args: argparse.Namespace, tmp: Path, work: Any) -> Any:
    """Start `npu-worker serve`, run `work(args, base, tmp)` against it, stop it."""
    tmp.mkdir(parents=True, exist_ok=True)
    command = serve_command(args, tmp)
    worker = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1])
    try:
        port = await asyncio.to_thread(listening_port, worker)  # (it binds before its engine loads)
        return command, await work(args, f"http://127.0.0.1:{port}", tmp)
    finally:
        worker.terminate()
        await asyncio.to_thread(worker.wait, 60)


async def cold_only(args: argparse.Namespace, base: str, tmp: Path) -> dict[str, Any]:
    slides = [s["text"] for s in json.loads(Path(args.lecture).read_text(encoding="utf-8"))["sections"]]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as session:
        await wait_loaded(session, base, args.load_timeout)
        return await preview(session, base, slides[1])


def summary(res: dict[str, Any]) -> list[dict[str, Any]]:
    idle = statistics.median(r["first_audio_s"] for r in res["idle"])
    rows = []
    for name in ("cold", "idle", "abandon", "batch"):
        values = [r.get("first_audio_s") for r in res[name]]
        stats = summarize(values)
        median = statistics.median(v for v in values if v is not None) if stats["n"] else None
        ratio = round(median / idle, 2) if median else None
        goal = GOALS.get(name)
        rows.append({"situation": name, "first_audio_s": values, "median_s": median, "p95_s": stats["p95"],
                     "ratio": ratio, "goal": goal, "met": None if goal is None or ratio is None else ratio <= goal})  # fmt: skip
    alone, with_ = res["batch_alone"]["wall_s"], res["batch_with"]["wall_s"]
    engine = sum(r.get("engine_s", 0.0) for r in res["batch"])
    idle_engine = sum(
        res["idle"][i % len(res["idle"])].get("engine_s", 0.0) for i in range(len(res["batch"]))
    )
    bound = alone + engine * 1.05
    rows.append({"situation": "batch wall", "alone_s": alone, "with_previews_s": with_, "previews": len(res["batch"]),
                 "previews_engine_s": round(engine, 3), "previews_engine_if_idle_s": round(idle_engine, 3),
                 "bound_s": round(bound, 3), "ratio": round(with_ / bound, 3), "met": with_ <= bound})  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| situation | n | first audio, ms (in order) | median ms | × idle median | goal | met |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for row in rows[:-1]:
        ms = ", ".join("—" if v is None else f"{v * 1000:.0f}" for v in row["first_audio_s"])
        median = "—" if row["median_s"] is None else f"{row['median_s'] * 1000:.0f}"
        goal = f"≤ {row['goal']}×" if row["goal"] else ""
        met = {True: "yes", False: "**no**", None: ""}[row["met"]]
        lines.append(f"| {row['situation']} | {len(row['first_audio_s'])} | {ms} | {median} | {row['ratio']} | {goal} | {met} |")  # fmt: skip
    w = rows[-1]
    lines += ["", "| batch alone s | with previews s | previews | previews' engine s | (idle estimate) | bound s (alone + engine×1.05) | with / bound | met |",
              "|---|---|---|---|---|---|---|---|",
              f"| {w['alone_s']} | {w['with_previews_s']} | {w['previews']} | {w['previews_engine_s']} | {w['previews_engine_if_idle_s']} | {w['bound_s']} | {w['ratio']} | {'yes' if w['met'] else '**no**'} |"]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add = parser.add_argument
    add("--model-dir", required=True, help="ZipVoice ONNX dir with reference_ko.wav")
    add("--precision", default="int8")
    add("--num-steps", type=int, default=4)
    add("--threads", type=int, default=2)
    add("--previews", type=int, default=5, help="previews per situation (idle, abandon)")
    add("--batch-previews", type=int, help="previews during the batch (default 2 x --previews)")
    add("--slides", type=int, default=39, help="batch sections (1-39)")
    add("--gap", type=float, default=3.0, help="seconds between idle previews")
    add("--lecture", default=str(LECTURE), help="slides JSON ({'sections': [{'text': ...}]})")
    add("--load-timeout", type=float, default=600.0)
    add("--cold-starts", type=int, default=0, help="extra worker starts measuring only the cold preview")
    add("--json", help="write the results here (e.g. benchmarks/results/preview_latency_tiny.json)")
    args = parser.parse_args(argv)
    args.batch_previews = args.batch_previews or 2 * args.previews
    load_start = load_average()
    with tempfile.TemporaryDirectory(prefix="preview-latency-") as name:
        colds = []
        for start in range(args.cold_starts):  # more cold samples: one fresh worker each
            colds.append(asyncio.run(with_worker(args, Path(name) / f"cold{start}", cold_only))[1])
        command, res = asyncio.run(with_worker(args, Path(name), measure))
        res["cold"] += colds
    rows = summary(res)
    print(table(rows))
    for anomaly in res["anomalies"]:
        print("ANOMALY:", anomaly)
    report = {"command": " ".join(["python", *sys.argv]), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": machine_info(None, load_start), "serve": " ".join(command[2:]).replace(name, "<tmp>"),
              "summary": rows, "results": res}  # fmt: skip
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
