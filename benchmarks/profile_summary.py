"""Summarise a `py-spy record -f raw --threads` file: where the worker's CPU went, by thread and function.

python benchmarks/profile_summary.py FILE.raw > benchmarks/results/server_overhead_profile_NAME_DATE.txt
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path


def summarise(path: Path, top: int = 25) -> str:
    by_thread: Counter[str] = Counter()
    own: Counter[str] = Counter()  # leaf frames: CPU spent in the function itself
    inclusive: Counter[str] = Counter()  # any frame: CPU spent in it or below
    total = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        by_thread[frames[0]] += count
        own[frames[-1]] += count
        for frame in set(frames[1:]):
            inclusive[frame] += count
    lines = [f"{total} samples (250 Hz: {total / 250:.1f} s of CPU)", "", "by thread:"]
    lines += [f"  {n:6d} {100 * n / total:5.1f}%  {name}" for name, n in by_thread.most_common(top)]
    lines += ["", "self (leaf frames):"]
    lines += [f"  {n:6d} {100 * n / total:5.1f}%  {name}" for name, n in own.most_common(top)]
    lines += ["", "inclusive, npu_worker frames:"]
    ours = [(name, n) for name, n in inclusive.most_common() if "npu_worker" in name][:top]
    lines += [f"  {n:6d} {100 * n / total:5.1f}%  {name}" for name, n in ours]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw", type=Path, help="a `py-spy record -f raw --threads` file")
    parser.add_argument("--top", type=int, default=25, help="rows per list")
    args = parser.parse_args(argv)
    print(summarise(args.raw, args.top))


if __name__ == "__main__":
    main()
