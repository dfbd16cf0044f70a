"""What the espeak child does a preview beyond espeak itself, counted (issue 25, stop 57).

The child's request loop (`espeak_child._Child`) runs here in this process on pipes of its own (a
thread drains its frames as the worker's reader would), under cProfile, for `--previews` preview
sentences in turn (the lecture's, as `call_counts.py` sends them); then the same sentences through
`EspeakEngine.stream_into` alone with a sink that keeps nothing (the engine alone, as
`server_overhead.py` times it). Printed: the Python calls a preview of each, their difference, and the
functions with the most calls in the child beyond the engine alone. Counts, not times: a shared VM
moves every timing, and a call the child makes is one it makes on any VM.

    PYTHONPATH=<checkout> python benchmarks/child_calls.py --previews 200 [--top 30] [--out FILE]

`--cpu` instead: a real espeak child (`EspeakProcessEngine`, as `serve` runs one) and the engine alone
in this process, the same sentences, each's CPU a preview from `/proc` (clock ticks), its minor page
faults and context switches, `--gap-ms` of quiet after each preview (spaced as arrivals are).

    PYTHONPATH=<checkout> python benchmarks/child_calls.py --cpu --previews 200 [--gap-ms 50]

`--reads` instead (stop 62): a real espeak child, the same sentences, and what each of the engine
lane's reads of its pipe brought (`FrameReader._wait` counted on the instance, no product code): the
reads a preview, the chunks a preview, how many chunks each read in turn brought (the first read's,
the second's, ...) and how many previews took each number of reads. The lane's hand-overs to the
loop follow these reads: the first chunk alone (a listener waits for it), then one write of the
child's held frames each ≈ 10 ms.

    PYTHONPATH=<checkout> python benchmarks/child_calls.py --reads --previews 200
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from call_counts import summed_stats  # noqa: E402
from server_overhead import preview_texts  # noqa: E402

from npu_worker.engine.base import SynthesisRequest  # noqa: E402
from npu_worker.engine.espeak_child import REQUEST, _Child, read_frame, write_frame  # noqa: E402


def _calls(profile: cProfile.Profile) -> Counter[str]:
    """Calls by function (`file:name`, dataclass inits summed as `call_counts.py` does)."""
    counts: Counter[str] = Counter()
    for (file, _line, name), (_cc, calls, *_rest) in summed_stats(profile).items():
        label = f"{Path(file).name}:{name}" if file != "~" else name
        counts[label] += calls
    return counts


def child_calls(texts: list[str]) -> Counter[str]:
    """The child's calls for `texts`, each a request as the worker sends it (`REQUEST` frames)."""
    requests_read, requests_write = os.pipe()
    out_read, out_write = os.pipe()
    drained = threading.Thread(target=_drain, args=(out_read,), daemon=True)
    drained.start()
    child = _Child(os.fdopen(requests_read, "rb", buffering=0), out_write)
    child.engine.load()
    profile = cProfile.Profile()
    for number, text in enumerate(texts):
        payload = json.dumps({"id": number, "text": text, "lang": "ko", "speed_factor": 1.0}).encode()
        write_frame(requests_write, REQUEST, payload)
        kind, frame = read_frame(child.requests)
        assert kind == REQUEST
        profile.enable()
        child._synthesise(frame)
        profile.disable()
    os.close(requests_write)
    return _calls(profile)


def _drain(fd: int) -> None:
    while os.read(fd, 1 << 20):
        pass


def engine_calls(texts: list[str]) -> Counter[str]:
    """The engine alone on the same texts, its chunks handed to a sink that keeps nothing."""
    from npu_worker.engine.espeak import EspeakEngine

    engine = EspeakEngine()
    engine.load()
    profile = cProfile.Profile()
    for text in texts:
        profile.enable()
        engine.stream_into(SynthesisRequest(text, "ko", 1.0), lambda _chunk: True)
        profile.disable()
    return _calls(profile)


