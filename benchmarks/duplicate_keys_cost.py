"""What the duplicate-key check costs the event loop on hostile bodies, in two checkouts side by side.

Per body (an 8 MiB `/synth` body msgspec accepts: 4 M escaped quotes in its text, a run of backslashes,
8 MiB of spaces between two strings, a key escaped beside megabytes of `[]` or `{}`, and a plain one),
the best of `--calls` calls of msgspec's own decode and of `wire.decode` (msgspec's decode, then
`duplicate_keys.refuse_duplicate_keys`), in ms: the loop is held for the whole `wire.decode`. Each
checkout runs in a child process of its own (PYTHONPATH names it); the children take turns, `--rounds`
times, so a busy spell of the machine falls on both; the figure is the best over every round.

    python benchmarks/duplicate_keys_cost.py --before /tmp/old-checkout --after . --rounds 3 --calls 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from common import REPO, report_header, write_report

# Runs in each child: builds the bodies, answers per body the best of `calls` calls (ms) of each decode.
_CHILD = """
import json, sys, time
import msgspec
import npu_worker
from npu_worker import wire
from npu_worker.errors import BadRequest
from npu_worker.protocol import SynthBody

N = 8 * 1024 * 1024 - 200
TAIL = b'"lang": "ko", "output_path": "/tmp/duplicate_keys_cost.wav"}'
BODIES = {
    "escaped quotes in the text": b'{"text": "' + b'\\\\"' * (N // 2) + b'", ' + TAIL,
    "backslash runs before quotes": b'{"text": "' + (b'\\\\\\\\' * 50 + b'\\\\"') * (N // 103) + b'", ' + TAIL,
    "spaces between two strings": b'{"text": "a"' + b" " * N + b", " + TAIL,
    "a key escaped beside [] x 2.8 M": b'{"t\\\\u0065xt": "a", "junk": [' + b"[], " * (N // 4) + b'[]], ' + TAIL,
    "a key escaped beside {} x 2.8 M": b'{"t\\\\u0065xt": "a", "junk": [' + b"{}, " * (N // 4) + b'{}], ' + TAIL,
    "plain text": b'{"text": "' + b"a" * N + b'", ' + TAIL,
}
DECODER = msgspec.json.Decoder(SynthBody)


def best(call, calls):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return round(min(times) * 1e3, 2)


def checked(body):
    try:
        wire.decode(body, SynthBody)
    except BadRequest:
        pass


print(json.dumps(npu_worker.__file__), flush=True)
calls = int(sys.argv[1])
answer = {}
for name, body in BODIES.items():
    answer[name] = {"msgspec": best(lambda: DECODER.decode(body), calls), "wire.decode": best(lambda: checked(body), calls)}
print(json.dumps(answer), flush=True)
"""


def run_child(checkout: Path, calls: int) -> tuple[str, dict[str, Any]]:
    """One child's module path and its figures, in a fresh interpreter importing `checkout`'s package
    (run there: `-c` puts the working directory first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(calls)],
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    module, figures = done.stdout.splitlines()[:2]
    return json.loads(module), json.loads(figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout holding npu_worker/ (the old)")
    parser.add_argument("--after", type=Path, default=REPO, help="a checkout holding npu_worker/ (the new)")
    parser.add_argument("--rounds", type=int, default=3, help="turns each checkout takes")
    parser.add_argument("--calls", type=int, default=3, help="calls of each decode a body, a round")
    parser.add_argument("--json", help="write the report here too")
    args = parser.parse_args()
    best: dict[str, dict[str, dict[str, float]]] = {"before": {}, "after": {}}
    modules = {}
    for _ in range(args.rounds):
        for side in ("before", "after"):
            modules[side], figures = run_child(getattr(args, side).resolve(), args.calls)
            for name, pair in figures.items():
                kept = best[side].setdefault(name, pair)
                best[side][name] = {kind: min(kept[kind], pair[kind]) for kind in pair}
    load = os.getloadavg()[0]
    write_report(report_header(modules=modules, load_average_1min=round(load, 2), best_ms=best), args.json)


if __name__ == "__main__":
    main()
