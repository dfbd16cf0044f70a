"""What a browser hears when the worker refuses a WebSocket message for its body budget: headless
Chromium (the Debian build that tests/browser_support.py drives) sends one text message of `--size`
characters, at once, to `/ws` and to `WS /v1/audio/speech/stream` of the worker (`build_app`, espeak
engine, behind `server.listen` on a free port, `--body-budget-bytes` 256 KiB, so the message finds no
room), `--rounds` times, and prints how often each close code came (1013: the refusal; 1006: no close
frame read). With `--max-body-bytes 1048576 --body-budget-bytes 67108864` and `--size 4000000`, the
message is over the size limit instead (1009).

    python tools/ws_refusal_close.py --rounds 10
    python tools/ws_refusal_close.py --rounds 5 --size 4000000 --max-body-bytes 1048576 --body-budget-bytes 67108864
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from npu_worker.app import build_app  # noqa: E402
from npu_worker.config import Settings  # noqa: E402
from npu_worker.server import Listener, listen  # noqa: E402
from tests.browser_support import chromium  # noqa: E402

SEND_AND_WAIT_FOR_CLOSE = """async ([url, size]) => new Promise(resolve => {
  const ws = new WebSocket(url);
  ws.onopen = () => ws.send("x".repeat(size));
  ws.onclose = event => resolve(event.code);
  setTimeout(() => resolve("no close within 8 s"), 8000);
})"""


async def start(max_body_bytes: int, body_budget_bytes: int) -> Listener:
    settings = Settings().replace(max_body_bytes=max_body_bytes, body_budget_bytes=body_budget_bytes)
    app = await asyncio.to_thread(build_app, settings)
    return await listen(app, settings, host="127.0.0.1", port=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--size", type=int, default=2_000_000, help="characters in the message")
    parser.add_argument("--max-body-bytes", type=int, default=Settings().max_body_bytes)
    parser.add_argument("--body-budget-bytes", type=int, default=256 * 1024)
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    listener = asyncio.run_coroutine_threadsafe(
        start(args.max_body_bytes, args.body_budget_bytes), loop
    ).result(60)
    codes: collections.Counter[tuple[str, object]] = collections.Counter()
    try:
        with chromium() as browser:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{listener.port}/health")  # a loopback origin the worker allows
            for _ in range(args.rounds):
                for path in ("/ws", "/v1/audio/speech/stream"):
                    url = f"ws://127.0.0.1:{listener.port}{path}"
                    codes[path, page.evaluate(SEND_AND_WAIT_FOR_CLOSE, [url, args.size])] += 1
    finally:
        asyncio.run_coroutine_threadsafe(listener.close(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
    for (path, code), count in sorted(codes.items(), key=str):
        print(f"{path}: close {code} × {count}")


if __name__ == "__main__":
    main()
