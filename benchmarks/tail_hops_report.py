"""`tail_hops.py`'s reading of the notes: each request's time split into hops, the slowest 5 % against
the median, and what overlapped the slow ones (issue 25, stop 59).

A request's hops, each the time from the end of the one before (their sum is the request's time):
`/ws` (to its first PCM frame): arrival (the benchmark's send → the worker read the message), admission
(→ its job queued), queue (→ an engine thread took it), to_child (→ the espeak child read the request:
the lane's Python, the pipe, the child's wake-up), child (→ the child wrote its first frame: espeak's
own first chunk), to_lane (→ the lane had it: the pipe, the lane's wake-up, the GIL), trim (→ the first
chunk past the trimmer handed over), to_loop (→ the pump had it on the loop: the hand-off's wake-up and
turn), write (→ the burst holding it taken to be written), to_client (→ the benchmark read the frame).
`/synth` (to its response): arrival (→ its job made), admission, queue, to_child, child, to_lane, then
engine (→ the lane's last chunk: the rest of the synthesis), finish (→ the section ended: the wav
written, `ok`) and answer (→ the benchmark read the response: `done`, the handler's wake-up, the body).
A hop's share of the tail is its mean over the slowest 5 % less its mean over all, over the same for
the whole request (the means add up: the shares sum to 1). In the hops that wait on one thread (the
child's, the lane's, the loop's: `run_queue_of`), the part that thread spent runnable without a core.
Since stop 64 also each hop's own p95 over all requests (which hop has the p95), and the requests whose
lane got back from writing the request to its child only after the child's first frame (the lane lost its
core or the GIL at the write that woke the child: a wait counted in `to_lane`), and by how much.
"""

from __future__ import annotations

import statistics
from typing import Any

WS_HOPS = (
    "arrival",
    "admission",
    "queue",
    "to_child",
    "child",
    "to_lane",
    "trim",
    "to_loop",
    "write",
    "to_client",
)
SYNTH_HOPS = ("arrival", "admission", "queue", "to_child", "child", "to_lane", "engine", "finish", "answer")
TAIL_SHARE = 0.05


def child_times(
    children: dict[int, dict[str, Any]], pid: int | None, after: float
) -> dict[str, float] | None:
    """The child's read of the request a section sent at or after `after` and its first frame write
    after that read (`read`, `wrote`), and the child's run-queue wait (ms) in that read (`wake_rq`: it
    slept on the pipe, then waited for a core), from the read to the write (`made_rq`) and from the
    write to the request's last (`rest_rq`)."""
    notes = children.get(pid) if pid is not None else None
    if not notes:
        return None
    read = next((r for r in notes["reads"] if r[0] >= after and r[1]), None)
    if read is None:
        return None
    wrote = next((w for w in notes["writes"] if w[0] >= read[0]), None)
    if wrote is None:
        return None
    following = next((r[0] for r in notes["reads"] if r[0] > wrote[0] and r[1]), float("inf"))
    last = [w for w in notes["writes"] if wrote[0] <= w[0] < following][-1]  # (its END's)
    return {
        "rest_rq": round(1000 * (last[3] - wrote[3]), 3),
        "read": read[0],
        "wrote": wrote[0],
        "wake_rq": round(1000 * (read[3] - read[4]), 3),
        "made_rq": round(1000 * (wrote[3] - read[3]), 3),
    }


def hops_of(
    route: str, request: dict[str, Any], job: dict[str, Any], child: dict[str, float]
) -> dict[str, float]:
    """One request's hops in ms (`WS_HOPS` or `SYNTH_HOPS`), from the benchmark's and the probes' times."""
    read, wrote = child["read"], child["wrote"]
    marks = [request["sent"]]
    if route == "ws":
        marks += [job["received"], job["enqueued"], job["taken"], read, wrote, job["first_chunk"]]
        marks += [job["published"], job["loop_has"], job["written"], request["done"]]
        names = WS_HOPS
    else:
        marks += [job["created"], job["enqueued"], job["taken"], read, wrote, job["first_chunk"]]
        marks += [job["last_chunk"], job["section_end"], request["done"]]
        names = SYNTH_HOPS
    return {name: round(1000 * (b - a), 3) for name, a, b in zip(names, marks[:-1], marks[1:], strict=True)}


