"""The browser player's time to first audio, measured in headless Chromium against an espeak-ng worker.

Plays lecture sections 0-4 (the copy in the package) RUNS times, each in a fresh page, and prints what
the page reports: page TTFA (send → first audible sample at the output), first PCM frame, the worker's own
TTFA, underruns, and the AudioContext's rate.

    python benchmarks/player_ttfa.py [runs]      # needs /usr/bin/chromium and playwright
"""

from __future__ import annotations

import argparse
import tempfile

from common import LECTURE  # also puts the checkout on sys.path (tests.browser_support)

from npu_worker.config import Settings
from npu_worker.engine.espeak import EspeakEngine
from tests.browser_support import chromium, serve_worker

DONE = (
    "() => { const s = window.npuPlayer.snapshot(); return s.run && !s.run.running && s.run.audioDrained; }"
)


def one_run(browser, url: str) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("() => window.npuPlayer.snapshot().worker.state === 'ready'", timeout=30000)
    page.set_input_files("#file", str(LECTURE))
    page.fill("#range", "0-4")
    page.wait_for_function("() => window.npuPlayer.snapshot().sections.length === 5", timeout=30000)
    page.click("#play")
    page.wait_for_function(DONE, timeout=120000, polling=50)
    snapshot = page.evaluate("window.npuPlayer.snapshot()")
    context.close()
    return snapshot["figures"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=int, nargs="?", default=5, help="fresh pages, one run each")
    runs = parser.parse_args(argv).runs
    with tempfile.TemporaryDirectory() as state:
        settings = Settings(state_dir=state, output_roots=(state,), cache_max_bytes=0)
        with serve_worker(settings, EspeakEngine()) as worker, chromium() as browser:
            figures = [one_run(browser, worker.url) for _ in range(runs)]
    for f in figures:
        print(
            f"page TTFA {f['ttfaMs']:6.1f} ms  first PCM {f['firstPcmMs']:6.1f} ms  "
            f"server TTFA {f['serverTtfaMs']:5.1f} ms  underruns {f['underruns']}  "
            f"context {f['contextRate']} Hz, output latency {f['outputLatencyMs']:.0f} ms"
        )
    ttfa = [f["ttfaMs"] for f in figures]
    print(f"page TTFA min {min(ttfa):.0f} ms, max {max(ttfa):.0f} ms over {runs} runs")


if __name__ == "__main__":
    main()