def proc_counts(pid: int) -> dict[str, float]:
    """A process's CPU (ms, from clock ticks), minor page faults and context switches so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    status = dict(
        line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line
    )
    tick = 1000 / os.sysconf("SC_CLK_TCK")
    return {
        "cpu_ms": (int(fields[11]) + int(fields[12])) * tick,
        "system_ms": int(fields[12]) * tick,
        "minor_faults": int(fields[7]),
        "voluntary_switches": int(status["voluntary_ctxt_switches"]),
        "involuntary_switches": int(status["nonvoluntary_ctxt_switches"]),
    }


def cpu_a_preview(texts: list[str], gap_ms: float, child: bool) -> dict[str, float]:
    """`proc_counts` a preview of the espeak child (`child`) or of this process running the engine alone."""
    from npu_worker.engine.espeak import EspeakEngine
    from npu_worker.engine.espeak_process_engine import EspeakProcessEngine

    engine = EspeakProcessEngine() if child else EspeakEngine()
    engine.load()
    pid = engine.child.pid if isinstance(engine, EspeakProcessEngine) else os.getpid()
    for text in texts[:30]:  # warm
        engine.stream_into(SynthesisRequest(text, "ko", 1.0), lambda _chunk: True)
    before = proc_counts(pid)
    for text in texts:
        engine.stream_into(SynthesisRequest(text, "ko", 1.0), lambda _chunk: True)
        time.sleep(gap_ms / 1000)
    after = proc_counts(pid)
    engine.close()
    return {key: round((after[key] - before[key]) / len(texts), 3) for key in before}


def reads_a_preview(texts: list[str]) -> dict[str, object]:
    """`--reads`: the chunks each blocking read of a real child's pipe brought, a preview in turn."""
    from npu_worker.engine.espeak_process_engine import EspeakProcessEngine

    engine = EspeakProcessEngine()
    engine.load()
    for text in texts[:30]:  # warm
        engine.stream_into(SynthesisRequest(text, "ko", 1.0), lambda _chunk: True)
    answers = engine.child._answers
    wait = answers._wait
    per_read: list[int] = []

    def counted_wait(into: memoryview) -> int:
        per_read.append(0)
        return int(wait(into))

    def counted_chunk(_chunk: object) -> bool:
        per_read[-1] += 1
        return True

    answers._wait = counted_wait  # type: ignore[method-assign]
    previews: list[list[int]] = []
    for text in texts:
        per_read = []
        engine.stream_into(SynthesisRequest(text, "ko", 1.0), counted_chunk)
        previews.append(per_read)
    engine.close()
    count = len(previews)
    longest = max(len(reads) for reads in previews)
    in_turn = [sum(r[i] for r in previews if len(r) > i) / count for i in range(longest)]
    return {
        "previews": count,
        "reads_a_preview": round(sum(len(r) for r in previews) / count, 3),
        "chunks_a_preview": round(sum(sum(r) for r in previews) / count, 3),
        "chunks_by_read_in_turn": [round(n, 3) for n in in_turn],
        "previews_by_reads": dict(sorted(Counter(len(r) for r in previews).items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--previews", type=int, default=200)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", help="write the counts a preview here (JSON)")
    parser.add_argument("--cpu", action="store_true", help="a real child's CPU against the engine alone's")
    parser.add_argument("--gap-ms", type=float, default=0.0, help="with --cpu: quiet after each preview")
    parser.add_argument(
        "--reads", action="store_true", help="the chunks each read of a real child's pipe brought"
    )
    args = parser.parse_args()
    sentences = preview_texts()
    texts = [sentences[i % len(sentences)] for i in range(args.previews)]
    if args.reads:
        print(json.dumps(reads_a_preview(texts), indent=1))
        return
    if args.cpu:
        report = {
            "child": cpu_a_preview(texts, args.gap_ms, child=True),
            "engine_alone": cpu_a_preview(texts, args.gap_ms, child=False),
        }
        print(json.dumps(report))
        return
    engine_calls(texts[:30])  # warm: the reader's patterns, the voices
    child = child_calls(texts)
    engine = engine_calls(texts)
    per = args.previews
    beyond = Counter({k: (child[k] - engine.get(k, 0)) / per for k in child})
    report = {
        "previews": per,
        "child_calls": round(sum(child.values()) / per, 2),
        "engine_alone_calls": round(sum(engine.values()) / per, 2),
        "beyond": {k: round(v, 2) for k, v in beyond.most_common(args.top) if v},
    }
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
