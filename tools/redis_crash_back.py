"""A Redis that crashes back to an older snapshot under a streamed batch: what the stream's caller sees.

Starts a redis-server (no persistence of its own, a temporary directory) and two `both` worker processes
on it (the tests' tone engine), submits a batch of `--sections` to node a and streams its events from
node b; once `--snapshot-at` sections are final Redis saves a snapshot (SAVE), once `--kill-at` are it is
killed (SIGKILL) and started again on that snapshot. Prints the stream's figures as JSON: its lines,
last event, distinct sections `ok`, `ok` lines, whether seqs only increased, the sections never `ok`.

    python tools/redis_crash_back.py --runs 3
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402

from tests.cluster_support import call, node_starter  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402
from tests.test_cluster import batch, events  # noqa: E402


def final_count(client: redis.Redis, job_id: str, at_least: int) -> None:
    while client.hlen(f"npu:final:{job_id}") < at_least:
        time.sleep(0.01)


def one_run(sections: int, snapshot_at: int, kill_at: int) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="redis-crash-back-"))
    server = RedisServer(tmp)
    server.start()
    nodes = node_starter(tmp, server)
    start = next(nodes)
    try:
        a, b = start("a", delay=0.01), start("b", delay=0.01)
        _, accepted = call("POST", f"{a.base}/synth_batch?async=1", batch(tmp, sections))
        job_id = accepted["job_id"]
        client = redis.Redis.from_url(server.url)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            stream = pool.submit(events, f"{b.base}/jobs/{job_id}/events")
            final_count(client, job_id, snapshot_at)
            client.save()
            final_count(client, job_id, kill_at)
            assert server.process is not None
            server.process.kill()
            server.process.wait()
            server.process = None
            server.start()
            log = stream.result(timeout=120)
        oks = [line["idx"] for line in log if line.get("status") == "ok"]
        seqs = [line["seq"] for line in log]
        return {
            "lines": len(log),
            "last": log[-1]["event"],
            "distinct_ok": len(set(oks)),
            "ok_lines": len(oks),
            "seq_increasing": all(x < y for x, y in zip(seqs, seqs[1:], strict=False)),
            "never_ok": sorted(set(range(sections)) - set(oks)),
        }
    finally:
        for _ in nodes:  # kills the worker processes
            pass
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", type=int, default=60)
    parser.add_argument("--snapshot-at", type=int, default=10)
    parser.add_argument("--kill-at", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.runs):
        print(json.dumps(one_run(args.sections, args.snapshot_at, args.kill_at)), flush=True)


if __name__ == "__main__":
    main()