def run_queue_of(job: dict[str, Any], child: dict[str, float]) -> dict[str, float | None]:
    """The run-queue wait (ms) of the thread each hop waits on: the child's in `to_child` (its wake-up)
    and `child`, the lane's in `to_lane` (it slept on the pipe from `sent`), the loop's in `to_loop`,
    the child's from its first frame's write to its END's in `engine` (`/synth`). Each thread reads its
    own but the loop's at `published` (read by the lane): the kernel adds a wait to a thread's count
    when the wait ends, so a wait of the loop that began before `published` counts here too (an upper
    bound; `tail_run_queue_share` caps each at its hop)."""
    return {
        "to_child": child["wake_rq"],
        "child": child["made_rq"],
        "to_lane": _waited(job, "schedstat_at_sent", "schedstat_at_first_chunk"),
        "to_loop": _waited(job, "loop_schedstat_at_published", "loop_schedstat_at_loop_has"),
        "engine": child["rest_rq"],
    }


def overlapping(spans: list[Any], start: float, end: float) -> list[Any]:
    """The (start, length, ...) spans that overlap [start, end]."""
    return [span for span in spans if span[0] < end and span[0] + span[1] > start]


def causes(
    request: dict[str, Any], job: dict[str, Any], worker: dict[str, Any], children: dict[int, Any]
) -> dict[str, Any]:
    """What overlapped one request, from its arrival to its end: the worker's collections (and gen 2),
    its child's, the loop's callbacks over 1 ms, and whether it queued with a lane idle."""
    start, end = request["sent"], request["done"]
    worker_gc = overlapping(worker["gc"], start, end)
    child_notes = children.get(job.get("child"), {"gc": []})
    child_gc = overlapping(child_notes["gc"], start, end)
    slow = overlapping(worker["slow"], start, end)
    engine_waiting, lanes_waiting, running, beside = job["state_at_enqueue"]
    queued_ms = 1000 * (job["taken"] - job["enqueued"])
    if engine_waiting:
        arrived_to = "engine thread idle"
    elif lanes_waiting:
        arrived_to = "engine thread busy, a lane idle"
    else:
        arrived_to = f"all busy ({running} on the engine thread, {beside} beside)"
    return {
        "worker_gc": len(worker_gc),
        "worker_gc_gen2": sum(1 for g in worker_gc if g[2] == 2),
        "worker_gc_ms": round(1000 * sum(g[1] for g in worker_gc), 3),
        "child_gc": len(child_gc),
        "slow_callbacks": len(slow),
        "slow_callback_ms": round(1000 * sum(s[1] for s in slow), 3),
        "queued_over_1ms": queued_ms > 1,
        "lane_idle_at_arrival": bool(engine_waiting or lanes_waiting),
        "queued_with_lane_idle": queued_ms > 1 and bool(engine_waiting or lanes_waiting),
        "thread": job.get("thread"),
        "arrived_to": arrived_to,
        "taker_waited_ms": None
        if "since_last_section" not in job
        else round(1000 * job["since_last_section"][1], 3),
    }


