"""The browser player on a long text: how long the page takes to take in a run of N one-line sections
and its longest main-thread task meanwhile, in headless Chromium against a worker with a tone engine
(2 ms of audio a character, made at once: the page's own cost, not the engine's).

    python benchmarks/player_long_text.py --sections 1000 --runs 2    # needs /usr/bin/chromium, playwright

Each run is a fresh page: the text typed, Play pressed, timed until every row has its synthesis time;
the longest task is the page's own figure (the summary line's "Longest page task"; tasks of 50 ms or
more only, 0 when none was).
"""

from __future__ import annotations

import argparse
import tempfile
import time

import common  # noqa: F401  (puts the checkout on sys.path)

from npu_worker.config import Settings
from tests.browser_support import chromium, serve_worker
from tests.tone_engine import ToneEngine

SNAPSHOT = "window.npuPlayer.snapshot()"


def one_run(browser, url: str, sections: int) -> tuple[float, float]:
    """Seconds from Play until every row is synthesised, and the page's longest task (ms)."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(f"() => {SNAPSHOT}.worker.state === 'ready'", timeout=60000)
    page.fill("#input", "\n\n".join(f"{i}." for i in range(sections)))
    page.wait_for_function(f"() => {SNAPSHOT}.sections.length === {sections}", timeout=60000)
    began = time.monotonic()
    page.click("#play")
    page.wait_for_function(f"() => {SNAPSHOT}.run !== null", timeout=60000, polling=50)
    every_row = f"() => {SNAPSHOT}.sections.every((x) => x.synthSec !== null)"
    page.wait_for_function(every_row, timeout=600000, polling=200)
    took = time.monotonic() - began
    longest = page.evaluate(SNAPSHOT)["figures"]["longestTaskMs"]
    context.close()
    return took, longest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", type=int, default=1000, help="one-line sections in the text")
    parser.add_argument("--runs", type=int, default=2, help="fresh pages, one run each")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as state:
        settings = Settings(state_dir=state, output_roots=(state,), cache_max_bytes=0)
        with serve_worker(settings, ToneEngine(seconds_per_char=0.002)) as worker, chromium() as browser:
            for _ in range(args.runs):
                took, longest = one_run(browser, worker.url, args.sections)
                print(
                    f"{args.sections} sections taken in: {took:.1f} s, longest page task {longest:.0f} ms",
                    flush=True,
                )


if __name__ == "__main__":
    main()
