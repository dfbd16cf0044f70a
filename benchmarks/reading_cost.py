"""What the text costs before espeak-ng reads it, per lecture preview text, in two checkouts side by side.

Per text (the first sentence of each of the 39 lecture sections, `server_overhead.preview_texts`): the
best of `--calls` calls of `spoken_form(text, "ko")` and of all that runs on a Korean preview before espeak
(`espeak_pieces(spoken_form(...))`, as `espeak.espeak_text` does), in µs. Each checkout runs in a child
process of its own (PYTHONPATH names it); the children take turns, `--rounds` times, so a busy spell of the
machine falls on both; the figure is the best over every round. Beside them, a corpus: up to `--corpus` (3 000) of the
texts the Korean reading's tests read (`tests/test_korean*.py`: formulas, units, money and code), one pass of
`spoken_form` over them each round in the child's CPU time (a shared VM's other work not counted), best of the rounds.
The corpus opens with every sentence of the lecture; the readings of the whole corpus that differ between the two
checkouts are listed, before and after (a change of the reading should change only the texts it means to).

    python benchmarks/reading_cost.py --before /work/k4-base --after . --rounds 7 --calls 30
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from common import REPO, report_header, write_report

# Runs in each child: reads a call count per line, answers the per-text best of that many calls (µs) and one pass
# over the corpus (ms of the thread's CPU time).
_CHILD = """
import json, sys, time
from npu_worker.engine.korean_reading import spoken_form
from npu_worker.engine.text_form import espeak_pieces
import npu_worker
print(json.dumps(npu_worker.__file__), flush=True)
texts = json.loads(sys.stdin.readline())
corpus = json.loads(sys.stdin.readline())
def best(call, text, calls):
    fastest = float("inf")
    for _ in range(calls):
        started = time.perf_counter_ns()
        call(text)
        fastest = min(fastest, time.perf_counter_ns() - started)
    return fastest / 1000
def spoken(text):
    return spoken_form(text, "ko")
def before_espeak(text):
    return espeak_pieces(spoken_form(text, "ko"))
print(json.dumps([spoken(text) for text in texts]), flush=True)
def spoken_or_error(text):
    try:
        return spoken(text)
    except Exception as error:  # an older checkout's bug: shown as a difference, not fatal
        return f"raised {error!r}"
print(json.dumps([spoken_or_error(text) for text in corpus]), flush=True)
for line in sys.stdin:
    calls = int(line)
    answer = {"spoken_form": [best(spoken, t, calls) for t in texts],
              "before_espeak": [best(before_espeak, t, calls) for t in texts]}
    started = time.thread_time_ns()
    failed = 0
    for text in corpus:
        try:
            spoken(text)
        except Exception:  # an older checkout's bug ("n!의" raised KeyError before the k6 review): counted, not fatal
            failed += 1
    answer["corpus_failed"] = failed
    answer["corpus_ms"] = (time.thread_time_ns() - started) / 1e6
    print(json.dumps(answer), flush=True)