def attribute(route: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The slowest `TAIL_SHARE` of `rows` (each with `total`, `hops`, `causes`) against all: each hop's
    median in both and its share of the growth; how often each cause came with a tail request and with
    any."""
    names = WS_HOPS if route == "ws" else SYNTH_HOPS
    ordered = sorted(rows, key=lambda row: row["total"])
    tail = ordered[-max(1, round(TAIL_SHARE * len(ordered))) :]
    growth = statistics.fmean(r["total"] for r in tail) - statistics.fmean(r["total"] for r in ordered)
    hops = {}
    for name in names:
        everyone = statistics.median(r["hops"][name] for r in ordered)
        slow = statistics.median(r["hops"][name] for r in tail)
        grew = statistics.fmean(r["hops"][name] for r in tail) - statistics.fmean(
            r["hops"][name] for r in ordered
        )
        share = grew / growth if growth > 0 else 0.0
        hops[name] = {
            "median_ms": round(everyone, 3),
            "p95_ms": _spread([r["hops"][name] for r in ordered])["p95_ms"],
            "tail_median_ms": round(slow, 3),
            "share_of_growth": round(share, 3),
        }
    counted = ("worker_gc", "worker_gc_gen2", "child_gc", "slow_callbacks")
    flags = (
        "queued_over_1ms",
        "queued_with_lane_idle",
        "lane_idle_at_arrival",
        "to_lane_off_run_queue_over_1ms",
    )

    def tally(group: list[dict[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {name: sum(1 for r in group if r["causes"][name]) for name in counted + flags}
        found["requests"] = len(group)
        found["worker_gc_ms_median"] = round(statistics.median(r["causes"]["worker_gc_ms"] for r in group), 3)
        found["slow_callback_ms_median"] = round(
            statistics.median(r["causes"]["slow_callback_ms"] for r in group), 3
        )
        found["mean_hop_and_its_run_queue_ms"] = {
            hop: [
                round(statistics.fmean(r["hops"][hop] for r in group), 3),
                round(statistics.fmean(r["run_queue"][hop] or 0.0 for r in group), 3),
            ]
            for hop in group[0]["run_queue"]
            if hop in group[0]["hops"]
        }
        found["threads"] = {
            t: sum(1 for r in group if r["causes"]["thread"] == t)
            for t in {r["causes"]["thread"] for r in group}
        }
        return found

    queue: dict[str, list[dict[str, Any]]] = {}
    for row in ordered:
        queue.setdefault(row["causes"]["arrived_to"], []).append(row)
    waited = [
        (min(r["run_queue"][h] or 0.0, r["hops"][h]), r["hops"][h])
        for r in tail
        for h in r["run_queue"]
        if h in r["hops"]
    ]
    return {
        "tail_run_queue_share": round(sum(w for w, _ in waited) / max(1e-9, sum(h for _, h in waited)), 3),
        "tail_share_in_those_hops": round(sum(h for _, h in waited) / sum(r["total"] for r in tail), 3),
        "queue_by_arrival": {k: _queued(v, tail) for k, v in sorted(queue.items())},
        "requests": len(ordered),
        "total_ms": {
            "median": round(statistics.median(r["total"] for r in ordered), 3),
            "tail_median": round(statistics.median(r["total"] for r in tail), 3),
        },
        "hops": hops,
        "lane_write_after_first_frame": _late_writes(ordered, tail),
        "tail_requests": [
            {"total": r["total"], "hops": r["hops"], "causes": r["causes"], "run_queue": r["run_queue"]}
            for r in tail
        ],
        "with_tail": tally(tail),
        "with_all": tally(ordered),
    }


def _late_writes(rows: list[dict[str, Any]], tail: list[dict[str, Any]]) -> dict[str, float]:
    """The requests whose lane got back from its write of the request to the child only after the
    child had read it and written its first frame (`late_write_ms` > 0: the lane lost its core, or the
    GIL, at the write that woke its child), in all and in the slowest 5 %, and by how much (p50, p90,
    ms). Such a wait lands in `to_lane`, before the lane's schedstat at `sent` (stop 64); with the probe's
    schedstat before the write, the share of those writes' time the lane was runnable without a core."""
    late = sorted(r["late_write_ms"] for r in rows if (r.get("late_write_ms") or 0.0) > 0)
    at = lambda share: round(late[min(len(late) - 1, int(share * len(late)))], 3) if late else 0.0  # noqa: E731
    in_tail = sum(1 for r in tail if (r.get("late_write_ms") or 0.0) > 0)
    found = {"count": len(late), "in_tail": in_tail, "p50_ms": at(0.5), "p90_ms": at(0.9)}
    timed = [
        r for r in rows if (r.get("late_write_ms") or 0.0) > 0 and r.get("write_run_queue_ms") is not None
    ]
    if timed:  # (notes since stop 64's probe) how much of those writes' time the lane spent without a core
        found["their_write_run_queue_share"] = round(
            sum(r["write_run_queue_ms"] for r in timed) / max(1e-9, sum(r["write_ms"] for r in timed)), 3
        )
    return found


def _waited(job: dict[str, Any], start: str, end: str) -> float | None:
    """The run-queue wait (ms) of the thread that read both schedstats, between them."""
    if start not in job or end not in job:
        return None
    return round(1000 * (job[end][1] - job[start][1]), 3)


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
    }


def _queued(rows: list[dict[str, Any]], tail: list[dict[str, Any]]) -> dict[str, Any]:
    """The queue hop of `rows` (requests that came to the same state), how many are in the tail, and of
    those queued over 1 ms, the taking thread's run-queue wait since its last section (its wake-up)."""
    found: dict[str, Any] = _spread([r["hops"]["queue"] for r in rows])
    found["in_tail"] = sum(1 for r in rows if r in tail)
    waits = [
        r["causes"]["taker_waited_ms"]
        for r in rows
        if r["hops"]["queue"] > 1 and r["causes"]["taker_waited_ms"] is not None
    ]
    if waits:
        found["over_1ms_taker_run_queue"] = _spread(waits)
        found["over_1ms_queue"] = _spread(
            [
                r["hops"]["queue"]
                for r in rows
                if r["hops"]["queue"] > 1 and r["causes"]["taker_waited_ms"] is not None
            ]
        )
    return found


