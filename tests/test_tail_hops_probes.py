"""benchmarks/tail_hops.py's probes against the methods they wrap in the worker: a wrapper that no longer
takes what its method takes broke every request of the measured worker (`Admission.enqueue`'s
`told_at_once`, stop 59: each `/ws` preview an internal error, and the benchmark waited on its
warm-up until killed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.timing import seconds

ROOT = Path(__file__).resolve().parents[1]

# In a process of its own: the probes replace the worker's methods for the whole process.
EACH_WRAPPER_TAKES_WHAT_ITS_METHOD_TAKES = """
import importlib, inspect, sys
sys.path.insert(0, "benchmarks")
import tail_hops_probes as probes

WRAPPED = [
    ("npu_worker.jobs.admission", "Admission", "enqueue"),
    ("npu_worker.jobs.admission", "Admission", "_take"),
    ("npu_worker.jobs.runner", "Runner", "run_section"),
    ("npu_worker.jobs.runner", "Runner", "publish_audio"),
    ("npu_worker.engine.espeak_process", "ChildEspeak", "_sent"),
    ("npu_worker.jobs.delivery", "Delivery", "take"),
    ("npu_worker.ws_server.request_stream", "RequestStream", "_on_audio"),
    ("npu_worker.ws_server.request_stream", "RequestStream", "_send_frames"),
    ("npu_worker.ws_server.burst", "Burst", "take"),
]

def method(module, owner, name):
    return getattr(getattr(importlib.import_module(module), owner), name)

originals = {where: method(*where) for where in WRAPPED}
notes = probes.Notes()
for probe in (probes.probe_admission, probes.probe_engine_side, probes.probe_loop_side):
    probe(notes)
for where, original in originals.items():
    wrapper = method(*where)
    assert wrapper is not original, f"{where}: not wrapped (the list above is stale)"
    takes = [p for p in inspect.signature(original).parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
    try:  # every argument of the method, positionally, then by name (self aside)
        inspect.signature(wrapper).bind(*takes)
        inspect.signature(wrapper).bind(takes[0], **{p.name: p for p in takes[1:]})
    except TypeError as refused:
        sys.exit(f"{'.'.join(where[1:])}'s wrapper refuses {[p.name for p in takes]}: {refused}")
print(len(originals), "wrapped")
"""


def test_each_probe_takes_every_argument_of_the_method_it_wraps():
    done = subprocess.run(
        [sys.executable, "-c", EACH_WRAPPER_TAKES_WHAT_ITS_METHOD_TAKES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds(120),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "9 wrapped", done.stdout
