"""What a worker's process loads for `serve`'s default engine (espeak-ng in a child): the Korean reader's
patterns (≈ 0.3 s of CPU, before a ready `/health`) are the child's alone, which reads every text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_worker_process_loads_no_korean_reader_for_the_espeak_child():
    code = (
        "import sys\n"
        "from npu_worker.engine.base import SynthesisRequest\n"
        "from npu_worker.engine.espeak_process_engine import EspeakProcessEngine\n"
        "engine = EspeakProcessEngine()\n"
        "engine.load()\n"
        "made = sum(c.size for c in engine.stream(SynthesisRequest('전압은 3.7V, 2024. 12. 5.')))\n"
        "engine.close()\n"
        "print(made > 24000, [m for m in sys.modules if m.startswith('npu_worker.engine.korean_')])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "True []"


def test_the_in_process_engine_still_reads_korean_at_its_load():
    """`--no-espeak-process`: the reader loads with the engine's warm-up, not at a caller's first text."""
    code = (
        "import sys\n"
        "from npu_worker.engine.espeak import EspeakEngine\n"
        "engine = EspeakEngine()\n"
        "before = 'npu_worker.engine.korean_reading' in sys.modules\n"
        "engine.load()\n"
        "print(before, 'npu_worker.engine.korean_reading' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False True"