def loop_and_gc(worker: dict[str, Any], children: dict[int, Any]) -> dict[str, Any]:
    """The run's collections by generation (count, longest ms), and the loop's slow callbacks by what ran."""

    def by_generation(spans: list[Any]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for span in spans:
            entry = found.setdefault(str(span[2]), {"count": 0, "longest_ms": 0.0, "total_ms": 0.0})
            entry["count"] += 1
            entry["longest_ms"] = round(max(entry["longest_ms"], 1000 * span[1]), 3)
            entry["total_ms"] = round(entry["total_ms"] + 1000 * span[1], 3)
        return found

    what: dict[str, list[float]] = {}
    for _, took, name, _ in worker["slow"]:
        key = name.split(" at 0x")[0].split("(")[0][:100]
        what.setdefault(key, []).append(1000 * took)
    slow_wall = sum(s[1] for s in worker["slow"])
    top = sorted(what.items(), key=lambda item: -sum(item[1]))[:8]
    return {
        "worker_gc": by_generation(worker["gc"]),
        "children_gc": by_generation([g for c in children.values() for g in c["gc"]]),
        "loop_callbacks": worker["callbacks"],
        "slow_callbacks": len(worker["slow"]),
        "slow_callbacks_ms": round(1000 * slow_wall, 2),
        "slow_callbacks_cpu_share": round(sum(s[3] for s in worker["slow"]) / slow_wall, 3)
        if slow_wall
        else None,
        "slow_by_what": {
            k: {"count": len(v), "total_ms": round(sum(v), 2), "longest_ms": round(max(v), 2)} for k, v in top
        },
    }


def report(
    requests: list[dict[str, Any]], worker: dict[str, Any], children: dict[int, Any]
) -> dict[str, Any]:
    """Per route and rate: the attribution (`attribute`); then the run's loop and collections."""
    grouped: dict[tuple[str, float], list[dict[str, Any]]] = {}
    unmatched = 0
    outputs = {
        job.get("output_path", "").rsplit("/", 1)[-1]: jid
        for jid, job in worker["jobs"].items()
        if job.get("output_path")
    }
    for request in requests:
        job_id = request.get("job_id") or outputs.get(request.get("output", ""))
        job = worker["jobs"].get(job_id or "", {})
        needed = ("enqueued", "taken", "first_chunk") + (
            ("received", "published", "loop_has", "written") if request["route"] == "ws" else ("section_end",)
        )
        child = child_times(children, job.get("child"), job.get("taken", 0.0)) if job else None
        if child is None or any(hop not in job for hop in needed):
            unmatched += 1
            continue
        hops = hops_of(request["route"], request, job, child)
        row = {"total": round(1000 * (request["done"] - request["sent"]), 3), "hops": hops}
        row["causes"] = causes(request, job, worker, children)
        row["run_queue"] = run_queue_of(job, child)
        if "sent" in job:
            row["late_write_ms"] = round(1000 * (job["sent"] - child["wrote"]), 3)
        if "before_sent" in job:  # the write's own time, and the lane's run-queue wait in it
            row["write_ms"] = round(1000 * (job["sent"] - job["before_sent"]), 3)
            row["write_run_queue_ms"] = _waited(job, "schedstat_before_sent", "schedstat_at_sent")
        # the lane woken by the child's frame, on a core but not running it: the GIL (or the syscall's own work)
        off_queue = hops["to_lane"] - (row["run_queue"]["to_lane"] or 0.0)
        row["causes"]["to_lane_off_run_queue_over_1ms"] = off_queue > 1
        grouped.setdefault((request["route"], request["rate"]), []).append(row)
    result: dict[str, Any] = {"unmatched": unmatched}
    for (route, rate), rows in sorted(grouped.items()):
        result[f"{route}@{rate:g}"] = attribute(route, rows)
    result["run"] = loop_and_gc(worker, children)
    return result


def print_summary(result: dict[str, Any]) -> None:
    """Each route and rate: hop | median | tail median | share of the tail's growth; then the causes."""
    for key, figures in result.items():
        if not isinstance(figures, dict) or "hops" not in figures:
            continue
        total = figures["total_ms"]
        print(
            f"\n{key}: {figures['requests']} requests, median {total['median']} ms, slowest 5 % median {total['tail_median']} ms"
        )
        print(
            f"  run-queue wait in the slowest 5 %'s one-thread hops: {figures['tail_run_queue_share']:.0%} of them, {figures['tail_share_in_those_hops']:.0%} of their time"
        )
        print(f"  {'hop':<10} {'median':>8} {'p95':>8} {'tail':>8} {'share':>7}")
        for name, hop in figures["hops"].items():
            print(
                f"  {name:<10} {hop['median_ms']:>8.3f} {hop['p95_ms']:>8.3f} {hop['tail_median_ms']:>8.3f}"
                f" {hop['share_of_growth']:>7.2f}"
            )
        print(
            f"  the lane back from its request's write after the child's first frame: {figures['lane_write_after_first_frame']}"
        )
        for arrival, spread in figures["queue_by_arrival"].items():
            print(f"  queue when it came to {arrival}: {spread}")
        for group in ("with_tail", "with_all"):
            print(f"  {group}: {figures[group]}")
    print("\nrun:", result["run"], "unmatched:", result["unmatched"])