"""


def preview_texts() -> list[str]:
    """The first sentence of each lecture section (server_overhead.py's, without its imports)."""
    sections = json.loads((REPO / "npu_worker/bench/lecture_ko_39.json").read_text(encoding="utf-8"))
    texts = []
    for section in sections["sections"]:
        first = section["text"].replace("?", ".").split(".")[0].strip()
        if first:
            texts.append(first + ".")
    return texts


def corpus_texts(count: int) -> list[str]:
    """Every sentence of the lecture's 39 sections, then up to `count` of the texts the Korean reading's tests read
    (their string constants, a fixed sample)."""
    sections = json.loads((REPO / "npu_worker/bench/lecture_ko_39.json").read_text(encoding="utf-8"))
    sentences = {
        sentence: None
        for section in sections["sections"]
        for sentence in re.split(r"(?<=[.?!])\s+", section["text"])
        if sentence.strip()
    }
    found: dict[str, None] = {}
    for path in sorted((REPO / "tests").glob("test_korean*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 400:
                found[node.value] = None
    texts = [text for text in found if text not in sentences]
    return list(sentences) + random.Random(6).sample(texts, min(count, len(texts)))


class Child:
    """A Python process that imported `npu_worker` from `checkout` and times calls when asked."""

    def __init__(self, checkout: Path, texts: list[str], corpus: list[str]) -> None:
        environment = {**os.environ, "PYTHONPATH": str(checkout)}
        self.process = subprocess.Popen(  # in the checkout: `-c` puts the working directory first on sys.path
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environment,
            cwd=checkout,
        )
        assert self.process.stdout is not None
        self.module = json.loads(self.process.stdout.readline())  # the npu_worker it imported
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(texts) + "\n")
        self.spoken = self.ask(json.dumps(corpus))
        self.corpus_spoken = json.loads(self.process.stdout.readline())

    def ask(self, line: str) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", type=Path, required=True, help="the checkout measured first in each round"
    )
    parser.add_argument("--after", type=Path, default=REPO, help="the other checkout (default: this one)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=30, help="calls per text in a round")
    parser.add_argument("--corpus", type=int, default=3000, help="texts of the tests' corpus")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--show", type=int, default=60, help="corpus readings that differ, shown before and after"
    )
    args = parser.parse_args()
    texts, corpus = preview_texts(), corpus_texts(args.corpus)
    sides = {
        side: Child(path.resolve(), texts, corpus)
        for side, path in (("before", args.before), ("after", args.after))
    }
    best: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    corpus_ms = {side: float("inf") for side in sides}
    corpus_failed = dict.fromkeys(sides, 0)
    try:
        for _ in range(args.rounds):
            for side, child in sides.items():
                answer = child.ask(str(args.calls))
                corpus_ms[side] = min(corpus_ms[side], answer.pop("corpus_ms"))
                corpus_failed[side] = answer.pop("corpus_failed")
                for figure, values in answer.items():
                    kept = best[side].get(figure, [float("inf")] * len(texts))
                    best[side][figure] = [min(a, b) for a, b in zip(kept, values, strict=True)]
    finally:
        for child in sides.values():
            child.close()
    print("\n".join(f"{side}: {child.module}" for side, child in sides.items()))
    changed = [i for i, text in enumerate(texts) if sides["before"].spoken[i] != sides["after"].spoken[i]]
    print(f"{len(texts)} preview texts; spoken forms that differ: {changed or 'none'}")
    readings = zip(corpus, sides["before"].corpus_spoken, sides["after"].corpus_spoken, strict=True)
    corpus_changed = [(text, before, after) for text, before, after in readings if before != after]
    print(
        f"{len(corpus)} corpus texts (the lecture's sentences, then the tests'); readings that differ: {len(corpus_changed)}"
    )
    for text, before, after in corpus_changed[: args.show]:
        print(f"  {text!r}\n    before: {before}\n    after:  {after}")
    print(f"{'#':>3} {'chars':>5}  " + "  ".join(f"{f + ' before/after µs':>30}" for f in best["before"]))
    for i, text in enumerate(texts):
        cells = [f"{best['before'][f][i]:>14.1f} {best['after'][f][i]:>15.1f}" for f in best["before"]]
        print(f"{i:>3} {len(text):>5}  " + "  ".join(cells))
    for figure in best["before"]:
        before, after = best["before"][figure], best["after"][figure]
        print(
            f"{figure}: median {statistics.median(before):.1f} -> {statistics.median(after):.1f} µs, "
            f"sum of the 39 {sum(before):.0f} -> {sum(after):.0f} µs"
        )
    print(
        f"corpus of {len(corpus)} test texts, one pass (CPU): "
        f"{corpus_ms['before']:.1f} -> {corpus_ms['after']:.1f} ms, best of {args.rounds}; texts that raised: "
        f"{corpus_failed['before']} -> {corpus_failed['after']}"
    )
    if args.json:
        report = {
            **report_header(),
            "texts": texts,
            "best_us": best,
            "changed": changed,
            "corpus_changed": corpus_changed,
            "corpus_ms": corpus_ms,
            "corpus_failed": corpus_failed,
        }
        write_report(report, args.json, echo=False)


if __name__ == "__main__":
    main()
