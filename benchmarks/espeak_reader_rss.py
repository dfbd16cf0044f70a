"""The worker's resident memory an espeak child costs it (the reader of the child's frames, mostly): the
worker's `VmRSS` grown by `--children` children, once each is started and has answered one `PHONEMIZE`
(ZipVoice's phonemizer child stays so), then once each has made one preview sentence. Printed per child,
in KiB; compare checkouts run by run (memory the allocator keeps between runs is noise of a few KiB).

    PYTHONPATH=<checkout> python benchmarks/espeak_reader_rss.py [--children 4]
"""

from __future__ import annotations

import argparse
import gc

from npu_worker.engine.base import SynthesisRequest
from npu_worker.engine.espeak_process import ChildEspeak

SENTENCE = "오늘은 인공지능 음성 합성에 대해 이야기하겠습니다."


def resident_kib() -> int:
    gc.collect()
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=4)
    count = parser.parse_args().children
    warm = ChildEspeak()  # the modules and the allocator's first arenas, out of the count
    warm.phonemize("가", "ko")
    sum(chunk.size for chunk in warm.chunks(SynthesisRequest("가 나", "ko")))
    warm.close()
    before = resident_kib()
    children = [ChildEspeak() for _ in range(count)]
    try:
        for child in children:
            child.phonemize(SENTENCE, "ko")
        started = resident_kib()
        for child in children:
            sum(chunk.size for chunk in child.chunks(SynthesisRequest(SENTENCE, "ko")))
        spoken = resident_kib()
    finally:
        for child in children:
            child.close()
    print(
        f"per child: {(started - before) / count:.0f} KiB started and one PHONEMIZE answered, "
        f"{(spoken - before) / count:.0f} KiB after one preview sentence"
    )


if __name__ == "__main__":
    main()
