"""espeak-ng's worst case on hostile text at the text limit, in its child process (as the worker runs it):
the whole synthesis's seconds and the longest gap between two frames, per text, at the slowest speed.
What `engine/espeak_request_deadline.py`'s bound is sized against (a request's next audio, or its end,
within `ANSWER_SECONDS` plus `ANSWER_SECONDS_PER_CHAR` a character).

    PYTHONPATH=<checkout> python benchmarks/espeak_worst_case.py [--chars 2000] [--speed 0.25]
"""

from __future__ import annotations

import argparse
import os
import time

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_process import ChildEspeak
from npu_worker.protocol import WorkerError

TEXTS = {  # repeated to `--chars` and cut there
    "ko digits": ("ko", "1234567890 "),
    "ko one long number": ("ko", "9"),
    "ko no marks": ("ko", "인공지능음성합성"),
    "ko formulas": ("ko", "x^2 + 3.7V ≥ 10⁹ "),
    "en digits": ("en", "123456789012 "),
    "en long words": ("en", "supercalifragilistic" * 2 + " "),
    "silent": ("ko", "😀"),
    "jamo": ("ko", "ㄱ"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--speed", type=float, default=0.25)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    child = ChildEspeak()
    for name, (lang, unit) in TEXTS.items():
        text = (unit * (args.chars // len(unit) + 1))[: args.chars]
        started = last = time.monotonic()
        gap, samples, outcome = 0.0, 0, "ok"
        try:
            for chunk in child.chunks(SynthesisRequest(text, lang, args.speed)):
                now = time.monotonic()
                gap, last, samples = max(gap, now - last), now, samples + chunk.size
        except WorkerError as error:
            outcome = error.name
            if child.closed:
                child = ChildEspeak()
        whole = time.monotonic() - started
        print(
            f"{name:20} {whole:6.2f} s whole, {gap:5.2f} s longest gap, {samples / 24000:6.0f} s of audio "
            f"({outcome})"
        )
    child.close()


if __name__ == "__main__":
    main()
