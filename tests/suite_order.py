"""The order in which pytest-xdist hands the suite's files to its workers (`--dist loadfile`; two on CI).

pytest-xdist's own order (`--loadscope-reorder`, its default) is by number of tests, most first. The
suite's longest files have few tests each (a simulator run, a whole serve, a long stream), so they came
last, and one worker was often left alone with one of them while the other core idled. pyproject turns
xdist's reordering off (`--no-loadscope-reorder`) and conftest sorts the collection here: the longest
files first, the rest by number of tests as xdist did. The files whose tests wait for qdq_background's
simulator work (test_prepare.py, test_prepare_qdq.py) keep their place by count, mid-run: that work runs
at nice 5 and gets little CPU while both workers are busy, so a worker waiting for it mid-run gives it
its core while the other works on; waiting at the end would leave a core idle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

# The longest files, most CPU first: `/usr/bin/time python -m pytest -n 0 FILE` on the 2-core VM (user +
# sys s, load 13-26, pytest's own start included): 81, 74, 37, 31 and test_server_e2e.py's 30 (49 before
# its tests shared one worker; 43.8 → 30.1 at load 9-11). 2026-12-07, load 10-19, old and new file run
# one after the other: test_qnn_real_structure.py 67.8 → 53.5 (its simulator bucket 31 frames, not 63),
# test_server_e2e.py 35.5 → 26.7 (its /synth under a /ws preview 6 lecture sections, not 12), so it
# comes before test_bucket_engine.py (20.7 at load 14; test_buckets.py 42.6 there); the slow reader's file 7.6 s of CPU,
# but 175 s of wall there (its reader waited 2 ms for each of ≈ 12 700 pieces; ≈ 3 200 pieces of 2 048
# bytes since: 51 s → 19-25 s of wall at load 5-8; paced by the clock at 1 MB/s since, ≈ 17-18 s of wall
# at load 10-11, 3.6-4.0 s of CPU), which by count came near the end; the player's
# played-PCM file likewise (one test, last by count: 53.7 s of wall in the whole suite at load 13 for
# 11 s of CPU, the page playing its sections in real time; 38.1 s alone at load 9-10, 2026-12-07; 28.6-
# 32.0 s for 6.9-8.8 s of CPU at load 14-18 once its recording came back as base64, 38.2-38.5 s for
# 9.3-10.4 s before, interleaved), so its wall overlaps the other worker's CPU instead of ending the run. A renamed file fails
# tests/test_suite_order.py. 2026-12-08, load 5-8, one file after the other: test_qnn_real_structure.py
# 54.4 s of CPU (92 s of wall), test_buckets.py 40.3 (86), test_real_structure.py 34.3 (62), which was
# missing: by count (37 tests) it came a sixth of the way in, yet it was the suite's longest file in wall
# (303 s in stop 63's run, its sessions optimised and its simulator run while the other worker works),
# then test_cluster.py 25.3 (55).
LONGEST_FIRST = (
    "tests/zipvoice/test_qnn_real_structure.py",
    "tests/zipvoice/test_buckets.py",
    "tests/zipvoice/test_real_structure.py",
    "tests/test_cluster.py",
    "tests/zipvoice/test_server_e2e.py",
    "tests/zipvoice/test_bucket_engine.py",
    "tests/test_ws_slow_reader_pong.py",
    "tests/test_player_played_pcm.py",
)


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def ordered(nodeids: Sequence[str]) -> list[int]:
    """The indexes of `nodeids` in the order to run them: whole files, each file's tests in their order."""
    counts = Counter(file_of(nodeid) for nodeid in nodeids)
    first_seen: dict[str, int] = {}
    for index, nodeid in enumerate(nodeids):
        first_seen.setdefault(file_of(nodeid), index)

    def rank(index: int) -> tuple[int, int, int, int]:
        path = file_of(nodeids[index])
        if path in LONGEST_FIRST:
            return 0, LONGEST_FIRST.index(path), 0, index
        return 1, -counts[path], first_seen[path], index

    return sorted(range(len(nodeids)), key=rank)
