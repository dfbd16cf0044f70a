"""An espeak process's start, in CPU: what a lane's or the worker's espeak child costs before it says READY.

    PYTHONPATH=<checkout> python benchmarks/espeak_start_cost.py [--runs 5]

Prints, for `--runs` fresh processes each (the median and the range, ms of CPU: utime + stime, which a
shared VM's other processes do not inflate as they do wall time):
- `child_to_ready`: an espeak child (`espeak_child_start`, as `serve` starts one) from its start to its
  `READY` frame, its CPU read from /proc/PID/stat while it waits for a request;
- `carried_state`: in a fresh interpreter (`-P`: the checkout `PYTHONPATH` names) with espeak-ng already loaded, `espeak_state`'s import and one
  `CarriedState` of the wheel's library (the symbol table's read), by `time.process_time`;
- `carried_state_again`: a second `CarriedState` in that interpreter, of a private copy of the file (a lane);
- `reader_import`, `reader_number`, `reader_lecture`: in a fresh interpreter with `npu_worker.engine.espeak`
  imported (as an espeak child has it before it reads a text), the Korean reader's import, then its first
  reading of a number (`3.7V`: what the engine's load reads since stop 58), then the first reading of the 39
  lecture sections (`espeak_text`), each with the count of patterns `re` compiled in it.
No figure is asserted: the VM's load is printed beside them. The checkout's bytecode is written first, as
an installed worker has it; `--source-only` leaves it without (each process then compiles its modules:
the figures of 2026-12-06, stop 55's first section, were taken that way).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import common

from npu_worker.engine import espeak_early
from npu_worker.engine.espeak_child import READY, read_frame

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

IN_PROCESS = """
import ctypes, shutil, sys, tempfile, time, os, json
import espeakng_loader
path = espeakng_loader.get_library_path()
def loaded(at):
    library = ctypes.CDLL(at)
    library.espeak_Info.argtypes, library.espeak_Info.restype = [ctypes.c_void_p], ctypes.c_char_p
    return library
library = loaded(path)
started = time.process_time()
from npu_worker.engine.espeak_state import CarriedState
first = CarriedState(library, path)
middle = time.process_time()
folder = tempfile.mkdtemp()
copy = os.path.join(folder, os.path.basename(path))
shutil.copyfile(path, copy)
other = loaded(copy)
again = time.process_time()
second = CarriedState(other, copy)
ended = time.process_time()
shutil.rmtree(folder)
assert first.repeatable and second.repeatable
print(json.dumps([(middle - started) * 1000, (ended - again) * 1000]))
"""

READER = """
import json, sys, time
import re._compiler as compiler
compiled = [0]
real = compiler.compile
def counted(pattern, flags=0):
    compiled[0] += 1
    return real(pattern, flags)
compiler.compile = counted
from npu_worker.engine import espeak
from npu_worker.engine.base import SynthesisRequest
def step(call):
    compiled[0] = 0
    started = time.process_time()
    call()
    return [(time.process_time() - started) * 1000, compiled[0]]
texts = [section["text"] for section in json.load(open(sys.argv[1]))["sections"]]
steps = [
    step(lambda: __import__("npu_worker.engine.korean_reading")),
    step(lambda: espeak.espeak_text(SynthesisRequest("3.7V", "ko"))),
    step(lambda: [espeak.espeak_text(SynthesisRequest(text, "ko")) for text in texts]),
]
print(json.dumps(steps))
"""


def child_to_ready() -> float:
    """One espeak child's CPU (ms) from its start to its READY."""
    child = espeak_early.spawn()
    try:
        assert child.stdout is not None
        kind, _ = read_frame(child.stdout)
        assert kind == READY, kind
        fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / CLOCK_TICKS
    finally:
        espeak_early.close_pipes(child)
        child.wait()


def carried_state() -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-P", "-c", IN_PROCESS], check=True, capture_output=True, text=True)
    first, again = json.loads(out.stdout)
    return first, again


def reader_start() -> list[tuple[float, int]]:
    """The reader's import, its first number, the lecture's first reading: (ms of CPU, patterns compiled) each."""
    command = [sys.executable, "-P", "-c", READER, str(common.LECTURE)]
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return [(ms, count) for ms, count in json.loads(out.stdout)]


def summary(values: list[float]) -> str:
    return (
        f"median {statistics.median(values):.0f} ms ({min(values):.0f}–{max(values):.0f}, {len(values)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--source-only", action="store_true", help="leave the checkout without bytecode")
    args = parser.parse_args()
    runs = args.runs
    if not args.source_only:
        import npu_worker

        common.compile_checkout(Path(npu_worker.__file__).resolve().parents[1])
    load = os.getloadavg()
    children, firsts, agains = [], [], []
    readers: list[list[tuple[float, int]]] = []
    started = time.monotonic()
    for _ in range(runs):
        children.append(child_to_ready())
        first, again = carried_state()
        firsts.append(first)
        agains.append(again)
        readers.append(reader_start())
    print(
        f"load {load[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end ({time.monotonic() - started:.0f} s)"
    )
    print(f"child_to_ready: {summary(children)}")
    print(f"carried_state: {summary(firsts)}")
    print(f"carried_state_again: {summary(agains)}")
    for index, name in enumerate(("reader_import", "reader_number", "reader_lecture")):
        counts = sorted({reader[index][1] for reader in readers})
        print(f"{name}: {summary([reader[index][0] for reader in readers])}, patterns compiled {counts}")


if __name__ == "__main__":
    main()
